// Compilation of a parsed regexp into a program for the matchers (exec.ts): Go's Simplify
// (counted repetitions expanded, `x{2,5}` = `xx(x(x(x)?)?)?`) and Go's Thompson construction
// with patch lists, instruction for instruction, so that the matchers' leftmost-first choices
// are Go's.

import { Flags, node, Op, type Regexp } from "./syntax.js"
import { appendClass, cleanClass, foldOrbit, MAX_RUNE, type Ranges } from "./unicode.js"

export const InstOp = {
  Alt: 0,
  Capture: 1,
  EmptyWidth: 2,
  Match: 3,
  Fail: 4,
  Nop: 5,
  /** Matches a rune in `ranges`. */
  Rune: 6,
  /** Matches the rune in `arg`. */
  Rune1: 7,
  RuneAny: 8,
  RuneAnyNotNL: 9
} as const

/** Empty-width conditions (Go's syntax.EmptyOp). */
export const Empty = {
  BeginLine: 1,
  EndLine: 2,
  BeginText: 4,
  EndText: 8,
  WordBoundary: 16,
  NoWordBoundary: 32
} as const

export interface Prog {
  readonly length: number
  readonly op: Uint8Array
  /** Next instruction (every instruction but Match and Fail). */
  readonly out: Int32Array
  /** Alt: the second branch; Capture: the slot; EmptyWidth: the conditions; Rune1: the rune. */
  readonly arg: Int32Array
  /** Rune: the class as ranges [lo, hi, ...]. */
  readonly ranges: ReadonlyArray<Int32Array | undefined>
  /** Rune: membership of the ASCII code points, 4 x 32 bits. */
  readonly ascii: ReadonlyArray<Uint32Array | undefined>
  readonly start: number
  /** Capture slots used (2 per group, the whole match included). */
  readonly numCap: number
}

// ---------------------------------------------------------------------------------------------
// Simplify

const simplify1 = (op: Op, flags: number, sub: Regexp, re: Regexp | undefined): Regexp => {
  // Repeating the empty string is the empty string.
  if (sub.op === Op.EmptyMatch) return sub
  // The operators are idempotent when their greediness agrees.
  if (op === sub.op && (flags & Flags.NonGreedy) === (sub.flags & Flags.NonGreedy)) return sub
  if (re !== undefined && re.op === op && (re.flags & Flags.NonGreedy) === (flags & Flags.NonGreedy) && sub === re.subs[0]) return re
  return node(op, flags, [sub])
}

/** Go's Regexp.Simplify: no counted repetitions left; shares structure with re. */
export const simplify = (re: Regexp): Regexp => {
  switch (re.op) {
    case Op.Capture:
    case Op.Concat:
    case Op.Alternate: {
      let changed = false
      const subs = re.subs.map((s) => {
        const n = simplify(s)
        if (n !== s) changed = true
        return n
      })
      if (!changed) return re
      const n = node(re.op, re.flags, subs, re.runes)
      n.cap = re.cap
      n.name = re.name
      return n
    }
    case Op.Star:
    case Op.Plus:
    case Op.Quest:
      return simplify1(re.op, re.flags, simplify(re.subs[0]), re)
    case Op.Repeat: {
      if (re.min === 0 && re.max === 0) return node(Op.EmptyMatch, 0)
      const sub = simplify(re.subs[0])
      if (re.max === -1) {
        if (re.min === 0) return simplify1(Op.Star, re.flags, sub, undefined)
        if (re.min === 1) return simplify1(Op.Plus, re.flags, sub, undefined)
        // x{4,} is xxxx+.
        const subs: Regexp[] = []
        for (let i = 0; i < re.min - 1; i++) subs.push(sub)
        subs.push(simplify1(Op.Plus, re.flags, sub, undefined))
        return node(Op.Concat, 0, subs)
      }
      if (re.min === 1 && re.max === 1) return sub
      // x{n,m}: n copies of x, then the m-n optional copies nested: x{2,5} = xx(x(x(x)?)?)?
      const prefix: Regexp[] = []
      for (let i = 0; i < re.min; i++) prefix.push(sub)
      if (re.max > re.min) {
        let suffix = simplify1(Op.Quest, re.flags, sub, undefined)
        for (let i = re.min + 1; i < re.max; i++) suffix = simplify1(Op.Quest, re.flags, node(Op.Concat, 0, [sub, suffix]), undefined)
        if (prefix.length === 0) return suffix
        prefix.push(suffix)
      }
      if (prefix.length > 0) return node(Op.Concat, 0, prefix)
      return node(Op.NoMatch, 0)
    }
    default:
      return re
  }
}

// ---------------------------------------------------------------------------------------------
// Compile

/**
 * A list of instruction fields still to be filled in, threaded through those fields themselves:
 * l >> 1 is the instruction, l & 1 selects out (0) or arg (1); 0 is the empty list (instruction
 * 0 is Fail, whose fields are never patched).
 */
type PatchList = number

interface Frag {
  /** First instruction; 0 means "matches nothing". */
  readonly i: number
  readonly out: PatchList
}

const ANY_NOT_NL: Ranges = [0, 0x09, 0x0b, MAX_RUNE]

class Compiler {
  readonly op: number[] = []
  readonly out: number[] = []
  readonly arg: number[] = []
  readonly ranges: Array<Int32Array | undefined> = []
  numCap = 2

  constructor(private readonly charge: (n: number) => void) {
    this.inst(InstOp.Fail)
  }

  inst(op: number): Frag {
    const i = this.op.length
    this.op.push(op)
    this.out.push(0)
    this.arg.push(0)
    this.ranges.push(undefined)
    if ((i & 255) === 255) this.charge(256)
    return { i, out: 0 }
  }

  private next(l: PatchList): PatchList {
    return l & 1 ? this.arg[l >> 1] : this.out[l >> 1]
  }

  patch(l: PatchList, val: number): void {
    while (l !== 0) {
      const i = l >> 1
      if (l & 1) {
        l = this.arg[i]
        this.arg[i] = val
      } else {
        l = this.out[i]
        this.out[i] = val
      }
    }
  }

  append(l1: PatchList, l2: PatchList): PatchList {
    if (l1 === 0) return l2
    if (l2 === 0) return l1
    let last = l1
    for (let n = this.next(last); n !== 0; n = this.next(last)) last = n
    if (last & 1) this.arg[last >> 1] = l2
    else this.out[last >> 1] = l2
    return l1
  }

  nop(): Frag {
    const f = this.inst(InstOp.Nop)
    return { i: f.i, out: f.i << 1 }
  }

  cap(slot: number): Frag {
    const f = this.inst(InstOp.Capture)
    this.arg[f.i] = slot
    if (this.numCap < slot + 1) this.numCap = slot + 1
    return { i: f.i, out: f.i << 1 }
  }

  cat(f1: Frag, f2: Frag): Frag {
    if (f1.i === 0 || f2.i === 0) return { i: 0, out: 0 }
    this.patch(f1.out, f2.i)
    return { i: f1.i, out: f2.out }
  }

  alt(f1: Frag, f2: Frag): Frag {
    if (f1.i === 0) return f2
    if (f2.i === 0) return f1
    const f = this.inst(InstOp.Alt)
    this.out[f.i] = f1.i
    this.arg[f.i] = f2.i
    return { i: f.i, out: this.append(f1.out, f2.out) }
  }

  /** An Alt entering f1 first (greedy) or last (non-greedy); its other branch is left open. */
  private choice(f1: Frag, nongreedy: boolean): Frag {
    const f = this.inst(InstOp.Alt)
    if (nongreedy) {
      this.arg[f.i] = f1.i
      return { i: f.i, out: f.i << 1 }
    }
    this.out[f.i] = f1.i
    return { i: f.i, out: (f.i << 1) | 1 }
  }

  quest(f1: Frag, nongreedy: boolean): Frag {
    const f = this.choice(f1, nongreedy)
    return { i: f.i, out: this.append(f.out, f1.out) }
  }

  star(f1: Frag, nongreedy: boolean): Frag {
    const f = this.choice(f1, nongreedy)
    this.patch(f1.out, f.i)
    return f
  }

  plus(f1: Frag, nongreedy: boolean): Frag {
    return { i: f1.i, out: this.star(f1, nongreedy).out }
  }

  empty(cond: number): Frag {
    const f = this.inst(InstOp.EmptyWidth)
    this.arg[f.i] = cond
    return { i: f.i, out: f.i << 1 }
  }

  rune(r: Ranges, fold: boolean): Frag {
    let ranges = r
    if (fold && r.length === 1) {
      const orbit = foldOrbit(r[0])
      if (orbit !== undefined) ranges = cleanClass(orbit.flatMap((c) => [c, c]))
    }
    if (ranges.length === 1 || (ranges.length === 2 && ranges[0] === ranges[1])) {
      const f = this.inst(InstOp.Rune1)
      this.arg[f.i] = ranges[0]
      return { i: f.i, out: f.i << 1 }
    }
    if (ranges.length === 2 && ranges[0] === 0 && ranges[1] === MAX_RUNE) {
      const f = this.inst(InstOp.RuneAny)
      return { i: f.i, out: f.i << 1 }
    }
    if (ranges.length === 4 && ranges[0] === 0 && ranges[1] === 0x09 && ranges[2] === 0x0b && ranges[3] === MAX_RUNE) {
      const f = this.inst(InstOp.RuneAnyNotNL)
      return { i: f.i, out: f.i << 1 }
    }
    const f = this.inst(InstOp.Rune)
    this.ranges[f.i] = Int32Array.from(ranges)
    return { i: f.i, out: f.i << 1 }
  }

  compile(re: Regexp): Frag {
    switch (re.op) {
      case Op.NoMatch:
        return { i: 0, out: 0 }
      case Op.EmptyMatch:
        return this.nop()
      case Op.Literal: {
        if (re.runes.length === 0) return this.nop()
        let f: Frag | undefined
        for (const c of re.runes) {
          const f1 = this.rune([c], (re.flags & Flags.FoldCase) !== 0)
          f = f === undefined ? f1 : this.cat(f, f1)
        }
        return f as Frag
      }
      case Op.CharClass:
        return this.rune(re.runes, false)
      case Op.AnyCharNotNL:
        return this.rune(ANY_NOT_NL, false)
      case Op.AnyChar:
        return this.rune([0, MAX_RUNE], false)
      case Op.BeginLine:
        return this.empty(Empty.BeginLine)
      case Op.EndLine:
        return this.empty(Empty.EndLine)
      case Op.BeginText:
        return this.empty(Empty.BeginText)
      case Op.EndText:
        return this.empty(Empty.EndText)
      case Op.WordBoundary:
        return this.empty(Empty.WordBoundary)
      case Op.NoWordBoundary:
        return this.empty(Empty.NoWordBoundary)
      case Op.Capture: {
        const bra = this.cap(re.cap << 1)
        const sub = this.compile(re.subs[0])
        const ket = this.cap((re.cap << 1) | 1)
        return this.cat(this.cat(bra, sub), ket)
      }
      case Op.Star:
        return this.star(this.compile(re.subs[0]), (re.flags & Flags.NonGreedy) !== 0)
      case Op.Plus:
        return this.plus(this.compile(re.subs[0]), (re.flags & Flags.NonGreedy) !== 0)
      case Op.Quest:
        return this.quest(this.compile(re.subs[0]), (re.flags & Flags.NonGreedy) !== 0)
      case Op.Concat: {
        if (re.subs.length === 0) return this.nop()
        let f: Frag | undefined
        for (const s of re.subs) f = f === undefined ? this.compile(s) : this.cat(f, this.compile(s))
        return f as Frag
      }
      case Op.Alternate: {
        let f: Frag = { i: 0, out: 0 }
        for (const s of re.subs) f = this.alt(f, this.compile(s))
        return f
      }
      default:
        throw new Error(`regexp: unhandled operator ${re.op} in compile`)
    }
  }
}

const asciiBitmap = (r: Int32Array): Uint32Array => {
  const b = new Uint32Array(4)
  for (let i = 0; i < r.length && r[i] < 128; i += 2) {
    for (let c = r[i]; c <= Math.min(r[i + 1], 127); c++) b[c >> 5] |= 1 << (c & 31)
  }
  return b
}

/** Compiles a simplified regexp. */
export const compileProg = (re: Regexp, charge: (n: number) => void = () => undefined): Prog => {
  const c = new Compiler(charge)
  const f = c.compile(re)
  const match = c.inst(InstOp.Match)
  c.patch(f.out, match.i)
  const ranges = c.ranges
  return {
    length: c.op.length,
    op: Uint8Array.from(c.op),
    out: Int32Array.from(c.out),
    arg: Int32Array.from(c.arg),
    ranges,
    ascii: ranges.map((r) => (r === undefined ? undefined : asciiBitmap(r))),
    start: f.i,
    numCap: c.numCap
  }
}

/** The first instruction at or after pc that is not a Nop or Capture. */
const skipNop = (p: Prog, pc: number): number => {
  while (p.op[pc] === InstOp.Nop || p.op[pc] === InstOp.Capture) pc = p.out[pc]
  return pc
}

/** The empty-width conditions every match must satisfy at its start (Go's StartCond); -1 when no match is possible. */
export const startCond = (p: Prog): number => {
  let flag = 0
  for (let pc = p.start; ; pc = p.out[pc]) {
    const op = p.op[pc]
    if (op === InstOp.EmptyWidth) flag |= p.arg[pc]
    else if (op === InstOp.Fail) return -1
    else if (op !== InstOp.Capture && op !== InstOp.Nop) return flag
  }
}

/** The literal text every match starts with (Go's Prog.Prefix), and whether it is the whole match. */
export const literalPrefix = (p: Prog): { prefix: string; complete: boolean } => {
  let pc = skipNop(p, p.start)
  let prefix = ""
  // Stops at U+FFFD as Go does, and at surrogate code points, which no text rune equals (a lone
  // surrogate in the text reads as U+FFFD) but which a JavaScript substring search would find.
  while (p.op[pc] === InstOp.Rune1 && p.arg[pc] !== 0xfffd && (p.arg[pc] < 0xd800 || p.arg[pc] > 0xdfff)) {
    prefix += String.fromCodePoint(p.arg[pc])
    pc = skipNop(p, p.out[pc])
  }
  return { prefix, complete: p.op[pc] === InstOp.Match }
}

/** The runes a match can begin with: ASCII as a bitmap, the rest as ranges. */
export interface FirstSet {
  readonly ascii: Uint32Array
  readonly ranges: Int32Array
}

/**
 * The runes every match must begin with, or undefined when a match can be empty (or begin
 * with almost anything): lets an unanchored search skip positions no match can start at.
 */
export const firstSet = (p: Prog): FirstSet | undefined => {
  const r: number[] = []
  const seen = new Set<number>()
  const stack = [p.start]
  while (stack.length > 0) {
    const pc = stack.pop() as number
    if (seen.has(pc)) continue
    seen.add(pc)
    switch (p.op[pc]) {
      case InstOp.Alt:
        stack.push(p.out[pc], p.arg[pc])
        break
      case InstOp.Nop:
      case InstOp.Capture:
      case InstOp.EmptyWidth:
        // An empty-width condition is passed over: the set only has to include every rune
        // that can begin a match.
        stack.push(p.out[pc])
        break
      case InstOp.Rune1:
        r.push(p.arg[pc], p.arg[pc])
        break
      case InstOp.Rune:
        appendClass(r, p.ranges[pc] as Int32Array)
        break
      case InstOp.Fail:
        break
      default:
        // Match (an empty match is possible), or any rune.
        return undefined
    }
  }
  const ranges = Int32Array.from(cleanClass(r))
  return { ascii: asciiBitmap(ranges), ranges }
}
