// String builtins. Rego strings are sequences of Unicode code points: lengths, indices and
// reversal count code points, not UTF-16 units.

import { type Value, isObject, objectKeys, objectGet, RegoSet } from "../value.js"
import { int, num, str, strings as stringList } from "./args.js"
import { type BuiltinDef, builtinError, elementTypeError, operandError, typeError } from "./registry.js"
import { goSprintf } from "./sprintf.js"

const isAscii = (s: string): boolean => {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false
  return true
}

/** Go's unicode.IsSpace. */
export const isGoSpace = (c: number): boolean =>
  c === 0x20 ||
  (c >= 0x09 && c <= 0x0d) ||
  c === 0x85 ||
  c === 0xa0 ||
  c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x3000

/**
 * Removes leading and/or trailing runs of the given ASCII characters, in linear time (the
 * regular expression /c+$/ is quadratic in a backtracking engine on a long run of c followed
 * by something else).
 */
export const trimASCII = (s: string, chars: string, left = true, right = true): string => {
  let a = 0
  let b = s.length
  if (left) while (a < b && chars.includes(s[a])) a++
  if (right) while (b > a && chars.includes(s[b - 1])) b--
  return a === 0 && b === s.length ? s : s.slice(a, b)
}

const trimCut = (s: string, cut: string, left: boolean, right: boolean): string => {
  const set = new Set([...cut])
  const cps = [...s]
  let a = 0
  let b = cps.length
  if (left) while (a < b && set.has(cps[a])) a++
  if (right) while (b > a && set.has(cps[b - 1])) b--
  return cps.slice(a, b).join("")
}

const trimSpace = (s: string): string => {
  const cps = [...s]
  let a = 0
  let b = cps.length
  while (a < b && isGoSpace(cps[a].codePointAt(0) as number)) a++
  while (b > a && isGoSpace(cps[b - 1].codePointAt(0) as number)) b--
  return cps.slice(a, b).join("")
}

/**
 * Go's strings.NewReplacer(pairs...).Replace(s): leftmost match, earlier pairs win at a position.
 * The result can be far larger than s (an empty old string inserts at every position): `charge`
 * is told its size before it is built, or as it grows.
 */
export const replaceAll = (s: string, pairs: ReadonlyArray<readonly [string, string]>, charge: (n: number) => void = () => undefined): string => {
  if (pairs.length === 1 && pairs[0][0] !== "") {
    const parts = s.split(pairs[0][0])
    charge((s.length + (parts.length - 1) * pairs[0][1].length) >> 4)
    return parts.join(pairs[0][1])
  }
  let out = ""
  let charged = 0
  let i = 0
  for (;;) {
    let advanced = false
    for (const [old, rep] of pairs) {
      if (!s.startsWith(old, i)) continue
      if (out.length - charged > 65536) {
        charge((out.length - charged) >> 4)
        charged = out.length
      }
      out += rep
      if (old !== "") {
        i += old.length
        advanced = true
      }
      break
    }
    if (advanced) continue
    if (i >= s.length) break
    const ch = String.fromCodePoint(s.codePointAt(i) as number)
    out += ch
    i += ch.length
  }
  return out
}

/** Index in code points of the first occurrence of search in base, or -1. */
const runeIndexOf = (base: string, search: string, from = 0): number => {
  const i = base.indexOf(search, from)
  if (i < 0) return -1
  return [...base.slice(0, i)].length
}

const reverse = (s: string): string => [...s].reverse().join("")

const stringsOrString = (v: Value, pos: number): string[] => {
  if (typeof v === "string") return [v]
  if (Array.isArray(v) || v instanceof RegoSet) return stringList(v, pos)
  throw typeError(pos, v, "string", "set", "array")
}

const formatInt = (n: number | bigint, base: number): string => {
  const i = typeof n === "bigint" ? n : BigInt(Math.trunc(n))
  return i.toString(base)
}

export const stringBuiltins: BuiltinDef[] = [
  {
    name: "concat",
    arity: 2,
    fn: ([sep, xs], ctx) => {
      const s = str(sep, 1)
      if (!Array.isArray(xs) && !(xs instanceof RegoSet)) throw typeError(2, xs, "set", "array")
      const items = Array.isArray(xs) ? xs : xs.sorted()
      let length = s.length * Math.max(0, items.length - 1)
      for (const x of items) {
        if (typeof x !== "string") throw elementTypeError(2, xs, x, "string")
        length += x.length
      }
      // The separator repeats: the result can be far larger than the operands. Charged first.
      ctx.charge(length >> 4)
      return (items as string[]).join(s)
    }
  },
  { name: "contains", arity: 2, fn: ([a, b]) => str(a, 1).includes(str(b, 2)) },
  { name: "startswith", arity: 2, fn: ([a, b]) => str(a, 1).startsWith(str(b, 2)) },
  { name: "endswith", arity: 2, fn: ([a, b]) => str(a, 1).endsWith(str(b, 2)) },
  { name: "lower", arity: 1, fn: ([a]) => str(a, 1).toLowerCase() },
  { name: "upper", arity: 1, fn: ([a]) => str(a, 1).toUpperCase() },
  {
    name: "split",
    arity: 2,
    fn: ([a, b]) => {
      const s = str(a, 1)
      const d = str(b, 2)
      if (d === "") return [...s]
      return s.split(d)
    }
  },
  { name: "replace", arity: 3, fn: ([a, b, c], ctx) => replaceAll(str(a, 1), [[str(b, 2), str(c, 3)]], (n) => ctx.charge(n)) },
  {
    name: "strings.replace_n",
    arity: 2,
    fn: ([patterns, s], ctx) => {
      if (!isObject(patterns)) throw typeError(1, patterns, "object")
      const text = str(s, 2)
      const pairs: Array<[string, string]> = []
      for (const k of objectKeys(patterns)) {
        if (typeof k !== "string") throw operandError(1, "non-string key found in pattern object")
        const v = objectGet(patterns, k)
        if (typeof v !== "string") throw operandError(1, "non-string value found in pattern object")
        pairs.push([k, v])
      }
      return pairs.length === 0 ? text : replaceAll(text, pairs, (n) => ctx.charge(n))
    }
  },
  { name: "trim", arity: 2, fn: ([a, b]) => trimCut(str(a, 1), str(b, 2), true, true) },
  { name: "trim_left", arity: 2, fn: ([a, b]) => trimCut(str(a, 1), str(b, 2), true, false) },
  { name: "trim_right", arity: 2, fn: ([a, b]) => trimCut(str(a, 1), str(b, 2), false, true) },
  {
    name: "trim_prefix",
    arity: 2,
    fn: ([a, b]) => {
      const s = str(a, 1)
      const p = str(b, 2)
      return s.startsWith(p) ? s.slice(p.length) : s
    }
  },
  {
    name: "trim_suffix",
    arity: 2,
    fn: ([a, b]) => {
      const s = str(a, 1)
      const p = str(b, 2)
      return p !== "" && s.endsWith(p) ? s.slice(0, s.length - p.length) : s
    }
  },
  { name: "trim_space", arity: 1, fn: ([a]) => trimSpace(str(a, 1)) },
  {
    name: "sprintf",
    arity: 2,
    fn: ([f, xs], ctx) => {
      const format = str(f, 1)
      if (!Array.isArray(xs)) throw typeError(2, xs, "array")
      return goSprintf(format, xs, (n) => ctx.charge(n))
    }
  },
  {
    name: "format_int",
    arity: 2,
    fn: ([a, b]) => {
      const n = num(a, 1)
      const base = num(b, 2)
      if (base !== 2 && base !== 8 && base !== 10 && base !== 16) throw operandError(2, "must be one of {2, 8, 10, 16}")
      return formatInt(n, Number(base))
    }
  },
  {
    name: "indexof",
    arity: 2,
    fn: ([a, b]) => {
      const base = str(a, 1)
      const search = str(b, 2)
      if (search === "") throw builtinError("empty search character")
      if (isAscii(base)) return base.indexOf(search)
      return runeIndexOf(base, search)
    }
  },
  {
    name: "indexof_n",
    arity: 2,
    fn: ([a, b]) => {
      const base = str(a, 1)
      const search = str(b, 2)
      if (search === "") throw builtinError("empty search character")
      const out: Value[] = []
      const units: number[] = []
      let i = base.indexOf(search)
      while (i >= 0) {
        units.push(i)
        i = base.indexOf(search, i + 1)
      }
      for (const u of units) out.push(isAscii(base) ? u : [...base.slice(0, u)].length)
      return out
    }
  },
  {
    name: "substring",
    arity: 3,
    fn: ([a, b, c]) => {
      const base = str(a, 1)
      const start = int(b, 2)
      const length = int(c, 3)
      if (start < 0) throw builtinError("negative offset")
      const cps = isAscii(base) ? undefined : [...base]
      const n = cps === undefined ? base.length : cps.length
      if (start >= n) return ""
      const end = length < 0 ? n : Math.min(n, start + length)
      return cps === undefined ? base.slice(start, end) : cps.slice(start, end).join("")
    }
  },
  {
    name: "strings.count",
    arity: 2,
    fn: ([a, b]) => {
      const s = str(a, 1)
      const sub = str(b, 2)
      if (sub === "") return [...s].length + 1
      let n = 0
      let i = s.indexOf(sub)
      while (i >= 0) {
        n++
        i = s.indexOf(sub, i + sub.length)
      }
      return n
    }
  },
  { name: "strings.reverse", arity: 1, fn: ([a]) => reverse(str(a, 1)) },
  {
    name: "strings.any_prefix_match",
    arity: 2,
    fn: ([a, b], ctx) => {
      const strs = stringsOrString(a, 1)
      const prefixes = stringsOrString(b, 2)
      return strs.some((s) => {
        ctx.charge(prefixes.length)
        return prefixes.some((p) => s.startsWith(p))
      })
    }
  },
  {
    name: "strings.any_suffix_match",
    arity: 2,
    fn: ([a, b], ctx) => {
      const strs = stringsOrString(a, 1)
      const suffixes = stringsOrString(b, 2)
      return strs.some((s) => {
        ctx.charge(suffixes.length)
        return suffixes.some((p) => s.endsWith(p))
      })
    }
  },
]

