// units.parse and units.parse_bytes: quantities with SI / binary suffixes. units.parse is exact
// (OPA uses big.Rat); units.parse_bytes reproduces OPA's big.Float arithmetic at 64 bits of
// mantissa, rounding included, so that "0.13mb" is 129999 as in OPA and not 130000.

import { normBig } from "../value.js"
import { str } from "./args.js"
import { bitLength, MAX_INT_BITS } from "./numbers.js"
import { type BuiltinDef, builtinError } from "./registry.js"

const KI = 1n << 10n
const MI = 1n << 20n
const GI = 1n << 30n
const TI = 1n << 40n
const PI = 1n << 50n
const EI = 1n << 60n
const K = 1000n
const M = K * 1000n
const G = M * 1000n
const T = G * 1000n
const P = T * 1000n
const E = P * 1000n

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= "0" && c <= "9"

/**
 * OPA's extractNumAndUnit on a resource string with its double quotes removed: splits "10.5Mi"
 * into "10.5" and "Mi"; spaces and exponents of more than six digits are errors.
 */
const splitNumUnit = (text: string): [string, string] => {
  const s = text.replaceAll('"', "")
  if (s.includes(" ")) throw builtinError("spaces not allowed in resource strings")
  let first = -1
  for (let i = 0; i < s.length; i++) {
    const c = s[i]
    if (!isDigit(c) && c !== "." && c !== "e" && c !== "E" && c !== "+" && c !== "-") {
      first = i
      break
    }
    if (c === "e" || c === "E") {
      const n = s[i + 1]
      if (i === s.length - 1 || (!isDigit(n) && n !== "+" && n !== "-")) {
        first = i
        break
      }
      if (n === "+" || n === "-") i++
      let end = i + 1
      while (end < s.length && isDigit(s[end])) end++
      if (end - (i + 1) > 6) throw builtinError("exponent too large")
    }
  }
  if (first === -1) return [s, ""]
  if (first === 0) return ["", s]
  return [s.slice(0, first), s.slice(first)]
}

/** A decimal literal as an exact fraction num/den (den a power of ten), or undefined. */
const parseDecimal = (s: string): { num: bigint; den: bigint } | undefined => {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(s)
  if (m === null) return undefined
  const [, sign, int, frac = "", exp] = m
  if (int === "" && frac === "") return undefined
  let num = BigInt((int === "" ? "0" : int) + frac)
  let den = 10n ** BigInt(frac.length)
  const e = exp === undefined ? 0 : Number(exp)
  // Powers of ten beyond the integer size limit are refused before they are computed.
  if (Math.abs(e) > MAX_INT_BITS / Math.log2(10)) throw builtinError("exponent too large")
  if (e > 0) num *= 10n ** BigInt(e)
  else if (e < 0) den *= 10n ** BigInt(-e)
  if (sign === "-") num = -num
  return { num, den }
}

// ---------------------------------------------------------------------------------------------
// Go's math/big.Float, as far as parse_bytes needs it: SetString at the default precision of 64
// bits, Mul, and Int (truncation). Values are mant * 2^exp, rounded half to even.

interface GoFloat {
  readonly neg: boolean
  /** 0, or a mantissa of exactly prec bits. */
  readonly mant: bigint
  readonly exp: number
}

/** The positive rational a / b rounded to prec bits (round half to even). */
const roundRat = (a: bigint, b: bigint, prec: number): { mant: bigint; exp: number } => {
  const top = 1n << BigInt(prec)
  let e = bitLength(a) - bitLength(b) - prec
  for (;;) {
    const num = e >= 0 ? a : a << BigInt(-e)
    const den = e >= 0 ? b << BigInt(e) : b
    let q = num / den
    if (q >= top) {
      e++
      continue
    }
    if (q < top >> 1n) {
      e--
      continue
    }
    const r2 = 2n * (num % den)
    if (r2 > den || (r2 === den && (q & 1n) === 1n)) q++
    if (q === top) return { mant: q >> 1n, exp: e + 1 }
    return { mant: q, exp: e }
  }
}

/** x * y rounded to prec bits. */
const mulFloat = (x: GoFloat, y: GoFloat, prec: number): GoFloat => {
  if (x.mant === 0n || y.mant === 0n) return { neg: x.neg !== y.neg, mant: 0n, exp: 0 }
  const r = roundRat(x.mant * y.mant, 1n, prec)
  return { neg: x.neg !== y.neg, mant: r.mant, exp: r.exp + x.exp + y.exp }
}

/** Go's Float.pow5 at precision prec: 5^27 exactly, then binary powering at prec + 64 bits. */
const pow5 = (n: number, prec: number): GoFloat => {
  const exact = (k: number): GoFloat => ({ neg: false, ...roundRat(5n ** BigInt(k), 1n, prec) })
  if (n <= 27) return exact(n)
  let z = exact(27)
  let f: GoFloat = { neg: false, ...roundRat(5n, 1n, prec + 64) }
  for (let k = n - 27; k > 0; k = Math.floor(k / 2)) {
    if (k % 2 === 1) z = mulFloat(z, f, prec)
    f = mulFloat(f, f, prec + 64)
  }
  return z
}

/**
 * Go's new(big.Float).SetString(s) (precision 64): the digits as an exact integer, times the
 * power of two and, rounded once, divided or multiplied by the power of five of the decimal
 * exponent. Undefined when s is not a number.
 */
const parseGoFloat = (s: string): GoFloat | undefined => {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(s)
  if (m === null) return undefined
  const [, sign, int, frac = "", exp] = m
  if (int === "" && frac === "") return undefined
  const neg = sign === "-"
  const digits = BigInt((int === "" ? "0" : int) + frac)
  if (digits === 0n) return { neg, mant: 0n, exp: 0 }
  const exp10 = (exp === undefined ? 0 : Number(exp)) - frac.length
  if (exp10 === 0) return { neg, ...roundRat(digits, 1n, 64) }
  const p = pow5(Math.abs(exp10), 128)
  if (exp10 > 0) {
    const r = roundRat(digits * p.mant, 1n, 64)
    return { neg, mant: r.mant, exp: r.exp + p.exp + exp10 }
  }
  const r = roundRat(digits, p.mant, 64)
  return { neg, mant: r.mant, exp: r.exp - p.exp + exp10 }
}

/** Go's Float.Int: truncation towards zero. */
const truncate = (x: GoFloat): bigint => {
  const v = x.exp >= 0 ? x.mant << BigInt(x.exp) : x.mant >> BigInt(-x.exp)
  return x.neg ? -v : v
}

const BYTE_UNITS: Readonly<Record<string, bigint>> = {
  "": 1n,
  kb: K,
  k: K,
  kib: KI,
  ki: KI,
  mb: M,
  m: M,
  mib: MI,
  mi: MI,
  gb: G,
  g: G,
  gib: GI,
  gi: GI,
  tb: T,
  t: T,
  tib: TI,
  ti: TI,
  pb: P,
  p: P,
  pib: PI,
  pi: PI,
  eb: E,
  e: E,
  eib: EI,
  ei: EI
}

const UNITS: Readonly<Record<string, bigint>> = {
  "": 1n,
  k: K,
  K: K,
  ki: KI,
  Ki: KI,
  M: M,
  mi: MI,
  Mi: MI,
  g: G,
  G: G,
  gi: GI,
  Gi: GI,
  t: T,
  T: T,
  ti: TI,
  Ti: TI,
  p: P,
  P: P,
  pi: PI,
  Pi: PI,
  e: E,
  E: E,
  ei: EI,
  Ei: EI
}

export const units: BuiltinDef[] = [
  {
    name: "units.parse_bytes",
    arity: 1,
    fn: ([x], ctx) => {
      const [num, unit] = splitNumUnit(str(x, 1).toLowerCase())
      if (num === "") throw builtinError("no byte amount provided")
      const mult = BYTE_UNITS[unit]
      if (mult === undefined) throw builtinError(`byte unit ${unit} not recognized`)
      const amount = parseGoFloat(num)
      if (amount === undefined) throw builtinError("could not parse byte amount to a number")
      const total = mulFloat(amount, { neg: false, ...roundRat(mult, 1n, 64) }, 64)
      // A large exponent ("1e999999") makes a large integer: bounded as arithmetic is.
      if (total.exp + 64 > MAX_INT_BITS) throw builtinError(`amount is too large (more than ${MAX_INT_BITS} bits)`)
      ctx.charge(Math.max(0, total.exp) >> 6)
      return normBig(truncate(total))
    }
  },
  {
    name: "units.parse",
    arity: 1,
    fn: ([x]) => {
      const [num, suffix] = splitNumUnit(str(x, 1))
      if (num === "") throw builtinError("no amount provided")
      const unit = suffix.length > 1 ? suffix[0] + suffix.slice(1).toLowerCase() : suffix
      const d = parseDecimal(num)
      let n: bigint
      let den: bigint
      if (unit === "m") {
        if (d === undefined) throw builtinError("could not parse amount to a number")
        n = d.num
        den = d.den * 1000n
      } else {
        const mult = UNITS[unit]
        if (mult === undefined) throw builtinError(`unit ${unit} not recognized`)
        if (d === undefined) throw builtinError("could not parse amount to a number")
        n = d.num * mult
        den = d.den
      }
      if (n % den === 0n) return normBig(n / den)
      // Rounded to 10 decimals, as OPA's big.Rat.FloatString(10).
      const neg = n < 0n
      const a = neg ? -n : n
      const scaled = (a * 10000000000n * 2n + den) / (2n * den)
      const ip = scaled / 10000000000n
      const fp = (scaled % 10000000000n).toString().padStart(10, "0")
      return Number(`${neg ? "-" : ""}${ip}.${fp}`)
    }
  }
]
