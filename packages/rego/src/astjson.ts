// The JSON form of a parsed module, shaped like OPA's AST JSON (what `rego.parse_module` and
// `opa parse --format json` return, without locations): terms are `{type, value}`, expressions
// `{index, terms}`, rules `{head, body}`.

import type { Body, Expr, Module, Rule, Term } from "./ast.js"
import { fromJSON, type PlainObject, type Value } from "./value.js"

const term = (t: Term): PlainObject => {
  switch (t.type) {
    case "scalar": {
      const v = t.value
      if (v === null) return { type: "null", value: null }
      if (typeof v === "boolean") return { type: "boolean", value: v }
      if (typeof v === "string") return { type: "string", value: v }
      return { type: "number", value: v }
    }
    case "var":
      return { type: "var", value: t.name }
    case "ref":
      return { type: "ref", value: t.terms.map(term) }
    case "array":
      return { type: "array", value: t.items.map(term) }
    case "set":
      return { type: "set", value: t.items.map(term) }
    case "object":
      return { type: "object", value: t.entries.map(([k, v]) => [term(k), term(v)]) }
    case "arraycomp":
      return { type: "arraycomprehension", value: { term: term(t.head), body: body(t.body) } }
    case "setcomp":
      return { type: "setcomprehension", value: { term: term(t.head), body: body(t.body) } }
    case "objectcomp":
      return { type: "objectcomprehension", value: { key: term(t.key), value: term(t.value), body: body(t.body) } }
    case "call":
      return { type: "call", value: [term(t.op), ...t.args.map(term)] }
    case "template":
      return {
        type: "templatestring",
        value: t.parts.map((p) => ("type" in p && p.type === "scalar" ? term(p) : expr(p as Expr, 0)))
      }
  }
}

const expr = (e: Expr, index: number): PlainObject => {
  const out: PlainObject = { index }
  const b = e.body
  switch (b.type) {
    case "term":
      out.terms = term(b.term)
      break
    case "call":
      out.terms = [term(b.op), ...b.args.map(term)]
      break
    case "some":
      out.terms = { symbols: b.vars.map(term) }
      break
    case "somein":
      out.terms = { symbols: [term(b.call)] }
      break
    case "every":
      out.terms = {
        ...(b.key !== undefined ? { key: term(b.key) } : {}),
        value: term(b.value),
        domain: term(b.domain),
        body: body(b.body)
      }
      break
  }
  if (e.negated) out.negated = true
  if (e.with.length > 0) out.with = e.with.map((w) => ({ target: term(w.target), value: term(w.value) }))
  if (e.generated === true) out.generated = true
  return out
}

const body = (b: Body): Value[] => b.map((e, i) => expr(e, i))

const rule = (r: Rule): PlainObject => {
  const h = r.head
  const head: PlainObject = { ref: h.ref.map(term) }
  const first = h.ref[0]
  if (h.ref.length === 1 && first.type === "var") head.name = first.name
  if (h.args !== undefined) head.args = h.args.map(term)
  if (h.key !== undefined) head.key = term(h.key)
  if (h.value !== undefined) head.value = term(h.value)
  if (h.assign) head.assign = true
  const out: PlainObject = { head, body: body(r.body) }
  if (r.default) out.default = true
  if (r.else !== undefined) out.else = rule(r.else)
  return out
}

/** The module as OPA's AST JSON, as a Rego value. */
export const moduleJSON = (m: Module): Value => {
  const out: PlainObject = {
    package: { path: [{ type: "var", value: "data" }, ...m.pkg.map((s) => ({ type: "string", value: s }))] }
  }
  if (m.imports.length > 0) {
    out.imports = m.imports.map((i) => {
      const o: PlainObject = { path: term(i.path) }
      if (i.alias !== undefined) o.alias = i.alias
      return o
    })
  }
  if (m.rules.length > 0) out.rules = m.rules.map(rule)
  if (m.annotations.length > 0) out.annotations = m.annotations.map((a) => fromJSON(a.raw))
  return out
}
