// Code generation: the intermediate form becomes closures. A body is a chain of continuations
// (`Cont`): each expression enumerates its solutions and calls the next expression for each;
// bindings live in a frame (an array of slots) and are undone on the way back, so no trail is
// needed. Terms compile to a direct evaluator (`fn`) when they have a single value and to a
// generator (`gen`) otherwise.

import type { Loc } from "../ast.js"
import { BuiltinError, type BuiltinDef } from "../builtins/registry.js"
import { isStackOverflow, RegoEvalError } from "../errors.js"
import { type Cont, Ctx, type Fn, type Frame, type Gen, type Mock, type Overlay, type VCont } from "../eval/context.js"
import { type CRule, type Group, LeafSink, Runtime, SetSink, type TreeStep, ValueSink } from "../eval/documents.js"
import { getDataKey, getKey, iterate, keysOf } from "../eval/navigate.js"
import { formatPlain } from "../format.js"
import {
  type Value,
  compare,
  equals,
  hashKey,
  isObject,
  ObjectBuilder,
  objectEach,
  objectGet,
  ObjectMap,
  objectSize,
  RegoSet
} from "../value.js"
import { type Callee, type LComp, type LExpr, type LRule, type LTerm, type LWith, termVars, walkExprTerms, walkTerm } from "./ir.js"
import { outputVarsForExpr, reorderBody } from "./safety.js"
import type { RuleInfo, RuleNode } from "./tree.js"

interface TermC {
  /** Single-valued evaluator, when the term cannot generate several values. */
  readonly fn: Fn | undefined
  readonly gen: Gen
}

type Pat =
  | { readonly p: "var"; readonly slot: number }
  | { readonly p: "const"; readonly v: Value }
  | { readonly p: "array"; readonly items: readonly Pat[] }
  | { readonly p: "object"; readonly keys: readonly Fn[]; readonly values: readonly Pat[] }
  | { readonly p: "eval"; readonly tc: TermC }

type Bound = ReadonlySet<number>

const fnGen = (fn: Fn): Gen => (c, f, k) => {
  const v = fn(c, f)
  return v === undefined ? false : k(c, f, v)
}

const constTC = (v: Value): TermC => {
  const fn: Fn = () => v
  return { fn, gen: (c, f, k) => k(c, f, v) }
}

const STOP: Cont = () => true

/** Continues when the term's value is defined and not false: a term used as an expression. */
const whenTrue = (tc: TermC, next: Cont): Cont => {
  if (tc.fn !== undefined) {
    const fn = tc.fn
    return (c, f) => {
      const v = fn(c, f)
      return v !== undefined && v !== false ? next(c, f) : false
    }
  }
  const gen = tc.gen
  return (c, f) => gen(c, f, (c2, f2, v) => (v !== false ? next(c2, f2) : false))
}

/** Compilation state of one rule branch or query: its frame size grows as temporaries are needed. */
class Unit {
  constructor(public nslots: number) {}
  slot(): number {
    return this.nslots++
  }
}

/** Whether a rule (with its else branches) calls user functions or contains comprehensions. */
const fansOut = (rule: LRule): boolean => {
  let found = false
  const visit = (t: LTerm): void => {
    if (t.t === "comp" || (t.t === "call" && t.fn.kind === "func")) found = true
  }
  const terms = [...(rule.args ?? []), ...rule.suffix, ...(rule.key !== undefined ? [rule.key] : []), ...(rule.value !== undefined ? [rule.value] : [])]
  for (const t of terms) walkTerm(t, visit, true)
  const visitBody = (body: readonly LExpr[]): void => {
    for (const e of body) {
      if (e.e.k === "call" && e.e.fn.kind === "func") found = true
      if (e.e.k === "every") visitBody(e.e.body)
      walkExprTerms(e, visit, true)
      for (const w of e.with) if (w.fnValue !== undefined) found = true
    }
  }
  visitBody(rule.body)
  return found || (rule.else !== undefined && fansOut(rule.else))
}

/** The size of a builtin's result, in steps: strings per 16 characters, collections per element (not nested). */
const weight = (v: Value | undefined): number => {
  if (typeof v === "string") return v.length >> 4
  if (typeof v !== "object" || v === null) return 0
  if (Array.isArray(v)) return v.length
  if (v instanceof RegoSet || v instanceof ObjectMap) return v.size
  return 0
}

export class CodeGen {
  private compIds = 0

  constructor(
    readonly rt: Runtime,
    readonly defaultLimitsCheck = true
  ) {}

  // -------------------------------------------------------------------------------------------
  // Builtin and function invocation

  invokeBuiltin(c: Ctx, def: BuiltinDef, args: Value[], loc: Loc): Value | undefined {
    if (c.mocks !== undefined) {
      const m = c.mocks.get(def.name)
      if (m !== undefined) return this.invokeMock(c, m, args, loc)
    }
    if (def.unavailable !== undefined) throw new RegoEvalError("eval_builtin_error", `${def.name}: ${def.unavailable}`, loc)
    const root = c.root
    root.location = loc
    let r: Value | undefined
    try {
      r = def.fn(args, root)
    } catch (e) {
      if (e instanceof BuiltinError) {
        if (root.strict || e.halt) throw new RegoEvalError(e.code, `${def.name}: ${e.message}`, loc)
        return undefined
      }
      if (e instanceof RegoEvalError) throw e
      if (e instanceof RangeError) {
        // Exhausted stack is not a builtin's answer: let it end the evaluation (see rego.ts).
        if (isStackOverflow(e)) throw e
        // Nor is a result beyond what JavaScript can hold (string, array or BigInt size).
        throw new RegoEvalError("eval_builtin_error", `${def.name}: result too large (${e.message})`, loc)
      }
      if (root.strict) throw new RegoEvalError("eval_builtin_error", `${def.name}: ${e instanceof Error ? e.message : String(e)}`, loc)
      return undefined
    }
    // Work proportional to the result and to string operands counts against the step limit,
    // so that a few expensive calls advance it (and the deadline check runs) like many cheap ones.
    let w = weight(r)
    for (let i = 0; i < args.length; i++) {
      const a = args[i]
      if (typeof a === "string") w += a.length >> 4
    }
    if (w > 0) root.charge(w)
    return r
  }

  invokeMock(c: Ctx, m: Mock, args: Value[], loc: Loc): Value | undefined {
    if ("value" in m) return m.value
    // A replacement function runs without any function mocks: `with f as g` where g calls f
    // calls the original f, and a mock never calls another mock (as in OPA).
    const plain = new Ctx(c.input, c.data, c.overlay, undefined, c, c.root)
    return this.invoke(plain, m.fn, args, loc)
  }

  invoke(c: Ctx, callee: Callee, args: Value[], loc: Loc): Value | undefined {
    if (callee.kind === "builtin") return this.invokeBuiltin(c, callee.def, args, loc)
    if (c.mocks !== undefined) {
      const m = c.mocks.get(callee.name)
      if (m !== undefined) return this.invokeMock(c, m, args, loc)
    }
    const g = this.rt.group(callee.node) as Group
    return this.rt.call(c, g, args)
  }

  // -------------------------------------------------------------------------------------------
  // Terms

  term(t: LTerm, b: Bound, u: Unit): TermC {
    switch (t.t) {
      case "const":
        return constTC(t.v)
      case "var": {
        const slot = t.slot
        const fn: Fn = (_c, f) => f[slot] as Value | undefined
        return { fn, gen: fnGen(fn) }
      }
      case "input": {
        const fn: Fn = (c) => c.input
        return { fn, gen: fnGen(fn) }
      }
      case "data": {
        const fn: Fn = (c) => this.rt.dataRoot(c)
        return { fn, gen: fnGen(fn) }
      }
      case "ref":
        return this.ref(t, b, u)
      case "array":
        return this.composite(
          t.items.map((x) => this.term(x, b, u)),
          (vs) => vs
        )
      case "set":
        return this.composite(
          t.items.map((x) => this.term(x, b, u)),
          (vs) => RegoSet.of(vs)
        )
      case "object": {
        const parts: TermC[] = []
        for (const [k, v] of t.entries) parts.push(this.term(k, b, u), this.term(v, b, u))
        return this.composite(parts, (vs) => {
          const ob = new ObjectBuilder()
          for (let i = 0; i < vs.length; i += 2) ob.set(vs[i], vs[i + 1])
          return ob.build()
        })
      }
      case "comp":
        return this.comp(t, b, u)
      case "call":
        return this.callTerm(t.fn, t.args, t.loc, b, u)
      case "template":
        return this.template(t.parts, t.loc, b, u)
    }
  }

  private composite(parts: TermC[], build: (vs: Value[]) => Value): TermC {
    if (parts.every((p) => p.fn !== undefined)) {
      const fns = parts.map((p) => p.fn as Fn)
      const fn: Fn = (c, f) => {
        const vs = valuesOf(fns, c, f)
        return vs === undefined ? undefined : build(vs)
      }
      return { fn, gen: fnGen(fn) }
    }
    return { fn: undefined, gen: this.withArgs(parts, (c, f, vs, k) => k(c, f, build(vs))) }
  }

  private callTerm(callee: Callee, args: readonly LTerm[], loc: Loc, b: Bound, u: Unit): TermC {
    const acs = args.map((a) => this.term(a, b, u))
    if (callee.kind === "builtin" && callee.def.relation === true) {
      const def = callee.def
      return {
        fn: undefined,
        gen: this.withArgs(acs, (c, f, vs, k) => {
          const r = this.invokeBuiltin(c, def, vs, loc)
          if (r === undefined || !Array.isArray(r)) return false
          for (const x of r) if (k(c, f, x)) return true
          return false
        })
      }
    }
    const special = callee.kind === "builtin" ? this.inlineBuiltin(callee.def, acs) : undefined
    if (special !== undefined) return special
    if (acs.every((a) => a.fn !== undefined)) {
      const fns = acs.map((a) => a.fn as Fn)
      const fn: Fn = (c, f) => {
        const vs = valuesOf(fns, c, f)
        return vs === undefined ? undefined : this.invoke(c, callee, vs, loc)
      }
      return { fn, gen: fnGen(fn) }
    }
    return {
      fn: undefined,
      gen: this.withArgs(acs, (c, f, vs, k) => {
        const r = this.invoke(c, callee, vs, loc)
        return r === undefined ? false : k(c, f, r)
      })
    }
  }

  /** Comparison builtins evaluated inline (no argument array), unless mocked. */
  private inlineBuiltin(def: BuiltinDef, acs: TermC[]): TermC | undefined {
    if (acs.length !== 2 || acs[0].fn === undefined || acs[1].fn === undefined) return undefined
    const fa = acs[0].fn
    const fb = acs[1].fn
    let op: ((x: Value, y: Value) => boolean) | undefined
    switch (def.name) {
      case "equal":
        op = equals
        break
      case "neq":
        op = (x, y) => !equals(x, y)
        break
      case "lt":
        op = (x, y) => compare(x, y) < 0
        break
      case "lte":
        op = (x, y) => compare(x, y) <= 0
        break
      case "gt":
        op = (x, y) => compare(x, y) > 0
        break
      case "gte":
        op = (x, y) => compare(x, y) >= 0
        break
      default:
        return undefined
    }
    const name = def.name
    const fn: Fn = (c, f) => {
      const x = fa(c, f)
      if (x === undefined) return undefined
      const y = fb(c, f)
      if (y === undefined) return undefined
      if (c.mocks !== undefined) {
        const m = c.mocks.get(name)
        if (m !== undefined) return this.invokeMock(c, m, [x, y], dummyLoc)
      }
      return op(x, y)
    }
    return { fn, gen: fnGen(fn) }
  }

  /** Evaluates argument terms (enumerating generators) and calls body with their values. */
  private withArgs(acs: TermC[], body: (c: Ctx, f: Frame, vs: Value[], k: VCont) => boolean): Gen {
    // Generators first: they may bind variables the single-valued parts read.
    const order = [...acs.keys()].sort((a, b) => Number(acs[a].fn !== undefined) - Number(acs[b].fn !== undefined))
    return (c, f, k) => {
      const vs: Value[] = new Array(acs.length)
      const step = (c: Ctx, f: Frame, j: number): boolean => {
        if (j === acs.length) return body(c, f, vs.slice(), k)
        const i = order[j]
        const a = acs[i]
        if (a.fn !== undefined) {
          const v = a.fn(c, f)
          if (v === undefined) return false
          vs[i] = v
          return step(c, f, j + 1)
        }
        return a.gen(c, f, (c, f, v) => {
          vs[i] = v
          return step(c, f, j + 1)
        })
      }
      return step(c, f, 0)
    }
  }

  /**
   * A comprehension. Its value depends only on the scope (input, data, `with`) and on the outer
   * variables it closes over, so:
   * - one that closes over nothing is computed once per scope;
   * - one whose outer variables are all compared by equality in its body (`[x | some x in xs;
   *   x.kind == k]`, k bound outside) is computed once per scope for every k at the same time,
   *   into an index from k to the result (OPA's comprehension indexing), so that a group-by
   *   over n items is linear instead of quadratic.
   */
  private comp(t: LComp, b: Bound, u: Unit): TermC {
    const plain = this.compParts(t, b, u)
    const closure = new Set<number>()
    let prints = false
    const visit = (x: LTerm): void => {
      if (x.t === "var" && b.has(x.slot)) closure.add(x.slot)
      if (x.t === "call" && x.fn.kind === "builtin" && x.fn.def.void === true) prints = true
    }
    walkTerm(t, visit, true)
    const visitBody = (body: readonly LExpr[]): void => {
      for (const e of body) {
        if (e.e.k === "call" && e.e.fn.kind === "builtin" && e.e.fn.def.void === true) prints = true
        if (e.e.k === "every") visitBody(e.e.body)
        if (e.with.length > 0) prints = true // a with inside: keep it simple, no caching
      }
    }
    visitBody(t.body)
    // print() must run every time; nondeterministic builtins are consistent per evaluation anyway.
    if (prints) return plain.tc
    const id = this.compIds++
    if (closure.size === 0) {
      const run = plain.tc.fn as Fn
      const fn: Fn = (c, f) => {
        let cache = c.compCache
        if (cache === undefined) cache = c.compCache = new Map()
        let v = cache.get(id) as Value | undefined
        if (v === undefined) {
          v = run(c, f) as Value
          cache.set(id, v)
        }
        return v
      }
      return { fn, gen: fnGen(fn) }
    }
    return this.compIndexed(t, b, u, closure, id) ?? plain.tc
  }

  /** The index form of a comprehension, when every closure variable is an equality key. */
  private compIndexed(t: LComp, b: Bound, u: Unit, closure: ReadonlySet<number>, id: number): TermC | undefined {
    const keys = new Set<number>()
    const varsOf = (x: LTerm): Set<number> => termVars(x, new Set())
    // Key equalities become unifications, which bind the key while the index is built.
    const body = t.body.map((e): LExpr => {
      if (e.negated || e.with.length > 0) return e
      let sides: [LTerm, LTerm] | undefined
      if (e.e.k === "unify") sides = [e.e.a, e.e.b]
      else if (e.e.k === "call" && e.e.fn.kind === "builtin" && e.e.fn.name === "equal" && e.e.out === undefined) sides = [e.e.args[0], e.e.args[1]]
      if (sides === undefined) return e
      let key = false
      for (const [x, y] of [sides, [sides[1], sides[0]]] as const) {
        if (x.t === "var" && closure.has(x.slot) && ![...varsOf(y)].some((v) => closure.has(v))) {
          keys.add(x.slot)
          key = true
        }
      }
      return key && e.e.k === "call" ? { ...e, e: { k: "unify", a: sides[0], b: sides[1] } } : e
    })
    if (keys.size !== closure.size) return undefined
    const inner = new Set([...b].filter((v) => !keys.has(v)))
    const unsafe = new Map<LExpr, Set<number>>()
    const ordered = reorderBody(inner, body, unsafe)
    if (unsafe.size > 0) return undefined
    const ks = [...keys]
    const parts = this.compParts({ ...t, body: ordered }, inner, u, (f) => (ks.length === 1 ? hashKey(f[ks[0]] as Value) : hashKey(ks.map((k) => f[k] as Value))))
    const build = parts.tc.fn as Fn
    const empty = parts.finish(parts.make())
    const fn: Fn = (c, f) => {
      let cache = c.compCache
      if (cache === undefined) cache = c.compCache = new Map()
      let index = cache.get(id) as Map<string, unknown> | undefined
      if (index === undefined) {
        const saved = ks.map((k) => f[k])
        for (const k of ks) f[k] = undefined
        index = build(c, f) as unknown as Map<string, unknown>
        ks.forEach((k, i) => (f[k] = saved[i]))
        cache.set(id, index)
      }
      const acc = index.get(ks.length === 1 ? hashKey(f[ks[0]] as Value) : hashKey(ks.map((k) => f[k] as Value)))
      return acc === undefined ? empty : parts.finish(acc)
    }
    return { fn, gen: fnGen(fn) }
  }

  /**
   * Compiles a comprehension. With `bucket`, the result is a map from bucket keys (computed from
   * the frame at each solution) to accumulators, instead of one accumulator.
   */
  private compParts(
    t: LComp,
    b: Bound,
    u: Unit,
    bucket?: (f: Frame) => string
  ): { tc: TermC; make: () => unknown; finish: (acc: unknown) => Value } {
    const accSlot = u.slot()
    let emit: Cont = () => false
    const [body, after] = this.bodyWithBound(t.body, b, u, (c, f) => emit(c, f))
    const head = this.term(t.head, after, u)
    const value = t.value !== undefined ? this.term(t.value, after, u) : undefined
    let make: () => unknown
    let finish: (acc: unknown) => Value
    // The accumulator of the current solution: the single one, or the one of its bucket.
    let accOf: (f: Frame) => unknown
    switch (t.kind) {
      case "array":
        make = () => [] as Value[]
        finish = (a) => a as Value[]
        break
      case "set":
        make = () => new RegoSet()
        finish = (a) => a as RegoSet
        break
      default:
        make = () => new ObjectBuilder()
        finish = (a) => (a as ObjectBuilder).build()
    }
    if (bucket === undefined) accOf = (f) => f[accSlot]
    else {
      const mk = make
      accOf = (f) => {
        const m = f[accSlot] as Map<string, unknown>
        const k = bucket(f)
        let a = m.get(k)
        if (a === undefined) m.set(k, (a = mk()))
        return a
      }
    }
    switch (t.kind) {
      case "array": {
        const hfn = head.fn
        emit =
          hfn !== undefined
            ? (_c, f) => {
                const v = hfn(_c, f)
                if (v !== undefined) (accOf(f) as Value[]).push(v)
                return false
              }
            : (c, f) => head.gen(c, f, (_c, f2, v) => ((accOf(f2) as Value[]).push(v), false))
        break
      }
      case "set": {
        const hfn = head.fn
        emit =
          hfn !== undefined
            ? (c, f) => {
                const v = hfn(c, f)
                if (v !== undefined) (accOf(f) as RegoSet).add(v)
                return false
              }
            : (c, f) => head.gen(c, f, (_c, f2, v) => ((accOf(f2) as RegoSet).add(v), false))
        break
      }
      default: {
        const vtc = value as TermC
        const loc = t.loc
        emit = (c, f) =>
          head.gen(c, f, (c2, f2, k) =>
            vtc.gen(c2, f2, (_c3, f3, v) => {
              const ob = accOf(f3) as ObjectBuilder
              const prev = ob.set(k, v)
              if (prev !== undefined && !equals(prev, v)) throw new RegoEvalError("eval_conflict_error", "object keys must be unique", loc)
              return false
            })
          )
      }
    }
    const start = bucket === undefined ? make : () => new Map<string, unknown>()
    const done = bucket === undefined ? finish : (a: unknown) => a as Value
    const fn: Fn = (c, f) => {
      const saved = f[accSlot]
      const a = start()
      f[accSlot] = a
      body(c, f)
      f[accSlot] = saved
      return done(a)
    }
    return { tc: { fn, gen: fnGen(fn) }, make, finish }
  }

  private template(parts: readonly LTerm[], loc: Loc, b: Bound, u: Unit): TermC {
    const pcs = parts.map((p) => (p.t === "const" ? String(p.v) : this.term(p, b, u)))
    const fn: Fn = (c, f) => {
      let out = ""
      for (const p of pcs) {
        if (typeof p === "string") {
          out += p
          continue
        }
        const s = (p.fn as Fn)(c, f) as RegoSet
        if (s.size === 0) out += "<undefined>"
        else if (s.size > 1) throw new RegoEvalError("eval_conflict_error", "template-strings must not produce multiple outputs", loc)
        else out += formatPlain(s.sorted()[0])
      }
      return out
    }
    return { fn, gen: fnGen(fn) }
  }

  // -------------------------------------------------------------------------------------------
  // Refs

  private ref(t: LTerm & { t: "ref" }, b: Bound, u: Unit): TermC {
    if (t.head.t === "data") return this.dataRef(t.path, b, u)
    const head = t.head.t === "input" ? ({ fn: (c: Ctx) => c.input, gen: undefined } as unknown as TermC) : this.term(t.head, b, u)
    const headGen: Gen = t.head.t === "input" ? (c, f, k) => (c.input === undefined ? false : k(c, f, c.input)) : head.gen
    const nav = this.navigator(t.path, b, u)
    if (head.fn !== undefined && nav.fn !== undefined) {
      const hf = head.fn
      const nf = nav.fn
      const fn: Fn = (c, f) => {
        const v = hf(c, f)
        return v === undefined ? undefined : nf(c, f, v)
      }
      return { fn, gen: fnGen(fn) }
    }
    const ng = nav.gen
    return { fn: undefined, gen: (c, f, k) => headGen(c, f, (c2, f2, v) => ng(c2, f2, v, 0, k)) }
  }

  /** Navigation over plain values along a ref path. */
  private navigator(
    path: readonly LTerm[],
    b: Bound,
    u: Unit,
    get: (v: Value | undefined, k: Value) => Value | undefined = getKey
  ): {
    fn: ((c: Ctx, f: Frame, v: Value) => Value | undefined) | undefined
    gen: (c: Ctx, f: Frame, v: Value, i: number, k: VCont) => boolean
  } {
    type Step = { k: 0; key: Value } | { k: 1; slot: number } | { k: 2; fn: Fn } | { k: 3; gen: Gen } | { k: 4; pat: Pat }
    const steps: Step[] = path.map((p): Step => {
      if (p.t === "const") return { k: 0, key: p.v }
      if (p.t === "var") return { k: 1, slot: p.slot }
      if (hasUnboundPatternVars(p, b)) return { k: 4, pat: this.pattern(p, b, u) }
      const tc = this.term(p, b, u)
      return tc.fn !== undefined ? { k: 2, fn: tc.fn } : { k: 3, gen: tc.gen }
    })
    const n = steps.length
    const staticFn = steps.every((s) => s.k === 0 || (s.k === 1 && b.has(s.slot)) || s.k === 2)
    const fn = staticFn
      ? (c: Ctx, f: Frame, v: Value): Value | undefined => {
          let x: Value | undefined = v
          for (let i = 0; i < n; i++) {
            const s = steps[i]
            let key: Value | undefined
            if (s.k === 0) key = s.key
            else if (s.k === 1) key = f[s.slot] as Value | undefined
            else key = (s as { fn: Fn }).fn(c, f)
            if (key === undefined) return undefined
            x = get(x, key)
            if (x === undefined) return undefined
          }
          return x
        }
      : undefined
    const gen = (c: Ctx, f: Frame, v: Value, i: number, k: VCont): boolean => {
      let x: Value | undefined = v
      for (; i < n; i++) {
        const s = steps[i]
        switch (s.k) {
          case 0:
            x = get(x, s.key)
            break
          case 1: {
            const cur = f[s.slot] as Value | undefined
            if (cur !== undefined) {
              x = get(x, cur)
              break
            }
            const slot = s.slot
            const next = i + 1
            return iterate(x, (key, val) => {
              f[slot] = key
              const r = gen(c, f, val, next, k)
              f[slot] = undefined
              return r
            })
          }
          case 2: {
            const key = s.fn(c, f)
            if (key === undefined) return false
            x = get(x, key)
            break
          }
          case 3: {
            const base = x
            const next = i + 1
            return s.gen(c, f, (c2, f2, key) => {
              const val = get(base, key)
              return val === undefined ? false : gen(c2, f2, val, next, k)
            })
          }
          default: {
            const pat = s.pat
            const next = i + 1
            const base = x
            return iterate(base, (key, val) => unifyPV(c, f, pat, key, (c2, f2) => gen(c2, f2, val, next, k)))
          }
        }
        if (x === undefined) return false
      }
      return k(c, f, x as Value)
    }
    return { fn, gen }
  }

  /** `data...` refs: resolved against the rule tree at compile time as far as the path is constant. */
  private dataRef(path: readonly LTerm[], b: Bound, u: Unit): TermC {
    const rt = this.rt
    let node = rt.root
    let i = 0
    while (i < path.length && node.rules.length === 0) {
      const p = path[i]
      if (p.t !== "const") break
      const child = node.child(p.v)
      if (child === undefined) break
      node = child
      i++
    }
    const rest = path.slice(i)
    const nav = this.navigator(rest, b, u, getDataKey)
    const fullNav = this.navigator(path, b, u, getDataKey)
    const steps = this.treeSteps(path, b, u)
    const root = rt.root
    // The generic walk handles overlays and dynamic keys below internal nodes.
    const slow: Gen = (c, f, k) =>
      rt.walk(c, f, root, c.data, c.overlay, steps, 0, k, (c2, f2, v, j, k2) => fullNav.gen(c2, f2, v, j, k2))
    const fixedNode = node
    let fast: TermC
    if (node.rules.length > 0) {
      const g = rt.group(node) as Group
      const docFn: Fn =
        node.kind === "complete"
          ? (c) => rt.complete(c, g)
          : node.kind === "multi"
            ? (c) => rt.multi(c, g)
            : node.kind === "generic"
              ? (c) => rt.generic(c, g)
              : () => undefined
      if (nav.fn !== undefined) {
        const nf = nav.fn
        const fn: Fn =
          rest.length === 0
            ? (c, f) => (c.overlay !== undefined ? firstOf(slow, c, f) : docFn(c, f))
            : (c, f) => {
                if (c.overlay !== undefined) return firstOf(slow, c, f)
                const d = docFn(c, f)
                return d === undefined ? undefined : nf(c, f, d)
              }
        return { fn, gen: fnGen(fn) }
      }
      const ng = nav.gen
      fast = {
        fn: undefined,
        gen: (c, f, k) => {
          if (c.overlay !== undefined) return slow(c, f, k)
          const d = docFn(c, f)
          return d === undefined ? false : ng(c, f, d, 0, k)
        }
      }
      return fast
    }
    if (i === path.length) {
      const fn: Fn = (c, f) => (c.overlay !== undefined ? firstOf(slow, c, f) : rt.docAt(c, fixedNode, baseAt(c.data, fixedNode.path), undefined))
      return { fn, gen: fnGen(fn) }
    }
    if (rest[0].t === "const") {
      // Off the rule tree: plain base data from here on.
      const basePath = fixedNode.path
      if (nav.fn !== undefined) {
        const nf = nav.fn
        const fn: Fn = (c, f) => {
          if (c.overlay !== undefined) return firstOf(slow, c, f)
          const base = baseAt(c.data, basePath)
          return base === undefined ? undefined : nf(c, f, base)
        }
        return { fn, gen: fnGen(fn) }
      }
      const ng = nav.gen
      return {
        fn: undefined,
        gen: (c, f, k) => {
          if (c.overlay !== undefined) return slow(c, f, k)
          const base = baseAt(c.data, basePath)
          return base === undefined ? false : ng(c, f, base, 0, k)
        }
      }
    }
    // A dynamic key below an internal node: walk the tree from there.
    const subSteps = steps.slice(i)
    const subNav = this.navigator(rest, b, u, getDataKey)
    const gen: Gen = (c, f, k) => {
      if (c.overlay !== undefined) return slow(c, f, k)
      return rt.walk(c, f, fixedNode, baseAt(c.data, fixedNode.path), undefined, subSteps, 0, k, (c2, f2, v, j, k2) => subNav.gen(c2, f2, v, j, k2))
    }
    return { fn: undefined, gen }
  }

  /** Tree-walk steps for each path term (see Runtime.walk). */
  private treeSteps(path: readonly LTerm[], b: Bound, u: Unit): TreeStep[] {
    return path.map((p): TreeStep => {
      if (p.t === "const") {
        const key = p.v
        return (c, f, visit) => visit(c, f, key)
      }
      if (p.t === "var") {
        const slot = p.slot
        return (c, f, visit, keys) => {
          const cur = f[slot] as Value | undefined
          if (cur !== undefined) return visit(c, f, cur)
          for (const key of keys()) {
            f[slot] = key
            const r = visit(c, f, key)
            f[slot] = undefined
            if (r) return true
          }
          return false
        }
      }
      if (hasUnboundPatternVars(p, b)) {
        const pat = this.pattern(p, b, u)
        return (c, f, visit, keys) => {
          for (const key of keys()) if (unifyPV(c, f, pat, key, (c2, f2) => visit(c2, f2, key))) return true
          return false
        }
      }
      const tc = this.term(p, b, u)
      return (c, f, visit) => tc.gen(c, f, visit)
    })
  }

  // -------------------------------------------------------------------------------------------
  // Patterns and unification

  pattern(t: LTerm, b: Bound, u: Unit): Pat {
    switch (t.t) {
      case "var":
        return { p: "var", slot: t.slot }
      case "const":
        return { p: "const", v: t.v }
      case "array":
        return { p: "array", items: t.items.map((x) => this.pattern(x, b, u)) }
      case "object": {
        const keys: Fn[] = []
        const values: Pat[] = []
        for (const [k, v] of t.entries) {
          const kt = this.term(k, b, u)
          if (kt.fn === undefined) return { p: "eval", tc: this.term(t, b, u) }
          keys.push(kt.fn)
          values.push(this.pattern(v, b, u))
        }
        return { p: "object", keys, values }
      }
      default:
        return { p: "eval", tc: this.term(t, b, u) }
    }
  }

  private unifyExpr(a: LTerm, bt: LTerm, b: Bound, u: Unit, next: Cont): Cont {
    // x := <value> / x = <value> with x free: bind directly.
    for (const [x, y] of [
      [a, bt],
      [bt, a]
    ] as const) {
      if (x.t === "var" && !b.has(x.slot) && !hasUnboundPatternVars(y, b)) {
        const slot = x.slot
        const tc = this.term(y, b, u)
        if (tc.fn !== undefined) {
          const fn = tc.fn
          return (c, f) => {
            const v = fn(c, f)
            if (v === undefined) return false
            const cur = f[slot] as Value | undefined
            if (cur !== undefined) return equals(cur, v) ? next(c, f) : false
            f[slot] = v
            const r = next(c, f)
            f[slot] = undefined
            return r
          }
        }
        return (c, f) =>
          tc.gen(c, f, (c2, f2, v) => {
            const cur = f2[slot] as Value | undefined
            if (cur !== undefined) return equals(cur, v) ? next(c2, f2) : false
            f2[slot] = v
            const r = next(c2, f2)
            f2[slot] = undefined
            return r
          })
      }
    }
    const aFree = hasUnboundPatternVars(a, b)
    const bFree = hasUnboundPatternVars(bt, b)
    if (!aFree && !bFree) {
      const ta = this.term(a, b, u)
      const tb = this.term(bt, b, u)
      if (ta.fn !== undefined && tb.fn !== undefined) {
        const fa = ta.fn
        const fb = tb.fn
        return (c, f) => {
          const x = fa(c, f)
          if (x === undefined) return false
          const y = fb(c, f)
          if (y === undefined) return false
          return equals(x, y) ? next(c, f) : false
        }
      }
    }
    if (!bFree) {
      const pa = this.pattern(a, b, u)
      const tb = this.term(bt, b, u)
      return (c, f) => tb.gen(c, f, (c2, f2, v) => unifyPV(c2, f2, pa, v, next))
    }
    if (!aFree) {
      const pb = this.pattern(bt, b, u)
      const ta = this.term(a, b, u)
      return (c, f) => ta.gen(c, f, (c2, f2, v) => unifyPV(c2, f2, pb, v, next))
    }
    const pa = this.pattern(a, b, u)
    const pb = this.pattern(bt, b, u)
    return (c, f) => unifyPP(c, f, pa, pb, next)
  }

  // -------------------------------------------------------------------------------------------
  // Expressions and bodies

  /** Compiles a body ending in `terminal`; returns the entry and the vars bound at its end. */
  bodyWithBound(exprs: readonly LExpr[], b0: Bound, u: Unit, terminal: Cont): [Cont, Set<number>] {
    const bounds: Array<Set<number>> = []
    const b = new Set(b0)
    for (const e of exprs) {
      bounds.push(new Set(b))
      for (const v of outputVarsForExpr(e, b)) b.add(v)
      if (e.e.k === "call" && e.e.out !== undefined && !e.negated) {
        // Output arguments are bound by the call.
        const out = e.e.out
        if (out.t === "var") b.add(out.slot)
      }
    }
    let next = terminal
    for (let i = exprs.length - 1; i >= 0; i--) next = this.expr(exprs[i], bounds[i], u, next)
    return [next, b]
  }

  private expr(e: LExpr, b: Bound, u: Unit, next: Cont): Cont {
    let step: Cont
    if (e.with.length > 0) {
      const inner = this.exprCore(e, b, u, (c, f) => next(c.outer as Ctx, f))
      step = this.withStep(e.with, b, u, inner)
    } else step = this.exprCore(e, b, u, next)
    return (c, f) => {
      const root = c.root
      if (++root.steps > root.nextCheck) {
        root.location = e.loc
        root.check()
      }
      return step(c, f)
    }
  }

  private exprCore(e: LExpr, b: Bound, u: Unit, next: Cont): Cont {
    if (e.negated) {
      const inner = this.exprPositive(e, b, u, STOP)
      return (c, f) => (inner(c, f) ? false : next(c, f))
    }
    return this.exprPositive(e, b, u, next)
  }

  private exprPositive(e: LExpr, b: Bound, u: Unit, next: Cont): Cont {
    const x = e.e
    switch (x.k) {
      case "term":
        return whenTrue(this.term(x.term, b, u), next)
      case "unify":
        return this.unifyExpr(x.a, x.b, b, u, next)
      case "call":
        return this.callExpr(x.fn, x.args, x.out, e.loc, b, u, next)
      case "every":
        return this.every(x, b, u, next)
    }
  }

  private callExpr(callee: Callee, args: readonly LTerm[], out: LTerm | undefined, loc: Loc, b: Bound, u: Unit, next: Cont): Cont {
    const tc = this.callTerm(callee, args, loc, b, u)
    if (callee.kind === "builtin" && callee.def.void === true) {
      const gen = tc.gen
      return (c, f) => gen(c, f, (c2, f2) => next(c2, f2))
    }
    if (out === undefined) return whenTrue(tc, next)
    const pat = this.pattern(out, b, u)
    const gen = tc.gen
    return (c, f) => gen(c, f, (c2, f2, v) => unifyPV(c2, f2, pat, v, next))
  }

  private every(x: LExpr["e"] & { k: "every" }, b: Bound, u: Unit, next: Cont): Cont {
    const domain = this.term(x.domain, b, u)
    const inner = new Set(b)
    const keySlot = x.key !== undefined && x.key.t === "var" ? x.key.slot : undefined
    const valSlot = x.value.t === "var" ? x.value.slot : undefined
    if (keySlot !== undefined) inner.add(keySlot)
    if (valSlot !== undefined) inner.add(valSlot)
    const [body] = this.bodyWithBound(x.body, inner, u, STOP)
    return (c, f) =>
      domain.gen(c, f, (c2, f2, d) => {
        if (typeof d !== "object" || d === null) return false
        let ok = true
        iterate(d, (k, v) => {
          if (keySlot !== undefined) f2[keySlot] = k
          if (valSlot !== undefined) f2[valSlot] = v
          const found = body(c2, f2)
          if (keySlot !== undefined) f2[keySlot] = undefined
          if (valSlot !== undefined) f2[valSlot] = undefined
          if (!found) ok = false
          return !found
        })
        return ok ? next(c2, f2) : false
      })
  }

  // -------------------------------------------------------------------------------------------
  // with

  private withStep(withs: readonly LWith[], b: Bound, u: Unit, inner: Cont): Cont {
    const values = withs.map((w) => (w.fnValue !== undefined ? undefined : this.term(w.value, b, u)))
    return (c, f) => {
      const vals: Array<Value | undefined> = new Array(withs.length)
      const run = (c: Ctx, f: Frame, i: number): boolean => {
        if (i === withs.length) return inner(this.withCtx(c, withs, vals), f)
        const tc = values[i]
        if (tc === undefined) return run(c, f, i + 1)
        return tc.gen(c, f, (c2, f2, v) => {
          vals[i] = v
          return run(c2, f2, i + 1)
        })
      }
      return run(c, f, 0)
    }
  }

  private withCtx(c: Ctx, withs: readonly LWith[], vals: ReadonlyArray<Value | undefined>): Ctx {
    let input = c.input
    let overlay: Overlay | undefined = c.overlay
    let mocks: Map<string, Mock> | undefined = c.mocks
    let inputReplaced = false
    for (let i = 0; i < withs.length; i++) {
      const w = withs[i]
      const t = w.target
      switch (t.kind) {
        case "input":
          if (t.path.length === 0) {
            input = vals[i]
            inputReplaced = true
          } else input = setPath(input, t.path, vals[i] as Value)
          break
        case "data":
          overlay = withOverlay(overlay, t.path, vals[i] as Value)
          break
        case "fn": {
          mocks = new Map(mocks ?? [])
          mocks.set(t.key, w.fnValue !== undefined ? { fn: w.fnValue } : { value: vals[i] as Value })
          break
        }
      }
    }
    void inputReplaced
    return new Ctx(input, c.data, overlay, mocks, c, c.root)
  }

  // -------------------------------------------------------------------------------------------
  // Rules

  /** Compiles every rule of a node into its group. */
  compileGroup(node: RuleNode, lrules: ReadonlyArray<{ info: RuleInfo; rule: LRule }>): void {
    const g = this.rt.group(node) as Group
    const consts: Array<Value | undefined> = []
    for (const { info, rule } of lrules) {
      if (rule.isDefault) {
        if (rule.value !== undefined && rule.value.t === "const") g.defaultValue = rule.value.v
        else g.defaultRule = this.compileRule(node, info, rule)
        continue
      }
      const cr = this.compileRule(node, info, rule)
      g.rules.push(cr)
      for (let r: CRule | undefined = cr; r !== undefined; r = r.else) consts.push(r.constValue)
    }
    g.allConst =
      consts.length > 0 && consts.every((v) => v !== undefined) && consts.every((v) => equals(v as Value, consts[0] as Value))
    // Memoising a function only pays when a call can fan out into more calls: a function that
    // calls user functions or builds comprehensions. A leaf function costs less to run again
    // than to key, look up and store its result.
    if (node.kind === "function") g.memo = lrules.some(({ rule }) => fansOut(rule))
  }

  private compileRule(node: RuleNode, info: RuleInfo, rule: LRule): CRule {
    const u = new Unit(rule.nslots)
    const argSlots = new Set<number>()
    for (const a of rule.args ?? []) patternSlots(a, argSlots)
    let terminal: Cont
    let constValue: Value | undefined
    // The head is compiled after the body (its vars are bound there), but the body's end must
    // call it: tie the knot through `head`.
    let head: Cont = () => false
    const [body, after] = this.bodyWithBound(rule.body, argSlots, u, (c, f) => head(c, f))
    switch (node.kind) {
      case "multi": {
        const key = this.term(rule.key as LTerm, after, u)
        const kf = key.fn
        head =
          kf !== undefined
            ? (c, f) => {
                const v = kf(c, f)
                return v === undefined ? false : (f[0] as SetSink).add(v)
              }
            : (c, f) => key.gen(c, f, (_c, f2, v) => (f2[0] as SetSink).add(v))
        break
      }
      case "generic": {
        const multi = info.kind === "multi"
        const sfx = rule.suffix.map((t) => this.term(t, after, u))
        const val = this.term((multi ? rule.key : rule.value) as LTerm, after, u)
        const parts = [...sfx, val]
        const gen = this.withArgs(parts, (_c, f, vs) => (f[0] as LeafSink).leaf(vs.slice(0, -1), vs[vs.length - 1], multi))
        head = (c, f) => gen(c, f, () => false)
        break
      }
      default: {
        const val = this.term(rule.value as LTerm, after, u)
        if (rule.value !== undefined && rule.value.t === "const") constValue = rule.value.v
        const vf = val.fn
        head =
          vf !== undefined
            ? (c, f) => {
                const v = vf(c, f)
                return v === undefined ? false : (f[0] as ValueSink).emit(v)
              }
            : (c, f) => val.gen(c, f, (_c, f2, v) => (f2[0] as ValueSink).emit(v))
      }
    }
    terminal = body
    if (rule.args !== undefined && rule.args.length > 0) {
      const pats = rule.args.map((a) => this.pattern(a, new Set(), u))
      const simple = pats.every((p, i) => p.p === "var" && pats.findIndex((q) => q.p === "var" && q.slot === p.slot) === i)
      const n = pats.length
      if (simple) {
        const slots = pats.map((p) => (p as { slot: number }).slot)
        terminal = (c, f) => {
          const args = (f[0] as ValueSink).args
          for (let i = 0; i < n; i++) f[slots[i]] = args[i]
          return body(c, f)
        }
      } else {
        terminal = (c, f) => {
          const args = (f[0] as ValueSink).args
          const step = (c: Ctx, f: Frame, i: number): boolean => (i === n ? body(c, f) : unifyPV(c, f, pats[i], args[i], (c2, f2) => step(c2, f2, i + 1)))
          return step(c, f, 0)
        }
      }
    }
    const els = rule.else !== undefined ? this.compileRule(node, info, rule.else) : undefined
    return { nslots: u.nslots, entry: terminal, else: els, constValue, loc: rule.loc }
  }

  /** Compiles a single term (e.g. a rule path) to a function of a fresh frame. */
  compileTerm(t: LTerm, nslots: number): { fn: Fn; nslots: number } {
    const u = new Unit(nslots)
    const tc = this.term(t, new Set(), u)
    const gen = tc.gen
    const fn: Fn = tc.fn ?? ((c, f) => firstOf(gen, c, f))
    return { fn, nslots: u.nslots }
  }

  /** Compiles a query body; `emit` receives each solution's frame. */
  compileQuery(body: readonly LExpr[], nslots: number, emit: Cont): { entry: Cont; nslots: number } {
    const u = new Unit(nslots)
    const [entry] = this.bodyWithBound(body, new Set(), u, emit)
    return { entry, nslots: u.nslots }
  }
}

// ---------------------------------------------------------------------------------------------
// Runtime unification

const dummyLoc: Loc = { file: "", row: 0, col: 0, offset: 0 }

/** Unifies a pattern with a value; binds free variables for the duration of k. */
export const unifyPV = (c: Ctx, f: Frame, p: Pat, v: Value, k: Cont): boolean => {
  switch (p.p) {
    case "var": {
      const cur = f[p.slot] as Value | undefined
      if (cur !== undefined) return equals(cur, v) ? k(c, f) : false
      f[p.slot] = v
      const r = k(c, f)
      f[p.slot] = undefined
      return r
    }
    case "const":
      return equals(p.v, v) ? k(c, f) : false
    case "array": {
      if (!Array.isArray(v) || v.length !== p.items.length) return false
      const items = p.items
      const step = (c: Ctx, f: Frame, i: number): boolean => (i === items.length ? k(c, f) : unifyPV(c, f, items[i], v[i], (c2, f2) => step(c2, f2, i + 1)))
      return step(c, f, 0)
    }
    case "object": {
      if (!isObject(v) || objectSize(v) !== p.keys.length) return false
      const keys: Value[] = []
      for (const kf of p.keys) {
        const key = kf(c, f)
        if (key === undefined) return false
        keys.push(key)
      }
      const vals: Value[] = []
      for (const key of keys) {
        const x = objectGet(v, key)
        if (x === undefined) return false
        vals.push(x)
      }
      const step = (c: Ctx, f: Frame, i: number): boolean => (i === vals.length ? k(c, f) : unifyPV(c, f, p.values[i], vals[i], (c2, f2) => step(c2, f2, i + 1)))
      return step(c, f, 0)
    }
    case "eval":
      return p.tc.gen(c, f, (c2, f2, x) => (equals(x, v) ? k(c2, f2) : false))
  }
}

/** The values of single-valued terms, or undefined if one is undefined. */
const valuesOf = (fns: readonly Fn[], c: Ctx, f: Frame): Value[] | undefined => {
  const vs: Value[] = new Array(fns.length)
  for (let i = 0; i < fns.length; i++) {
    const v = fns[i](c, f)
    if (v === undefined) return undefined
    vs[i] = v
  }
  return vs
}

/** The value of a pattern whose variables are all bound, else undefined. */
const patValue = (c: Ctx, f: Frame, p: Pat): Value | undefined => {
  switch (p.p) {
    case "var":
      return f[p.slot] as Value | undefined
    case "const":
      return p.v
    case "array": {
      const out: Value[] = []
      for (const x of p.items) {
        const v = patValue(c, f, x)
        if (v === undefined) return undefined
        out.push(v)
      }
      return out
    }
    case "object": {
      const ob = new ObjectBuilder()
      for (let i = 0; i < p.keys.length; i++) {
        const k = p.keys[i](c, f)
        const v = patValue(c, f, p.values[i])
        if (k === undefined || v === undefined) return undefined
        ob.set(k, v)
      }
      return ob.build()
    }
    case "eval":
      return p.tc.fn !== undefined ? p.tc.fn(c, f) : undefined
  }
}

/** Unifies two patterns that may both hold free variables. */
export const unifyPP = (c: Ctx, f: Frame, a: Pat, b: Pat, k: Cont): boolean => {
  if (a.p === "eval") return a.tc.gen(c, f, (c2, f2, v) => unifyPV(c2, f2, b, v, k))
  if (b.p === "eval") return b.tc.gen(c, f, (c2, f2, v) => unifyPV(c2, f2, a, v, k))
  const av = patValue(c, f, a)
  if (av !== undefined) return unifyPV(c, f, b, av, k)
  const bv = patValue(c, f, b)
  if (bv !== undefined) return unifyPV(c, f, a, bv, k)
  if (a.p === "array" && b.p === "array") {
    if (a.items.length !== b.items.length) return false
    const step = (c: Ctx, f: Frame, i: number): boolean => (i === a.items.length ? k(c, f) : unifyPP(c, f, a.items[i], b.items[i], (c2, f2) => step(c2, f2, i + 1)))
    return step(c, f, 0)
  }
  if (a.p === "object" && b.p === "object") {
    if (a.keys.length !== b.keys.length) return false
    const pairs: Array<[Pat, Pat]> = []
    for (let i = 0; i < a.keys.length; i++) {
      const ka = a.keys[i](c, f)
      if (ka === undefined) return false
      let j = 0
      for (; j < b.keys.length; j++) {
        const kb = b.keys[j](c, f)
        if (kb !== undefined && equals(ka, kb)) break
      }
      if (j === b.keys.length) return false
      pairs.push([a.values[i], b.values[j]])
    }
    const step = (c: Ctx, f: Frame, i: number): boolean => (i === pairs.length ? k(c, f) : unifyPP(c, f, pairs[i][0], pairs[i][1], (c2, f2) => step(c2, f2, i + 1)))
    return step(c, f, 0)
  }
  return false
}

// ---------------------------------------------------------------------------------------------
// Helpers

/** Whether a term holds variables (outside refs/calls) that are not bound yet: a pattern. */
const hasUnboundPatternVars = (t: LTerm, b: Bound): boolean => {
  switch (t.t) {
    case "var":
      return !b.has(t.slot)
    case "array":
      return t.items.some((x) => hasUnboundPatternVars(x, b))
    case "object":
      return t.entries.some(([, v]) => hasUnboundPatternVars(v, b))
    default:
      return false
  }
}

const patternSlots = (t: LTerm, out: Set<number>): void => {
  switch (t.t) {
    case "var":
      out.add(t.slot)
      return
    case "array":
      for (const x of t.items) patternSlots(x, out)
      return
    case "object":
      for (const [, v] of t.entries) patternSlots(v, out)
      return
    default:
      return
  }
}

const firstOf = (gen: Gen, c: Ctx, f: Frame): Value | undefined => {
  let out: Value | undefined
  gen(c, f, (_c, _f, v) => {
    out = v
    return true
  })
  return out
}

/** Base data at a path, or undefined. */
export const baseAt = (data: Value, path: readonly Value[]): Value | undefined => {
  let v: Value | undefined = data
  for (const k of path) {
    v = getDataKey(v, k)
    if (v === undefined) return undefined
  }
  return v
}

/** A copy of `doc` with `path` set to `value` (creating objects on the way, replacing non-objects). */
export const setPath = (doc: Value | undefined, path: readonly Value[], value: Value): Value => {
  if (path.length === 0) return value
  const ob = new ObjectBuilder()
  if (doc !== undefined && isObject(doc)) objectEach(doc, (k, v) => (ob.set(k, v), false))
  const k = path[0]
  const cur = doc !== undefined && isObject(doc) ? objectGet(doc, k) : undefined
  ob.set(k, setPath(cur, path.slice(1), value))
  return ob.build()
}

const withOverlay = (ov: Overlay | undefined, path: readonly Value[], value: Value): Overlay => {
  if (path.length === 0) return { value }
  const children = new Map(ov?.children ?? [])
  const h = typeof path[0] === "string" ? path[0] : hashKey(path[0])
  const prev = children.get(h)
  children.set(h, { key: path[0], node: withOverlay(prev?.node, path.slice(1), value) })
  // A replacement below an existing replacement patches that value instead.
  if (ov?.value !== undefined) return { value: setPath(ov.value, path, value) }
  return { children }
}

export { keysOf }
