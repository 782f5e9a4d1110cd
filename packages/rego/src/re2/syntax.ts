// Regular expression syntax as Go's regexp/syntax parses it with the Perl flags (what
// `regexp.Compile` and therefore OPA use): the same grammar, the same limits (repeat counts,
// nesting depth, program size) and the same error messages, e.g.
// "error parsing regexp: missing closing ]: `[a`".
//
// The parser is Go's operator-precedence stack machine; Go's purely structural optimisations
// (merging literals into strings, factoring common prefixes of alternations) are left out as
// they do not change what a pattern matches.

import {
  ANY,
  appendClass,
  appendFoldedClass,
  appendFoldedRange,
  appendNegatedClass,
  appendRange,
  type CharGroup,
  cleanClass,
  foldedTable,
  MAX_RUNE,
  minFoldRune,
  negateClass,
  PERL_GROUPS,
  posixGroup,
  type Ranges,
  unicodeTable
} from "./unicode.js"

export const Op = {
  NoMatch: 1,
  EmptyMatch: 2,
  Literal: 3,
  CharClass: 4,
  AnyCharNotNL: 5,
  AnyChar: 6,
  BeginLine: 7,
  EndLine: 8,
  BeginText: 9,
  EndText: 10,
  WordBoundary: 11,
  NoWordBoundary: 12,
  Capture: 13,
  Star: 14,
  Plus: 15,
  Quest: 16,
  Repeat: 17,
  Concat: 18,
  Alternate: 19,
  // Pseudo-operators, only on the parse stack.
  LeftParen: 128,
  VerticalBar: 129
} as const
export type Op = (typeof Op)[keyof typeof Op]

export const Flags = {
  FoldCase: 1,
  Literal: 2,
  ClassNL: 4,
  DotNL: 8,
  OneLine: 16,
  NonGreedy: 32,
  PerlX: 64,
  UnicodeGroups: 128,
  WasDollar: 256
} as const

/** The flags regexp.Compile parses with. */
export const PERL = Flags.ClassNL | Flags.OneLine | Flags.PerlX | Flags.UnicodeGroups

export interface Regexp {
  op: Op
  flags: number
  /** Literal: the runes (one per node here); CharClass: the ranges. */
  runes: Ranges
  subs: Regexp[]
  min: number
  max: number
  /** Capture index (1-based) and name. */
  cap: number
  name: string
  /** Height of the tree and compiled size in instructions, for Go's limits. */
  height: number
  size: number
}

export const ErrorCode = {
  InvalidCharClass: "invalid character class",
  InvalidCharRange: "invalid character class range",
  InvalidEscape: "invalid escape sequence",
  InvalidNamedCapture: "invalid named capture",
  InvalidPerlOp: "invalid or unsupported Perl syntax",
  InvalidRepeatOp: "invalid nested repetition operator",
  InvalidRepeatSize: "invalid repeat count",
  MissingBracket: "missing closing ]",
  MissingParen: "missing closing )",
  MissingRepeatArgument: "missing argument to repetition operator",
  TrailingBackslash: "trailing backslash at end of expression",
  UnexpectedParen: "unexpected )",
  NestingDepth: "expression nests too deeply",
  Large: "expression too large"
} as const

/** A syntax error, worded as Go's *syntax.Error. */
export class RegexpSyntaxError extends Error {
  constructor(
    readonly code: string,
    readonly expr: string
  ) {
    super(`error parsing regexp: ${code}: \`${expr}\``)
  }
}

const MAX_HEIGHT = 1000
/** Go's maxSize (instructions: 128 MB of 40-byte instructions) and maxRunes (128 MB of runes). */
export const MAX_SIZE = Math.floor((128 << 20) / 40)
const MAX_RUNES = (128 << 20) / 4
const MAX_REPEAT = 1000

/** Go's calcSize: an estimate of the compiled size, used for the "expression too large" limit. */
const calcSize = (re: Regexp): number => {
  let size = 0
  switch (re.op) {
    case Op.Literal:
      size = re.runes.length
      break
    case Op.Capture:
    case Op.Star:
      size = 2 + re.subs[0].size
      break
    case Op.Plus:
    case Op.Quest:
      size = 1 + re.subs[0].size
      break
    case Op.Concat:
      for (const s of re.subs) size += s.size
      break
    case Op.Alternate:
      for (const s of re.subs) size += s.size
      if (re.subs.length > 1) size += re.subs.length - 1
      break
    case Op.Repeat: {
      const sub = re.subs[0].size
      if (re.max === -1) size = re.min === 0 ? 2 + sub : 1 + re.min * sub
      else size = re.max * sub + (re.max - re.min)
      break
    }
  }
  return Math.max(1, size)
}

export const node = (op: Op, flags: number, subs: Regexp[] = [], runes: Ranges = []): Regexp => {
  let height = 1
  for (const s of subs) if (s.height + 1 > height) height = s.height + 1
  const re: Regexp = { op, flags, runes, subs, min: 0, max: 0, cap: 0, name: "", height, size: 1 }
  re.size = calcSize(re)
  return re
}

const isAlnum = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)

const unhex = (c: number): number => {
  if (c >= 0x30 && c <= 0x39) return c - 0x30
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10
  return -1
}

/** Go's repeatIsValid: nested repetitions may not make more than n copies of anything. */
const repeatIsValid = (re: Regexp, n: number): boolean => {
  if (re.op === Op.Repeat) {
    let m = re.max
    if (m === 0) return true
    if (m < 0) m = re.min
    if (m > n) return false
    if (m > 0) n = Math.floor(n / m)
  }
  for (const s of re.subs) if (!repeatIsValid(s, n)) return false
  return true
}

/**
 * The code point at index i of s and its width in UTF-16 units. A lone surrogate reads as
 * U+FFFD: Go never sees one (its JSON decoder replaces them) and reads invalid UTF-8 as U+FFFD.
 * At the end of s: U+FFFD with width 0, as Go's utf8.DecodeRuneInString of "".
 */
export const runeAt = (s: string, i: number): [number, number] => {
  if (i >= s.length) return [0xfffd, 0]
  const c = s.charCodeAt(i)
  if (c < 0xd800 || c > 0xdfff) return [c, 1]
  if (c <= 0xdbff && i + 1 < s.length) {
    const d = s.charCodeAt(i + 1)
    if (d >= 0xdc00 && d <= 0xdfff) return [((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000, 2]
  }
  return [0xfffd, 1]
}

class Parser {
  flags: number
  readonly stack: Regexp[] = []
  numCap = 0
  numRunes = 0
  readonly names: string[] = [""]

  constructor(
    readonly s: string,
    flags: number,
    /** Accounts for parse work (runes appended to classes, nodes built). */
    readonly charge: (n: number) => void
  ) {
    this.flags = flags
  }

  private err(code: string, expr: string): RegexpSyntaxError {
    return new RegexpSyntaxError(code, expr)
  }

  checkLimits(re: Regexp): void {
    if (this.numRunes > MAX_RUNES || re.size > MAX_SIZE) throw this.err(ErrorCode.Large, this.s)
    if (re.height > MAX_HEIGHT) throw this.err(ErrorCode.NestingDepth, this.s)
  }

  push(re: Regexp): Regexp {
    this.numRunes += re.runes.length
    this.charge(1 + (re.op === Op.CharClass ? re.runes.length >> 4 : 0))
    this.stack.push(re)
    this.checkLimits(re)
    return re
  }

  literal(r: number): void {
    const c = this.flags & Flags.FoldCase ? minFoldRune(r) : r
    this.push(node(Op.Literal, this.flags, [], [c]))
  }

  op(op: Op): Regexp {
    return this.push(node(op, this.flags))
  }

  /** Replaces the top of the stack by its repetition; returns the index after the operator. */
  repeat(op: Op, min: number, max: number, before: number, after: number, lastRepeat: number): number {
    let flags = this.flags
    if (this.flags & Flags.PerlX) {
      if (this.s[after] === "?") {
        after++
        flags ^= Flags.NonGreedy
      }
      if (lastRepeat >= 0) throw this.err(ErrorCode.InvalidRepeatOp, this.s.slice(lastRepeat, after))
    }
    const n = this.stack.length
    if (n === 0 || this.stack[n - 1].op >= Op.LeftParen) throw this.err(ErrorCode.MissingRepeatArgument, this.s.slice(before, after))
    const sub = this.stack[n - 1]
    const re = node(op, flags, [sub])
    re.min = min
    re.max = max
    re.size = calcSize(re)
    this.stack[n - 1] = re
    this.checkLimits(re)
    if (op === Op.Repeat && (min >= 2 || max >= 2) && !repeatIsValid(re, MAX_REPEAT)) throw this.err(ErrorCode.InvalidRepeatSize, this.s.slice(before, after))
    return after
  }

  /** Index below the topmost pseudo-operator. */
  private topRun(): number {
    let i = this.stack.length
    while (i > 0 && this.stack[i - 1].op < Op.LeftParen) i--
    return i
  }

  concat(): Regexp {
    const i = this.topRun()
    const subs = this.stack.splice(i)
    if (subs.length === 0) return this.push(node(Op.EmptyMatch, 0))
    return this.push(this.collapse(subs, Op.Concat))
  }

  alternate(): Regexp {
    const i = this.topRun()
    const subs = this.stack.splice(i)
    if (subs.length === 0) return this.push(node(Op.NoMatch, 0))
    return this.push(this.collapse(subs, Op.Alternate))
  }

  collapse(subs: Regexp[], op: Op): Regexp {
    if (subs.length === 1) return subs[0]
    const out: Regexp[] = []
    for (const s of subs) {
      if (s.op === op) out.push(...s.subs)
      else out.push(s)
    }
    return node(op, 0, out)
  }

  parseVerticalBar(): void {
    this.concat()
    if (!this.swapVerticalBar()) this.op(Op.VerticalBar)
  }

  /** If the top of the stack is an element above a `|`, swaps them and returns true. */
  swapVerticalBar(): boolean {
    const n = this.stack.length
    if (n >= 2 && this.stack[n - 2].op === Op.VerticalBar) {
      const re1 = this.stack[n - 1]
      this.stack[n - 1] = this.stack[n - 2]
      this.stack[n - 2] = re1
      return true
    }
    return false
  }

  parseRightParen(): void {
    this.concat()
    if (this.swapVerticalBar()) this.stack.pop()
    this.alternate()
    const n = this.stack.length
    if (n < 2) throw this.err(ErrorCode.UnexpectedParen, this.s)
    const re1 = this.stack[n - 1]
    const re2 = this.stack[n - 2]
    this.stack.length = n - 2
    if (re2.op !== Op.LeftParen) throw this.err(ErrorCode.UnexpectedParen, this.s)
    // Restore the flags in effect at the parenthesis.
    this.flags = re2.flags
    if (re2.cap === 0) this.push(re1)
    else {
      const cap = node(Op.Capture, re2.flags, [re1])
      cap.cap = re2.cap
      cap.name = re2.name
      this.push(cap)
    }
  }

  /** `(?flags)`, `(?flags:`, `(?P<name>` and `(?<name>`; s[i] is `(`, s[i+1] is `?`. */
  parsePerlFlags(i: number): number {
    const s = this.s
    const len = s.length - i
    const startsWithP = len > 4 && s[i + 2] === "P" && s[i + 3] === "<"
    const startsWithName = len > 3 && s[i + 2] === "<"
    if (startsWithP || startsWithName) {
      const exprStart = i + (startsWithName ? 3 : 4)
      const end = s.indexOf(">", i)
      if (end < 0) throw this.err(ErrorCode.InvalidNamedCapture, s.slice(i))
      const capture = s.slice(i, end + 1)
      const name = s.slice(exprStart, end)
      if (name === "" || ![...name].every((c) => c === "_" || isAlnum(c.codePointAt(0) as number))) throw this.err(ErrorCode.InvalidNamedCapture, capture)
      this.numCap++
      const re = this.op(Op.LeftParen)
      re.cap = this.numCap
      re.name = name
      this.names[re.cap] = name
      return end + 1
    }
    let t = i + 2
    let flags = this.flags
    let sign = 1
    let sawFlag = false
    loop: while (t < s.length) {
      const [c, w] = runeAt(s, t)
      t += w
      switch (c) {
        case 0x69: // i
          flags |= Flags.FoldCase
          sawFlag = true
          break
        case 0x6d: // m
          flags &= ~Flags.OneLine
          sawFlag = true
          break
        case 0x73: // s
          flags |= Flags.DotNL
          sawFlag = true
          break
        case 0x55: // U
          flags |= Flags.NonGreedy
          sawFlag = true
          break
        case 0x2d: // -
          if (sign < 0) break loop
          sign = -1
          // Invert so that the |= above clear flags and vice versa; inverted back below.
          flags = ~flags & 0xffff
          sawFlag = false
          break
        case 0x3a: // :
        case 0x29: // )
          if (sign < 0) {
            if (!sawFlag) break loop
            flags = ~flags & 0xffff
          }
          if (c === 0x3a) this.op(Op.LeftParen)
          this.flags = flags
          return t
        default:
          break loop
      }
    }
    throw this.err(ErrorCode.InvalidPerlOp, s.slice(i, t))
  }

  /** `{n}`, `{n,}` or `{n,m}` at i; undefined when it is not a repetition (then `{` is a literal). */
  parseRepeat(i: number): { min: number; max: number; after: number } | undefined {
    const s = this.s
    let t = i + 1
    const int = (): number | undefined => {
      if (t >= s.length || s[t] < "0" || s[t] > "9") return undefined
      // No leading zeros.
      if (s[t] === "0" && t + 1 < s.length && s[t + 1] >= "0" && s[t + 1] <= "9") return undefined
      let n = 0
      for (; t < s.length && s[t] >= "0" && s[t] <= "9"; t++) {
        if (n >= 1e8) n = -1
        else if (n >= 0) n = n * 10 + (s.charCodeAt(t) - 0x30)
      }
      return n
    }
    let min = int()
    if (min === undefined || t >= s.length) return undefined
    let max: number
    if (s[t] !== ",") max = min
    else {
      t++
      if (t >= s.length) return undefined
      if (s[t] === "}") max = -1
      else {
        const m = int()
        if (m === undefined) return undefined
        max = m
        if (max < 0) min = -1
      }
    }
    if (t >= s.length || s[t] !== "}") return undefined
    return { min, max, after: t + 1 }
  }

  /** An escape sequence at i (s[i] is `\`): the rune and the index after it. */
  parseEscape(i: number): [number, number] {
    const s = this.s
    let t = i + 1
    if (t >= s.length) throw this.err(ErrorCode.TrailingBackslash, "")
    let [c, w] = runeAt(s, t)
    t += w
    const isOctal = (k: number): boolean => k < s.length && s[k] >= "0" && s[k] <= "7"
    // Octal: \0 and up to two more digits, or \1-\7 followed by another octal digit (a single
    // non-zero digit would be a backreference, which is not supported).
    if (c >= 0x30 && c <= 0x37 && (c === 0x30 || isOctal(t))) {
      let r = c - 0x30
      for (let k = 1; k < 3 && isOctal(t); k++, t++) r = r * 8 + (s.charCodeAt(t) - 0x30)
      return [r, t]
    }
    switch (c) {
      case 0x78: {
        // \x
        if (t >= s.length) break
        ;[c, w] = runeAt(s, t)
        t += w
        if (c === 0x7b) {
          let nhex = 0
          let r = 0
          for (;;) {
            if (t >= s.length) throw this.err(ErrorCode.InvalidEscape, s.slice(i, t))
            ;[c, w] = runeAt(s, t)
            t += w
            if (c === 0x7d) break
            const v = unhex(c)
            if (v < 0) throw this.err(ErrorCode.InvalidEscape, s.slice(i, t))
            r = r * 16 + v
            if (r > MAX_RUNE) throw this.err(ErrorCode.InvalidEscape, s.slice(i, t))
            nhex++
          }
          if (nhex === 0) break
          return [r, t]
        }
        const x = unhex(c)
        ;[c, w] = runeAt(s, t)
        t += w
        const y = unhex(c)
        if (x < 0 || y < 0) break
        return [x * 16 + y, t]
      }
      case 0x61:
        return [0x07, t]
      case 0x66:
        return [0x0c, t]
      case 0x6e:
        return [0x0a, t]
      case 0x72:
        return [0x0d, t]
      case 0x74:
        return [0x09, t]
      case 0x76:
        return [0x0b, t]
      default:
        // Escaped punctuation is itself; escaped letters and digits are reserved.
        if (c < 0x80 && !isAlnum(c)) return [c, t]
    }
    throw this.err(ErrorCode.InvalidEscape, s.slice(i, t))
  }

  parseClassChar(i: number, wholeClass: number): [number, number] {
    if (i >= this.s.length) throw this.err(ErrorCode.MissingBracket, this.s.slice(wholeClass))
    if (this.s[i] === "\\") return this.parseEscape(i)
    const [c, w] = runeAt(this.s, i)
    return [c, i + w]
  }

  appendGroup(r: number[], g: CharGroup): void {
    let ranges = g.ranges
    if (this.flags & Flags.FoldCase) {
      const tmp: number[] = []
      appendFoldedClass(tmp, ranges)
      ranges = cleanClass(tmp)
    }
    if (g.negate) appendNegatedClass(r, ranges)
    else appendClass(r, ranges)
  }

  /** `\d`, `\s`, `\w` and their negations at i; the index after, or -1. */
  parsePerlClassEscape(i: number, r: number[]): number {
    if (!(this.flags & Flags.PerlX) || this.s.length - i < 2 || this.s[i] !== "\\") return -1
    const g = PERL_GROUPS.get(this.s.slice(i, i + 2))
    if (g === undefined) return -1
    this.appendGroup(r, g)
    return i + 2
  }

  /** `[:alpha:]` at i; the index after, or -1. */
  parseNamedClass(i: number, r: number[]): number {
    if (this.s[i] !== "[" || this.s[i + 1] !== ":") return -1
    const j = this.s.indexOf(":]", i + 2)
    if (j < 0) return -1
    const name = this.s.slice(i, j + 2)
    const g = posixGroup(name)
    if (g === undefined) throw this.err(ErrorCode.InvalidCharRange, name)
    this.appendGroup(r, g)
    return j + 2
  }

  /** `\pL`, `\p{Greek}`, `\PL`, `\p{^Greek}` at i; the index after, or -1. */
  parseUnicodeClass(i: number, r: number[]): number {
    const s = this.s
    if (!(this.flags & Flags.UnicodeGroups) || s.length - i < 2 || s[i] !== "\\" || (s[i + 1] !== "p" && s[i + 1] !== "P")) return -1
    let negate = s[i + 1] === "P"
    let t = i + 2
    const [c, w] = runeAt(s, t)
    t += w
    let seq: string
    let name: string
    if (c !== 0x7b) {
      seq = s.slice(i, t)
      name = s.slice(i + 2, t)
    } else {
      const end = s.indexOf("}", i)
      if (end < 0) throw this.err(ErrorCode.InvalidCharRange, s.slice(i))
      seq = s.slice(i, end + 1)
      t = end + 1
      name = s.slice(i + 3, end)
    }
    if (name.startsWith("^")) {
      negate = !negate
      name = name.slice(1)
    }
    const tab = unicodeTable(name)
    if (tab === undefined) throw this.err(ErrorCode.InvalidCharRange, seq)
    if (tab.negate) negate = !negate
    const ranges = this.flags & Flags.FoldCase && tab.ranges !== ANY ? foldedTable(tab.key, tab.ranges) : tab.ranges
    this.charge(ranges.length >> 4)
    if (negate) appendNegatedClass(r, ranges)
    else appendClass(r, ranges)
    return t
  }

  /** A bracketed class at i (s[i] is `[`); pushes it and returns the index after. */
  parseClass(i: number): number {
    const s = this.s
    let t = i + 1
    let r: number[] = []
    let negate = false
    if (t < s.length && s[t] === "^") {
      negate = true
      t++
      // Without ClassNL a negated class does not match \n: add it before negating.
      if (!(this.flags & Flags.ClassNL)) r.push(0x0a, 0x0a)
    }
    let first = true
    while (t >= s.length || s[t] !== "]" || first) {
      first = false
      if (s.length - t > 2 && s[t] === "[" && s[t + 1] === ":") {
        const nt = this.parseNamedClass(t, r)
        if (nt >= 0) {
          t = nt
          continue
        }
      }
      let nt = this.parseUnicodeClass(t, r)
      if (nt >= 0) {
        t = nt
        continue
      }
      nt = this.parsePerlClassEscape(t, r)
      if (nt >= 0) {
        t = nt
        continue
      }
      const rng = t
      let lo: number
      ;[lo, t] = this.parseClassChar(t, i)
      let hi = lo
      // [a-] means a or -: a range needs something other than ] after the -.
      if (s.length - t >= 2 && s[t] === "-" && s[t + 1] !== "]") {
        ;[hi, t] = this.parseClassChar(t + 1, i)
        if (hi < lo) throw this.err(ErrorCode.InvalidCharRange, s.slice(rng, t))
      }
      if (this.flags & Flags.FoldCase) appendFoldedRange(r, lo, hi)
      else appendRange(r, lo, hi)
    }
    t++
    r = cleanClass(r)
    if (negate) r = negateClass(r)
    this.push(node(Op.CharClass, this.flags, [], r))
    return t
  }

  parse(): Regexp {
    const s = this.s
    let i = 0
    let lastRepeat = -1
    while (i < s.length) {
      let repeat = -1
      switch (s[i]) {
        case "(":
          if (this.flags & Flags.PerlX && s[i + 1] === "?") {
            i = this.parsePerlFlags(i)
            break
          }
          this.numCap++
          this.op(Op.LeftParen).cap = this.numCap
          this.names[this.numCap] = ""
          i++
          break
        case "|":
          this.parseVerticalBar()
          i++
          break
        case ")":
          this.parseRightParen()
          i++
          break
        case "^":
          this.op(this.flags & Flags.OneLine ? Op.BeginText : Op.BeginLine)
          i++
          break
        case "$":
          if (this.flags & Flags.OneLine) this.op(Op.EndText).flags |= Flags.WasDollar
          else this.op(Op.EndLine)
          i++
          break
        case ".":
          this.op(this.flags & Flags.DotNL ? Op.AnyChar : Op.AnyCharNotNL)
          i++
          break
        case "[":
          i = this.parseClass(i)
          break
        case "*":
        case "+":
        case "?": {
          const op = s[i] === "*" ? Op.Star : s[i] === "+" ? Op.Plus : Op.Quest
          const before = i
          i = this.repeat(op, 0, 0, before, i + 1, lastRepeat)
          repeat = before
          break
        }
        case "{": {
          const before = i
          const r = this.parseRepeat(i)
          if (r === undefined) {
            // Not a repetition: a literal brace.
            this.literal(0x7b)
            i++
            break
          }
          if (r.min < 0 || r.min > MAX_REPEAT || r.max > MAX_REPEAT || (r.max >= 0 && r.min > r.max)) {
            throw this.err(ErrorCode.InvalidRepeatSize, s.slice(before, r.after))
          }
          i = this.repeat(Op.Repeat, r.min, r.max, before, r.after, lastRepeat)
          repeat = before
          break
        }
        case "\\": {
          if (this.flags & Flags.PerlX && i + 1 < s.length) {
            const next = s[i + 1]
            if (next === "A" || next === "b" || next === "B" || next === "z") {
              this.op(next === "A" ? Op.BeginText : next === "b" ? Op.WordBoundary : next === "B" ? Op.NoWordBoundary : Op.EndText)
              i += 2
              break
            }
            if (next === "C") throw this.err(ErrorCode.InvalidEscape, s.slice(i, i + 2))
            if (next === "Q") {
              // \Q ... \E: literal text.
              const end = s.indexOf("\\E", i + 2)
              const lit = end < 0 ? s.slice(i + 2) : s.slice(i + 2, end)
              for (let k = 0; k < lit.length; ) {
                const [c, w] = runeAt(lit, k)
                this.literal(c)
                k += w
              }
              i = end < 0 ? s.length : end + 2
              break
            }
          }
          if (i + 1 < s.length && (s[i + 1] === "p" || s[i + 1] === "P")) {
            const r: number[] = []
            const nt = this.parseUnicodeClass(i, r)
            if (nt >= 0) {
              this.push(node(Op.CharClass, this.flags, [], r))
              i = nt
              break
            }
          }
          const r: number[] = []
          const nt = this.parsePerlClassEscape(i, r)
          if (nt >= 0) {
            this.push(node(Op.CharClass, this.flags, [], r))
            i = nt
            break
          }
          const [c, after] = this.parseEscape(i)
          this.literal(c)
          i = after
          break
        }
        default: {
          const [c, w] = runeAt(s, i)
          this.literal(c)
          i += w
        }
      }
      lastRepeat = repeat
    }
    this.concat()
    if (this.swapVerticalBar()) this.stack.pop()
    this.alternate()
    if (this.stack.length !== 1) throw this.err(ErrorCode.MissingParen, s)
    return this.stack[0]
  }
}

export interface Parsed {
  readonly re: Regexp
  /** Number of capturing groups. */
  readonly numCap: number
  /** Group names by index (index 0 and unnamed groups: ""). */
  readonly names: readonly string[]
}

/** Parses a pattern (throws RegexpSyntaxError). */
export const parse = (pattern: string, flags = PERL, charge: (n: number) => void = () => undefined): Parsed => {
  const p = new Parser(pattern, flags, charge)
  const re = p.parse()
  return { re, numCap: p.numCap, names: p.names }
}
