// Rule indexing: for groups of complete rules, the equality tests of each body against constant
// values of `input` (`input.method == "GET"`, `input.path = "/a"`) are extracted at compile
// time into a trie keyed by those input values. At evaluation time only the rules whose tests
// can succeed for the actual input are run, so a thousand `allow` rules keyed on the request
// are not a linear scan.

import type { Ctx } from "../eval/context.js"
import type { CRule, Group, RuleIndex } from "../eval/documents.js"
import { getKey } from "../eval/navigate.js"
import { type Value, hashKey } from "../value.js"
import type { CodeGen } from "./codegen.js"
import type { LExpr, LRule, LTerm } from "./ir.js"
import type { RuleInfo } from "./tree.js"

interface Condition {
  readonly path: readonly Value[]
  readonly pathKey: string
  readonly value: Value
}

interface Rec {
  readonly order: number
  readonly rule: CRule
  /** Conditions by path key (first condition per path). */
  readonly conds: Map<string, Condition>
}

type Trie =
  | { readonly leaf: readonly Rec[] }
  | {
      readonly path: readonly Value[]
      readonly buckets: Map<string, Trie>
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

const conditionOf = (e: LExpr): Condition | undefined => {
  if (e.negated || e.with.length > 0) return undefined
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
  const next = new Set(used)
  next.add(best)
  const buckets = new Map<string, Trie>()
  for (const [h, g] of groups) buckets.set(h, build(g, next))
  return { path, buckets, wildcard: build(wild, next) }
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
  if (v !== undefined) {
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
