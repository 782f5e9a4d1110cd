// units.parse and units.parse_bytes: quantities with SI / binary suffixes, computed exactly
// (a decimal amount times an integer unit) as OPA does with big.Rat / big.Float.

import { normBig } from "../value.js"
import { builtinErr, str } from "./args.js"
import type { BuiltinDef } from "./registry.js"

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

class ExponentTooLarge extends Error {}

/** OPA's extractNumAndUnit: splits "10.5Mi" into "10.5" and "Mi". */
const splitNumUnit = (s: string): [string, string] => {
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
      if (end - (i + 1) > 6) throw new ExponentTooLarge()
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
  if (e > 0) num *= 10n ** BigInt(e)
  else if (e < 0) den *= 10n ** BigInt(-e)
  if (sign === "-") num = -num
  return { num, den }
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
    fn: ([x]) => {
      const s = str(x, 1).toLowerCase().replaceAll('"', "")
      if (s.includes(" ")) throw builtinErr("spaces not allowed in resource strings")
      let num: string
      let unit: string
      try {
        ;[num, unit] = splitNumUnit(s)
      } catch {
        throw builtinErr("exponent too large")
      }
      if (num === "") throw builtinErr("no byte amount provided")
      const mult = BYTE_UNITS[unit]
      if (mult === undefined) throw builtinErr(`byte unit ${unit} not recognized`)
      const d = parseDecimal(num)
      if (d === undefined) throw builtinErr("could not parse byte amount to a number")
      return normBig((d.num * mult) / d.den)
    }
  },
  {
    name: "units.parse",
    arity: 1,
    fn: ([x]) => {
      const s = str(x, 1).replaceAll('"', "")
      if (s.includes(" ")) throw builtinErr("spaces not allowed in resource strings")
      let num: string
      let unit: string
      try {
        ;[num, unit] = splitNumUnit(s)
      } catch {
        throw builtinErr("exponent too large")
      }
      if (num === "") throw builtinErr("no amount provided")
      if (unit.length > 1) unit = unit[0] + unit.slice(1).toLowerCase()
      const d = parseDecimal(num)
      let n: bigint
      let den: bigint
      if (unit === "m") {
        if (d === undefined) throw builtinErr("could not parse amount to a number")
        n = d.num
        den = d.den * 1000n
      } else {
        const mult = UNITS[unit]
        if (mult === undefined) throw builtinErr(`unit ${unit} not recognized`)
        if (d === undefined) throw builtinErr("could not parse amount to a number")
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
