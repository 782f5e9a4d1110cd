// Arithmetic (+ - * / % and abs, round, ceil, floor) and numbers.range(_step).
// Integers are exact at any size (bigint beyond 2^53); other numbers are IEEE doubles.

import { type Value, isInteger, normBig, normNum, RegoSet, toBigInt } from "../value.js"
import { bigint, num } from "./args.js"
import { type BuiltinContext, type BuiltinDef, builtinError, operandError, typeError } from "./registry.js"

type N = number | bigint

/**
 * The largest integer this engine computes, in bits (about 315,000 decimal digits). OPA's
 * integers are unbounded; here a result beyond this is a builtin error, so that a policy cannot
 * allocate gigabytes (JavaScript's own limit is 2^30 bits, reached in a few squarings).
 */
export const MAX_INT_BITS = 1 << 20

/** Bits of |x|. */
export const bitLength = (x: bigint): number => {
  if (x === 0n) return 0
  const hex = (x < 0n ? -x : x).toString(16)
  return (hex.length - 1) * 4 + (32 - Math.clz32(parseInt(hex[0], 16)))
}

/** Exact integer product, refusing results beyond MAX_INT_BITS. */
const bigMul = (x: bigint, y: bigint): bigint => {
  if (bitLength(x) + bitLength(y) > MAX_INT_BITS) throw builtinError(`integer product of more than ${MAX_INT_BITS} bits`)
  return x * y
}

const bothInts = (a: N, b: N): boolean => isInteger(a) && isInteger(b)

export const add = (a: N, b: N): N => {
  if (typeof a === "number" && typeof b === "number") {
    const r = a + b
    if (Number.isSafeInteger(r) || !Number.isInteger(a) || !Number.isInteger(b)) return r
    return normBig(BigInt(a) + BigInt(b))
  }
  if (bothInts(a, b)) return normBig(toBigInt(a) + toBigInt(b))
  return normNum(Number(a) + Number(b))
}

export const sub = (a: N, b: N): N => {
  if (typeof a === "number" && typeof b === "number") {
    const r = a - b
    if (Number.isSafeInteger(r) || !Number.isInteger(a) || !Number.isInteger(b)) return r
    return normBig(BigInt(a) - BigInt(b))
  }
  if (bothInts(a, b)) return normBig(toBigInt(a) - toBigInt(b))
  return normNum(Number(a) - Number(b))
}

export const mul = (a: N, b: N): N => {
  if (typeof a === "number" && typeof b === "number") {
    const r = a * b
    if (Number.isSafeInteger(r) || !Number.isInteger(a) || !Number.isInteger(b)) return r === 0 ? 0 : r
    return normBig(BigInt(a) * BigInt(b))
  }
  if (bothInts(a, b)) return normBig(bigMul(toBigInt(a), toBigInt(b)))
  return normNum(Number(a) * Number(b))
}

const isZero = (n: N): boolean => (typeof n === "bigint" ? n === 0n : n === 0)

export const div = (a: N, b: N): N => {
  if (isZero(b)) throw builtinError("divide by zero")
  if (bothInts(a, b) && !isZero(a)) {
    const x = toBigInt(a)
    const y = toBigInt(b)
    if (x % y === 0n) return normBig(x / y)
  }
  const r = Number(a) / Number(b)
  return normNum(r === 0 ? 0 : r)
}

export const rem = (a: N, b: N): N => {
  if (!bothInts(a, b)) throw builtinError("modulo on floating-point number")
  if (isZero(b)) throw builtinError("modulo by zero")
  if (typeof a === "number" && typeof b === "number") {
    const r = a % b
    return r === 0 ? 0 : r
  }
  return normBig(toBigInt(a) % toBigInt(b))
}

const roundHalfAway = (n: number): number => (n < 0 ? -Math.round(-n) : Math.round(n))

const unary = (name: string, f: (n: number) => number): BuiltinDef => ({
  name,
  arity: 1,
  fn: ([a]) => {
    const n = num(a, 1)
    if (typeof n === "bigint") return n < 0n && name === "abs" ? -n : n
    const r = f(n)
    return normNum(r === 0 ? 0 : r)
  }
})

const range = (x: bigint, y: bigint, step: bigint, ctx: BuiltinContext): Value[] => {
  const out: Value[] = []
  const n = Number((x <= y ? y - x : x - y) / step) + 1
  ctx.charge(n)
  if (Number.isSafeInteger(Number(x)) && Number.isSafeInteger(Number(y))) {
    const a = Number(x)
    const b = Number(y)
    const s = Number(step)
    if (a <= b) for (let i = a; i <= b; i += s) out.push(i)
    else for (let i = a; i >= b; i -= s) out.push(i)
    return out
  }
  if (x <= y) for (let i = x; i <= y; i += step) out.push(normBig(i))
  else for (let i = x; i >= y; i -= step) out.push(normBig(i))
  return out
}

export const numbers: BuiltinDef[] = [
  {
    name: "plus",
    arity: 2,
    fn: ([a, b]) => add(num(a, 1), num(b, 2))
  },
  {
    name: "minus",
    arity: 2,
    fn: ([a, b]) => {
      const an = typeof a === "number" || typeof a === "bigint"
      const bn = typeof b === "number" || typeof b === "bigint"
      if (an && bn) return sub(a as N, b as N)
      const as = a instanceof RegoSet
      const bs = b instanceof RegoSet
      if (as && bs) {
        const out = new RegoSet()
        for (const x of a.unordered()) if (!b.has(x)) out.add(x)
        return out
      }
      if (!an && !as) throw typeError(1, a, "number", "set")
      if (bn) throw typeError(2, b, "set")
      throw typeError(2, b, "number")
    }
  },
  { name: "mul", arity: 2, fn: ([a, b]) => mul(num(a, 1), num(b, 2)) },
  { name: "div", arity: 2, fn: ([a, b]) => div(num(a, 1), num(b, 2)) },
  { name: "rem", arity: 2, fn: ([a, b]) => rem(num(a, 1), num(b, 2)) },
  unary("abs", Math.abs),
  unary("round", roundHalfAway),
  unary("ceil", Math.ceil),
  unary("floor", Math.floor),
  {
    name: "numbers.range",
    arity: 2,
    fn: ([a, b], ctx) => range(bigint(a, 1), bigint(b, 2), 1n, ctx)
  },
  {
    name: "numbers.range_step",
    arity: 3,
    fn: ([a, b, s], ctx) => {
      const x = bigint(a, 1)
      const y = bigint(b, 2)
      const step = bigint(s, 3)
      if (step <= 0n) throw builtinError("numbers.range_step: step must be a positive integer")
      return range(x, y, step, ctx)
    }
  }
]

export { operandError }
