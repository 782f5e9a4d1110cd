/**
 * Points arithmetic, so the ledger matches the original's figures (reference A4): the original
 * computed `round(sum(consumption_kwh) * 10)` in Python 3.12, where
 *
 * - `sum` of floats is Neumaier-compensated (Python 3.12 changed `sum` to it), not a naive
 *   left-to-right addition, and
 * - `round` rounds a float exactly halfway between two integers to the even one (2.5 -> 2,
 *   3.5 -> 4), deciding on the float's exact binary value (so `0.35 * 10`, exactly 3.5, is 4,
 *   while `1.005 * 10`, just under 10.05, is 10).
 *
 * `Math.round` rounds halves up (2.5 -> 3) and a naive sum differs in the last bits, either of
 * which would move a point now and then.
 */

/** Python's `round(x)` for a finite float: nearest integer, ties to even. */
export const roundHalfEven = (x: number): number => {
  if (!Number.isFinite(x)) throw new RangeError(`cannot round ${x}`)
  const floor = Math.floor(x)
  // Exact for every double below 2^52: floor and x share the exponent range.
  const fraction = x - floor
  if (fraction < 0.5) return floor + 0
  if (fraction > 0.5) return floor + 1
  return floor % 2 === 0 ? floor + 0 : floor + 1
}

/** Python 3.12's `sum` of floats: Neumaier's compensated summation, left to right. */
export const pythonSum = (values: Iterable<number>): number => {
  let sum = 0
  let compensation = 0
  for (const x of values) {
    const t = sum + x
    if (Math.abs(sum) >= Math.abs(x)) compensation += (sum - t) + x
    else compensation += (x - t) + sum
    sum = t
  }
  // As CPython: the compensation is added only when it is finite (an overflowed sum stays infinite).
  return compensation !== 0 && Number.isFinite(compensation) ? sum + compensation : sum
}

/** Points per kWh (reference A4). */
export const pointsPerKwh = 10

/** Points for a consumption in kWh: `round(kwh * 10)`, ties to even. */
export const pointsFor = (kwh: number): number => roundHalfEven(kwh * pointsPerKwh)

/** Settlement of one commitment from the digital twin's hourly consumption in its window. */
export const settle = (hourlyKwh: ReadonlyArray<number>): { readonly kwh: number; readonly points: number } => {
  const kwh = pythonSum(hourlyKwh)
  return { kwh, points: pointsFor(kwh) }
}
