// Go's fmt.Sprintf, as OPA's sprintf exposes it: integers arrive as Go ints (or big.Int),
// other numbers as float64, strings as strings and every other value as its Rego text. Verbs
// that do not fit the operand produce Go's `%!verb(type=value)` text, as in OPA.

import { formatValue } from "../format.js"
import type { Value } from "../value.js"

type Arg = { t: "int"; v: bigint } | { t: "bigint"; v: bigint } | { t: "float"; v: number } | { t: "string"; v: string }

const INT64_MAX = 9223372036854775807n
const INT64_MIN = -9223372036854775808n

export const toGoArg = (v: Value): Arg => {
  if (typeof v === "string") return { t: "string", v }
  if (typeof v === "bigint") return v <= INT64_MAX && v >= INT64_MIN ? { t: "int", v } : { t: "bigint", v }
  if (typeof v === "number") return Number.isInteger(v) ? { t: "int", v: BigInt(v) } : { t: "float", v }
  return { t: "string", v: formatValue(v) }
}

const typeName = (a: Arg): string => (a.t === "int" ? "int" : a.t === "bigint" ? "*big.Int" : a.t === "float" ? "float64" : "string")

interface Spec {
  minus: boolean
  plus: boolean
  sharp: boolean
  zero: boolean
  space: boolean
  width: number | undefined
  prec: number | undefined
}

const pad = (s: string, spec: Spec, numeric: boolean): string => {
  const w = spec.width
  if (w === undefined || [...s].length >= w) return s
  const n = w - [...s].length
  if (spec.minus) return s + " ".repeat(n)
  if (spec.zero && numeric) {
    const sign = s[0] === "-" || s[0] === "+" || s[0] === " " ? s[0] : ""
    const rest = sign === "" ? s : s.slice(1)
    const prefixMatch = /^0[xXbo]/.exec(rest)
    const prefix = spec.sharp && prefixMatch !== null ? prefixMatch[0] : ""
    return sign + prefix + "0".repeat(n) + rest.slice(prefix.length)
  }
  return " ".repeat(n) + s
}

const withSign = (neg: boolean, digits: string, spec: Spec): string => (neg ? "-" : spec.plus ? "+" : spec.space ? " " : "") + digits

const quote = (s: string): string => JSON.stringify(s).replace(/\\u00([0-9a-f]{2})/g, "\\x$1")

const fmtInt = (v: bigint, verb: string, spec: Spec): string | undefined => {
  const neg = v < 0n
  const a = neg ? -v : v
  let digits: string
  switch (verb) {
    case "d":
    case "v":
      digits = a.toString(10)
      break
    case "b":
      digits = a.toString(2)
      if (spec.sharp) digits = "0b" + digits
      break
    case "o":
      digits = a.toString(8)
      if (spec.sharp) digits = "0" + digits
      break
    case "O":
      digits = "0o" + a.toString(8)
      break
    case "x":
      digits = a.toString(16)
      if (spec.sharp) digits = "0x" + digits
      break
    case "X":
      digits = a.toString(16).toUpperCase()
      if (spec.sharp) digits = "0X" + digits
      break
    case "c":
      return pad(String.fromCodePoint(Number(v)), spec, false)
    case "q":
      return pad("'" + String.fromCodePoint(Number(v)) + "'", spec, false)
    case "U":
      digits = "U+" + a.toString(16).toUpperCase().padStart(4, "0")
      break
    default:
      return undefined
  }
  if (spec.prec !== undefined && digits.length < spec.prec) digits = "0".repeat(spec.prec - digits.length) + digits
  return pad(withSign(neg, digits, spec), spec, spec.prec === undefined)
}

/** strconv.FormatFloat(v, 'g', prec, 64): shortest digits when prec is undefined. */
const fmtG = (v: number, prec: number | undefined, upper: boolean): string => {
  if (!Number.isFinite(v)) return Number.isNaN(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf"
  if (prec === undefined) {
    const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(v.toExponential()) as RegExpExecArray
    const exp = Number(m[4])
    // Go decides on the exponent form with precision 6 when printing the shortest digits.
    if (exp < -4 || exp >= 6) return goExp(m[1], m[2], m[3] ?? "", exp, upper)
    return v.toString()
  }
  const p = prec === 0 ? 1 : prec
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(v.toExponential(p - 1)) as RegExpExecArray
  const exp = Number(m[4])
  if (exp < -4 || exp >= p) return goExp(m[1], m[2], (m[3] ?? "").replace(/0+$/, ""), exp, upper)
  return String(Number(v.toPrecision(p)))
}

const goExp = (sign: string, lead: string, frac: string, exp: number, upper: boolean): string => {
  const es = (exp < 0 ? "-" : "+") + String(Math.abs(exp)).padStart(2, "0")
  return sign + lead + (frac !== "" ? "." + frac : "") + (upper ? "E" : "e") + es
}

const fmtFloat = (v: number, verb: string, spec: Spec): string | undefined => {
  let s: string
  switch (verb) {
    case "f":
    case "F":
      s = Number.isFinite(v) ? v.toFixed(spec.prec ?? 6) : fmtG(v, undefined, false)
      break
    case "e":
    case "E": {
      const e = v.toExponential(spec.prec ?? 6)
      const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(e)
      s = m === null ? e : goExp(m[1], m[2], m[3] ?? "", Number(m[4]), verb === "E")
      break
    }
    case "g":
    case "G":
    case "v":
      s = fmtG(v, spec.prec, verb === "G")
      break
    default:
      return undefined
  }
  if (!s.startsWith("-") && (spec.plus || spec.space)) s = (spec.plus ? "+" : " ") + s
  return pad(s, spec, true)
}

const fmtString = (v: string, verb: string, spec: Spec): string | undefined => {
  let s: string
  switch (verb) {
    case "s":
    case "v":
      s = spec.prec !== undefined ? [...v].slice(0, spec.prec).join("") : v
      break
    case "q":
      s = quote(v)
      break
    case "x":
      s = Buffer.from(v, "utf8").toString("hex")
      break
    case "X":
      s = Buffer.from(v, "utf8").toString("hex").toUpperCase()
      break
    default:
      return undefined
  }
  return pad(s, spec, false)
}

const formatArg = (a: Arg, verb: string, spec: Spec): string => {
  let out: string | undefined
  switch (a.t) {
    case "int":
    case "bigint":
      out = verb === "s" && a.t === "bigint" ? pad(a.v.toString(), spec, true) : fmtInt(a.v, verb, spec)
      break
    case "float":
      out = fmtFloat(a.v, verb, spec)
      break
    case "string":
      out = fmtString(a.v, verb, spec)
  }
  if (out !== undefined) return out
  return `%!${verb}(${typeName(a)}=${a.t === "string" ? a.v : a.t === "float" ? fmtG(a.v, undefined, false) : a.v.toString()})`
}

/** Go's fmt tooLarge: widths and precisions beyond a million are refused. */
const tooLarge = (n: number): boolean => n > 1e6 || n < -1e6

/** Go's fmt parsenum: a number at i; one that grows too large consumes the rest of the format. */
export const parseNum = (s: string, start: number): { num: number; isnum: boolean; next: number } => {
  let num = 0
  let isnum = false
  let i = start
  for (; i < s.length && s[i] >= "0" && s[i] <= "9"; i++) {
    if (tooLarge(num)) return { num: 0, isnum: false, next: s.length }
    num = num * 10 + (s.charCodeAt(i) - 0x30)
    isnum = true
  }
  return { num, isnum, next: i }
}

/** Go's fmt intFromArg: a `*` width or precision from an int operand. */
const intFromArg = (a: Arg | undefined): number | undefined => {
  if (a === undefined || a.t !== "int") return undefined
  const n = Number(a.v)
  return tooLarge(n) ? undefined : n
}

/**
 * Formats like Go's fmt.Sprintf. `charge` is told the padding a width or precision asks for
 * before it is allocated (up to ten million characters each, as in Go).
 */
export const goSprintf = (format: string, values: readonly Value[], charge: (n: number) => void = () => undefined): string => {
  const args = values.map(toGoArg)
  let out = ""
  let argi = 0
  let i = 0
  while (i < format.length) {
    const ch = format[i]
    if (ch !== "%") {
      out += ch
      i++
      continue
    }
    i++
    if (i >= format.length) {
      out += "%!(NOVERB)"
      break
    }
    const spec: Spec = { minus: false, plus: false, sharp: false, zero: false, space: false, width: undefined, prec: undefined }
    for (; i < format.length; i++) {
      const f = format[i]
      if (f === "-") spec.minus = true
      else if (f === "+") spec.plus = true
      else if (f === "#") spec.sharp = true
      else if (f === "0") spec.zero = true
      else if (f === " ") spec.space = true
      else break
    }
    // Explicit argument index: %[2]d
    const idx = /^\[(\d+)\]/.exec(format.slice(i))
    if (idx !== null) {
      argi = Number(idx[1]) - 1
      i += idx[0].length
    }
    if (format[i] === "*") {
      i++
      const w = argi < args.length ? intFromArg(args[argi++]) : undefined
      if (w === undefined) out += "%!(BADWIDTH)"
      else if (w < 0) {
        // A negative width pads on the right.
        spec.width = -w
        spec.minus = true
        spec.zero = false
      } else spec.width = w
    } else {
      const w = parseNum(format, i)
      if (w.isnum) spec.width = w.num
      i = w.next
    }
    if (i + 1 < format.length && format[i] === ".") {
      i++
      if (format[i] === "*") {
        i++
        const p = argi < args.length ? intFromArg(args[argi++]) : undefined
        if (p === undefined || p < 0) out += "%!(BADPREC)"
        else spec.prec = p
      } else {
        const p = parseNum(format, i)
        spec.prec = p.isnum ? p.num : 0
        i = p.next
      }
    }
    charge(((spec.width ?? 0) + (spec.prec ?? 0)) >> 4)
    if (i >= format.length) {
      out += "%!(NOVERB)"
      break
    }
    const verb = format[i++]
    if (verb === "%") {
      out += "%"
      continue
    }
    if (argi >= args.length) {
      out += `%!${verb}(MISSING)`
      continue
    }
    out += formatArg(args[argi++], verb, spec)
  }
  if (argi < args.length) {
    out += "%!(EXTRA " + args.slice(argi).map((a) => `${typeName(a)}=${a.t === "string" ? a.v : a.t === "float" ? fmtG(a.v, undefined, false) : a.v.toString()}`).join(", ") + ")"
  }
  return out
}
