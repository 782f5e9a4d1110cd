// The compiler's intermediate form: names resolved (globals become data refs, locals become
// frame slots), syntax sugar removed (`some x in xs`, `:=`, template strings, print), bodies
// ordered for safety. Code generation turns it into closures.

import type { Loc } from "../ast.js"
import type { BuiltinDef } from "../builtins/registry.js"
import type { Value } from "../value.js"
import type { RuleNode } from "./tree.js"

export type LTerm =
  | { readonly t: "const"; readonly v: Value }
  | { readonly t: "var"; readonly slot: number; readonly name: string }
  | { readonly t: "input" }
  | { readonly t: "data" }
  | { readonly t: "ref"; readonly head: LTerm; readonly path: readonly LTerm[]; readonly loc: Loc }
  | { readonly t: "array"; readonly items: readonly LTerm[] }
  | { readonly t: "set"; readonly items: readonly LTerm[] }
  | { readonly t: "object"; readonly entries: ReadonlyArray<readonly [LTerm, LTerm]> }
  | LComp
  | { readonly t: "call"; readonly fn: Callee; readonly args: readonly LTerm[]; readonly loc: Loc }
  /** `$"..."`: constant strings and one-element set comprehensions (`{x | x = expr}`). */
  | { readonly t: "template"; readonly parts: readonly LTerm[]; readonly loc: Loc }

export interface LComp {
  readonly t: "comp"
  readonly kind: "array" | "set" | "object"
  readonly head: LTerm
  /** Value term of object comprehensions. */
  readonly value: LTerm | undefined
  body: LExpr[]
  readonly loc: Loc
}

export type Callee =
  | { readonly kind: "builtin"; readonly def: BuiltinDef; readonly name: string }
  | { readonly kind: "func"; readonly node: RuleNode; readonly name: string }

export type WithTarget =
  | { readonly kind: "input"; readonly path: readonly Value[] }
  | { readonly kind: "data"; readonly path: readonly Value[] }
  /** A function or builtin replaced by another function (`with f as g`) or a value. */
  | { readonly kind: "fn"; readonly key: string; readonly arity: number }

export interface LWith {
  readonly target: WithTarget
  /** The replacement: a value, or (for function targets) possibly another function. */
  readonly value: LTerm
  readonly fnValue: Callee | undefined
  readonly loc: Loc
}

export type LExprBody =
  | { readonly k: "term"; readonly term: LTerm }
  | { readonly k: "unify"; readonly a: LTerm; readonly b: LTerm }
  /** A call statement; `out` receives the result when written `f(x, out)`. */
  | { readonly k: "call"; readonly fn: Callee; readonly args: readonly LTerm[]; readonly out: LTerm | undefined }
  | {
      readonly k: "every"
      readonly key: LTerm | undefined
      readonly value: LTerm
      readonly domain: LTerm
      body: LExpr[]
    }

export interface LExpr {
  readonly e: LExprBody
  readonly negated: boolean
  readonly with: readonly LWith[]
  readonly loc: Loc
}

/** One rule definition (one branch of an else chain), ready for code generation. */
export interface LRule {
  readonly nslots: number
  /** Function argument patterns. */
  readonly args: readonly LTerm[] | undefined
  /** Terms of the head ref below the rule's tree node (`p[x].y := ...` has [x, "y"]). */
  readonly suffix: readonly LTerm[]
  /** Multi-value rules: the element. */
  readonly key: LTerm | undefined
  readonly value: LTerm | undefined
  readonly body: LExpr[]
  readonly isDefault: boolean
  readonly loc: Loc
  readonly else: LRule | undefined
  /** Slot names, for diagnostics. */
  readonly names: readonly string[]
}

// ---------------------------------------------------------------------------------------------
// Visitors

/** Calls f on t and every sub-term, not descending into comprehension bodies. */
export const walkTerm = (t: LTerm, f: (t: LTerm) => void, intoClosures = false): void => {
  f(t)
  switch (t.t) {
    case "ref":
      walkTerm(t.head, f, intoClosures)
      for (const p of t.path) walkTerm(p, f, intoClosures)
      return
    case "array":
    case "set":
      for (const x of t.items) walkTerm(x, f, intoClosures)
      return
    case "object":
      for (const [k, v] of t.entries) {
        walkTerm(k, f, intoClosures)
        walkTerm(v, f, intoClosures)
      }
      return
    case "call":
      for (const a of t.args) walkTerm(a, f, intoClosures)
      return
    case "comp":
      if (intoClosures) {
        walkTerm(t.head, f, true)
        if (t.value !== undefined) walkTerm(t.value, f, true)
        for (const e of t.body) walkExprTerms(e, f, true)
      }
      return
    case "template":
      if (intoClosures) for (const p of t.parts) walkTerm(p, f, true)
      return
    default:
      return
  }
}

export const walkExprTerms = (e: LExpr, f: (t: LTerm) => void, intoClosures = false): void => {
  const b = e.e
  switch (b.k) {
    case "term":
      walkTerm(b.term, f, intoClosures)
      break
    case "unify":
      walkTerm(b.a, f, intoClosures)
      walkTerm(b.b, f, intoClosures)
      break
    case "call":
      for (const a of b.args) walkTerm(a, f, intoClosures)
      if (b.out !== undefined) walkTerm(b.out, f, intoClosures)
      break
    case "every":
      // The key and value variables are local to the every body: not terms of the expression.
      walkTerm(b.domain, f, intoClosures)
      if (intoClosures) for (const x of b.body) walkExprTerms(x, f, true)
      break
  }
  for (const w of e.with) walkTerm(w.value, f, intoClosures)
}

/** Slots of vars in t, not descending into closures. */
export const termVars = (t: LTerm, out: Set<number> = new Set()): Set<number> => {
  walkTerm(t, (x) => {
    if (x.t === "var") out.add(x.slot)
  })
  return out
}

/** Slots of vars in an expression, not descending into closures. */
export const exprVars = (e: LExpr, out: Set<number> = new Set()): Set<number> => {
  walkExprTerms(e, (x) => {
    if (x.t === "var") out.add(x.slot)
  })
  return out
}

export const isGroundTerm = (t: LTerm): boolean => {
  switch (t.t) {
    case "const":
      return true
    case "array":
    case "set":
      return t.items.every(isGroundTerm)
    case "object":
      return t.entries.every(([k, v]) => isGroundTerm(k) && isGroundTerm(v))
    default:
      return false
  }
}
