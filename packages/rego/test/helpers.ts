// Shared by the builtin tests: builtins called directly from the default registry with a strict
// context (their result as a Value or as JSON), one expression evaluated through the engine (as a query or as a rule), and the typed
// error a call must raise.
import { type Json, Rego } from "@rec/rego"
import { type BuiltinContext, BuiltinError, defaultBuiltins } from "@rec/rego/builtins/index"
import { toJSON } from "@rec/rego/json"
import type { EvalOptions } from "@rec/rego/rego"
import type { Value } from "@rec/rego/value"

/** A strict context at time 0, with no print output or environment; `charge` sees the work builtins charge. */
export const builtinContext = (charge: (units: number) => void = () => {}): BuiltinContext => ({
  strict: true,
  nowNs: 0n,
  location: undefined,
  cache: new Map(),
  print: () => {},
  env: {},
  charge
})

const registry = defaultBuiltins()
const strict = builtinContext()

/** Calls a default builtin directly (undefined when its result is); its BuiltinError propagates. */
export const callBuiltin = (name: string, args: Value[], ctx: BuiltinContext = strict): Value | undefined => {
  const def = registry.get(name)
  if (def === undefined) throw new Error(`${name} is not registered`)
  return def.fn(args, ctx)
}

/** callBuiltin with the result as plain JSON data (sets as sorted arrays; undefined when undefined). */
export const callBuiltinJSON = (name: string, args: Value[], ctx: BuiltinContext = strict): Json | undefined => {
  const out = callBuiltin(name, args, ctx)
  return out === undefined ? undefined : toJSON(out)
}

/** The error of class `type` that `f` throws; any other error propagates, and no error fails the test. */
export const thrown = <E>(type: abstract new (...args: never[]) => E, f: () => unknown): E => {
  try {
    f()
  } catch (e) {
    if (e instanceof type) return e
    throw e
  }
  throw new Error(`expected a ${type.name}, but nothing was thrown`)
}

/** What `f` throws (undefined when nothing) and how long it ran, in milliseconds. */
export const outcome = (f: () => unknown): { error: unknown; ms: number } => {
  const t0 = performance.now()
  try {
    f()
  } catch (error) {
    return { error, ms: performance.now() - t0 }
  }
  return { error: undefined, ms: performance.now() - t0 }
}

/** `code: message` of the BuiltinError `f` throws. */
export const builtinFailure = (f: () => unknown): string => {
  const e = thrown(BuiltinError, f)
  return `${e.code}: ${e.message}`
}

const empty = Rego.compile({ modules: {} })

/** The value of the query `x := <expr>` with strict builtin errors (undefined when undefined). */
export const queryValue = (expr: string, input?: unknown, nowNs?: bigint): Json | undefined => {
  const results = empty.query(`x := ${expr}`, input, { strictBuiltinErrors: true, nowNs })
  return results.length === 0 ? undefined : results[0].x
}

/** The value of the rule `x := <expr>` in a module of its own, with strict builtin errors. */
export const ruleValue = (expr: string, input?: unknown, options?: EvalOptions): unknown =>
  Rego.compile({ modules: { "p.rego": `package p\n\nx := ${expr}\n` } })
    .prepareRule("data.p.x")
    .evaluate(input, { strictBuiltinErrors: true, ...options })
