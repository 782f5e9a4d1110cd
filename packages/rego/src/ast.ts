// The Rego syntax tree produced by the parser. Shapes follow OPA's AST closely (infix
// operators are calls to the builtins `eq`, `assign`, `plus`, ...), so that compile stages
// can be described in OPA's terms.

import type { Location } from "./errors.js"
import type { Scalar } from "./value.js"

export interface Loc extends Location {
  readonly offset: number
}

export type Term =
  | ScalarTerm
  | VarTerm
  | RefTerm
  | ArrayTerm
  | SetTerm
  | ObjectTerm
  | ArrayCompTerm
  | SetCompTerm
  | ObjectCompTerm
  | CallTerm
  | TemplateTerm

export interface ScalarTerm {
  readonly type: "scalar"
  readonly value: Scalar
  readonly loc: Loc
}
export interface VarTerm {
  readonly type: "var"
  readonly name: string
  readonly loc: Loc
}
/** `head.a[b]...`: terms[0] is the head; a dotted segment is a string scalar. */
export interface RefTerm {
  readonly type: "ref"
  readonly terms: readonly Term[]
  readonly loc: Loc
}
export interface ArrayTerm {
  readonly type: "array"
  readonly items: readonly Term[]
  readonly loc: Loc
}
export interface SetTerm {
  readonly type: "set"
  readonly items: readonly Term[]
  readonly loc: Loc
}
export interface ObjectTerm {
  readonly type: "object"
  readonly entries: ReadonlyArray<readonly [Term, Term]>
  readonly loc: Loc
}
export interface ArrayCompTerm {
  readonly type: "arraycomp"
  readonly head: Term
  readonly body: Body
  readonly loc: Loc
}
export interface SetCompTerm {
  readonly type: "setcomp"
  readonly head: Term
  readonly body: Body
  readonly loc: Loc
}
export interface ObjectCompTerm {
  readonly type: "objectcomp"
  readonly key: Term
  readonly value: Term
  readonly body: Body
  readonly loc: Loc
}
/** A call; `op` is a ref (`count`, `data.lib.f`) or an infix operator's builtin name. */
export interface CallTerm {
  readonly type: "call"
  readonly op: RefTerm
  readonly args: readonly Term[]
  readonly loc: Loc
}
/** `$"...{expr}..."`: constant parts are string scalars. */
export interface TemplateTerm {
  readonly type: "template"
  readonly parts: ReadonlyArray<ScalarTerm | Expr>
  readonly loc: Loc
}

export type ExprBody =
  | { readonly type: "term"; readonly term: Term }
  | { readonly type: "call"; readonly op: RefTerm; readonly args: readonly Term[] }
  | { readonly type: "some"; readonly vars: readonly VarTerm[] }
  /** `some x in xs` / `some k, v in xs`: `call` is `internal.member_2/3(...)`. */
  | { readonly type: "somein"; readonly call: CallTerm }
  | {
      readonly type: "every"
      readonly key: Term | undefined
      readonly value: Term
      readonly domain: Term
      readonly body: Body
    }

export interface With {
  readonly target: Term
  readonly value: Term
  readonly loc: Loc
}

export interface Expr {
  readonly negated: boolean
  readonly body: ExprBody
  readonly with: readonly With[]
  readonly loc: Loc
  /** Set on expressions the compiler generates (never reported as user vars). */
  readonly generated?: boolean
}

export type Body = readonly Expr[]

export interface Head {
  /** Rule name path: a var first, then string scalars (dots) or any terms (brackets). */
  readonly ref: readonly Term[]
  readonly args: readonly Term[] | undefined
  /** The element of a multi-value rule (`p contains key`). */
  readonly key: Term | undefined
  readonly value: Term | undefined
  readonly assign: boolean
  /** The value was not written (`p if ...` means `p := true`). */
  readonly generatedValue: boolean
  readonly contains: boolean
  readonly hasIf: boolean
  readonly loc: Loc
}

export interface Rule {
  readonly default: boolean
  readonly head: Head
  readonly body: Body
  readonly else: Rule | undefined
  readonly generatedBody: boolean
  readonly loc: Loc
}

export interface Import {
  readonly path: RefTerm
  readonly alias: string | undefined
  readonly loc: Loc
}

/** A `# METADATA` comment block: its YAML, where it starts and the row of its last line. */
export interface Annotation {
  readonly loc: Loc
  readonly endRow: number
  readonly raw: Record<string, unknown>
}

export interface Module {
  readonly file: string
  /** Package path below `data`, e.g. ["a", "b"] for `package a.b`. */
  readonly pkg: readonly string[]
  readonly pkgLoc: Loc
  readonly imports: readonly Import[]
  readonly rules: readonly Rule[]
  readonly annotations: readonly Annotation[]
  readonly source: string
}

// ---------------------------------------------------------------------------------------------
// Helpers

export const WILDCARD_PREFIX = "$"

export const isWildcard = (name: string): boolean => name.startsWith(WILDCARD_PREFIX)

export const refName = (r: RefTerm): string | undefined => {
  const head = r.terms[0]
  if (head.type !== "var") return undefined
  let s = head.name
  for (let i = 1; i < r.terms.length; i++) {
    const t = r.terms[i]
    if (t.type !== "scalar" || typeof t.value !== "string") return undefined
    s += "." + t.value
  }
  return s
}

/** Rego source text of a term (for messages and the builtin `sprintf("%v")` of terms). */
export const termString = (t: Term): string => {
  switch (t.type) {
    case "scalar":
      return typeof t.value === "string" ? JSON.stringify(t.value) : t.value === null ? "null" : String(t.value)
    case "var":
      return isWildcard(t.name) ? "_" : t.name
    case "ref": {
      let s = termString(t.terms[0])
      for (let i = 1; i < t.terms.length; i++) {
        const x = t.terms[i]
        if (x.type === "scalar" && typeof x.value === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(x.value)) s += "." + x.value
        else s += "[" + termString(x) + "]"
      }
      return s
    }
    case "array":
      return "[" + t.items.map(termString).join(", ") + "]"
    case "set":
      return t.items.length === 0 ? "set()" : "{" + t.items.map(termString).join(", ") + "}"
    case "object":
      return "{" + t.entries.map(([k, v]) => termString(k) + ": " + termString(v)).join(", ") + "}"
    case "arraycomp":
      return "[" + termString(t.head) + " | " + bodyString(t.body) + "]"
    case "setcomp":
      return "{" + termString(t.head) + " | " + bodyString(t.body) + "}"
    case "objectcomp":
      return "{" + termString(t.key) + ": " + termString(t.value) + " | " + bodyString(t.body) + "}"
    case "call":
      return termString(t.op) + "(" + t.args.map(termString).join(", ") + ")"
    case "template":
      return '$"' + t.parts.map((p) => ("type" in p && p.type === "scalar" ? String(p.value) : "{" + exprString(p as Expr) + "}")).join("") + '"'
  }
}

/** OPA's ValueName for terms in messages. */
export const valueName = (t: Term): string => {
  switch (t.type) {
    case "scalar":
      return t.value === null ? "null" : typeof t.value === "bigint" ? "number" : typeof t.value
    case "var":
      return "var"
    case "ref":
      return "ref"
    case "array":
      return "array"
    case "set":
      return "set"
    case "object":
      return "object"
    case "arraycomp":
      return "arraycomprehension"
    case "setcomp":
      return "setcomprehension"
    case "objectcomp":
      return "objectcomprehension"
    case "call":
      return "call"
    case "template":
      return "templatestring"
  }
}

export const exprString = (e: Expr): string => {
  const b = e.body
  let s: string
  switch (b.type) {
    case "term":
      s = termString(b.term)
      break
    case "call":
      s = termString(b.op) + "(" + b.args.map(termString).join(", ") + ")"
      break
    case "some":
      s = "some " + b.vars.map(termString).join(", ")
      break
    case "somein":
      s = "some " + b.call.args.slice(0, -1).map(termString).join(", ") + " in " + termString(b.call.args[b.call.args.length - 1])
      break
    case "every":
      s = "every " + (b.key !== undefined ? termString(b.key) + ", " : "") + termString(b.value) + " in " + termString(b.domain) + " { " + bodyString(b.body) + " }"
      break
  }
  if (e.negated) s = "not " + s
  for (const w of e.with) s += " with " + termString(w.target) + " as " + termString(w.value)
  return s
}

export const bodyString = (b: Body): string => b.map(exprString).join("; ")
