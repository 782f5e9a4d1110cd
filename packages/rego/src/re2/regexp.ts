// Go's regexp package over JavaScript strings: RE2 syntax and leftmost-first semantics,
// matching in time linear in the input (no backtracking blow-up, whatever the pattern).
//
//   const re = Regexp.compile("a(x*)b")     // throws RegexpSyntaxError with Go's message
//   re.matchString("-axxb-")                // true
//   re.findAllStringSubmatch("-ab-axb-", -1) // [["ab", ""], ["axb", "x"]]
//
// Every method takes an optional meter that receives the work done, so that a caller can stop
// a match that runs past its budget (the policy evaluator charges it to its step limit).

import { compileProg, type FirstSet, firstSet, literalPrefix, type Prog, simplify, startCond } from "./compile.js"
import { execute, type Executable, type Meter } from "./exec.js"
import { parse, PERL, type Regexp as Syntax } from "./syntax.js"

export { RegexpSyntaxError } from "./syntax.js"
export type { Meter } from "./exec.js"

/** A match: capture positions, two per group (group 0 is the whole match), -1 when unset. */
export type Match = Int32Array

export class Regexp implements Executable {
  private constructor(
    /** The pattern as written. */
    readonly source: string,
    readonly prog: Prog,
    readonly cond: number,
    readonly prefix: string,
    readonly literal: boolean,
    readonly first: FirstSet | undefined,
    /** Number of capturing groups. */
    readonly numSubexp: number,
    /** Group names by index ("" for index 0 and unnamed groups). */
    readonly subexpNames: readonly string[]
  ) {}

  /** Compiles a pattern with Go's syntax (regexp.Compile); throws RegexpSyntaxError. */
  static compile(pattern: string, charge?: (n: number) => void): Regexp {
    const c = charge ?? ((): void => undefined)
    const parsed = parse(pattern, PERL, c)
    return Regexp.fromSyntax(pattern, parsed.re, parsed.numCap, parsed.names, c)
  }

  /** Compiles a syntax tree built by other means (glob patterns). */
  static fromSyntax(source: string, re: Syntax, numCap: number, names: readonly string[], charge: (n: number) => void = () => undefined): Regexp {
    const prog = compileProg(simplify(re), charge)
    const { prefix, complete } = literalPrefix(prog)
    const padded = names.slice()
    while (padded.length < numCap + 1) padded.push("")
    return new Regexp(source, prog, startCond(prog), prefix, complete && prefix !== "" && numCap === 0, prefix === "" ? firstSet(prog) : undefined, numCap, padded)
  }

  /** Instructions in the compiled program (a measure of its size). */
  get size(): number {
    return this.prog.length
  }

  /** Whether s contains a match (MatchString). */
  matchString(s: string, meter?: Meter): boolean {
    return execute(this, s, 0, 0, meter) !== null
  }

  /** The leftmost match at or after pos, with submatches (FindStringSubmatchIndex from pos). */
  findSubmatchIndex(s: string, pos = 0, meter?: Meter): Match | null {
    return execute(this, s, pos, 2 * (this.numSubexp + 1), meter)
  }

  /**
   * Successive non-overlapping matches, at most n (all when n < 0), as Go's allMatches: an
   * empty match right after a previous match is skipped.
   */
  findAllIndex(s: string, n: number, meter?: Meter): Match[] {
    const out: Match[] = []
    if (n < 0) n = s.length + 1
    const ncap = 2 * (this.numSubexp + 1)
    let prevMatchEnd = -1
    for (let pos = 0; out.length < n && pos <= s.length; ) {
      const m = execute(this, s, pos, ncap, meter)
      if (m === null) break
      let accept = true
      if (m[1] === pos) {
        // An empty match: not allowed right after the previous match; step over one rune.
        if (m[0] === prevMatchEnd) accept = false
        pos += pos < s.length ? runeWidth(s, pos) : 1
      } else pos = m[1]
      prevMatchEnd = m[1]
      if (accept) out.push(m)
    }
    return out
  }

  /** FindAllString. */
  findAllString(s: string, n: number, meter?: Meter): string[] {
    return this.findAllIndex(s, n, meter).map((m) => s.slice(m[0], m[1]))
  }

  /** FindAllStringSubmatch: unmatched groups are "". */
  findAllStringSubmatch(s: string, n: number, meter?: Meter): string[][] {
    return this.findAllIndex(s, n, meter).map((m) => {
      const groups: string[] = []
      for (let i = 0; i < m.length; i += 2) groups.push(m[i] >= 0 ? s.slice(m[i], m[i + 1]) : "")
      return groups
    })
  }

  /** ReplaceAllString: `$1`, `${name}` and `$$` in repl are expanded (Expand). */
  replaceAllString(src: string, repl: string, meter?: Meter): string {
    const ncap = repl.includes("$") ? 2 * (this.numSubexp + 1) : 2
    let out = ""
    let lastMatchEnd = 0
    let searchPos = 0
    // The output can be much longer than the input (a replacement per empty match): its size
    // is charged too, before it grows past what the meter allows.
    let charged = 0
    while (searchPos <= src.length) {
      const a = execute(this, src, searchPos, ncap, meter)
      if (a === null) break
      out += src.slice(lastMatchEnd, a[0])
      // No replacement for an empty match right after a match (it would double-replace
      // patterns that match both empty and non-empty strings).
      if (a[1] > lastMatchEnd || a[0] === 0) out += this.expand(repl, src, a)
      if (meter !== undefined && out.length - charged >= 4096) {
        meter(out.length - charged)
        charged = out.length
      }
      lastMatchEnd = a[1]
      const width = searchPos < src.length ? runeWidth(src, searchPos) : 0
      if (searchPos + width > a[1]) searchPos += width
      else if (searchPos + 1 > a[1]) searchPos++
      else searchPos = a[1]
    }
    return out + src.slice(lastMatchEnd)
  }

  /** Split with n = -1 (all pieces), as Go's Regexp.Split. */
  split(s: string, meter?: Meter): string[] {
    if (this.source.length > 0 && s.length === 0) return [""]
    const out: string[] = []
    let beg = 0
    let end = 0
    for (const m of this.findAllIndex(s, -1, meter)) {
      end = m[0]
      if (m[1] !== 0) out.push(s.slice(beg, end))
      beg = m[1]
    }
    if (end !== s.length) out.push(s.slice(beg))
    return out
  }

  /** Go's Regexp.Expand of template for a match of src. */
  expand(template: string, src: string, match: Match): string {
    let out = ""
    let t = template
    for (;;) {
      const dollar = t.indexOf("$")
      if (dollar < 0) break
      out += t.slice(0, dollar)
      t = t.slice(dollar + 1)
      if (t.startsWith("$")) {
        out += "$"
        t = t.slice(1)
        continue
      }
      const x = extract(t)
      if (x === undefined) {
        // Malformed: the $ is literal.
        out += "$"
        continue
      }
      t = t.slice(x.length)
      // A number is a group index; a name, the first group of that name that took part.
      const groups = x.num >= 0 ? [x.num] : this.subexpNames.flatMap((n, i) => (n === x.name ? [i] : []))
      for (const g of groups) {
        if (2 * g + 1 < match.length && match[2 * g] >= 0) {
          out += src.slice(match[2 * g], match[2 * g + 1])
          break
        }
      }
    }
    return out + t
  }
}

const runeWidth = (s: string, pos: number): number => {
  const c = s.charCodeAt(pos)
  if (c >= 0xd800 && c <= 0xdbff && pos + 1 < s.length) {
    const d = s.charCodeAt(pos + 1)
    if (d >= 0xdc00 && d <= 0xdfff) return 2
  }
  return 1
}

const isNameChar = /[\p{L}\p{Nd}_]/u

/** Go's extract: a `name` or `{name}` after a `$`; num >= 0 when the name is a group number. */
const extract = (s: string): { name: string; num: number; length: number } | undefined => {
  let i = 0
  const brace = s.startsWith("{")
  if (brace) i = 1
  const start = i
  while (i < s.length) {
    const cp = s.codePointAt(i) as number
    const ch = String.fromCodePoint(cp)
    if (!isNameChar.test(ch)) break
    i += ch.length
  }
  if (i === start) return undefined
  const name = s.slice(start, i)
  if (brace) {
    if (i >= s.length || s[i] !== "}") return undefined
    i++
  }
  let num = 0
  for (let k = 0; k < name.length; k++) {
    if (name[k] < "0" || name[k] > "9" || num >= 1e8) {
      num = -1
      break
    }
    num = num * 10 + (name.charCodeAt(k) - 0x30)
  }
  // No leading zeros.
  if (name[0] === "0" && name.length > 1) num = -1
  return { name, num, length: i }
}
