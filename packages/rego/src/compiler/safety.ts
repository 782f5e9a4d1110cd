// Safety: every variable must be bound by a positive expression before it is used as an input.
// Bodies are reordered (stably, minimally) so that left-to-right evaluation binds variables before
// use, as OPA's reorderBodyForSafety does; what cannot be ordered is reported as
// `rego_unsafe_var_error`.

import type { Loc } from "../ast.js"
import { RegoError } from "../errors.js"
import { equals } from "../value.js"
import type { LExpr, LTerm } from "./ir.js"
import { exprVars, termVars, walkExprTerms, walkTerm } from "./ir.js"

type VarSet = Set<number>

const union = (a: VarSet, b: Iterable<number>): VarSet => {
  const r = new Set(a)
  for (const x of b) r.add(x)
  return r
}

/** Vars of a term, skipping closures, set elements and object keys and ref heads (OPA's call input visitor). */
const inputVars = (t: LTerm, out: VarSet): void => {
  switch (t.t) {
    case "var":
      out.add(t.slot)
      return
    case "ref":
      if (t.head.t !== "var") inputVars(t.head, out)
      for (const p of t.path) inputVars(p, out)
      return
    case "array":
      for (const x of t.items) inputVars(x, out)
      return
    case "object":
      for (const [, v] of t.entries) inputVars(v, out)
      return
    case "call":
      for (const a of t.args) inputVars(a, out)
      return
    default:
      return
  }
}

/** Vars bound when a pattern is unified with a ground value (arrays, object values; no ref heads). */
const patternVars = (t: LTerm, out: VarSet): void => {
  switch (t.t) {
    case "var":
      out.add(t.slot)
      return
    case "ref":
      for (const p of t.path) patternVars(p, out)
      return
    case "array":
      for (const x of t.items) patternVars(x, out)
      return
    case "object":
      for (const [, v] of t.entries) patternVars(v, out)
      return
    case "call":
      for (const a of t.args) patternVars(a, out)
      return
    default:
      return
  }
}

const isRefSafe = (r: LTerm & { t: "ref" }, safe: VarSet): boolean => {
  const h = r.head
  if (h.t === "var") return safe.has(h.slot)
  for (const v of termVars(h)) if (!safe.has(v)) return false
  return true
}

const isCallSafe = (c: LTerm, safe: VarSet): boolean => {
  for (const v of termVars(c)) if (!safe.has(v)) return false
  return true
}

/** Vars made safe by refs in the terms (vars in ref paths, when the ref head is safe). */
const outputVarsForTerms = (terms: readonly LTerm[], safe: VarSet, out: VarSet): VarSet => {
  for (const t of terms)
    walkTerm(t, (x) => {
      if (x.t === "ref" && isRefSafe(x, safe)) for (const p of x.path) patternVarsAll(p, out)
    })
  return out
}

/** Every var in a term except the heads of refs (OPA's VarVisitor with SkipRefHead). */
const patternVarsAll = (t: LTerm, out: VarSet): void => {
  switch (t.t) {
    case "var":
      out.add(t.slot)
      return
    case "ref":
      if (t.head.t !== "var") patternVarsAll(t.head, out)
      for (const p of t.path) patternVarsAll(p, out)
      return
    case "array":
    case "set":
      for (const x of t.items) patternVarsAll(x, out)
      return
    case "object":
      for (const [k, v] of t.entries) {
        patternVarsAll(k, out)
        patternVarsAll(v, out)
      }
      return
    case "call":
      for (const a of t.args) patternVarsAll(a, out)
      return
    default:
      return
  }
}

const sameKeyTerm = (a: LTerm, b: LTerm): boolean =>
  (a.t === "const" && b.t === "const" && equals(a.v, b.v)) || (a.t === "var" && b.t === "var" && a.slot === b.slot)

/** OPA's unifier: vars that become bound by unifying a and b. */
const unify = (safe: VarSet, a: LTerm, b: LTerm): VarSet => {
  const unified: VarSet = new Set()
  const unknown = new Map<number, VarSet>()
  const isSafe = (x: number): boolean => safe.has(x) || unified.has(x)
  const markSafe = (x: number): void => {
    if (unified.has(x)) return
    unified.add(x)
    const deps = unknown.get(x)
    unknown.delete(x)
    if (deps !== undefined) for (const v of deps) markSafe(v)
    for (const [v, d] of [...unknown]) {
      if (d.has(x)) {
        d.delete(x)
        if (d.size === 0) {
          unknown.delete(v)
          markSafe(v)
        }
      }
    }
  }
  const markUnknown = (x: number, y: number): void => {
    let s = unknown.get(x)
    if (s === undefined) unknown.set(x, (s = new Set()))
    s.add(y)
  }
  const markAllSafe = (t: LTerm): void => {
    const vs: VarSet = new Set()
    patternVars(t, vs)
    for (const v of vs) markSafe(v)
  }
  const unifyAll = (x: number, t: LTerm): void => {
    if (isSafe(x)) markAllSafe(t)
    else {
      const vs: VarSet = new Set()
      patternVars(t, vs)
      const uns = [...vs].filter((v) => !safe.has(v) && !unified.has(v))
      if (uns.length === 0) markSafe(x)
      else for (const v of uns) markUnknown(x, v)
    }
  }
  const isRefLike = (t: LTerm): boolean => t.t === "ref" || t.t === "input" || t.t === "data"
  const refSafe = (t: LTerm): boolean => (t.t === "ref" ? isRefSafe(t, union(safe, unified)) : true)
  const go = (x: LTerm, y: LTerm): void => {
    if (x.t === "var") {
      if (y.t === "var") {
        if (isSafe(y.slot)) markSafe(x.slot)
        else if (isSafe(x.slot)) markSafe(y.slot)
        else {
          markUnknown(x.slot, y.slot)
          markUnknown(y.slot, x.slot)
        }
      } else if (y.t === "array" || y.t === "object") unifyAll(x.slot, y)
      else if (isRefLike(y)) {
        if (refSafe(y)) markSafe(x.slot)
      } else if (y.t === "call") {
        if (isCallSafe(y, union(safe, unified))) markSafe(x.slot)
      } else markSafe(x.slot)
      return
    }
    if (isRefLike(x)) {
      if (refSafe(x)) {
        if (y.t === "var") markSafe(y.slot)
        else if (y.t === "array" || y.t === "object") markAllSafe(y)
      }
      return
    }
    if (x.t === "call") {
      if (isCallSafe(x, union(safe, unified))) {
        if (y.t === "var") markSafe(y.slot)
        else if (y.t === "array" || y.t === "object") markAllSafe(y)
      }
      return
    }
    if (x.t === "comp") {
      if (y.t === "var") markSafe(y.slot)
      else if ((y.t === "array" && x.kind === "array") || (y.t === "object" && x.kind === "object")) markAllSafe(y)
      return
    }
    if (x.t === "array") {
      if (y.t === "var") unifyAll(y.slot, x)
      else if (y.t === "comp") markAllSafe(x)
      else if (isRefLike(y)) {
        if (refSafe(y)) markAllSafe(x)
      } else if (y.t === "call") {
        if (isCallSafe(y, union(safe, unified))) markAllSafe(x)
      } else if (y.t === "array") {
        if (x.items.length === y.items.length) for (let i = 0; i < x.items.length; i++) go(x.items[i], y.items[i])
      } else if (y.t === "const" && Array.isArray(y.v) && y.v.length === x.items.length) markAllSafe(x)
      return
    }
    if (x.t === "object") {
      if (y.t === "var") unifyAll(y.slot, x)
      else if (isRefLike(y)) {
        if (refSafe(y)) markAllSafe(x)
      } else if (y.t === "call") {
        if (isCallSafe(y, union(safe, unified))) markAllSafe(x)
      } else if (y.t === "object") {
        if (x.entries.length === y.entries.length) {
          for (const [k, v] of x.entries) {
            const m = y.entries.find(([k2]) => sameKeyTerm(k, k2))
            if (m !== undefined) go(v, m[1])
          }
        }
      } else if (y.t === "comp" && y.kind === "object") markAllSafe(x)
      else if (y.t === "const") markAllSafe(x)
      return
    }
    // scalars, sets, templates
    if (y.t === "var") markSafe(y.slot)
    else if (x.t === "const" && (y.t === "array" || y.t === "object")) markAllSafe(y)
  }
  go(a, b)
  return unified
}

const withVars = (e: LExpr): VarSet => {
  const out: VarSet = new Set()
  for (const w of e.with) for (const v of termVars(w.value)) out.add(v)
  return out
}

export const outputVarsForExpr = (e: LExpr, safe: VarSet): VarSet => {
  if (e.negated) return new Set()
  for (const v of withVars(e)) if (!safe.has(v)) return new Set()
  const b = e.e
  switch (b.k) {
    case "term":
      return outputVarsForTerms([b.term], safe, new Set())
    case "unify": {
      const o = outputVarsForTerms([b.a, b.b], safe, new Set())
      const s = union(o, safe)
      for (const v of unify(s, b.a, b.b)) o.add(v)
      for (const v of safe) o.delete(v)
      return o
    }
    case "call": {
      const all = b.out !== undefined ? [...b.args, b.out] : [...b.args]
      const o = outputVarsForTerms(all, safe, new Set())
      if (b.out === undefined) return o
      const ins: VarSet = new Set()
      for (const a of b.args) inputVars(a, ins)
      for (const v of ins) if (!o.has(v) && !safe.has(v)) return new Set()
      const outs: VarSet = new Set()
      inputVars(b.out, outs)
      for (const v of outs) o.add(v)
      return o
    }
    case "every":
      return outputVarsForTerms([b.domain], safe, new Set())
  }
}

/** Vars mentioned inside closures (comprehensions, every bodies, template parts) of e. */
const closureVars = (e: LExpr): VarSet => {
  const out: VarSet = new Set()
  const visitClosure = (t: LTerm): void =>
    walkTerm(
      t,
      (x) => {
        if (x.t === "var") out.add(x.slot)
      },
      true
    )
  walkExprTerms(e, (t) => {
    if (t.t === "comp" || t.t === "template") visitClosure(t)
  })
  if (e.e.k === "every") for (const x of e.e.body) walkExprTerms(x, (t) => (t.t === "var" ? out.add(t.slot) : undefined), true)
  return out
}

type Unsafe = Map<LExpr, VarSet>

const outputVarsForBody = (body: readonly LExpr[], safe: VarSet): VarSet => {
  const o = new Set(safe)
  for (const e of body) for (const v of outputVarsForExpr(e, o)) o.add(v)
  for (const v of safe) o.delete(v)
  return o
}

/** Reorders a body for safety; records unsafe vars per expression in `unsafe`. */
export const reorderBody = (globals: VarSet, body: LExpr[], unsafe: Unsafe): LExpr[] => {
  const bodyVars: VarSet = new Set()
  for (const e of body) exprVars(e, bodyVars)
  const safe: VarSet = new Set([...bodyVars].filter((v) => globals.has(v)))
  for (const e of body) {
    for (const v of exprVars(e)) {
      if (!safe.has(v)) {
        let s = unsafe.get(e)
        if (s === undefined) unsafe.set(e, (s = new Set()))
        s.add(v)
      }
    }
  }
  const reordered: LExpr[] = []
  const placed = new Set<LExpr>()
  for (;;) {
    const n = reordered.length
    for (const e of body) {
      if (placed.has(e)) continue
      const ovs = outputVarsForExpr(e, safe)
      const cv = new Set([...closureVars(e)].filter((v) => bodyVars.has(v) && !globals.has(v)))
      const ob = outputVarsForBody(reordered, safe)
      const uv = [...cv].filter((v) => !ob.has(v))
      if (uv.length > 0) {
        if (uv.length === ovs.size && uv.every((v) => ovs.has(v))) continue
        unsafe.set(e, new Set(uv))
      }
      const u = unsafe.get(e)
      if (u !== undefined) for (const v of [...u]) if (ovs.has(v) || safe.has(v)) u.delete(v)
      if (u === undefined || u.size === 0) {
        unsafe.delete(e)
        reordered.push(e)
        placed.add(e)
        for (const v of ovs) safe.add(v)
      }
    }
    if (reordered.length === n) break
  }
  // Expressions that could not be placed keep their relative order at the end, so that errors
  // are reported and code generation still sees every expression.
  for (const e of body) if (!placed.has(e)) reordered.push(e)

  // Closures: comprehensions and every bodies may use any variable of the expressions before.
  const g = new Set(globals)
  for (let i = 0; i < reordered.length; i++) {
    if (i > 0) exprVars(reordered[i - 1], g)
    const e = reordered[i]
    const current = e
    const gi = new Set(g)
    walkExprTerms(e, (t) => {
      if (t.t === "comp") reorderClosure(t, gi, current, unsafe)
      else if (t.t === "template") for (const p of t.parts) if (p.t === "comp") reorderClosure(p, gi, current, unsafe)
    })
    if (e.e.k === "every") {
      const ge = new Set(gi)
      if (e.e.key !== undefined) termVars(e.e.key, ge)
      termVars(e.e.value, ge)
      e.e.body = reorderBody(ge, e.e.body, unsafe)
    }
  }
  return reordered
}

const reorderClosure = (c: LTerm & { t: "comp" }, globals: VarSet, current: LExpr, unsafe: Unsafe): void => {
  const tv = termVars(c.head)
  if (c.value !== undefined) termVars(c.value, tv)
  const bv = new Set(globals)
  for (const e of c.body) exprVars(e, bv)
  for (const v of tv) {
    if (!bv.has(v)) {
      let s = unsafe.get(current)
      if (s === undefined) unsafe.set(current, (s = new Set()))
      s.add(v)
    }
  }
  c.body = reorderBody(globals, c.body, unsafe)
  // Nested closures in the head itself (rare).
  walkTerm(c.head, (t) => {
    if (t.t === "comp" && t !== c) reorderClosure(t, bv, current, unsafe)
  })
}

/** Turns unsafe-variable findings into errors, as OPA reports them. */
export const unsafeErrors = (unsafe: Unsafe, names: readonly string[]): RegoError[] => {
  if (unsafe.size === 0) return []
  const first = new Map<number, Loc>()
  for (const [e, vs] of unsafe) {
    for (const v of vs) {
      const prev = first.get(v)
      if (prev === undefined || compareLoc(e.loc, prev) < 0) first.set(v, e.loc)
    }
  }
  const out: RegoError[] = []
  const entries = [...first].sort((a, b) => compareLoc(a[1], b[1]))
  for (const [v, loc] of entries) {
    const name = names[v] ?? "?"
    if (isGenerated(name)) continue
    out.push(new RegoError("rego_unsafe_var_error", `var ${name.startsWith("$") ? "_" : name} is unsafe`, loc))
  }
  if (out.length > 0) return out
  const seen = new Set<number>()
  const pairs = [...unsafe].sort((a, b) => compareLoc(a[0].loc, b[0].loc))
  for (const [e, vs] of pairs) {
    const before = seen.size
    for (const v of vs) seen.add(v)
    if (seen.size > before) out.push(new RegoError("rego_unsafe_var_error", "expression is unsafe", e.loc))
  }
  return out
}

const isGenerated = (name: string): boolean => name.startsWith("__local") || name === "$opt" || name === "$tpl" || name === "$key"

const compareLoc = (a: Loc, b: Loc): number => (a.file !== b.file ? (a.file < b.file ? -1 : 1) : a.row - b.row || a.col - b.col)

/** Checks that head variables are bound by the body (or arguments). */
export const headUnsafe = (
  terms: readonly LTerm[],
  bodyVars: VarSet,
  names: readonly string[],
  loc: Loc
): RegoError[] => {
  const vs: VarSet = new Set()
  for (const t of terms) termVars(t, vs)
  const out: RegoError[] = []
  const reported = new Set<string>()
  for (const v of vs) {
    if (bodyVars.has(v)) continue
    const name = names[v] ?? "?"
    if (isGenerated(name) || reported.has(name)) continue
    reported.add(name)
    out.push(new RegoError("rego_unsafe_var_error", `var ${name.startsWith("$") ? "_" : name} is unsafe`, loc))
  }
  return out
}
