// METADATA annotations and the `rego.metadata.rule()` / `rego.metadata.chain()` calls, which the
// compiler replaces with constants (as OPA does): the annotations of the calling rule, and the
// chain from that rule up to the root package.
//
// A `# METADATA` block belongs to the statement (package or rule) that follows it. Its scope
// defaults to `package` before a package and `rule` before a rule; `document` applies to every
// rule of the same name, `subpackages` to the package and everything below it.

import type { Annotation, Module, Rule } from "../ast.js"
import { fromJSON, type PlainObject, type Value } from "../value.js"

interface Attached {
  readonly scope: string
  readonly value: PlainObject
  readonly row: number
}

export interface MetadataIndex {
  /** `rego.metadata.rule()` for a rule definition. */
  rule(rule: Rule): Value
  /** `rego.metadata.chain()` for a rule definition of a module. */
  chain(rule: Rule, module: Module): Value
}

const str = (x: unknown): string | undefined => (typeof x === "string" ? x : undefined)

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x)

/** The string fields of `from` among `keys`, added to `out`. */
const stringFields = (from: Record<string, unknown>, keys: readonly string[], out: PlainObject = {}): PlainObject => {
  for (const k of keys) {
    const v = from[k]
    if (typeof v === "string") out[k] = v
  }
  return out
}

/** "Jane Doe <jane@example.org>" to { name, email }, as OPA reads authors. */
const author = (x: unknown): PlainObject | undefined => {
  if (typeof x === "string") {
    const m = /^(.*?)\s*<([^<>]*)>\s*$/.exec(x.trim())
    if (m === null) return { name: x.trim() }
    const out: PlainObject = {}
    if (m[1] !== "") out.name = m[1]
    if (m[2] !== "") out.email = m[2]
    return out
  }
  return isRecord(x) ? stringFields(x, ["name", "email"]) : undefined
}

const resource = (x: unknown): PlainObject | undefined => {
  if (typeof x === "string") return { ref: x }
  return isRecord(x) ? stringFields(x, ["ref", "description"]) : undefined
}

/** The annotation as OPA reports it (only the fields that are set). */
const normalise = (raw: Record<string, unknown>, scope: string): PlainObject => {
  const out = stringFields(raw, ["title", "description"], { scope })
  if (raw.entrypoint === true) out.entrypoint = true
  if (Array.isArray(raw.organizations)) out.organizations = raw.organizations.filter((o): o is string => typeof o === "string")
  if (Array.isArray(raw.related_resources)) out.related_resources = raw.related_resources.map(resource).filter((r): r is PlainObject => r !== undefined)
  if (Array.isArray(raw.authors)) out.authors = raw.authors.map(author).filter((a): a is PlainObject => a !== undefined)
  if (Array.isArray(raw.schemas)) out.schemas = fromJSON(raw.schemas)
  if (isRecord(raw.custom)) out.custom = fromJSON(raw.custom)
  return out
}

const ruleName = (rule: Rule): string[] => {
  const out: string[] = []
  for (const t of rule.head.ref) {
    if (t.type === "var") out.push(t.name)
    else if (t.type === "scalar" && typeof t.value === "string") out.push(t.value)
    else break
  }
  return out
}

export const buildMetadata = (modules: readonly Module[]): MetadataIndex => {
  const ruleScope = new Map<Rule, Attached[]>()
  const documentScope = new Map<string, Attached>()
  const packageScope = new Map<string, Attached>()
  const subpackagesScope = new Map<string, Attached>()
  for (const m of modules) {
    const stmts: Array<{ row: number; rule: Rule | undefined }> = [{ row: m.pkgLoc.row, rule: undefined }, ...m.rules.map((r) => ({ row: r.loc.row, rule: r }))]
    stmts.sort((a, b) => a.row - b.row)
    for (const a of m.annotations as readonly Annotation[]) {
      const target = stmts.find((s) => s.row > a.endRow)
      if (target === undefined) continue
      const scope = str(a.raw.scope) ?? (target.rule === undefined ? "package" : "rule")
      const attached: Attached = { scope, value: normalise(a.raw, scope), row: a.loc.row }
      const pkgKey = m.pkg.join(".")
      if (target.rule === undefined) {
        if (scope === "subpackages") subpackagesScope.set(pkgKey, attached)
        else packageScope.set(pkgKey, attached)
      } else if (scope === "document") {
        documentScope.set([...m.pkg, ...ruleName(target.rule)].join("."), attached)
      } else {
        const list = ruleScope.get(target.rule) ?? []
        list.push(attached)
        ruleScope.set(target.rule, list)
      }
    }
  }
  return {
    rule: (rule) => {
      const list = ruleScope.get(rule)
      return list === undefined || list.length === 0 ? {} : list[list.length - 1].value
    },
    chain: (rule, module) => {
      const path = [...module.pkg, ...ruleName(rule)]
      const out: Value[] = []
      const rules = [...(ruleScope.get(rule) ?? [])].sort((a, b) => b.row - a.row)
      if (rules.length === 0) out.push({ path })
      for (const a of rules) out.push({ annotations: a.value, path })
      const doc = documentScope.get(path.join("."))
      if (doc !== undefined) out.push({ annotations: doc.value, path })
      const pkg = packageScope.get(module.pkg.join("."))
      if (pkg !== undefined) out.push({ annotations: pkg.value, path: [...module.pkg] })
      for (let i = module.pkg.length; i >= 0; i--) {
        const sub = subpackagesScope.get(module.pkg.slice(0, i).join("."))
        if (sub !== undefined) out.push({ annotations: sub.value, path: module.pkg.slice(0, i) })
      }
      return out
    }
  }
}
