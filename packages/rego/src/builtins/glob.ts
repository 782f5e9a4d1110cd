// glob.match and glob.quote_meta with gobwas/glob semantics: `*` matches within a segment
// (not across delimiters), `**` across segments, `?` one non-delimiter character, `[...]`/`[!...]`
// character classes, `{a,b}` alternatives and `\` escapes.


import { builtinErr, str } from "./args.js"
import { type BuiltinDef, elementTypeError, typeError } from "./registry.js"

const escapeRe = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&")

const compileGlob = (pattern: string, delimiters: readonly string[]): RegExp => {
  const notDelim = delimiters.length === 0 ? "[\\s\\S]" : "[^" + delimiters.map(escapeRe).join("") + "]"
  let i = 0
  const parse = (inAlt: boolean): string => {
    let out = ""
    while (i < pattern.length) {
      const ch = pattern[i]
      if (inAlt && (ch === "," || ch === "}")) return out
      switch (ch) {
        case "\\": {
          const next = pattern[i + 1]
          if (next === undefined) throw builtinErr("unexpected end of input")
          out += escapeRe(next)
          i += 2
          break
        }
        case "*":
          if (pattern[i + 1] === "*") {
            out += "[\\s\\S]*"
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
          const end = pattern.indexOf("]", i + 1)
          if (end < 0) throw builtinErr("unexpected end of input")
          let body = pattern.slice(i + 1, end)
          let neg = false
          if (body.startsWith("!")) {
            neg = true
            body = body.slice(1)
          }
          if (body === "") throw builtinErr("unexpected length of lo character")
          let cls = ""
          for (let j = 0; j < body.length; j++) {
            if (body[j + 1] === "-" && j + 2 < body.length) {
              cls += escapeRe(body[j]) + "-" + escapeRe(body[j + 2])
              j += 2
            } else cls += escapeRe(body[j])
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
            if (i >= pattern.length) throw builtinErr("unexpected end of input")
            if (pattern[i] === "}") {
              i++
              break
            }
            i++ // ','
          }
          out += "(?:" + alts.join("|") + ")"
          break
        }
        default: {
          const cp = String.fromCodePoint(pattern.codePointAt(i) as number)
          out += escapeRe(cp)
          i += cp.length
        }
      }
    }
    return out
  }
  const src = parse(false)
  return new RegExp("^" + src + "$", "u")
}

/** Compiled patterns, oldest evicted first: policies use a bounded set of patterns. */
const cache = new Map<string, RegExp>()
const MAX_CACHE = 4096

export const globs: BuiltinDef[] = [
  {
    name: "glob.match",
    arity: 3,
    fn: ([p, d, m]) => {
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
      let re = cache.get(key)
      if (re === undefined) {
        re = compileGlob(pattern, delims)
        if (cache.size >= MAX_CACHE) cache.delete(cache.keys().next().value as string)
        cache.set(key, re)
      }
      return re.test(match)
    }
  },
  {
    name: "glob.quote_meta",
    arity: 1,
    fn: ([p]) => str(p, 1).replace(/[*?\\[\]{}]/g, "\\$&")
  }
]


