/**
 * Deterministic randomness for the simulator: every generated value is a pure function of
 * the seed and the value's coordinates (network, segment, date, time slot), so the same seed
 * gives the same data in every process, on every run, in any request order.
 */

/** 32-bit FNV-1a over the parts, finished with a murmur3 avalanche. */
export const hash32 = (...parts: ReadonlyArray<string | number>): number => {
  let h = 0x811c9dc5
  for (const part of parts) {
    const text = `${part}\u0000`
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i)
      h = Math.imul(h, 0x01000193)
    }
  }
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** A uniform number in [0, 1) determined by the parts. */
export const unit = (...parts: ReadonlyArray<string | number>): number => hash32(...parts) / 4294967296

/** A uniform number in [min, max) determined by the parts. */
export const between = (min: number, max: number, ...parts: ReadonlyArray<string | number>): number =>
  min + (max - min) * unit(...parts)

/** A sequence generator (mulberry32) for building structures step by step from one seed. */
export const sequence = (...parts: ReadonlyArray<string | number>) => {
  let state = hash32(...parts)
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    between: (min: number, max: number) => min + (max - min) * next(),
    int: (min: number, maxInclusive: number) => min + Math.floor(next() * (maxInclusive - min + 1)),
    chance: (p: number) => next() < p
  }
}

/** Rounds to `digits` decimals (the digital twin returns rounded numbers). */
export const round = (value: number, digits = 2): number => {
  const f = 10 ** digits
  return Math.round(value * f) / f
}
