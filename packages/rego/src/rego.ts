// The public API: compile policies once, prepare queries, evaluate them many times.
//
//   const rego = Rego.compile({ modules: { "authz.rego": source }, data })
//   const allow = rego.prepareRule("data.authz.allow")
//   allow.evaluate({ user: "alice" })            // -> true / false / undefined
//   rego.prepare("x := data.authz.roles[_]").evaluate(input)   // -> [{ x: ... }, ...]

import type { Module } from "./ast.js"
import { defaultBuiltins } from "./builtins/index.js"
import type { BuiltinRegistry } from "./builtins/registry.js"
import { type CompiledModules, compileModules, type ModuleSource, parseModules } from "./compiler/compile.js"
import type { LTerm } from "./compiler/ir.js"
import { Resolver } from "./compiler/resolve.js"
import { reorderBody, unsafeErrors } from "./compiler/safety.js"
import { constValue, type RuleNode } from "./compiler/tree.js"
import { isStackOverflow, RegoCompileError, RegoError, RegoEvalError, sortErrors } from "./errors.js"
import { type Cont, Ctx, type Frame, type Limits, type PrintSink, Root } from "./eval/context.js"
import { type Json, toJSON } from "./json.js"
import { parseQuery } from "./parser.js"
import { type Value, fromJSON, isPlainJSON } from "./value.js"

export interface CompileInput {
  /** Rego modules: file name to source, or a list of `{ file, source }`. */
  readonly modules?: Readonly<Record<string, string>> | readonly ModuleSource[]
  /** The base `data` document (JSON data; LosslessNumber values are read exactly). */
  readonly data?: unknown
  /** Builtins available to policies (default: every builtin of this package). */
  readonly builtins?: BuiltinRegistry
}

export interface EvalOptions {
  /** Raise builtin errors (type errors, division by zero...) instead of treating them as undefined. */
  readonly strictBuiltinErrors?: boolean
  /** Step and time limits for this evaluation. */
  readonly limits?: Limits
  /** Where `print()` output goes (default: discarded). */
  readonly print?: PrintSink
  /** The clock for `time.now_ns()`, in nanoseconds (default: the current time). */
  readonly nowNs?: bigint
  /** Environment visible to `opa.runtime()` (default: empty). */
  readonly env?: Readonly<Record<string, string>>
}

/** Options fixed when the policy is compiled; each evaluation may override them. */
export interface RegoDefaults extends EvalOptions {}

export type Bindings = Record<string, Json>

const discard: PrintSink = () => undefined

/** Default limits: generous enough for real policies, small enough that nothing hangs. */
export const DEFAULT_LIMITS: Limits = { maxSteps: 10_000_000, timeoutMs: 5_000 }

const toSources = (m: CompileInput["modules"]): ModuleSource[] => {
  if (m === undefined) return []
  if (Array.isArray(m)) return [...(m as ModuleSource[])]
  return Object.entries(m as Record<string, string>).map(([file, source]) => ({ file, source }))
}

/** A compiled set of modules with its data. Immutable; safe to share between evaluations. */
export class Rego {
  private constructor(
    private readonly compiled: CompiledModules,
    private readonly dataValue: Value,
    private readonly defaults: RegoDefaults
  ) {}

  /** Parses and compiles modules; throws RegoCompileError listing every error with its location. */
  static compile(input: CompileInput & { readonly defaults?: RegoDefaults } = {}): Rego {
    const builtins = input.builtins ?? defaultBuiltins()
    const modules = parseModules(toSources(input.modules))
    return Rego.fromModules(modules, input.data, builtins, input.defaults ?? {})
  }

  /** Compiles already parsed modules. */
  static fromModules(modules: readonly Module[], data: unknown, builtins: BuiltinRegistry = defaultBuiltins(), defaults: RegoDefaults = {}): Rego {
    const compiled = compileGuard("the policy is nested too deeply to compile", () => compileModules(modules, { builtins }))
    return new Rego(compiled, dataValue(data), defaults)
  }

  /** The same policy over other data (no recompilation). */
  withData(data: unknown): Rego {
    return new Rego(this.compiled, dataValue(data), this.defaults)
  }

  /** Package paths of the compiled modules, e.g. `["authz", "authz.lib"]`. */
  packages(): string[] {
    return [...new Set(this.compiled.modules.map((m) => m.pkg.join(".")))].sort()
  }

  /** The parsed modules (after compilation). */
  modules(): readonly Module[] {
    return this.compiled.modules
  }

  get data(): Value {
    return this.dataValue
  }

  /**
   * Prepares a rule (or any document) path such as `data.authz.allow` or `authz.allow`:
   * evaluating it returns the document's value, or undefined.
   */
  prepareRule(path: string | readonly string[]): PreparedRule {
    const segs = typeof path === "string" ? path.split(".").filter((s) => s !== "") : [...path]
    if (segs[0] === "data") segs.shift()
    const term: LTerm =
      segs.length === 0 ? { t: "data" } : { t: "ref", head: { t: "data" }, path: segs.map((s) => ({ t: "const", v: s })), loc: { file: "", row: 1, col: 1, offset: 0 } }
    const { fn, nslots } = compileGuard("the path is too long to compile", () => this.compiled.codegen.compileTerm(term, 1))
    return new PreparedRule(this, fn, nslots, segs)
  }

  /**
   * Prepares several documents evaluated together: one evaluation, so that what they share
   * (rules, function results, comprehensions) is computed once. For a decision made of
   * `allow`, `reason` and `filters` of one package.
   */
  prepareRules(paths: ReadonlyArray<string | readonly string[]>): PreparedRules {
    return new PreparedRules(this, paths.map((p) => this.prepareRule(p)))
  }

  /** Prepares a query (a Rego body); its results are the bindings of its variables. */
  prepare(query: string): PreparedQuery {
    return compileGuard("the query is nested too deeply to compile", () => this.prepareQuery(query))
  }

  private prepareQuery(query: string): PreparedQuery {
    const body = parseQuery(query, "query")
    const errors: RegoError[] = []
    const r = new Resolver({ builtins: this.compiled.builtins, root: this.compiled.root, globals: new Map(), errors })
    const q = r.query(body)
    const unsafe = new Map()
    const ordered = reorderBody(new Set(), q.body, unsafe)
    errors.push(...unsafeErrors(unsafe, r.slotNames()))
    if (errors.length > 0) throw new RegoCompileError(sortErrors(errors))
    const vars = q.vars
    const sink = (f: Frame): Bindings => {
      const b: Bindings = {}
      for (const v of vars) {
        const x = f[v.slot] as Value | undefined
        if (x !== undefined) b[v.name] = toJSON(x)
      }
      return b
    }
    const collect: Cont = (_c, f) => {
      ;(f[0] as Bindings[]).push(sink(f))
      return false
    }
    const compiled = this.compiled.codegen.compileQuery(ordered, r.nslots, collect)
    return new PreparedQuery(this, compiled.entry, compiled.nslots, vars.map((v) => v.name))
  }

  /** Runs a query once. */
  query(query: string, input?: unknown, options?: EvalOptions): Bindings[] {
    return this.prepare(query).evaluate(input, options)
  }

  /** @internal */
  newContext(input: unknown, o: EvalOptions | undefined): Ctx {
    const d = this.defaults
    const root = new Root({
      strict: o?.strictBuiltinErrors ?? d.strictBuiltinErrors ?? false,
      limits: o?.limits ?? d.limits ?? DEFAULT_LIMITS,
      print: o?.print ?? d.print ?? discard,
      env: o?.env ?? d.env ?? {},
      nowNs: o?.nowNs ?? d.nowNs
    })
    // Input is used as it is when it is JSON data (no copy); anything JSON would not carry
    // (undefined members, Dates, NaN) is normalised first, copying only what changes.
    const value = input === undefined ? undefined : guard(() => (isPlainJSON(input) ? (input as Value) : fromJSON(input)))
    return new Ctx(value, this.dataValue, undefined, undefined, undefined, root)
  }

  /** @internal */
  get internals(): CompiledModules {
    return this.compiled
  }

  /** The rule tree node at a data path, if any (used by tools). */
  node(path: readonly string[]): RuleNode | undefined {
    let n: RuleNode | undefined = this.compiled.root
    for (const s of path) {
      n = n.child(s)
      if (n === undefined) return undefined
    }
    return n
  }
}

/** Turns stack overflows from pathological policies, data or input into evaluation errors. */
const guard = <T>(f: () => T): T => {
  try {
    return f()
  } catch (e) {
    if (isStackOverflow(e)) throw new RegoEvalError("eval_cancel_error", "evaluation exceeded the maximum nesting depth")
    throw e
  }
}

/** The same for compilation: a compile error instead of a stack overflow. */
const compileGuard = <T>(detail: string, f: () => T): T => {
  try {
    return f()
  } catch (e) {
    if (isStackOverflow(e)) throw new RegoCompileError([new RegoError("rego_compile_error", detail)])
    throw e
  }
}

/** Base data as a value; data nested too deeply to read is a compile error. */
const dataValue = (data: unknown): Value => (data === undefined ? {} : compileGuard("data is nested too deeply to read", () => fromJSON(data)))

export class PreparedRule {
  constructor(
    private readonly rego: Rego,
    private readonly fn: (c: Ctx, f: Frame) => Value | undefined,
    private readonly nslots: number,
    readonly path: readonly string[]
  ) {}

  /** The document's value for this input, as JSON data; undefined when it is undefined. */
  evaluate(input?: unknown, options?: EvalOptions): Json | undefined {
    const v = this.evaluateValue(input, options)
    return v === undefined ? undefined : guard(() => toJSON(v))
  }

  /** Like evaluate, but returns the Rego value (sets stay sets). */
  evaluateValue(input?: unknown, options?: EvalOptions): Value | undefined {
    return this.evaluateIn(this.rego.newContext(input, options))
  }

  /** @internal Evaluates within an existing evaluation context. */
  evaluateIn(c: Ctx): Value | undefined {
    const f: Frame = new Array(this.nslots)
    return guard(() => this.fn(c, f))
  }
}

export class PreparedRules {
  constructor(
    private readonly rego: Rego,
    readonly rules: readonly PreparedRule[]
  ) {}

  /** The value of each document (JSON), in order; undefined for undefined documents. */
  evaluate(input?: unknown, options?: EvalOptions): Array<Json | undefined> {
    return guard(() => this.evaluateValues(input, options).map((v) => (v === undefined ? undefined : toJSON(v))))
  }

  /** Like evaluate, but returns Rego values. */
  evaluateValues(input?: unknown, options?: EvalOptions): Array<Value | undefined> {
    const c = this.rego.newContext(input, options)
    return this.rules.map((r) => r.evaluateIn(c))
  }
}

export class PreparedQuery {
  constructor(
    private readonly rego: Rego,
    private readonly entry: Cont,
    private readonly nslots: number,
    /** Variables reported in results. */
    readonly vars: readonly string[]
  ) {}

  /** Every solution's bindings (an empty array when the query is undefined). */
  evaluate(input?: unknown, options?: EvalOptions): Bindings[] {
    const c = this.rego.newContext(input, options)
    const f: Frame = new Array(this.nslots)
    const results: Bindings[] = []
    f[0] = results
    guard(() => this.entry(c, f))
    return results
  }
}

/** Parses a Rego term holding only constants (e.g. `{"a": {1, 2}}`) into a value. */
export const parseValue = (text: string): Value => {
  const body = parseQuery(text)
  if (body.length !== 1 || body[0].body.type !== "term") throw new RegoCompileError([new RegoError("rego_parse_error", "expected a single term")])
  const v = constValue(body[0].body.term)
  if (v === undefined) throw new RegoCompileError([new RegoError("rego_parse_error", "expected a constant term")])
  return v
}
