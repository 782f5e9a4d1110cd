// Name resolution and desugaring: AST rules and queries to the intermediate form.
//
// Follows OPA's scoping rules: names of rules in the package and import aliases resolve to data
// refs unless declared locally (`:=`, `some`, function arguments, `every` variables); variables
// declared with `:=`/`some` get fresh slots per declaration, while plain unification variables
// are identified by name across the whole rule (so a comprehension closes over an outer
// variable of the same name, as in OPA).

import type { Body, Expr, Loc, RefTerm, Rule, Term, VarTerm } from "../ast.js"
import { isWildcard, refName, termString, valueName } from "../ast.js"
import type { BuiltinRegistry } from "../builtins/registry.js"
import { RegoError } from "../errors.js"
import { type Value, ObjectBuilder, RegoSet } from "../value.js"
import type { Callee, LComp, LExpr, LTerm, LWith, WithTarget } from "./ir.js"
import { pathString, type RuleNode } from "./tree.js"

/** What a global name stands for. */
export type Global = { readonly root: "data" | "input"; readonly path: readonly Value[] }

type Occurrence = "seen" | "assigned" | "declared" | "arg"

interface Scope {
  readonly vars: Map<string, { slot: number; occ: Occurrence }>
  /** Vars declared with `some` here, with whether they have been used. */
  readonly someDeclared: Map<string, { loc: Loc; used: boolean }>
}

const ROOTS = new Set(["input", "data"])

export interface ResolverOptions {
  readonly builtins: BuiltinRegistry
  readonly root: RuleNode
  readonly globals: ReadonlyMap<string, Global>
  readonly errors: RegoError[]
  /** Values of `rego.metadata.rule()` / `rego.metadata.chain()` for the rule being resolved. */
  readonly metadata?: { readonly rule: () => Value; readonly chain: () => Value }
}

const METADATA_CALLS = new Set(["rego.metadata.rule", "rego.metadata.chain"])

/** Resolves one rule (with its else chain) or one query into the intermediate form. */
export class Resolver {
  /** Slot 0 of every frame holds the sink the body reports to. */
  private names: string[] = ["$sink"]
  private readonly unifSlots = new Map<string, number>()
  private scopes: Scope[] = []
  private readonly pendingArgs: Array<{ slot: number; term: Term }> = []
  private ignore: Array<Set<string>> = []

  constructor(private readonly o: ResolverOptions) {}

  get nslots(): number {
    return this.names.length
  }

  slotNames(): string[] {
    return this.names
  }

  private err(code: RegoError["code"], msg: string, loc: Loc): void {
    this.o.errors.push(new RegoError(code, msg, loc))
  }

  // -------------------------------------------------------------------------------------------
  // Slots and scopes

  private fresh(name: string): number {
    this.names.push(name)
    return this.names.length - 1
  }

  private pushScope(declared: Set<string>): void {
    this.scopes.push({ vars: new Map(), someDeclared: new Map() })
    this.ignore.push(declared)
  }

  private popScope(): void {
    const s = this.scopes.pop() as Scope
    this.ignore.pop()
    for (const [name, d] of s.someDeclared) if (!d.used) this.err("rego_compile_error", `declared var ${name} unused`, d.loc)
  }

  private lookup(name: string): number | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const e = this.scopes[i].vars.get(name)
      if (e !== undefined) {
        for (let j = i; j >= 0; j--) {
          const d = this.scopes[j].someDeclared.get(name)
          if (d !== undefined) {
            d.used = true
            break
          }
        }
        return e.slot
      }
    }
    return undefined
  }

  private isIgnored(name: string): boolean {
    for (let i = this.ignore.length - 1; i >= 0; i--) if (this.ignore[i].has(name)) return true
    return false
  }

  /** A plain variable occurrence. */
  private seen(name: string): number {
    if (isWildcard(name)) return this.fresh(name)
    const s = this.lookup(name)
    if (s !== undefined) return s
    let slot = this.unifSlots.get(name)
    if (slot === undefined) {
      slot = this.fresh(name)
      this.unifSlots.set(name, slot)
    }
    this.scopes[this.scopes.length - 1].vars.set(name, { slot, occ: "seen" })
    return slot
  }

  /** Declares a variable in the innermost scope (`:=`, `some`, args, every). */
  private declare(name: string, occ: Occurrence, loc: Loc): number {
    if (isWildcard(name)) return this.fresh(name)
    const top = this.scopes[this.scopes.length - 1]
    const prev = top.vars.get(name)
    if (prev !== undefined) {
      const msg =
        prev.occ === "seen"
          ? `var ${name} referenced above`
          : prev.occ === "assigned"
            ? `var ${name} assigned above`
            : prev.occ === "declared"
              ? `var ${name} declared above`
              : `arg ${name} redeclared`
      this.err("rego_compile_error", msg, loc)
      return prev.slot
    }
    const slot = this.fresh(name)
    top.vars.set(name, { slot, occ })
    return slot
  }

  // -------------------------------------------------------------------------------------------
  // Rules and queries

  /** Resolves a rule branch (not its else chain); `argSlots` are shared with sibling branches. */
  rule(rule: Rule, suffix: readonly Term[]): {
    args: LTerm[] | undefined
    suffix: LTerm[]
    key: LTerm | undefined
    value: LTerm | undefined
    body: LExpr[]
  } {
    const head = rule.head
    const declared = declaredVars(rule.body)
    const argNames = new Set<string>()
    for (const a of head.args ?? []) collectPatternVars(a, argNames)
    this.pushScope(new Set([...declared, ...argNames]))
    let args: LTerm[] | undefined
    if (head.args !== undefined) {
      for (const a of head.args) {
        if (a.type === "ref" && a.terms.length === 1 && a.terms[0].type === "var" && ROOTS.has(a.terms[0].name)) {
          this.err("rego_compile_error", `args must not shadow ${a.terms[0].name} (use a different variable name)`, a.loc)
        }
      }
      args = head.args.map((a) => this.argPattern(a))
    }
    const body = this.body(rule.body)
    for (const { slot, term } of this.pendingArgs.splice(0)) {
      body.push({ e: { k: "unify", a: { t: "var", slot, name: "__local_arg" }, b: this.term(term) }, negated: false, with: [], loc: term.loc })
    }
    // Head terms that need evaluation (refs, calls, comprehensions) are computed in the body, as
    // OPA's rewriteRefsInHead does, so that their variables may be bound there.
    const sfx = suffix.map((t) => this.headTerm(t, body))
    const key = head.key !== undefined ? this.headTerm(head.key, body) : undefined
    const value = head.value !== undefined ? this.headTerm(head.value, body) : undefined
    // Unused `some` declarations are reported when the scope closes, after the head used them.
    this.popScope()
    return { args, suffix: sfx, key, value, body }
  }

  private headTerm(t: Term, body: LExpr[]): LTerm {
    const lt = this.term(t)
    if (!requiresEval(lt)) return lt
    const slot = this.fresh("__local_head")
    const v: LTerm = { t: "var", slot, name: "__local_head" }
    body.push({ e: { k: "unify", a: v, b: lt }, negated: false, with: [], loc: t.loc })
    return v
  }

  /** Resolves a query; returns the body and the user-visible variables it binds. */
  query(body: Body): { body: LExpr[]; vars: Array<{ name: string; slot: number }> } {
    this.pushScope(declaredVars(body))
    const out = this.body(body)
    const top = this.scopes[0]
    const vars: Array<{ name: string; slot: number }> = []
    for (const [name, e] of top.vars) if (!isWildcard(name) && !name.startsWith("__local")) vars.push({ name, slot: e.slot })
    this.popScope()
    return { body: out, vars }
  }

  private argPattern(t: Term): LTerm {
    switch (t.type) {
      case "var": {
        const prev = this.scopes[this.scopes.length - 1].vars.get(t.name)
        if (prev !== undefined && prev.occ === "arg") return { t: "var", slot: prev.slot, name: t.name }
        return { t: "var", slot: this.declare(t.name, "arg", t.loc), name: t.name }
      }
      case "array": {
        const items = t.items.map((x) => this.argPattern(x))
        return items.every((x) => x.t === "const") ? { t: "const", v: items.map((x) => (x as { v: Value }).v) } : { t: "array", items }
      }
      case "object": {
        const entries = t.entries.map(([k, v]) => [this.term(k), this.argPattern(v)] as const)
        return foldObject(entries)
      }
      case "call":
        this.err("rego_compile_error", "rule arguments cannot contain calls", t.loc)
        return { t: "const", v: null }
      case "ref":
      case "template":
      case "arraycomp":
      case "setcomp":
      case "objectcomp": {
        // Evaluated in the body once its variables are bound (OPA's rewriteRefsInHead).
        const slot = this.fresh("__local_arg")
        this.pendingArgs.push({ slot, term: t })
        return { t: "var", slot, name: "__local_arg" }
      }
      default:
        return this.term(t)
    }
  }

  // -------------------------------------------------------------------------------------------
  // Bodies

  private body(body: Body): LExpr[] {
    const out: LExpr[] = []
    for (const e of body) {
      const x = this.expr(e)
      if (x !== undefined) out.push(x)
    }
    if (out.length === 0) out.push({ e: { k: "term", term: { t: "const", v: true } }, negated: false, with: [], loc: body[0]?.loc ?? dummyLoc })
    return out
  }

  private expr(e: Expr): LExpr | undefined {
    const b = e.body
    const loc = e.loc
    switch (b.type) {
      case "some":
        for (const v of b.vars) {
          this.declare(v.name, "declared", v.loc)
          if (!isWildcard(v.name)) this.scopes[this.scopes.length - 1].someDeclared.set(v.name, { loc, used: false })
        }
        return undefined
      case "somein": {
        const args = b.call.args
        const container = args[args.length - 1]
        const valuePat = args.length === 3 ? args[1] : args[0]
        const keyPat = args.length === 3 ? args[0] : undefined
        // Domain first (it may mention outer variables of the same names), then the declarations.
        const dom = this.term(container)
        const names = new Set<string>()
        collectPatternVars(valuePat, names)
        if (keyPat !== undefined) collectPatternVars(keyPat, names)
        for (const n of names) this.declare(n, "declared", loc)
        const withs = this.withs(e)
        const keyTerm: LTerm = keyPat !== undefined ? this.term(keyPat) : { t: "var", slot: this.fresh("$key"), name: "_" }
        const valueTerm = this.term(valuePat)
        const ref: LTerm =
          dom.t === "ref" ? { t: "ref", head: dom.head, path: [...dom.path, keyTerm], loc: dom.loc } : { t: "ref", head: dom, path: [keyTerm], loc }
        return { e: { k: "unify", a: valueTerm, b: ref }, negated: false, with: withs, loc }
      }
      case "every": {
        const domain = this.term(b.domain)
        const withs = this.withs(e)
        const names = new Set<string>()
        if (b.key !== undefined) collectPatternVars(b.key, names)
        collectPatternVars(b.value, names)
        this.pushScope(new Set([...names, ...declaredVars(b.body)]))
        const key = b.key !== undefined ? this.patternDeclare(b.key, "declared") : undefined
        const value = this.patternDeclare(b.value, "declared")
        const body = this.body(b.body)
        this.popScope()
        return { e: { k: "every", key, value, domain, body }, negated: e.negated, with: withs, loc }
      }
      case "term":
        return { e: { k: "term", term: this.term(b.term) }, negated: e.negated, with: this.withs(e), loc }
      case "call":
        return this.callExpr(e, b.op, b.args)
    }
  }

  private patternDeclare(t: Term, occ: Occurrence): LTerm {
    if (t.type === "var") return { t: "var", slot: this.declare(t.name, occ, t.loc), name: t.name }
    return this.term(t)
  }

  /** `rego.metadata.rule()` and `rego.metadata.chain()` are constants of the calling rule. */
  private metadataCall(op: RefTerm, nargs: number, loc: Loc): LTerm | undefined {
    const name = refName(op)
    if (name === undefined || !METADATA_CALLS.has(name)) return undefined
    const head = op.terms[0]
    if (head.type === "var" && (this.lookup(head.name) !== undefined || this.o.globals.has(head.name))) return undefined
    if (nargs > 1) {
      this.err("rego_type_error", `${name}: arity mismatch`, loc)
      return { t: "const", v: null }
    }
    const md = this.o.metadata
    if (name === "rego.metadata.rule") return { t: "const", v: md === undefined ? {} : md.rule() }
    return { t: "const", v: md === undefined ? [] : md.chain() }
  }

  private callExpr(e: Expr, op: RefTerm, args: readonly Term[]): LExpr | undefined {
    const loc = e.loc
    const md = this.metadataCall(op, args.length, loc)
    if (md !== undefined) {
      const withs = this.withs(e)
      if (args.length === 0) return { e: { k: "term", term: md }, negated: e.negated, with: withs, loc }
      return { e: { k: "unify", a: this.term(args[0]), b: md }, negated: e.negated, with: withs, loc }
    }
    const name = refName(op)
    if (name === "assign") {
      if (e.negated) {
        this.err("rego_compile_error", "cannot assign vars inside negated expression", loc)
        return undefined
      }
      const [lhs, rhs] = args
      const r = this.term(rhs)
      const withs = this.withs(e)
      const l = this.assignTarget(lhs)
      return { e: { k: "unify", a: l, b: r }, negated: false, with: withs, loc }
    }
    if (name === "eq") {
      const a = this.term(args[0])
      const b = this.term(args[1])
      return { e: { k: "unify", a, b }, negated: e.negated, with: this.withs(e), loc }
    }
    const callee = this.callee(op, loc, args.length)
    if (callee === undefined) {
      for (const a of args) this.term(a)
      return undefined
    }
    const arity = callee.kind === "builtin" && callee.def.variadic === true ? args.length : calleeArity(callee)
    if (args.length !== arity && args.length !== arity + 1) {
      this.arityError(callee, arity, args.length, loc)
      return undefined
    }
    if (callee.kind === "builtin" && callee.def.void && args.length !== arity) {
      this.arityError(callee, arity, args.length, loc)
      return undefined
    }
    const largs = args.slice(0, arity).map((a) => this.term(a))
    const out = args.length > arity ? this.term(args[arity]) : undefined
    const withs = this.withs(e)
    if (callee.kind === "builtin" && callee.name === "print") return { e: { k: "call", fn: callee, args: largs.map((a) => this.optional(a, loc)), out: undefined }, negated: e.negated, with: withs, loc }
    return { e: { k: "call", fn: callee, args: largs, out }, negated: e.negated, with: withs, loc }
  }

  /** Wraps a term in `{x | x = term}` so that undefined values do not stop evaluation. */
  private optional(t: LTerm, loc: Loc): LTerm {
    const slot = this.fresh("$opt")
    const v: LTerm = { t: "var", slot, name: "$opt" }
    const comp: LComp = { t: "comp", kind: "set", head: v, value: undefined, body: [{ e: { k: "unify", a: v, b: t }, negated: false, with: [], loc }], loc }
    return comp
  }

  private arityError(callee: Callee, arity: number, got: number, loc: Loc): void {
    if (callee.kind === "builtin") this.err("rego_type_error", `${callee.name}: arity mismatch`, loc)
    else this.err("rego_type_error", `function ${callee.name} has arity ${arity}, got ${got} argument${got === 1 ? "" : "s"}`, loc)
  }

  private assignTarget(t: Term): LTerm {
    switch (t.type) {
      case "var":
        return { t: "var", slot: this.declare(t.name, "assigned", t.loc), name: t.name }
      case "array": {
        const items = t.items.map((x) => this.assignTarget(x))
        return { t: "array", items }
      }
      case "object": {
        const entries = t.entries.map(([k, v]) => [this.term(k), this.assignTarget(v)] as const)
        return { t: "object", entries }
      }
      case "ref":
        if (t.terms.length === 1 && t.terms[0].type === "var" && ROOTS.has(t.terms[0].name)) {
          this.err("rego_compile_error", `variables must not shadow ${t.terms[0].name} (use a different variable name)`, t.loc)
          return { t: "const", v: null }
        }
        this.err("rego_compile_error", "cannot assign to ref", t.loc)
        return { t: "const", v: null }
      default:
        this.err("rego_compile_error", `cannot assign to ${valueName(t)}`, t.loc)
        return { t: "const", v: null }
    }
  }

  private withs(e: Expr): LWith[] {
    const out: LWith[] = []
    for (const w of e.with) {
      const target = this.withTarget(w.target, w.loc)
      if (target === undefined) continue
      let fnValue: Callee | undefined
      let value: LTerm
      if (target.kind === "fn" && (w.value.type === "var" || w.value.type === "ref")) {
        fnValue = this.functionValue(w.value)
        value = fnValue !== undefined ? { t: "const", v: null } : this.term(w.value)
      } else value = this.term(w.value)
      out.push({ target, value, fnValue, loc: w.loc })
    }
    return out
  }

  /** A `with` value that names a function (user-defined or builtin), if it is one. */
  private functionValue(t: Term): Callee | undefined {
    const ref: RefTerm = t.type === "var" ? { type: "ref", terms: [t], loc: t.loc } : (t as RefTerm)
    const head = ref.terms[0]
    if (head.type !== "var") return undefined
    if (this.isIgnored(head.name) || this.lookup(head.name) !== undefined) return undefined
    const path = this.globalPath(ref)
    if (path !== undefined) {
      if (path.root !== "data") return undefined
      const node = findNode(this.o.root, path.path)
      if (node !== undefined && node.kind === "function") return { kind: "func", node, name: node.name() }
      return undefined
    }
    const name = refName(ref)
    if (name === undefined) return undefined
    const def = this.o.builtins.get(name)
    return def !== undefined ? { kind: "builtin", def, name } : undefined
  }

  private withTarget(t: Term, loc: Loc): WithTarget | undefined {
    const ref: RefTerm | undefined = t.type === "var" ? { type: "ref", terms: [t], loc: t.loc } : t.type === "ref" ? t : undefined
    const bad = (): undefined => {
      this.err("rego_type_error", "with keyword target must reference existing input, data, or a function", t.loc)
      return undefined
    }
    if (ref === undefined) return bad()
    const head = ref.terms[0]
    if (head.type !== "var") return bad()
    const constPath = (): Value[] | undefined => {
      const out: Value[] = []
      for (let i = 1; i < ref.terms.length; i++) {
        const x = ref.terms[i]
        if (x.type !== "scalar") return undefined
        out.push(x.value)
      }
      return out
    }
    if (head.name === "input") {
      const p = constPath()
      return p === undefined ? bad() : { kind: "input", path: p }
    }
    if (head.name === "data") {
      const p = constPath()
      if (p === undefined) return bad()
      return this.dataWithTarget(p, t.loc)
    }
    const g = this.isIgnored(head.name) ? undefined : this.o.globals.get(head.name)
    if (g !== undefined) {
      const rest: Value[] = []
      for (let i = 1; i < ref.terms.length; i++) {
        const x = ref.terms[i]
        if (x.type !== "scalar") return bad()
        rest.push(x.value)
      }
      const path = [...g.path, ...rest]
      if (g.root === "input") return { kind: "input", path }
      return this.dataWithTarget(path, t.loc)
    }
    const name = refName(ref)
    const def = name !== undefined ? this.o.builtins.get(name) : undefined
    if (def !== undefined && name !== undefined) {
      if (name === "eq" || name === "assign" || name === "rego.metadata.chain" || name === "rego.metadata.rule") {
        this.err("rego_compile_error", `with keyword replacing built-in function: replacement of "${name}" invalid`, loc)
        return undefined
      }
      if (name.startsWith("internal.")) {
        this.err("rego_compile_error", `with keyword replacing built-in function: replacement of internal function "${name}" invalid`, loc)
        return undefined
      }
      if (def.relation === true) {
        this.err("rego_compile_error", "with keyword replacing built-in function: target must not be a relation", loc)
        return undefined
      }
      if (def.void === true) {
        this.err("rego_compile_error", "with keyword replacing built-in function: target must not be a void function", loc)
        return undefined
      }
      return { kind: "fn", key: name, arity: def.arity }
    }
    return bad()
  }

  private dataWithTarget(path: Value[], loc: Loc): WithTarget | undefined {
    let node: RuleNode | undefined = this.o.root
    for (let i = 0; i < path.length; i++) {
      const c: RuleNode | undefined = node.child(path[i])
      if (c === undefined) {
        node = undefined
        break
      }
      if (c.rules.length > 0 && i < path.length - 1) {
        this.err("rego_compile_error", "with keyword cannot partially replace virtual document(s)", loc)
        return undefined
      }
      node = c
    }
    if (node !== undefined && node.kind === "function") return { kind: "fn", key: node.name(), arity: node.rules[0].arity }
    return { kind: "data", path }
  }

  // -------------------------------------------------------------------------------------------
  // Calls

  private globalPath(ref: RefTerm): Global | undefined {
    const head = ref.terms[0]
    if (head.type !== "var") return undefined
    let base: Global | undefined
    if (head.name === "data") base = { root: "data", path: [] }
    else if (head.name === "input") base = { root: "input", path: [] }
    else if (!this.isIgnored(head.name)) base = this.o.globals.get(head.name)
    if (base === undefined) return undefined
    const path = [...base.path]
    for (let i = 1; i < ref.terms.length; i++) {
      const x = ref.terms[i]
      if (x.type !== "scalar") return undefined
      path.push(x.value)
    }
    return { root: base.root, path }
  }

  private callee(op: RefTerm, loc: Loc, nargs: number): Callee | undefined {
    const head = op.terms[0]
    const name = refName(op) ?? termString(op)
    if (head.type === "var" && !ROOTS.has(head.name) && (this.isIgnored(head.name) || this.lookup(head.name) !== undefined)) {
      if (!isOperator(name)) {
        this.err("rego_compile_error", `called function ${name} shadowed`, loc)
        return undefined
      }
    }
    const g = this.globalPath(op)
    if (g !== undefined && g.root === "data") {
      const node = findNode(this.o.root, g.path)
      if (node !== undefined && node.rules.length > 0) {
        if (node.kind === "function") return { kind: "func", node, name: node.name() }
        this.err("rego_type_error", `function ${node.name()} has arity 0, got ${nargs} argument${nargs === 1 ? "" : "s"}`, loc)
        return undefined
      }
      if (head.type === "var" && head.name !== "data") {
        const bname = refName(op)
        const def = bname !== undefined ? this.o.builtins.get(bname) : undefined
        if (def !== undefined && bname !== undefined) return this.builtinCallee(def, bname, loc)
      }
      this.err("rego_type_error", `undefined function ${pathString(g.path)}`, loc)
      return undefined
    }
    const def = this.o.builtins.get(name)
    if (def !== undefined) return this.builtinCallee(def, name, loc)
    this.err("rego_type_error", `undefined function ${name}`, loc)
    return undefined
  }

  private builtinCallee(def: NonNullable<ReturnType<BuiltinRegistry["get"]>>, name: string, loc: Loc): Callee | undefined {
    if (def.deprecated === true) {
      this.err("rego_type_error", `deprecated built-in function calls in expression: ${name}`, loc)
      return undefined
    }
    return { kind: "builtin", def, name }
  }

  // -------------------------------------------------------------------------------------------
  // Terms

  term(t: Term): LTerm {
    switch (t.type) {
      case "scalar":
        return { t: "const", v: t.value }
      case "var": {
        if (!isWildcard(t.name) && !this.isIgnored(t.name) && this.lookup(t.name) === undefined) {
          const g = this.o.globals.get(t.name)
          if (g !== undefined) return globalTerm(g, t.loc)
        }
        return { t: "var", slot: this.seen(t.name), name: t.name }
      }
      case "ref":
        return this.ref(t)
      case "array": {
        const items = t.items.map((x) => this.term(x))
        return items.every((x) => x.t === "const") ? { t: "const", v: items.map((x) => (x as { v: Value }).v) } : { t: "array", items }
      }
      case "set": {
        const items = t.items.map((x) => this.term(x))
        if (items.every((x) => x.t === "const")) return { t: "const", v: RegoSet.of(items.map((x) => (x as { v: Value }).v)) }
        return { t: "set", items }
      }
      case "object":
        return foldObject(t.entries.map(([k, v]) => [this.term(k), this.term(v)] as const))
      case "arraycomp":
      case "setcomp": {
        this.pushScope(declaredVars(t.body))
        const body = this.body(t.body)
        const head = this.term(t.head)
        this.popScope()
        return { t: "comp", kind: t.type === "arraycomp" ? "array" : "set", head, value: undefined, body, loc: t.loc }
      }
      case "objectcomp": {
        this.pushScope(declaredVars(t.body))
        const body = this.body(t.body)
        const head = this.term(t.key)
        const value = this.term(t.value)
        this.popScope()
        return { t: "comp", kind: "object", head, value, body, loc: t.loc }
      }
      case "call": {
        if (t.args.length === 0) {
          const md = this.metadataCall(t.op, 0, t.loc)
          if (md !== undefined) return md
        }
        const callee = this.callee(t.op, t.loc, t.args.length)
        const args = t.args.map((a) => this.term(a))
        if (callee === undefined) return { t: "const", v: null }
        const arity = calleeArity(callee)
        if (args.length !== arity) {
          this.arityError(callee, arity, args.length, t.loc)
          return { t: "const", v: null }
        }
        if (callee.kind === "builtin" && callee.def.void === true) {
          this.err("rego_type_error", `${termString(t)} used as value`, t.loc)
          return { t: "const", v: null }
        }
        return { t: "call", fn: callee, args, loc: t.loc }
      }
      case "template":
        return this.template(t.parts, t.loc)
    }
  }

  private template(parts: ReadonlyArray<{ type: "scalar"; value: unknown } | Expr>, loc: Loc): LTerm {
    const out: LTerm[] = []
    for (const p of parts) {
      if ("type" in p && p.type === "scalar") {
        out.push({ t: "const", v: String(p.value) })
        continue
      }
      const e = p as Expr
      this.pushScope(new Set())
      let inner: LTerm | undefined
      const b = e.body
      if (b.type === "term") inner = this.term(b.term)
      else if (b.type === "call") {
        const callee = this.callee(b.op, e.loc, b.args.length)
        const args = b.args.map((a) => this.term(a))
        if (callee !== undefined) {
          if (callee.kind === "builtin" && callee.def.relation === true) {
            this.err("rego_compile_error", `illegal call to relation built-in '${callee.name}' that may cause multiple outputs`, e.loc)
          } else if (args.length === calleeArity(callee)) inner = { t: "call", fn: callee, args, loc: e.loc }
          else if (args.length === calleeArity(callee) + 1) {
            // `f(x, y)` in a template: the call's value is whether it unifies.
            inner = { t: "call", fn: callee, args: args.slice(0, -1), loc: e.loc }
          } else this.arityError(callee, calleeArity(callee), args.length, e.loc)
        }
      }
      const withs = this.withs(e)
      this.popScope()
      if (inner === undefined) continue
      const slot = this.fresh("$tpl")
      const v: LTerm = { t: "var", slot, name: "$tpl" }
      out.push({ t: "comp", kind: "set", head: v, value: undefined, body: [{ e: { k: "unify", a: v, b: inner }, negated: false, with: withs, loc: e.loc }], loc: e.loc })
    }
    return { t: "template", parts: out, loc }
  }

  private ref(r: RefTerm): LTerm {
    const head = r.terms[0]
    let base: LTerm
    let path: LTerm[] = []
    if (head.type === "var") {
      if (head.name === "input") base = { t: "input" }
      else if (head.name === "data") base = { t: "data" }
      else if (!isWildcard(head.name) && !this.isIgnored(head.name) && this.lookup(head.name) === undefined && this.o.globals.has(head.name)) {
        const g = this.o.globals.get(head.name) as Global
        base = g.root === "input" ? { t: "input" } : { t: "data" }
        path = g.path.map((v) => ({ t: "const", v }))
      } else base = { t: "var", slot: this.seen(head.name), name: head.name }
    } else base = this.term(head)
    for (let i = 1; i < r.terms.length; i++) path.push(this.term(r.terms[i]))
    if (path.length === 0) return base
    if (base.t === "ref") return { t: "ref", head: base.head, path: [...base.path, ...path], loc: r.loc }
    return { t: "ref", head: base, path, loc: r.loc }
  }
}

// ---------------------------------------------------------------------------------------------

const dummyLoc: Loc = { file: "", row: 0, col: 0, offset: 0 }

const isOperator = (name: string): boolean =>
  ["equal", "neq", "lt", "gt", "lte", "gte", "plus", "minus", "mul", "div", "rem", "and", "or", "internal.member_2", "internal.member_3"].includes(name)

export const calleeArity = (c: Callee): number => (c.kind === "builtin" ? c.def.arity : c.node.rules[0].arity)

/** Whether a term needs evaluation beyond building a value from variables and constants. */
const requiresEval = (t: LTerm): boolean => {
  switch (t.t) {
    case "ref":
    case "call":
    case "comp":
    case "template":
    case "input":
    case "data":
      return true
    case "array":
    case "set":
      return t.items.some(requiresEval)
    case "object":
      return t.entries.some(([k, v]) => requiresEval(k) || requiresEval(v))
    default:
      return false
  }
}

const globalTerm = (g: Global, loc: Loc): LTerm => {
  const head: LTerm = g.root === "input" ? { t: "input" } : { t: "data" }
  if (g.path.length === 0) return head
  return { t: "ref", head, path: g.path.map((v) => ({ t: "const", v })), loc }
}

const foldObject = (entries: ReadonlyArray<readonly [LTerm, LTerm]>): LTerm => {
  if (entries.every(([k, v]) => k.t === "const" && v.t === "const")) {
    const b = new ObjectBuilder()
    for (const [k, v] of entries) b.set((k as { v: Value }).v, (v as { v: Value }).v)
    return { t: "const", v: b.build() }
  }
  return { t: "object", entries }
}

export const findNode = (root: RuleNode, path: readonly Value[]): RuleNode | undefined => {
  let n: RuleNode | undefined = root
  for (const k of path) {
    n = n.child(k)
    if (n === undefined) return undefined
  }
  return n
}

/** Names bound by a pattern (vars, including inside arrays and object values). */
export const collectPatternVars = (t: Term, out: Set<string>): void => {
  switch (t.type) {
    case "var":
      out.add(t.name)
      return
    case "array":
      for (const x of t.items) collectPatternVars(x, out)
      return
    case "object":
      for (const [, v] of t.entries) collectPatternVars(v, out)
      return
    case "ref":
      for (let i = 1; i < t.terms.length; i++) collectPatternVars(t.terms[i], out)
      return
    default:
      return
  }
}

/** Vars declared by `:=` and `some` directly in a body (not in nested comprehensions). */
export const declaredVars = (body: Body): Set<string> => {
  const out = new Set<string>()
  for (const e of body) {
    const b = e.body
    if (b.type === "call" && refName(b.op) === "assign" && b.args.length === 2) collectVarsDeep(b.args[0], out)
    else if (b.type === "some") for (const v of b.vars) out.add(v.name)
    else if (b.type === "somein") {
      const args = b.call.args
      collectVarsDeep(args[0], out)
      if (args.length === 3) collectVarsDeep(args[1], out)
    }
  }
  return out
}

const collectVarsDeep = (t: Term, out: Set<string>): void => {
  switch (t.type) {
    case "var":
      out.add(t.name)
      return
    case "ref":
      for (const x of t.terms) collectVarsDeep(x, out)
      return
    case "array":
    case "set":
      for (const x of t.items) collectVarsDeep(x, out)
      return
    case "object":
      for (const [k, v] of t.entries) {
        collectVarsDeep(k, out)
        collectVarsDeep(v, out)
      }
      return
    case "call":
      for (const x of t.args) collectVarsDeep(x, out)
      return
    default:
      return
  }
}

export type { VarTerm }
