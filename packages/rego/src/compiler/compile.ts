// The compiler driver: parse, check modules, build the rule tree, resolve and order every rule,
// check recursion, generate code and build rule indices.

import type { Loc, Module, Rule, Term } from "../ast.js"
import { termString } from "../ast.js"
import type { BuiltinRegistry } from "../builtins/registry.js"
import { RegoCompileError, RegoError, sortErrors } from "../errors.js"
import { Runtime } from "../eval/documents.js"
import { parseModule } from "../parser.js"
import type { Value } from "../value.js"
import { CodeGen } from "./codegen.js"
import { buildIndex } from "./indexing.js"
import { buildMetadata, type MetadataIndex } from "./metadata.js"
import type { LExpr, LRule, LTerm } from "./ir.js"
import { exprVars, termVars, walkExprTerms, walkTerm } from "./ir.js"
import { type Global, Resolver } from "./resolve.js"
import { headUnsafe, reorderBody, unsafeErrors } from "./safety.js"
import { buildRuleTree, type RuleInfo, type RuleNode } from "./tree.js"

export interface ModuleSource {
  /** File name used in locations and errors. */
  readonly file: string
  readonly source: string
}

export interface CompiledModules {
  readonly modules: readonly Module[]
  readonly root: RuleNode
  readonly nodes: readonly RuleNode[]
  readonly runtime: Runtime
  readonly codegen: CodeGen
  readonly builtins: BuiltinRegistry
}

/** Parses every module, collecting the errors of all of them. */
export const parseModules = (sources: readonly ModuleSource[]): Module[] => {
  const errors: RegoError[] = []
  const modules: Module[] = []
  for (const s of sources) {
    try {
      modules.push(parseModule(s.file, s.source))
    } catch (e) {
      if (e instanceof RegoCompileError) errors.push(...e.errors)
      else throw e
    }
  }
  if (errors.length > 0) throw new RegoCompileError(errors)
  return modules
}

const importName = (path: readonly Term[], alias: string | undefined): string => {
  if (alias !== undefined) return alias
  const last = path[path.length - 1]
  return last.type === "var" ? last.name : String((last as { value: unknown }).value)
}

/** Module-level checks OPA 1.x always enforces. */
const checkModule = (m: Module, errors: RegoError[]): void => {
  const seen = new Map<string, string>()
  for (const imp of m.imports) {
    const head = imp.path.terms[0]
    if (head.type === "var" && (head.name === "future" || head.name === "rego")) continue
    const name = importName(imp.path.terms, imp.alias)
    const text = `import ${termString(imp.path)}${imp.alias !== undefined ? " as " + imp.alias : ""}`
    const prev = seen.get(name)
    if (prev !== undefined) errors.push(new RegoError("rego_compile_error", `import must not shadow ${prev}`, imp.loc))
    else seen.set(name, text)
  }
  for (const rule of m.rules) {
    const first = rule.head.ref[0]
    if (first.type === "var" && (first.name === "input" || first.name === "data")) {
      errors.push(new RegoError("rego_compile_error", `rules must not shadow ${first.name} (use a different rule name)`, rule.loc))
    }
  }
}

const globalsOf = (m: Module, exports: ReadonlyMap<string, Set<string>>): Map<string, Global> => {
  const g = new Map<string, Global>()
  const names = exports.get(m.pkg.join("\u0000")) ?? new Set<string>()
  for (const n of names) g.set(n, { root: "data", path: [...m.pkg, n] })
  for (const imp of m.imports) {
    const terms = imp.path.terms
    const head = terms[0]
    if (head.type !== "var" || head.name === "future" || head.name === "rego") continue
    const path: Value[] = terms.slice(1).map((t) => (t as { value: Value }).value)
    g.set(importName(terms, imp.alias), { root: head.name === "input" ? "input" : "data", path })
  }
  return g
}

export interface CompileOptions {
  readonly builtins: BuiltinRegistry
}

/** Compiles parsed modules; throws RegoCompileError with every error found. */
export const compileModules = (modules: readonly Module[], o: CompileOptions): CompiledModules => {
  const errors: RegoError[] = []
  const sorted = [...modules].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
  for (const m of sorted) checkModule(m, errors)
  const tree = buildRuleTree(sorted)
  errors.push(...tree.errors)
  if (errors.length > 0) throw new RegoCompileError(sortErrors(errors))

  const exports = new Map<string, Set<string>>()
  for (const m of sorted) {
    const key = m.pkg.join("\u0000")
    let s = exports.get(key)
    if (s === undefined) exports.set(key, (s = new Set()))
    for (const r of m.rules) {
      const first = r.head.ref[0]
      if (first.type === "var") s.add(first.name)
    }
  }
  const globals = new Map<Module, Map<string, Global>>()
  for (const m of sorted) globals.set(m, globalsOf(m, exports))

  // Name resolution errors (undefined functions, redeclarations...) are reported on their own,
  // as OPA's earlier stages do; safety errors only when resolution succeeded.
  const safetyErrors: RegoError[] = []
  const metadata = buildMetadata(sorted)
  const resolved = new Map<RuleNode, Array<{ info: RuleInfo; rule: LRule }>>()
  for (const node of tree.nodes) {
    if (node.rules.length === 0) continue
    const list: Array<{ info: RuleInfo; rule: LRule }> = []
    for (const info of node.rules) {
      const lrule = resolveRule(info, info.rule, globals.get(info.module) as Map<string, Global>, tree.root, o.builtins, errors, safetyErrors, metadata)
      info.lrule = lrule
      list.push({ info, rule: lrule })
    }
    resolved.set(node, list)
  }
  if (errors.length === 0) errors.push(...safetyErrors)
  if (errors.length === 0) checkRecursion(tree.nodes, errors)
  if (errors.length > 0) throw new RegoCompileError(sortErrors(errors))

  const runtime = new Runtime(tree.root, tree.nodes)
  const codegen = new CodeGen(runtime)
  for (const [node, list] of resolved) codegen.compileGroup(node, list)
  for (const [node, list] of resolved) {
    const g = runtime.group(node)
    if (g !== undefined && node.kind === "complete") buildIndex(g, list, codegen)
  }
  return { modules: sorted, root: tree.root, nodes: tree.nodes, runtime, codegen, builtins: o.builtins }
}

const resolveRule = (
  info: RuleInfo,
  rule: Rule,
  globals: Map<string, Global>,
  root: RuleNode,
  builtins: BuiltinRegistry,
  errors: RegoError[],
  safetyErrors: RegoError[],
  metadata: MetadataIndex
): LRule => {
  const r = new Resolver({ builtins, root, globals, errors, metadata: { rule: () => metadata.rule(info.rule), chain: () => metadata.chain(info.rule, info.module) } })
  const res = r.rule(rule, info.suffix)
  const names = r.slotNames()
  const argVars = new Set<number>()
  for (const a of res.args ?? []) termVars(a, argVars)
  const unsafe = new Map<LExpr, Set<number>>()
  const body = reorderBody(argVars, res.body, unsafe)
  safetyErrors.push(...unsafeErrors(unsafe, names))
  const bodyVars = new Set(argVars)
  for (const e of body) exprVars(e, bodyVars)
  const headTerms: LTerm[] = [...res.suffix]
  if (res.key !== undefined) headTerms.push(res.key)
  if (res.value !== undefined) headTerms.push(res.value)
  if (unsafe.size === 0) safetyErrors.push(...headUnsafe(headTerms, bodyVars, names, rule.loc))
  // Closures in the head (e.g. `p := [x | ...]`) may use any variable of the body.
  const headUnsafeMap = new Map<LExpr, Set<number>>()
  for (const t of headTerms) {
    walkTerm(t, (x) => {
      if (x.t === "comp") x.body = reorderBody(bodyVars, x.body, headUnsafeMap)
    })
  }
  safetyErrors.push(...unsafeErrors(headUnsafeMap, names))
  return {
    nslots: r.nslots,
    args: res.args,
    suffix: res.suffix,
    key: res.key,
    value: res.value,
    body,
    isDefault: rule.default,
    loc: rule.loc,
    else: rule.else !== undefined ? resolveRule(info, rule.else, globals, root, builtins, errors, safetyErrors, metadata) : undefined,
    names
  }
}

// ---------------------------------------------------------------------------------------------
// Recursion

/** Rule nodes a rule may depend on. */
const dependencies = (rule: LRule, root: RuleNode): Set<RuleNode> => {
  const out = new Set<RuleNode>()
  const addSubtree = (n: RuleNode): void => {
    for (const d of n.descendants()) if (d.rules.length > 0) out.add(d)
  }
  const heads = new Set<LTerm>()
  const visitTerm = (t: LTerm): void => {
    if (t.t === "ref" && t.head.t === "data") {
      heads.add(t.head)
      // OPA's GetRulesDynamic: constant segments select a child, others every child.
      const walk = (n: RuleNode, i: number): void => {
        if (i >= t.path.length) {
          addSubtree(n)
          return
        }
        const p = t.path[i]
        const next = p.t === "const" ? [n.child(p.v)].filter((x): x is RuleNode => x !== undefined) : [...n.children.values()]
        for (const c of next) {
          if (c.rules.length > 0) out.add(c)
          walk(c, i + 1)
        }
      }
      walk(root, 0)
    } else if (t.t === "data" && !heads.has(t)) addSubtree(root)
    else if (t.t === "call" && t.fn.kind === "func") out.add(t.fn.node)
  }
  const visitExpr = (e: LExpr): void => {
    walkExprTerms(e, visitTerm, true)
    if (e.e.k === "call" && e.e.fn.kind === "func") out.add(e.e.fn.node)
    for (const w of e.with) if (w.fnValue !== undefined && w.fnValue.kind === "func") out.add(w.fnValue.node)
  }
  for (let r: LRule | undefined = rule; r !== undefined; r = r.else) {
    for (const e of r.body) visitExpr(e)
    for (const t of [...r.suffix, ...(r.args ?? [])]) walkTerm(t, visitTerm, true)
    if (r.key !== undefined) walkTerm(r.key, visitTerm, true)
    if (r.value !== undefined) walkTerm(r.value, visitTerm, true)
  }
  return out
}

const checkRecursion = (nodes: readonly RuleNode[], errors: RegoError[]): void => {
  const root = nodes[0]
  const deps = new Map<RuleNode, Set<RuleNode>>()
  for (const n of nodes) {
    if (n.rules.length === 0) continue
    const s = new Set<RuleNode>()
    for (const info of n.rules) if (info.lrule !== undefined) for (const d of dependencies(info.lrule, root)) s.add(d)
    deps.set(n, s)
  }
  for (const start of deps.keys()) {
    // Depth-first search for a path back to `start`.
    const path: RuleNode[] = []
    const visited = new Set<RuleNode>()
    const dfs = (n: RuleNode): boolean => {
      for (const d of deps.get(n) ?? []) {
        if (d === start) {
          path.push(d)
          return true
        }
        if (visited.has(d)) continue
        visited.add(d)
        path.push(d)
        if (dfs(d)) return true
        path.pop()
      }
      return false
    }
    if (dfs(start)) {
      const names = [start, ...path].map((n) => ruleRef(n))
      const loc: Loc = start.rules[0].rule.loc
      errors.push(new RegoError("rego_recursion_error", `rule ${ruleRef(start)} is recursive: ${names.join(" -> ")}`, loc))
    }
  }
}

/** OPA names rules by their head ref in recursion errors (`p`, `a.b[x]`). */
const ruleRef = (n: RuleNode): string => {
  const r = n.rules[0].rule
  return termString({ type: "ref", terms: r.head.ref, loc: r.loc })
}
