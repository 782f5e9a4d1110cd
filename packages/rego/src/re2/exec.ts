// The matchers, as in Go's regexp: a bounded backtracker for small programs and inputs (a
// bit per (instruction, position) pair visited, so each pair is explored once), and a Pike VM
// (a Thompson NFA simulation carrying capture positions per thread) for the rest. Both take
// time proportional to program size times input length, whatever the pattern, and both give
// Go's leftmost-first submatches.
//
// Positions are UTF-16 indices into the JavaScript string; runes are code points (a lone
// surrogate reads as U+FFFD, as invalid UTF-8 does in Go).

import { Empty, type FirstSet, InstOp, type Prog } from "./compile.js"
import { isWordChar } from "./unicode.js"

/** Receives the work done (instructions executed), in batches: lets a caller enforce limits. */
export type Meter = (work: number) => void

export interface Executable {
  readonly prog: Prog
  /** Empty-width conditions required at the start of a match; -1: no match is possible. */
  readonly cond: number
  /** Literal text every match starts with ("" when none). */
  readonly prefix: string
  /** Whether the prefix is the whole match (the pattern is a literal string without groups). */
  readonly literal: boolean
  /** The runes a match can start with, when every match is non-empty (to skip other positions). */
  readonly first: FirstSet | undefined
}

const METER_BATCH = 4096
const MAX_BACKTRACK_PROG = 500
const MAX_BACKTRACK_VECTOR = 256 * 1024

/** Marks "matched" when no capture positions were asked for. */
const MATCHED = new Int32Array(0)

/** The rune at pos, or -1 at the end of the text. */
const runeAt = (s: string, pos: number): number => {
  if (pos >= s.length) return -1
  const c = s.charCodeAt(pos)
  if (c < 0xd800 || c > 0xdfff) return c
  if (c <= 0xdbff && pos + 1 < s.length) {
    const d = s.charCodeAt(pos + 1)
    if (d >= 0xdc00 && d <= 0xdfff) return ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000
  }
  return 0xfffd
}

/** The rune ending at pos, or -1 at the start of the text. */
const runeBefore = (s: string, pos: number): number => {
  if (pos <= 0) return -1
  const d = s.charCodeAt(pos - 1)
  if (d < 0xd800 || d > 0xdfff) return d
  if (d >= 0xdc00 && pos >= 2) {
    const c = s.charCodeAt(pos - 2)
    if (c >= 0xd800 && c <= 0xdbff) return ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000
  }
  return 0xfffd
}

/** UTF-16 width of a rune read by runeAt (0 at the end of the text). */
const widthOf = (r: number): number => (r < 0 ? 0 : r > 0xffff ? 2 : 1)

/** The empty-width conditions that hold between r1 and r2 (-1: text boundary); Go's EmptyOpContext. */
export const emptyContext = (r1: number, r2: number): number => {
  let op = Empty.NoWordBoundary
  let boundary = 0
  if (isWordChar(r1)) boundary = 1
  else if (r1 === 0x0a) op |= Empty.BeginLine
  else if (r1 < 0) op |= Empty.BeginText | Empty.BeginLine
  if (isWordChar(r2)) boundary ^= 1
  else if (r2 === 0x0a) op |= Empty.EndLine
  else if (r2 < 0) op |= Empty.EndText | Empty.EndLine
  if (boundary !== 0) op ^= Empty.WordBoundary | Empty.NoWordBoundary
  return op
}

export const matchRune = (p: Prog, pc: number, c: number): boolean => {
  if (c < 0) return false
  if (c < 128) return ((p.ascii[pc] as Uint32Array)[c >> 5] & (1 << (c & 31))) !== 0
  return inRanges(p.ranges[pc] as Int32Array, c)
}

/** Whether c is in the sorted ranges r ([lo, hi, ...]). */
const inRanges = (r: Int32Array, c: number): boolean => {
  let lo = 0
  let hi = r.length >> 1
  while (lo < hi) {
    const m = (lo + hi) >>> 1
    if (c < r[2 * m]) hi = m
    else if (c > r[2 * m + 1]) lo = m + 1
    else return true
  }
  return false
}

/** Whether the instruction at pc (a rune instruction) consumes c. */
const consumes = (p: Prog, pc: number, c: number): boolean => {
  switch (p.op[pc]) {
    case InstOp.Rune1:
      return c === p.arg[pc]
    case InstOp.RuneAny:
      return c >= 0
    case InstOp.RuneAnyNotNL:
      return c >= 0 && c !== 0x0a
    default:
      return matchRune(p, pc, c)
  }
}

/** The first position at or after pos where a match can start (by its prefix or first runes), or -1. */
const nextStart = (re: Executable, s: string, pos: number): number => {
  if (re.prefix !== "") return s.indexOf(re.prefix, pos)
  const f = re.first
  if (f === undefined) return pos
  const { ascii, ranges } = f
  for (const len = s.length; pos < len; pos++) {
    const c = s.charCodeAt(pos)
    if (c < 128) {
      if ((ascii[c >> 5] & (1 << (c & 31))) !== 0) return pos
      continue
    }
    const r = c >= 0xd800 && c <= 0xdfff ? runeAt(s, pos) : c
    if (inRanges(ranges, r)) return pos
    if (r > 0xffff) pos++
  }
  return -1
}

// ---------------------------------------------------------------------------------------------
// Bounded backtracker (Go's backtrack.go)

/** Visited (instruction, position) pairs, one bit each; reused between calls. */
let visited = new Uint32Array(1024)
/** The job stack: (pc, again, pos) triples; reused between calls. */
let jobs = new Int32Array(3 * 256)
let njobs = 0

const pushJob = (pc: number, again: number, pos: number): void => {
  if (njobs + 3 > jobs.length) {
    const bigger = new Int32Array(jobs.length * 2)
    bigger.set(jobs)
    jobs = bigger
  }
  jobs[njobs++] = pc
  jobs[njobs++] = again
  jobs[njobs++] = pos
}

/** Whether the backtracker may run this program over a text of this length. */
const canBacktrack = (p: Prog, length: number): boolean => p.length <= MAX_BACKTRACK_PROG && length < Math.floor(MAX_BACKTRACK_VECTOR / p.length)

/**
 * Explores the threads from (startPc, startPos) in priority order; true at the first match
 * (leftmost-first), with cap holding its positions. Every (instruction, position) pair is
 * entered at most once per search (the visited bits), so the work is bounded by their number.
 */
const tryBacktrack = (p: Prog, s: string, startPc: number, startPos: number, cap: Int32Array, width: number, meter: Meter | undefined): boolean => {
  const { op, out, arg } = p
  const ncap = cap.length
  const vis = visited
  const len = s.length
  let work = 0
  njobs = 0
  // The start pair is checked here; a popped job was checked when it was pushed.
  {
    const k = startPc * width + startPos
    if ((vis[k >>> 5] & (1 << (k & 31))) !== 0) return false
    vis[k >>> 5] |= 1 << (k & 31)
  }
  pushJob(startPc, 0, startPos)
  try {
    while (njobs > 0) {
      let pos = jobs[--njobs]
      let again = jobs[--njobs]
      let pc = jobs[--njobs]
      let check = false
      for (;;) {
        if (check) {
          const k = pc * width + pos
          const bit = 1 << (k & 31)
          if ((vis[k >>> 5] & bit) !== 0) break
          vis[k >>> 5] |= bit
        }
        check = true
        if (++work === METER_BATCH) {
          work = 0
          meter?.(METER_BATCH)
        }
        const o = op[pc]
        if (o === InstOp.Rune1) {
          // The most common instruction, tested inline.
          let c = pos < len ? s.charCodeAt(pos) : -1
          if (c >= 0xd800 && c <= 0xdfff) c = runeAt(s, pos)
          if (c !== arg[pc]) break
          pos += c > 0xffff ? 2 : 1
          pc = out[pc]
          continue
        }
        switch (o) {
          case InstOp.Rune:
          case InstOp.RuneAny:
          case InstOp.RuneAnyNotNL: {
            let c = pos < len ? s.charCodeAt(pos) : -1
            if (c >= 0xd800 && c <= 0xdfff) c = runeAt(s, pos)
            if (!consumes(p, pc, c)) break
            pos += c > 0xffff ? 2 : 1
            pc = out[pc]
            continue
          }
          case InstOp.Alt:
            if (again !== 0) {
              // The first branch is done: take the second.
              again = 0
              pc = arg[pc]
            } else {
              // Come back for the second branch once the first one is exhausted.
              pushJob(pc, 1, pos)
              pc = out[pc]
            }
            continue
          case InstOp.Capture: {
            const slot = arg[pc]
            if (again !== 0) {
              // Done with the rest of the thread: restore the old position (kept in pos).
              cap[slot] = pos
              break
            }
            if (slot < ncap) {
              pushJob(pc, 1, cap[slot])
              cap[slot] = pos
            }
            pc = out[pc]
            continue
          }
          case InstOp.EmptyWidth:
            if ((arg[pc] & ~emptyContext(runeBefore(s, pos), runeAt(s, pos))) !== 0) break
            pc = out[pc]
            continue
          case InstOp.Nop:
            pc = out[pc]
            continue
          case InstOp.Match:
            // Leftmost-first: the first match found from this start position is the one.
            if (ncap > 1) cap[1] = pos
            return true
        }
        break
      }
    }
    return false
  } finally {
    if (work > 0) meter?.(work)
    // A pathological search can grow the job stack to megabytes: do not keep that.
    if (jobs.length > 1 << 16) jobs = new Int32Array(3 * 256)
  }
}

const backtrack = (re: Executable, s: string, pos0: number, ncap: number, meter: Meter | undefined): Int32Array | null => {
  const p = re.prog
  const end = s.length
  const width = end + 1
  const words = Math.ceil((p.length * width) / 32)
  if (visited.length < words) visited = new Uint32Array(Math.max(words, visited.length * 2))
  else visited.fill(0, 0, words)
  const cap = ncap === 0 ? MATCHED : new Int32Array(ncap).fill(-1)
  const anchored = (re.cond & Empty.BeginText) !== 0
  let pos = pos0
  for (;;) {
    if (!anchored) {
      pos = nextStart(re, s, pos)
      if (pos < 0) return null
    }
    if (ncap > 0) cap[0] = pos
    if (tryBacktrack(p, s, p.start, pos, cap, width, meter)) return cap
    // Unanchored search: the next start. The visited bits are kept, so that no (instruction,
    // position) pair is explored twice across start positions: still linear.
    if (anchored || pos >= end) return null
    pos += widthOf(runeAt(s, pos))
  }
}

// ---------------------------------------------------------------------------------------------
// Pike VM (Go's exec.go)

class Queue {
  readonly sparse: Uint32Array
  readonly dense: Int32Array
  /** Capture positions of the thread at each dense entry; null for entries that are not threads. */
  readonly caps: Array<Int32Array | null>
  size = 0

  constructor(n: number) {
    this.sparse = new Uint32Array(n)
    this.dense = new Int32Array(n)
    this.caps = new Array<Int32Array | null>(n).fill(null)
  }

  has(pc: number): boolean {
    const j = this.sparse[pc]
    return j < this.size && this.dense[j] === pc
  }

  clear(): void {
    this.size = 0
  }
}

const pike = (re: Executable, s: string, pos0: number, ncap: number, meter: Meter | undefined): Int32Array | null => {
  const p = re.prog
  const { op, out, arg } = p
  const anchored = (re.cond & Empty.BeginText) !== 0
  let runq = new Queue(p.length)
  let nextq = new Queue(p.length)
  const stack: number[] = []
  let matched = false
  const matchcap = new Int32Array(ncap).fill(-1)
  let work = 0

  /** Adds pc and what it leads to without consuming input to q, in priority order (Go's add). */
  const add = (q: Queue, pc0: number, pos: number, cap: Int32Array, cond: number): void => {
    stack.push(pc0)
    while (stack.length > 0) {
      let pc = stack.pop() as number
      if (pc < 0) {
        // Restore a capture slot changed further up this path.
        cap[-1 - pc] = stack.pop() as number
        continue
      }
      for (;;) {
        if (pc === 0 || q.has(pc)) break
        const j = q.size++
        q.dense[j] = pc
        q.sparse[pc] = j
        q.caps[j] = null
        const o = op[pc]
        if (o === InstOp.Alt) {
          stack.push(arg[pc])
          pc = out[pc]
        } else if (o === InstOp.EmptyWidth) {
          if ((arg[pc] & ~cond) !== 0) break
          pc = out[pc]
        } else if (o === InstOp.Nop) {
          pc = out[pc]
        } else if (o === InstOp.Capture) {
          const slot = arg[pc]
          if (slot < ncap) {
            stack.push(cap[slot], -1 - slot)
            cap[slot] = pos
          }
          pc = out[pc]
        } else {
          if (o !== InstOp.Fail) q.caps[j] = ncap === 0 ? MATCHED : cap.slice()
          break
        }
      }
    }
  }

  const step = (pos: number, nextPos: number, c: number, nextCond: number): void => {
    work += runq.size
    for (let j = 0; j < runq.size; j++) {
      const t = runq.caps[j]
      if (t === null) continue
      const pc = runq.dense[j]
      if (op[pc] === InstOp.Match) {
        if (ncap > 0) {
          t[1] = pos
          matchcap.set(t)
        }
        // Leftmost-first: the threads after this one have lower priority; drop them.
        matched = true
        break
      }
      if (consumes(p, pc, c)) add(nextq, out[pc], nextPos, t, nextCond)
    }
    runq.clear()
  }

  try {
    let pos = pos0
    let r = runeAt(s, pos)
    let r1 = r < 0 ? -1 : runeAt(s, pos + widthOf(r))
    let cond = emptyContext(runeBefore(s, pos), r)
    const startCap = new Int32Array(ncap).fill(-1)
    for (;;) {
      if (runq.size === 0) {
        // Anchored and past the start, or a match found and every better thread done.
        if (anchored && pos !== 0) break
        if (matched) break
        if (!anchored) {
          // Jump to the next position where a match can start (its prefix, or a first rune).
          const at = nextStart(re, s, pos)
          if (at < 0) break
          if (at !== pos) {
            pos = at
            r = runeAt(s, pos)
            r1 = r < 0 ? -1 : runeAt(s, pos + widthOf(r))
            cond = emptyContext(runeBefore(s, pos), r)
          }
        }
      }
      if (!matched && (pos === 0 || !anchored)) {
        if (ncap > 0) {
          startCap.fill(-1)
          startCap[0] = pos
        }
        add(runq, p.start, pos, startCap, cond)
      }
      const w = widthOf(r)
      const nextCond = emptyContext(r, r1)
      step(pos, pos + w, r, nextCond)
      if (work >= METER_BATCH) {
        const w = work
        work = 0
        meter?.(w)
      }
      if (w === 0) break
      if (ncap === 0 && matched) break
      pos += w
      r = r1
      r1 = r < 0 ? -1 : runeAt(s, pos + widthOf(r))
      cond = nextCond
      const tmp = runq
      runq = nextq
      nextq = tmp
    }
  } finally {
    // Whatever is left (nothing if the meter threw).
    if (work > 0) meter?.(work)
  }
  if (!matched) return null
  return ncap === 0 ? MATCHED : matchcap
}

/**
 * The leftmost-first match in s at or after pos: the capture positions (2 per group, -1 for
 * groups that did not participate, ncap of them), an empty array when ncap is 0, or null.
 */
export const execute = (re: Executable, s: string, pos: number, ncap: number, meter?: Meter): Int32Array | null => {
  if (re.cond === -1) return null
  if (re.literal && ncap <= 2) {
    // The whole pattern is one literal string (and captures nothing): a substring search.
    const at = s.indexOf(re.prefix, pos)
    if (at < 0) return null
    if (ncap === 0) return MATCHED
    return Int32Array.of(at, at + re.prefix.length)
  }
  const n = Math.min(ncap, re.prog.numCap)
  const m = canBacktrack(re.prog, s.length) ? backtrack(re, s, pos, n, meter) : pike(re, s, pos, n, meter)
  if (m === null || m.length >= ncap) return m
  const padded = new Int32Array(ncap).fill(-1)
  padded.set(m)
  return padded
}

/** For tests: runs one engine explicitly. */
export const executeWith = (engine: "backtrack" | "pike", re: Executable, s: string, pos: number, ncap: number): Int32Array | null => {
  if (re.cond === -1) return null
  const n = Math.min(ncap, re.prog.numCap)
  const m = engine === "backtrack" ? backtrack(re, s, pos, n, undefined) : pike(re, s, pos, n, undefined)
  if (m === null || m.length >= ncap) return m
  const padded = new Int32Array(ncap).fill(-1)
  padded.set(m)
  return padded
}
