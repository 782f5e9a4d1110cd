// Regular expressions with Go RE2 syntax, translated to JavaScript RegExp (Unicode mode).
//
// Translation: `(?P<name>...)` named groups, `\A`/`\z` anchors, `\Q...\E` quoting, POSIX classes
// (`[[:alpha:]]`), `\pL`/`\p{Greek}` classes, Go's ASCII-only `\s`, escaped punctuation, and
// leading flag groups (`(?i)`, `(?s)`, `(?m)`). RE2 has no backreferences or lookaround: such
// patterns are rejected as Go rejects them. Remaining difference: flag groups in the middle of a
// pattern (`a(?i)b`) apply to the whole pattern.

import type { Value } from "../value.js"
import { builtinErr, int, str } from "./args.js"
import type { BuiltinDef } from "./registry.js"

const POSIX: Record<string, string> = {
  alnum: "0-9A-Za-z",
  alpha: "A-Za-z",
  ascii: "\\x00-\\x7F",
  blank: "\\t ",
  cntrl: "\\x00-\\x1F\\x7F",
  digit: "0-9",
  graph: "!-~",
  lower: "a-z",
  print: " -~",
  punct: "!-\\/:-@\\[-`{-~",
  space: "\\t\\n\\v\\f\\r ",
  upper: "A-Z",
  word: "0-9A-Za-z_",
  xdigit: "0-9A-Fa-f"
}

const GENERAL_CATEGORIES = new Set([
  "L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "Mn", "Mc", "Me", "N", "Nd", "Nl", "No", "P", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po",
  "S", "Sm", "Sc", "Sk", "So", "Z", "Zs", "Zl", "Zp", "C", "Cc", "Cf", "Cs", "Co", "Cn"
])

const SYNTAX = new Set([..."^$\\.*+?()[]{}|/"])

class RegexSyntaxError extends Error {}

const unicodeClass = (name: string, negated: boolean): string => {
  const p = negated ? "\\P" : "\\p"
  if (name === "Any") return negated ? "[^\\s\\S]" : "[\\s\\S]"
  return GENERAL_CATEGORIES.has(name) ? `${p}{${name}}` : `${p}{Script=${name}}`
}

const escapeLiteral = (ch: string): string => (SYNTAX.has(ch) || ch === "-" ? "\\" + ch : ch)

/** Translates a Go regexp to a JavaScript source and flags. */
export const translateRegex = (pattern: string): { source: string; flags: string } => {
  let flags = "u"
  let out = ""
  let i = 0
  let inClass = false
  let classStart = false
  const n = pattern.length
  while (i < n) {
    const ch = pattern[i]
    if (ch === "\\") {
      const next = pattern[i + 1]
      if (next === undefined) throw new RegexSyntaxError("trailing backslash at end of expression")
      i += 2
      switch (next) {
        case "Q": {
          const end = pattern.indexOf("\\E", i)
          const lit = end < 0 ? pattern.slice(i) : pattern.slice(i, end)
          out += [...lit].map(escapeLiteral).join("")
          i = end < 0 ? n : end + 2
          break
        }
        case "A":
          out += "(?<![\\s\\S])"
          break
        case "z":
          out += "(?![\\s\\S])"
          break
        case "s":
          out += inClass ? "\\t\\n\\f\\r " : "[\\t\\n\\f\\r ]"
          break
        case "S":
          out += inClass ? "\\x00-\\x08\\x0B\\x0E-\\x1F\\x21-\\u{10FFFF}" : "[^\\t\\n\\f\\r ]"
          break
        case "p":
        case "P": {
          let name: string
          if (pattern[i] === "{") {
            const end = pattern.indexOf("}", i)
            if (end < 0) throw new RegexSyntaxError("invalid character class range")
            name = pattern.slice(i + 1, end)
            i = end + 1
          } else {
            name = pattern[i] ?? ""
            i++
          }
          let negated = next === "P"
          if (name.startsWith("^")) {
            negated = !negated
            name = name.slice(1)
          }
          out += unicodeClass(name, negated)
          break
        }
        case "x": {
          if (pattern[i] === "{") {
            const end = pattern.indexOf("}", i)
            out += "\\u{" + pattern.slice(i + 1, end) + "}"
            i = end + 1
          } else {
            out += "\\x" + pattern.slice(i, i + 2)
            i += 2
          }
          break
        }
        case "a":
          out += "\\x07"
          break
        case "d":
        case "D":
        case "w":
        case "W":
        case "b":
        case "B":
        case "f":
        case "n":
        case "r":
        case "t":
        case "v":
          out += "\\" + next
          break
        case "0":
        case "1":
        case "2":
        case "3":
        case "4":
        case "5":
        case "6":
        case "7": {
          // Go reads \1 as an octal escape only when followed by more octal digits: backreferences are errors.
          const oct = /^[0-7]{0,2}/.exec(pattern.slice(i))?.[0] ?? ""
          if (next !== "0" && oct === "") throw new RegexSyntaxError("invalid escape sequence: `\\" + next + "`")
          out += "\\u{" + parseInt(next + oct, 8).toString(16) + "}"
          i += oct.length
          break
        }
        default:
          if (/[A-Za-z0-9]/.test(next)) throw new RegexSyntaxError("invalid escape sequence: `\\" + next + "`")
          out += escapeLiteral(next)
      }
      classStart = false
      continue
    }
    if (inClass) {
      if (ch === "[" && pattern[i + 1] === ":") {
        const end = pattern.indexOf(":]", i + 2)
        if (end > 0) {
          let name = pattern.slice(i + 2, end)
          const neg = name.startsWith("^")
          if (neg) name = name.slice(1)
          const cls = POSIX[name]
          if (cls === undefined) throw new RegexSyntaxError("invalid character class range: `[:" + name + ":]`")
          if (neg) throw new RegexSyntaxError("negated POSIX classes are not supported")
          out += cls
          i = end + 2
          classStart = false
          continue
        }
      }
      if (ch === "]" && !classStart) {
        inClass = false
        out += "]"
        i++
        continue
      }
      if (ch === "[" || ch === "/" || ch === "{" || ch === "}" || ch === "(" || ch === ")" || ch === "|") out += "\\" + ch
      else if (ch === "]") out += "\\]"
      else out += ch
      classStart = false
      i++
      continue
    }
    switch (ch) {
      case "[":
        inClass = true
        out += "["
        i++
        if (pattern[i] === "^") {
          out += "^"
          i++
        }
        classStart = true
        continue
      case "(": {
        if (pattern[i + 1] === "?") {
          const rest = pattern.slice(i + 2)
          if (rest.startsWith("P<")) {
            out += "(?<"
            i += 4
            continue
          }
          if (rest.startsWith("=") || rest.startsWith("!") || rest.startsWith("<=") || rest.startsWith("<!")) {
            throw new RegexSyntaxError("invalid or unsupported Perl syntax: `(?" + rest[0] + "`")
          }
          const fm = /^([imsU]*)(?:-([imsU]*))?([:)])/.exec(rest)
          if (fm !== null) {
            for (const f of fm[1]) if (f !== "U" && !flags.includes(f)) flags += f
            if (fm[3] === ")") {
              i += 2 + fm[0].length
              continue
            }
            out += "(?:"
            i += 2 + fm[0].length
            continue
          }
        }
        out += "("
        i++
        continue
      }
      case "{": {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i))
        if (m !== null) {
          const lo = Number(m[1])
          const hi = m[3] !== undefined && m[3] !== "" ? Number(m[3]) : lo
          if (lo > 1000 || hi > 1000 || hi < lo) throw new RegexSyntaxError("invalid repeat count: `" + m[0] + "`")
          out += m[0]
          i += m[0].length
          continue
        }
        out += "\\{"
        i++
        continue
      }
      case "}":
        out += "\\}"
        i++
        continue
      case "/":
        out += "\\/"
        i++
        continue
      default:
        out += ch
        i++
    }
  }
  if (inClass) throw new RegexSyntaxError("missing closing ]: `" + pattern + "`")
  return { source: out, flags }
}

const cache = new Map<string, RegExp>()
const MAX_CACHE = 4096

/** A compiled Go regexp (cached); throws a builtin error for invalid patterns. */
export const compileRegex = (pattern: string): RegExp => {
  let re = cache.get(pattern)
  if (re !== undefined) return re
  try {
    const { source, flags } = translateRegex(pattern)
    re = new RegExp(source, flags + "g")
  } catch (e) {
    throw builtinErr(`error parsing regexp: ${e instanceof Error ? e.message : String(e)}`)
  }
  if (cache.size >= MAX_CACHE) cache.delete(cache.keys().next().value as string)
  cache.set(pattern, re)
  return re
}

/** All matches, like Go's FindAll*(s, n) (n < 0: all); empty matches advance by one code point. */
const findAll = (re: RegExp, s: string, n: number): RegExpExecArray[] => {
  const out: RegExpExecArray[] = []
  if (n === 0) return out
  re.lastIndex = 0
  let prevEnd = -1
  for (;;) {
    const m = re.exec(s)
    if (m === null) break
    const end = m.index + m[0].length
    if (m[0].length === 0) {
      // Go does not report an empty match right after a previous match.
      if (m.index === prevEnd) {
        re.lastIndex = m.index + (s.codePointAt(m.index) !== undefined && (s.codePointAt(m.index) as number) > 0xffff ? 2 : 1)
        if (re.lastIndex > s.length) break
        continue
      }
      re.lastIndex = m.index + ((s.codePointAt(m.index) ?? 0) > 0xffff ? 2 : 1)
    }
    out.push(m)
    prevEnd = end
    if (n > 0 && out.length >= n) break
    if (m.index >= s.length) break
  }
  re.lastIndex = 0
  return out
}

/** Go's Regexp.Expand for `$1`, `${1}`, `$name`, `${name}` and `$$`. */
const expand = (template: string, m: RegExpExecArray): string => {
  let out = ""
  for (let i = 0; i < template.length; i++) {
    const c = template[i]
    if (c !== "$") {
      out += c
      continue
    }
    const rest = template.slice(i + 1)
    if (rest.startsWith("$")) {
      out += "$"
      i++
      continue
    }
    const braced = /^\{([A-Za-z0-9_]+)\}/.exec(rest)
    const bare = /^[A-Za-z0-9_]+/.exec(rest)
    const name = braced !== null ? braced[1] : bare !== null ? bare[0] : undefined
    if (name === undefined) {
      out += "$"
      continue
    }
    i += braced !== null ? braced[0].length : (bare as RegExpExecArray)[0].length
    if (/^\d+$/.test(name)) out += m[Number(name)] ?? ""
    else out += m.groups?.[name] ?? ""
  }
  return out
}

const matchTemplate = (pattern: string, start: string, end: string): RegExp => {
  let src = ""
  let i = 0
  while (i < pattern.length) {
    const s = pattern.indexOf(start, i)
    if (s < 0) {
      src += [...pattern.slice(i)].map(escapeLiteral).join("")
      break
    }
    src += [...pattern.slice(i, s)].map(escapeLiteral).join("")
    // Find the matching end delimiter (delimiters may nest inside the expression).
    let depth = 0
    let j = s
    for (; j < pattern.length; j++) {
      if (pattern[j] === start) depth++
      else if (pattern[j] === end) {
        depth--
        if (depth === 0) break
      }
    }
    if (j >= pattern.length) throw builtinErr(`unbalanced braces in ${JSON.stringify(pattern)}`)
    src += "(?:" + translateRegex(pattern.slice(s + 1, j)).source + ")"
    i = j + 1
  }
  return new RegExp("^" + src + "$", "u")
}

export const regex: BuiltinDef[] = [
  {
    name: "regex.is_valid",
    arity: 1,
    fn: ([a]) => {
      if (typeof a !== "string") return false
      try {
        compileRegex(a)
        return true
      } catch {
        return false
      }
    }
  },
  {
    name: "regex.match",
    arity: 2,
    fn: ([p, s]) => {
      const re = compileRegex(str(p, 1))
      const text = str(s, 2)
      re.lastIndex = 0
      const r = re.test(text)
      re.lastIndex = 0
      return r
    }
  },
  { name: "re_match", arity: 2, deprecated: true, fn: ([p, s]) => compileRegex(str(p, 1)).test(str(s, 2)) },
  {
    name: "regex.find_n",
    arity: 3,
    fn: ([p, s, n]) => findAll(compileRegex(str(p, 1)), str(s, 2), int(n, 3)).map((m) => m[0])
  },
  {
    name: "regex.find_all_string_submatch_n",
    arity: 3,
    fn: ([p, s, n]) => findAll(compileRegex(str(p, 1)), str(s, 2), int(n, 3)).map((m) => m.map((g) => g ?? "") as Value[])
  },
  {
    name: "regex.split",
    arity: 2,
    fn: ([p, s]) => {
      const re = compileRegex(str(p, 1))
      const text = str(s, 2)
      const ms = findAll(re, text, -1)
      if (ms.length === 0) return [text]
      const out: Value[] = []
      let last = 0
      for (const m of ms) {
        if (m[0].length === 0 && m.index === 0) continue
        out.push(text.slice(last, m.index))
        last = m.index + m[0].length
      }
      out.push(text.slice(last))
      return out
    }
  },
  {
    name: "regex.replace",
    arity: 3,
    fn: ([b, p, v]) => {
      const base = str(b, 1)
      const re = compileRegex(str(p, 2))
      const value = str(v, 3)
      let out = ""
      let last = 0
      for (const m of findAll(re, base, -1)) {
        out += base.slice(last, m.index) + expand(value, m)
        last = m.index + m[0].length
      }
      return out + base.slice(last)
    }
  },
  {
    name: "regex.template_match",
    arity: 4,
    fn: ([p, m, s, e]) => {
      const pattern = str(p, 1)
      const match = str(m, 2)
      const start = str(s, 3)
      const end = str(e, 4)
      if (start.length !== 1) throw builtinErr(`start delimiter has to be exactly one character long but is ${start.length} long`)
      if (end.length !== 1) throw builtinErr(`end delimiter has to be exactly one character long but is ${start.length} long`)
      try {
        return matchTemplate(pattern, start, end).test(match)
      } catch (err) {
        if (err instanceof RegexSyntaxError || err instanceof SyntaxError) throw builtinErr(`error parsing regexp: ${err.message}`)
        throw err
      }
    }
  }
]
