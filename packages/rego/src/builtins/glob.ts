// glob.match and glob.quote_meta with gobwas/glob semantics: `*` matches within a segment
// (not across delimiters), `**` across segments, `?` one non-delimiter character, `[...]`/`[!...]`
// character classes, `{a,b}` alternatives and `\` escapes. A glob is translated to an RE2
// pattern and matched by the linear-time engine of src/re2 (a glob with many stars would take
// polynomial time, and nested alternatives exponential time, in a backtracking engine).

import { PatternCache } from "../re2/cache.js"
import { Regexp, RegexpSyntaxError } from "../re2/regexp.js"
import { str } from "./args.js"
import { meterOf } from "./regex.js"
import { asBuiltinError, type BuiltinContext, type BuiltinDef, builtinError, elementTypeError, typeError } from "./registry.js"

/** A code point as an RE2 literal (letters and digits as themselves, anything else as \x{...}). */
const lit = (cp: number): string => (/[A-Za-z0-9]/.test(String.fromCodePoint(cp)) ? String.fromCodePoint(cp) : `\\x{${cp.toString(16)}}`)

/** The RE2 pattern matching what a glob matches, as a whole string. */
const globPattern = (pattern: string, delimiters: readonly string[]): string => {
  const anyChar = "(?s:.)"
  const notDelim = delimiters.length === 0 ? anyChar : "[^" + delimiters.map((d) => lit(d.codePointAt(0) as number)).join("") + "]"
  const cps = Array.from(pattern, (c) => c.codePointAt(0) as number)
  let i = 0
  const parse = (inAlt: boolean): string => {
    let out = ""
    while (i < cps.length) {
      const ch = String.fromCodePoint(cps[i])
      if (inAlt && (ch === "," || ch === "}")) return out
      switch (ch) {
        case "\\": {
          if (i + 1 >= cps.length) throw builtinError("unexpected end of input")
          out += lit(cps[i + 1])
          i += 2
          break
        }
        case "*":
          if (cps[i + 1] === 0x2a) {
            out += anyChar + "*"
            i += 2
          } else {
            out += notDelim + "*"
            i++
          }
          break
        case "?":
          out += notDelim
          i++
          break
        case "[": {
          let end = i + 1
          while (end < cps.length && cps[end] !== 0x5d) end++
          if (end >= cps.length) throw builtinError("unexpected end of input")
          let body = cps.slice(i + 1, end)
          let neg = false
          if (body[0] === 0x21) {
            neg = true
            body = body.slice(1)
          }
          if (body.length === 0) throw builtinError("unexpected length of lo character")
          let cls = ""
          for (let j = 0; j < body.length; j++) {
            if (body[j + 1] === 0x2d && j + 2 < body.length) {
              cls += lit(body[j]) + "-" + lit(body[j + 2])
              j += 2
            } else cls += lit(body[j])
          }
          out += (neg ? "[^" : "[") + cls + "]"
          i = end + 1
          break
        }
        case "{": {
          i++
          const alts: string[] = []
          for (;;) {
            alts.push(parse(true))
            if (i >= cps.length) throw builtinError("unexpected end of input")
            if (cps[i] === 0x7d) {
              i++
              break
            }
            i++ // ','
          }
          out += "(?:" + alts.join("|") + ")"
          break
        }
        default:
          out += lit(cps[i])
          i++
      }
    }
    return out
  }
  return "^(?:" + parse(false) + ")$"
}

const compileGlob = (pattern: string, delimiters: readonly string[], ctx: BuiltinContext): Regexp =>
  asBuiltinError(RegexpSyntaxError, () => Regexp.compile(globPattern(pattern, delimiters), meterOf(ctx)))

/** Compiled patterns: policies use a bounded set of patterns. */
const cache = new PatternCache()

export const globs: BuiltinDef[] = [
  {
    name: "glob.match",
    arity: 3,
    fn: ([p, d, m], ctx) => {
      const pattern = str(p, 1)
      let delims: string[]
      if (d === null) delims = []
      else if (Array.isArray(d)) {
        delims = []
        for (const x of d) {
          if (typeof x !== "string") throw elementTypeError(2, d, x, "string")
          if ([...x].length !== 1) throw elementTypeError(2, d, x, "rune")
          delims.push(x)
        }
        if (delims.length === 0) delims = ["."]
      } else throw typeError(2, d, "array", "null")
      const match = str(m, 3)
      const key = pattern + "\u0000" + delims.join("")
      return cache.getOrCompile(key, () => compileGlob(pattern, delims, ctx)).matchString(match, meterOf(ctx))
    }
  },
  {
    name: "glob.quote_meta",
    arity: 1,
    fn: ([p]) => str(p, 1).replace(/[*?\\[\]{}]/g, "\\$&")
  }
]


