// The rule tree: every rule hangs at the node named by its package path plus the ground prefix
// of its head ref (`package a` + `p.q[x] := 1` hangs at data.a.p.q with the suffix `[x]`).
// The evaluator walks this tree to resolve references into virtual documents.

import type { Module, Rule, Term } from "../ast.js"
import { termString } from "../ast.js"
import { RegoError } from "../errors.js"
import { type Value, compare, hashKey, ObjectBuilder, RegoSet } from "../value.js"
import type { LRule } from "./ir.js"

export type RuleKind = "single" | "multi" | "func"

export interface RuleInfo {
  readonly rule: Rule
  readonly module: Module
  readonly kind: RuleKind
  readonly arity: number
  /** Head ref terms below the node. */
  readonly suffix: readonly Term[]
  /** Set once the rule has been compiled. */
  lrule: LRule | undefined
}

/** How a node's document is produced. */
export type NodeKind =
  /** No rules here (a package or a path prefix): an object of its children and base data. */
  | "internal"
  /** Complete rules (`p := v`): one value or undefined. */
  | "complete"
  /** Multi-value rules (`p contains x`): a set. */
  | "multi"
  /** Functions. */
  | "function"
  /** Rules with variables in their head refs, possibly with rules below: built leaf by leaf. */
  | "generic"

export class RuleNode {
  readonly children = new Map<string, RuleNode>()
  readonly rules: RuleInfo[] = []
  kind: NodeKind = "internal"
  /** Index into per-query caches. */
  id = -1
  private sortedKeys: Value[] | undefined

  constructor(
    readonly key: Value,
    readonly path: readonly Value[],
    readonly parent: RuleNode | undefined
  ) {}

  child(k: Value): RuleNode | undefined {
    return this.children.get(typeof k === "string" ? k : hashKey(k))
  }

  ensureChild(k: Value): RuleNode {
    const h = typeof k === "string" ? k : hashKey(k)
    let c = this.children.get(h)
    if (c === undefined) {
      c = new RuleNode(k, [...this.path, k], this)
      this.children.set(h, c)
      this.sortedKeys = undefined
    }
    return c
  }

  childKeys(): Value[] {
    if (this.sortedKeys === undefined) this.sortedKeys = [...this.children.values()].map((c) => c.key).sort(compare)
    return this.sortedKeys
  }

  /** `data.a.b` style name of this node. */
  name(): string {
    return pathString(this.path)
  }

  /** Whether this node or a descendant holds rules. */
  hasRules(): boolean {
    if (this.rules.length > 0) return true
    for (const c of this.children.values()) if (c.hasRules()) return true
    return false
  }

  *descendants(): Generator<RuleNode> {
    yield this
    for (const c of this.children.values()) yield* c.descendants()
  }
}

export const pathString = (path: readonly Value[]): string => {
  let s = "data"
  for (const k of path) {
    if (typeof k === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) s += "." + k
    else s += "[" + (typeof k === "string" ? JSON.stringify(k) : valueText(k)) + "]"
  }
  return s
}

const valueText = (v: Value): string => {
  if (typeof v === "bigint") return v.toString()
  if (v instanceof RegoSet) return "{" + v.sorted().map(valueText).join(", ") + "}"
  return JSON.stringify(v)
}

/** Value of a ground constant AST term (no vars, refs or calls), else undefined. */
export const constValue = (t: Term): Value | undefined => {
  switch (t.type) {
    case "scalar":
      return t.value
    case "array": {
      const out: Value[] = []
      for (const x of t.items) {
        const v = constValue(x)
        if (v === undefined) return undefined
        out.push(v)
      }
      return out
    }
    case "set": {
      const s = new RegoSet()
      for (const x of t.items) {
        const v = constValue(x)
        if (v === undefined) return undefined
        s.add(v)
      }
      return s
    }
    case "object": {
      const b = new ObjectBuilder()
      for (const [k, x] of t.entries) {
        const kv = constValue(k)
        const vv = constValue(x)
        if (kv === undefined || vv === undefined) return undefined
        b.set(kv, vv)
      }
      return b.build()
    }
    default:
      return undefined
  }
}

const ruleKind = (r: Rule): RuleKind =>
  r.head.args !== undefined ? "func" : r.head.key !== undefined && r.head.value === undefined ? "multi" : "single"

export interface TreeResult {
  readonly root: RuleNode
  readonly nodes: RuleNode[]
  readonly errors: RegoError[]
}

/** Builds the rule tree of a set of modules and checks rule conflicts. */
export const buildRuleTree = (modules: readonly Module[]): TreeResult => {
  const root = new RuleNode("data", [], undefined)
  const errors: RegoError[] = []
  for (const m of modules) {
    let pkgNode = root
    for (const seg of m.pkg) pkgNode = pkgNode.ensureChild(seg)
    for (const rule of m.rules) {
      let node = pkgNode
      const ref = rule.head.ref
      const first = ref[0]
      node = node.ensureChild(first.type === "var" ? first.name : String((first as { value: unknown }).value))
      let i = 1
      for (; i < ref.length; i++) {
        const v = constValue(ref[i])
        if (v === undefined) break
        node = node.ensureChild(v)
      }
      node.rules.push({ rule, module: m, kind: ruleKind(rule), arity: rule.head.args?.length ?? 0, suffix: ref.slice(i), lrule: undefined })
    }
  }

  const nodes: RuleNode[] = []
  for (const n of root.descendants()) {
    n.id = nodes.length
    nodes.push(n)
  }

  for (const n of nodes) {
    if (n.rules.length === 0) continue
    const name = n.name()
    const kinds = new Set(n.rules.map((r) => r.kind))
    const arities = new Set(n.rules.map((r) => r.arity))
    let complete = 0
    let partial = 0
    let groundWithChildren = false
    const defaults: RuleInfo[] = []
    for (const r of n.rules) {
      if (r.rule.default) defaults.push(r)
      const ground = r.suffix.length === 0
      if (ground && n.children.size > 0) groundWithChildren = true
      if (r.kind === "single" && ground) complete++
      else partial++
    }
    const loc = n.rules[0].rule.loc
    if (groundWithChildren) {
      const below: string[] = []
      for (const c of n.children.values()) for (const d of c.descendants()) for (const r of d.rules) below.push(ruleRefString(r))
      below.sort()
      errors.push(new RegoError("rego_type_error", `rule ${name} conflicts with [${[...new Set(below)].join(" ")}]`, loc))
      continue
    }
    if (kinds.size > 1 || arities.size > 1 || (complete >= 1 && partial >= 1)) {
      errors.push(new RegoError("rego_type_error", `conflicting rules ${name} found`, loc))
      continue
    }
    if (defaults.length > 1) {
      const locs = defaults.map((d) => `${d.rule.loc.file}:${d.rule.loc.row}`).join(", ")
      errors.push(new RegoError("rego_type_error", `multiple default rules ${name} found at ${locs}`, defaults[0].module.pkgLoc))
      continue
    }
    const r0 = n.rules[0]
    if (r0.kind === "func") n.kind = "function"
    else if (n.rules.every((r) => r.suffix.length === 0) && n.children.size === 0) n.kind = r0.kind === "multi" ? "multi" : "complete"
    else n.kind = "generic"
  }

  // A package may not be named like a complete rule of its parent package.
  for (const m of modules) {
    for (const rule of m.rules) {
      const ref = rule.head.ref
      if (!ref.slice(1).every((t) => constValue(t) !== undefined)) continue
      const path = [...m.pkg, (ref[0] as { name: string }).name, ...ref.slice(1).map((t) => constValue(t) as Value)]
      for (const other of modules) {
        if (other === m || other.pkg.length !== path.length) continue
        if (other.pkg.every((s, i) => s === path[i])) {
          errors.push(
            new RegoError(
              "rego_type_error",
              `package ${other.pkg.join(".")} conflicts with rule ${termString({ type: "ref", terms: ref, loc: rule.loc })} defined at ${rule.loc.file}:${rule.loc.row}`,
              m.pkgLoc
            )
          )
        }
      }
    }
  }
  return { root, nodes, errors }
}

const ruleRefString = (r: RuleInfo): string =>
  "data." + [...r.module.pkg].join(".") + "." + termString({ type: "ref", terms: r.rule.head.ref, loc: r.rule.loc })
