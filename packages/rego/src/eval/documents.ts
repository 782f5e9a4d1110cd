// Virtual documents: evaluating rule groups (complete, multi-value, generic ref-head rules and
// functions) with per-query caching, conflict detection and early exit, and walking the rule
// tree together with base data and `with data` overlays.

import type { RuleNode } from "../compiler/tree.js"
import { type Location, RegoEvalError } from "../errors.js"
import { type Value, equals, hashKey, ObjectBuilder, RegoSet, compare, objectEach, isObject } from "../value.js"
import { type Cached, type Cont, Ctx, type Frame, type Overlay, UNDEF, type VCont } from "./context.js"
import { getDataKey, getKey, iterate } from "./navigate.js"

/** One compiled rule definition (one branch of an else chain). */
export interface CRule {
  readonly nslots: number
  /** Binds function arguments (from the sink), runs the body; the body's end reports to the sink. */
  readonly entry: Cont
  readonly else: CRule | undefined
  /** The head value when it is a constant (enables early exit). */
  readonly constValue: Value | undefined
  readonly loc: Location
}

/** Chooses the rules worth evaluating for the current input (see compiler/indexing.ts). */
export interface RuleIndex {
  candidates(c: Ctx): readonly CRule[] | undefined
}

export class Group {
  rules: CRule[] = []
  defaultValue: Value | undefined = undefined
  /** A default whose value needs evaluation (e.g. a comprehension). */
  defaultRule: CRule | undefined = undefined
  /** Every rule yields the same constant: stop at the first success. */
  allConst = false
  index: RuleIndex | undefined = undefined
  /** Functions: memoise results per evaluation (see CodeGen.compileGroup). */
  memo = true
  constructor(
    readonly node: RuleNode,
    /** Index into per-query caches. */
    readonly id: number
  ) {}
}

/** What the end of a rule body reports to. Stored in frame slot 0. */
export class ValueSink {
  value: Value | undefined = undefined
  found = false
  stopOnFirst = false
  args: Value[] = []
  constructor(
    readonly conflict: string,
    public loc: Location
  ) {}

  emit(v: Value): boolean {
    this.found = true
    if (this.value === undefined) this.value = v
    else if (this.value !== v && !equals(this.value, v)) throw new RegoEvalError("eval_conflict_error", this.conflict, this.loc)
    return this.stopOnFirst
  }
}

export class SetSink {
  readonly set = new RegoSet()
  add(v: Value): boolean {
    this.set.add(v)
    return false
  }
}

/** Collects the leaves produced by rules with variables in their head refs. */
export class LeafSink {
  constructor(
    readonly builder: DocBuilder,
    readonly prefix: readonly Value[],
    public loc: Location
  ) {}

  leaf(keys: Value[], v: Value, multi: boolean): boolean {
    const path = this.prefix.length === 0 ? keys : [...this.prefix, ...keys]
    if (multi) this.builder.insertElem(path, v, this.loc)
    else this.builder.insertValue(path, v, this.loc)
    return false
  }
}

type Entry = { b: Branch } | { v: Value } | { s: RegoSet }
type Branch = Map<string, [Value, Entry]>

const conflict = (loc: Location): RegoEvalError => new RegoEvalError("eval_conflict_error", "object keys must be unique", loc)

/** Builds a nested document leaf by leaf, rejecting overlapping leaves with different values. */
export class DocBuilder {
  readonly root: Branch = new Map()

  private branchAt(path: readonly Value[], upto: number, loc: Location): Branch {
    let b = this.root
    for (let i = 0; i < upto; i++) {
      const h = hashKey(path[i])
      const e = b.get(h)
      if (e === undefined) {
        const nb: Branch = new Map()
        b.set(h, [path[i], { b: nb }])
        b = nb
      } else if ("b" in e[1]) b = e[1].b
      else throw conflict(loc)
    }
    return b
  }

  ensureBranch(path: readonly Value[], loc: Location): void {
    this.branchAt(path, path.length, loc)
  }

  insertValue(path: readonly Value[], v: Value, loc: Location): void {
    if (path.length === 0) throw conflict(loc)
    const b = this.branchAt(path, path.length - 1, loc)
    const k = path[path.length - 1]
    const h = hashKey(k)
    const e = b.get(h)
    if (e === undefined) b.set(h, [k, { v }])
    else if ("v" in e[1]) {
      if (!equals(e[1].v, v)) throw conflict(loc)
    } else throw conflict(loc)
  }

  insertElem(path: readonly Value[], v: Value, loc: Location): void {
    const s = this.setAt(path, loc)
    s.add(v)
  }

  setAt(path: readonly Value[], loc: Location): RegoSet {
    if (path.length === 0) throw conflict(loc)
    const b = this.branchAt(path, path.length - 1, loc)
    const k = path[path.length - 1]
    const h = hashKey(k)
    const e = b.get(h)
    if (e === undefined) {
      const s = new RegoSet()
      b.set(h, [k, { s }])
      return s
    }
    if ("s" in e[1]) return e[1].s
    throw conflict(loc)
  }

  build(): Value {
    const go = (b: Branch): Value => {
      const ob = new ObjectBuilder()
      for (const [k, e] of b.values()) ob.set(k, "b" in e ? go(e.b) : "v" in e ? e.v : e.s)
      return ob.build()
    }
    return go(this.root)
  }
}

// ---------------------------------------------------------------------------------------------
// The policy runtime: groups by node id, and document evaluation.

export class Runtime {
  /** Group of each rule node (by node id). */
  readonly groups: Array<Group | undefined>
  groupCount = 0

  constructor(
    readonly root: RuleNode,
    nodes: readonly RuleNode[]
  ) {
    this.groups = new Array(nodes.length)
    for (const n of nodes) {
      if (n.rules.length > 0) this.groups[n.id] = new Group(n, this.groupCount++)
    }
  }

  group(n: RuleNode): Group | undefined {
    return this.groups[n.id]
  }

  private cacheOf(c: Ctx): Cached[] {
    let cache = c.cache
    if (cache === undefined) cache = c.cache = new Array<Cached>(this.groupCount)
    return cache
  }

  /** Runs a rule and its else chain; returns whether some branch produced a value. */
  private runChain(c: Ctx, rule: CRule, sink: ValueSink): void {
    for (let r: CRule | undefined = rule; r !== undefined; r = r.else) {
      sink.found = false
      sink.stopOnFirst = r.constValue !== undefined
      sink.loc = r.loc
      const f: Frame = new Array(r.nslots)
      f[0] = sink
      r.entry(c, f)
      if (sink.found) return
    }
  }

  /** The value of a complete rule or function group: the rules' (with their else chains), else the default. */
  private ruleValue(c: Ctx, g: Group, rules: readonly CRule[], sink: ValueSink): Value | undefined {
    for (let i = 0; i < rules.length; i++) {
      this.runChain(c, rules[i], sink)
      if (g.allConst && sink.value !== undefined) break
    }
    const v = sink.value !== undefined ? sink.value : g.defaultValue
    if (v !== undefined || g.defaultRule === undefined) return v
    this.runChain(c, g.defaultRule, sink)
    return sink.value
  }

  /** The value of complete rules (with defaults, else chains and conflict detection). */
  complete(c: Ctx, g: Group): Value | undefined {
    const cache = this.cacheOf(c)
    const hit = cache[g.id]
    if (hit !== undefined) return hit === UNDEF ? undefined : hit
    const rules = g.index !== undefined ? (g.index.candidates(c) ?? g.rules) : g.rules
    const sink = new ValueSink("complete rules must not produce multiple outputs", g.node.rules[0].rule.loc)
    const v = this.ruleValue(c, g, rules, sink)
    cache[g.id] = v === undefined ? UNDEF : v
    return v
  }

  /** The set of a multi-value rule group. */
  multi(c: Ctx, g: Group): RegoSet {
    const cache = this.cacheOf(c)
    const hit = cache[g.id]
    if (hit !== undefined) return hit as RegoSet
    const sink = new SetSink()
    for (const r of g.rules) {
      const f: Frame = new Array(r.nslots)
      f[0] = sink
      r.entry(c, f)
    }
    cache[g.id] = sink.set
    return sink.set
  }

  /** Calls a function group with evaluated arguments (memoised per query scope). */
  // Function results are memoised per evaluation, in nested maps keyed by the arguments: scalars
  // by value (numbers are normalised, so one value has one representation), composites by
  // identity (values are never mutated during an evaluation). Calling `f(rule)` over the objects
  // of a large data document thus costs a map lookup, not a serialisation per call; equal
  // composites built separately miss the memo and are simply computed again.
  call(c: Ctx, g: Group, args: Value[]): Value | undefined {
    const n = args.length
    let memo: Map<unknown, unknown> | undefined
    if (g.memo && n > 0) {
      let fc = c.fnCache
      if (fc === undefined) fc = c.fnCache = new Map()
      memo = fc.get(g.id)
      if (memo === undefined) fc.set(g.id, (memo = new Map()))
      for (let i = 0; i < n - 1; i++) {
        const k = args[i]
        let next = memo.get(k) as Map<unknown, unknown> | undefined
        if (next === undefined) memo.set(k, (next = new Map()))
        memo = next
      }
      const hit = memo.get(args[n - 1]) as Cached
      if (hit !== undefined) return hit === UNDEF ? undefined : hit
    }
    const sink = new ValueSink("functions must not produce multiple outputs for same inputs", g.node.rules[0].rule.loc)
    sink.args = args
    const v = this.ruleValue(c, g, g.rules, sink)
    if (memo !== undefined) memo.set(args[n - 1], v === undefined ? UNDEF : v)
    return v
  }

  /** The document of a generic node: every rule in its extent, merged leaf by leaf. */
  generic(c: Ctx, g: Group): Value {
    const cache = this.cacheOf(c)
    const hit = cache[g.id]
    if (hit !== undefined) return hit as Value
    const builder = new DocBuilder()
    this.collect(c, g.node, [], builder)
    const v = builder.build()
    cache[g.id] = v
    return v
  }

  private collect(c: Ctx, node: RuleNode, rel: Value[], builder: DocBuilder): void {
    const g = this.groups[node.id]
    if (g !== undefined) {
      const loc = node.rules[0].rule.loc
      switch (node.kind) {
        case "complete": {
          const v = this.complete(c, g)
          if (v !== undefined) builder.insertValue(rel, v, loc)
          return
        }
        case "multi": {
          const s = builder.setAt(rel, loc)
          for (const x of this.multi(c, g).unordered()) s.add(x)
          return
        }
        case "function":
          return
        default: {
          const sink = new LeafSink(builder, rel, loc)
          for (const r of g.rules) {
            sink.loc = r.loc
            const f: Frame = new Array(r.nslots)
            f[0] = sink
            r.entry(c, f)
          }
        }
      }
    }
    for (const child of node.children.values()) {
      const p = [...rel, child.key]
      if (child.kind === "internal" || child.kind === "generic") builder.ensureBranch(p, node.rules[0]?.rule.loc ?? dummy)
      this.collect(c, child, p, builder)
    }
  }

  /** The document at a node with rules (undefined for functions and undefined complete rules). */
  doc(c: Ctx, node: RuleNode): Value | undefined {
    const g = this.groups[node.id]
    if (g === undefined) return undefined
    switch (node.kind) {
      case "complete":
        return this.complete(c, g)
      case "multi":
        return this.multi(c, g)
      case "generic":
        return this.generic(c, g)
      default:
        return undefined
    }
  }

  /** The full document below an internal node: its children's documents over base data. */
  extent(c: Ctx, node: RuleNode, base: Value | undefined, ov: Overlay | undefined): Value {
    const b = new ObjectBuilder()
    for (const child of node.children.values()) {
      const cov = ov?.children?.get(typeof child.key === "string" ? child.key : hashKey(child.key))?.node
      const v = this.docAt(c, child, base === undefined ? undefined : getKey(base, child.key), cov)
      if (v !== undefined) b.set(child.key, v)
    }
    // Base documents take precedence over virtual ones at the same path; objects merge.
    if (base !== undefined && isObject(base))
      objectEach(base, (k, v) => {
        const virt = b.get(k)
        b.set(k, virt !== undefined ? mergeDocs(virt, v) : v)
        return false
      })
    if (ov?.children !== undefined) {
      for (const { key, node: o } of ov.children.values()) {
        if (node.child(key) !== undefined) continue
        const v = patch(base === undefined ? undefined : getKey(base, key), o)
        if (v !== undefined) b.set(key, v)
      }
    }
    return b.build()
  }

  docAt(c: Ctx, node: RuleNode, base: Value | undefined, ov: Overlay | undefined): Value | undefined {
    if (ov?.value !== undefined) return ov.value
    if (node.rules.length > 0) return this.doc(c, node)
    return this.extent(c, node, base, ov)
  }

  /** The whole `data` document. */
  dataRoot(c: Ctx): Value {
    return this.docAt(c, this.root, c.data, c.overlay) as Value
  }

  /**
   * Enumerates `data...` refs from a node: `steps` are resolved one at a time (`key` gives a
   * fixed key or undefined to iterate), descending into rule documents, base data and overlays.
   */
  walk(c: Ctx, f: Frame, node: RuleNode, base: Value | undefined, ov: Overlay | undefined, steps: readonly TreeStep[], i: number, k: VCont, nav: Navigator): boolean {
    if (ov?.value !== undefined) return nav(c, f, ov.value, i, k)
    if (node.rules.length > 0) {
      const d = this.doc(c, node)
      return d === undefined ? false : nav(c, f, d, i, k)
    }
    if (i === steps.length) return k(c, f, this.extent(c, node, base, ov))
    const visit = (c: Ctx, f: Frame, key: Value): boolean => {
      const child = node.child(key)
      const cb = base === undefined ? undefined : getDataKey(base, key)
      const co = ov?.children?.get(typeof key === "string" ? key : hashKey(key))?.node
      if (child !== undefined) return this.walk(c, f, child, cb, co, steps, i + 1, k, nav)
      if (co !== undefined) {
        const v = patch(cb, co)
        return v === undefined ? false : nav(c, f, v, i + 1, k)
      }
      return cb === undefined ? false : nav(c, f, cb, i + 1, k)
    }
    return steps[i](c, f, (c2, f2, key) => visit(c2, f2, key), () => this.keysAt(node, base, ov))
  }

  private keysAt(node: RuleNode, base: Value | undefined, ov: Overlay | undefined): Value[] {
    const seen = new Set<string>()
    const out: Value[] = []
    const add = (k: Value): void => {
      const h = typeof k === "string" ? "s" + k : hashKey(k)
      if (seen.has(h)) return
      seen.add(h)
      out.push(k)
    }
    for (const k of node.childKeys()) add(k)
    if (base !== undefined && isObject(base)) iterate(base, (k) => (add(k), false))
    if (ov?.children !== undefined) for (const { key } of ov.children.values()) add(key)
    return out.sort(compare)
  }
}

/**
 * One step of a data ref in the tree: calls `visit` with the key (or each candidate key from
 * `keys()` when the step iterates).
 */
export type TreeStep = (c: Ctx, f: Frame, visit: VCont, keys: () => Value[]) => boolean
/** Continues a ref on a plain value from step i. */
export type Navigator = (c: Ctx, f: Frame, v: Value, i: number, k: VCont) => boolean

/** Merges a virtual document with the base document at the same path (base wins on leaves). */
const mergeDocs = (virt: Value, base: Value): Value => {
  if (!isObject(virt) || !isObject(base)) return base
  const b = new ObjectBuilder()
  objectEach(virt, (k, v) => (b.set(k, v), false))
  objectEach(base, (k, v) => {
    const x = b.get(k)
    b.set(k, x !== undefined ? mergeDocs(x, v) : v)
    return false
  })
  return b.build()
}

/** Base data with `with` replacements applied below it. */
export const patch = (base: Value | undefined, ov: Overlay): Value | undefined => {
  if (ov.value !== undefined) return ov.value
  if (ov.children === undefined) return base
  const b = new ObjectBuilder()
  if (base !== undefined && isObject(base)) objectEach(base, (k, v) => (b.set(k, v), false))
  else if (base !== undefined) return base
  for (const { key, node } of ov.children.values()) {
    const v = patch(base === undefined ? undefined : getKey(base, key), node)
    if (v !== undefined) b.set(key, v)
  }
  return b.build()
}

const dummy: Location = { file: "", row: 0, col: 0 }

export { Ctx }
