// Rule indexing: for groups of complete rules, the tests of each body against constant values
// of `input` are extracted at compile time into a trie keyed by those input values:
// equalities (`input.method == "GET"`, `input.path = "/a"`) and glob matches whose patterns are
// literal segments and `*` (`glob.match("/api/*/items", ["/"], input.path)`). At evaluation
// time only the rules whose tests can succeed for the actual input are run, so a thousand
// `allow` rules keyed on the request are not a linear scan. The index only narrows the
// candidates: every candidate still runs its whole body.

import type { Ctx } from "../eval/context.js"
import type { CRule, Group, RuleIndex } from "../eval/documents.js"
import { getKey } from "../eval/navigate.js"
import { type Value, hashKey } from "../value.js"
import type { CodeGen } from "./codegen.js"
import type { LExpr, LRule, LTerm } from "./ir.js"
import type { RuleInfo } from "./tree.js"

interface Condition {
  readonly path: readonly Value[]
  /** The input path, and for globs the delimiter: conditions with equal keys share a trie level. */
  readonly pathKey: string
  /** The constant compared with, or the glob pattern. */
  readonly value: Value
  /** Set for glob conditions: the single delimiter character. */
  readonly delim?: string
}

interface Rec {
  readonly order: number
  readonly rule: CRule
  /** Conditions by path key (first condition per path). */
  readonly conds: Map<string, Condition>
}

/** Glob patterns split at their delimiter: literal segments, and `*` for any one segment. */
interface GlobNode {
  readonly children: Map<string, GlobNode>
  star: GlobNode | undefined
  /** Rules whose pattern ends here. */
  end: Trie | undefined
}

type Trie =
  | { readonly leaf: readonly Rec[] }
  | {
      readonly path: readonly Value[]
      readonly buckets: Map<string, Trie>
      readonly wildcard: Trie
    }
  | {
      readonly path: readonly Value[]
      readonly delim: string
      readonly globs: GlobNode
      readonly wildcard: Trie
    }

const MIN_RULES = 4

/** `input.a.b` with a constant path, as a path. */
const inputPath = (t: LTerm): Value[] | undefined => {
  if (t.t === "input") return []
  if (t.t !== "ref" || t.head.t !== "input") return undefined
  const out: Value[] = []
  for (const p of t.path) {
    if (p.t !== "const") return undefined
    out.push(p.v)
  }
  return out
}

const GLOB_SPECIAL = /[*?[\]{}\\]/

// glob.match(pattern, [delimiter], input.x) where the pattern has literal segments and `*` ones.
const globCondition = (e: LExpr): Condition | undefined => {
  const x = e.e
  if (x.k !== "call" || x.fn.kind !== "builtin" || x.fn.name !== "glob.match" || x.out !== undefined) return undefined
  const [pat, delims, target] = x.args
  if (pat.t !== "const" || typeof pat.v !== "string" || delims.t !== "const" || !Array.isArray(delims.v)) return undefined
  if (delims.v.length !== 1 || typeof delims.v[0] !== "string" || [...delims.v[0]].length !== 1) return undefined
  const delim = delims.v[0]
  if (pat.v.split(delim).some((seg) => seg !== "*" && GLOB_SPECIAL.test(seg))) return undefined
  const path = inputPath(target)
  if (path === undefined) return undefined
  return { path, pathKey: `glob ${delim} ${hashKey(path)}`, value: pat.v, delim }
}

const conditionOf = (e: LExpr): Condition | undefined => {
  if (e.negated || e.with.length > 0) return undefined
  const glob = globCondition(e)
  if (glob !== undefined) return glob
  let a: LTerm
  let b: LTerm
  const x = e.e
  if (x.k === "unify") {
    a = x.a
    b = x.b
  } else if (x.k === "call" && x.fn.kind === "builtin" && x.fn.name === "equal" && x.out === undefined && x.args.length === 2) {
    a = x.args[0]
    b = x.args[1]
  } else return undefined
  for (const [r, k] of [
    [a, b],
    [b, a]
  ] as const) {
    const path = inputPath(r)
    if (path !== undefined && k.t === "const") return { path, pathKey: hashKey(path), value: k.v }
  }
  return undefined
}

const build = (recs: readonly Rec[], used: ReadonlySet<string>): Trie => {
  const counts = new Map<string, { n: number; path: readonly Value[] }>()
  for (const r of recs)
    for (const [k, c] of r.conds) {
      if (used.has(k)) continue
      const e = counts.get(k)
      if (e === undefined) counts.set(k, { n: 1, path: c.path })
      else e.n++
    }
  let best: string | undefined
  let bestN = 1
  for (const [k, e] of counts)
    if (e.n > bestN) {
      best = k
      bestN = e.n
    }
  if (best === undefined) return { leaf: recs }
  const path = (counts.get(best) as { path: readonly Value[] }).path
  const next = new Set(used)
  next.add(best)
  const sample = recs.find((r) => r.conds.has(best as string))?.conds.get(best)
  if (sample?.delim !== undefined) return buildGlobs(recs, best, path, sample.delim, next)
  const groups = new Map<string, Rec[]>()
  const wild: Rec[] = []
  for (const r of recs) {
    const c = r.conds.get(best)
    if (c === undefined) wild.push(r)
    else {
      const h = hashKey(c.value)
      let g = groups.get(h)
      if (g === undefined) groups.set(h, (g = []))
      g.push(r)
    }
  }
  const buckets = new Map<string, Trie>()
  for (const [h, g] of groups) buckets.set(h, build(g, next))
  return { path, buckets, wildcard: build(wild, next) }
}

const buildGlobs = (recs: readonly Rec[], key: string, path: readonly Value[], delim: string, used: ReadonlySet<string>): Trie => {
  const byPattern = new Map<string, Rec[]>()
  const wild: Rec[] = []
  for (const r of recs) {
    const c = r.conds.get(key)
    if (c === undefined) wild.push(r)
    else {
      const pattern = c.value as string
      let g = byPattern.get(pattern)
      if (g === undefined) byPattern.set(pattern, (g = []))
      g.push(r)
    }
  }
  const root: GlobNode = { children: new Map(), star: undefined, end: undefined }
  for (const [pattern, g] of byPattern) {
    let n = root
    for (const seg of pattern.split(delim)) {
      if (seg === "*") n = n.star ??= { children: new Map(), star: undefined, end: undefined }
      else {
        let c = n.children.get(seg)
        if (c === undefined) n.children.set(seg, (c = { children: new Map(), star: undefined, end: undefined }))
        n = c
      }
    }
    n.end = build(g, used)
  }
  return { path, delim, globs: root, wildcard: build(wild, used) }
}

const lookupGlobs = (n: GlobNode, segs: readonly string[], i: number, input: Value | undefined, out: Rec[]): void => {
  if (i === segs.length) {
    if (n.end !== undefined) lookup(n.end, input, out)
    return
  }
  const c = n.children.get(segs[i])
  if (c !== undefined) lookupGlobs(c, segs, i + 1, input, out)
  if (n.star !== undefined) lookupGlobs(n.star, segs, i + 1, input, out)
}

const lookup = (t: Trie, input: Value | undefined, out: Rec[]): void => {
  if ("leaf" in t) {
    for (const r of t.leaf) out.push(r)
    return
  }
  let v: Value | undefined = input
  for (const k of t.path) {
    v = getKey(v, k)
    if (v === undefined) break
  }
  if ("globs" in t) {
    if (typeof v === "string") lookupGlobs(t.globs, v.split(t.delim), 0, input, out)
  } else if (v !== undefined) {
    const b = t.buckets.get(hashKey(v))
    if (b !== undefined) lookup(b, input, out)
  }
  lookup(t.wildcard, input, out)
}

class InputIndex implements RuleIndex {
  constructor(private readonly trie: Trie) {}

  candidates(c: Ctx): readonly CRule[] | undefined {
    const out: Rec[] = []
    lookup(this.trie, c.input, out)
    if (out.length > 1) out.sort((a, b) => a.order - b.order)
    return out.map((r) => r.rule)
  }
}

/** Attaches an input-equality index to a group of complete rules when it pays off. */
export const buildIndex = (g: Group, list: ReadonlyArray<{ info: RuleInfo; rule: LRule }>, _cg: CodeGen): void => {
  const rules = list.filter((x) => !x.rule.isDefault)
  if (rules.length < MIN_RULES || rules.length !== g.rules.length) return
  const recs: Rec[] = []
  let indexed = 0
  for (let i = 0; i < rules.length; i++) {
    const lr = rules[i].rule
    const conds = new Map<string, Condition>()
    // Rules with else branches may apply when their first body fails: never filter them out.
    if (lr.else === undefined) {
      for (const e of lr.body) {
        const c = conditionOf(e)
        if (c !== undefined && !conds.has(c.pathKey)) conds.set(c.pathKey, c)
      }
    }
    if (conds.size > 0) indexed++
    recs.push({ order: i, rule: g.rules[i], conds })
  }
  if (indexed < MIN_RULES) return
  g.index = new InputIndex(build(recs, new Set()))
}
