// regex.globs_match: whether two "regex globs" match at least one common non-empty string.
//
// The pattern language is OPA's (from the glob-intersection library it uses): a character, `.`
// (any character) or a class `[a-z0-9]` (no negation), each optionally followed by `+` or `*`;
// `\` escapes the next character. Syntax errors carry the library's messages.
//
// The library decides intersection with a greedy token walk. Here the question is answered
// exactly instead: both patterns are automata over token positions, and the intersection is
// non-empty when their product reaches both final positions after consuming at least one
// character. The two agree on every pattern the suite exercises.

import { str } from "./args.js"
import { asBuiltinError, type BuiltinDef } from "./registry.js"

/** A token matches one character from `chars`, or any character when `chars` is undefined. */
interface Token {
  readonly chars: ReadonlySet<number> | undefined
  readonly repeat: boolean
}

class GlobSyntaxError extends Error {}

const invalid = (runes: readonly string[], pos: number, message: string): GlobSyntaxError =>
  new GlobSyntaxError(`input:${runes.join("")}, pos:${pos}, ${message}: the input provided is invalid`)

/** Parses a pattern into tokens; `x+` becomes `x x*` so that every token is single or starred. */
const tokenize = (pattern: string): Token[] => {
  const runes = [...pattern]
  const out: Token[] = []
  let i = 0
  // The next rune and whether it was escaped, advancing i past it.
  const next = (): { r: string; escaped: boolean } | undefined => {
    if (i >= runes.length) return undefined
    if (runes[i] === "\\") {
      if (i === runes.length - 1) throw invalid(runes, i, "input ends with a \\ (escape) character")
      i += 2
      return { r: runes[i - 1], escaped: true }
    }
    i++
    return { r: runes[i - 1], escaped: false }
  }
  const set = (): Set<number> => {
    const chars = new Set<number>()
    let prev: number | undefined
    for (;;) {
      const n = next()
      if (n === undefined) throw invalid(runes, i, "found [ without matching ]")
      if (!n.escaped && n.r === "]") return chars
      if (!n.escaped && n.r === "-") {
        if (prev === undefined) throw invalid(runes, i, "range character '-' must be preceded by a Unicode character")
        if (i >= runes.length - 1) throw invalid(runes, i, "range character '-' must be followed by a Unicode character")
        const end = next() as { r: string; escaped: boolean }
        if (!end.escaped && (end.r === "]" || end.r === "-")) throw invalid(runes, i, "range character '-' cannot be followed by a special symbol")
        const hi = end.r.codePointAt(0) as number
        if (hi < prev) throw invalid(runes, i, `range is out of order: '${end.r}' comes before '${String.fromCodePoint(prev)}' in Unicode`)
        for (let c = prev; c <= hi; c++) chars.add(c)
        prev = undefined
        continue
      }
      prev = n.r.codePointAt(0) as number
      chars.add(prev)
    }
  }
  for (;;) {
    const n = next()
    if (n === undefined) return out
    let chars: ReadonlySet<number> | undefined
    if (n.escaped) chars = new Set([n.r.codePointAt(0) as number])
    else if (n.r === ".") chars = undefined
    else if (n.r === "[") chars = set()
    else if (n.r === "]") throw invalid(runes, i, "set-close ']' with no preceding '['")
    else if (n.r === "+" || n.r === "*") throw invalid(runes, i, `flag '${n.r}' must be preceded by a non-flag`)
    else chars = new Set([n.r.codePointAt(0) as number])
    // An unescaped + or * right after the token is its flag.
    const flag = i < runes.length && (runes[i] === "+" || runes[i] === "*") ? runes[i] : undefined
    if (flag !== undefined) i++
    if (flag === "+") out.push({ chars, repeat: false })
    out.push({ chars, repeat: flag !== undefined })
  }
}

/** Whether two tokens can match the same character. */
const overlap = (a: Token, b: Token): boolean => {
  if (a.chars === undefined || b.chars === undefined) return (a.chars ?? b.chars)?.size !== 0
  const [small, large] = a.chars.size <= b.chars.size ? [a.chars, b.chars] : [b.chars, a.chars]
  for (const c of small) if (large.has(c)) return true
  return false
}

/** Whether some non-empty string matches both token sequences (product automaton search). */
const globsIntersect = (g1: readonly Token[], g2: readonly Token[]): boolean => {
  const n1 = g1.length
  const n2 = g2.length
  // State (i, j, consumed): positions in both patterns and whether a character was read.
  const seen = new Uint8Array((n1 + 1) * (n2 + 1) * 2)
  const stack: number[] = [0, 0, 0]
  const push = (i: number, j: number, c: number): void => {
    const id = (i * (n2 + 1) + j) * 2 + c
    if (seen[id] === 1) return
    seen[id] = 1
    stack.push(i, j, c)
  }
  seen[0] = 1
  while (stack.length > 0) {
    const c = stack.pop() as number
    const j = stack.pop() as number
    const i = stack.pop() as number
    if (i === n1 && j === n2 && c === 1) return true
    // A starred token may match nothing.
    if (i < n1 && g1[i].repeat) push(i + 1, j, c)
    if (j < n2 && g2[j].repeat) push(i, j + 1, c)
    // Both read one common character; a starred token may stay to read more.
    if (i < n1 && j < n2 && overlap(g1[i], g2[j])) {
      const ni = g1[i].repeat ? [i, i + 1] : [i + 1]
      const nj = g2[j].repeat ? [j, j + 1] : [j + 1]
      for (const a of ni) for (const b of nj) push(a, b, 1)
    }
  }
  return false
}

export const globsMatch: BuiltinDef[] = [
  {
    name: "regex.globs_match",
    arity: 2,
    fn: ([a, b], ctx) => {
      const x = str(a, 1)
      const y = str(b, 2)
      const [g1, g2] = asBuiltinError(GlobSyntaxError, () => [tokenize(x), tokenize(y)])
      // OPA's library answers true for two empty patterns (and false for "" against "a*").
      if (g1.length === 0 && g2.length === 0) return true
      // The search visits (and allocates) one state per pair of positions.
      ctx.charge(((g1.length + 1) * (g2.length + 1)) >> 2)
      return globsIntersect(g1, g2)
    }
  }
]
