// regex.*: Go's regexp (RE2 syntax, leftmost-first submatches) on the engine in src/re2, which
// matches in time linear in the input whatever the pattern, and charges its work to the
// evaluation's step limit, so that a hostile pattern or input cannot hold the thread.

import { PatternCache } from "../re2/cache.js"
import { type Meter, Regexp, RegexpSyntaxError } from "../re2/regexp.js"
import { int, str } from "./args.js"
import { asBuiltinError, type BuiltinContext, type BuiltinDef, builtinError } from "./registry.js"

const cache = new PatternCache()

/** The work of a builtin call, charged to the evaluation (matches and compilations). */
export const meterOf =
  (ctx: BuiltinContext): Meter =>
  (n) =>
    ctx.charge(n)

const compileUncached = (pattern: string, ctx: BuiltinContext | undefined): Regexp =>
  asBuiltinError(RegexpSyntaxError, () => Regexp.compile(pattern, ctx === undefined ? undefined : meterOf(ctx)))

/** A compiled Go regexp (cached); throws a builtin error with Go's message for invalid patterns. */
export const compileRegex = (pattern: string, ctx?: BuiltinContext): Regexp => cache.getOrCompile(pattern, () => compileUncached(pattern, ctx))

/** Go's regexp.QuoteMeta. */
export const quoteMeta = (s: string): string => s.replace(/[\\.+*?()|[\]{}^$]/g, "\\$&")

/**
 * The pattern of regex.template_match (OPA's compileRegexTemplate, from gorilla/mux): the
 * text outside the delimiters quoted, each delimited part a group, anchored at both ends. Each
 * part must also be a valid expression on its own.
 */
const templatePattern = (tpl: string, start: string, end: string, ctx: BuiltinContext): string => {
  // Delimiter positions at the first nesting level; unbalanced delimiters are an error.
  const idxs: number[] = []
  let level = 0
  let idx = 0
  for (let i = 0; i < tpl.length; i++) {
    if (tpl[i] === start) {
      if (++level === 1) idx = i
    } else if (tpl[i] === end) {
      if (--level === 0) idxs.push(idx, i + 1)
      else if (level < 0) throw builtinError(`unbalanced braces in ${JSON.stringify(tpl)}`)
    }
  }
  if (level !== 0) throw builtinError(`unbalanced braces in ${JSON.stringify(tpl)}`)
  let pattern = "^"
  let last = 0
  for (let i = 0; i < idxs.length; i += 2) {
    const part = tpl.slice(idxs[i] + 1, idxs[i + 1] - 1)
    pattern += quoteMeta(tpl.slice(last, idxs[i])) + "(" + part + ")"
    last = idxs[i + 1]
    compileUncached(`^${part}$`, ctx)
  }
  return pattern + quoteMeta(tpl.slice(last)) + "$"
}

/** Go's len(): the length of a string in UTF-8 bytes. */
const byteLength = (s: string): number => Buffer.byteLength(s, "utf8")

export const regex: BuiltinDef[] = [
  {
    name: "regex.is_valid",
    arity: 1,
    fn: ([a], ctx) => {
      if (typeof a !== "string") return false
      try {
        compileRegex(a, ctx)
        return true
      } catch {
        return false
      }
    }
  },
  {
    name: "regex.match",
    arity: 2,
    fn: ([p, s], ctx) => compileRegex(str(p, 1), ctx).matchString(str(s, 2), meterOf(ctx))
  },
  { name: "re_match", arity: 2, deprecated: true, fn: ([p, s], ctx) => compileRegex(str(p, 1), ctx).matchString(str(s, 2), meterOf(ctx)) },
  {
    name: "regex.find_n",
    arity: 3,
    fn: ([p, s, n], ctx) => compileRegex(str(p, 1), ctx).findAllString(str(s, 2), int(n, 3), meterOf(ctx))
  },
  {
    name: "regex.find_all_string_submatch_n",
    arity: 3,
    fn: ([p, s, n], ctx) => compileRegex(str(p, 1), ctx).findAllStringSubmatch(str(s, 2), int(n, 3), meterOf(ctx))
  },
  {
    name: "regex.split",
    arity: 2,
    fn: ([p, s], ctx) => compileRegex(str(p, 1), ctx).split(str(s, 2), meterOf(ctx))
  },
  {
    name: "regex.replace",
    arity: 3,
    fn: ([b, p, v], ctx) => {
      const base = str(b, 1)
      const re = compileRegex(str(p, 2), ctx)
      return re.replaceAllString(base, str(v, 3), meterOf(ctx))
    }
  },
  {
    name: "regex.template_match",
    arity: 4,
    fn: ([p, m, s, e], ctx) => {
      const pattern = str(p, 1)
      const match = str(m, 2)
      const start = str(s, 3)
      const end = str(e, 4)
      // Go measures the delimiters in bytes (and reports the start's length in both messages).
      if (byteLength(start) !== 1) throw builtinError(`start delimiter has to be exactly one character long but is ${byteLength(start)} long`)
      if (byteLength(end) !== 1) throw builtinError(`end delimiter has to be exactly one character long but is ${byteLength(start)} long`)
      const key = `\u0000template\u0000${start}${end}${pattern}`
      const re = cache.getOrCompile(key, () => compileUncached(templatePattern(pattern, start, end, ctx), ctx))
      return re.matchString(match, meterOf(ctx))
    }
  }
]
