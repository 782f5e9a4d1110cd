/**
 * `PolicyCompiler` backed by `@rec/rego`: the modules are compiled once into an immutable
 * `Rego` set; each `data.<pkg>.<rule>` asked for is prepared on first use and kept with the set
 * (so a reload also drops the prepared rules of the old set). Every evaluation runs under step
 * and time limits, so a pathological policy or input cannot hang a decision.
 */
import { type PreparedRule, type PreparedRules, Rego, RegoCompileError, RegoError } from "@rec/rego"
import type { ConfigError } from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type LoadProblem, PolicyLoadError } from "./Decision.js"
import { type CompiledPolicies, PolicyCompiler, type PolicySources } from "./PolicyCompiler.js"
import * as PolicyConfig from "./PolicyConfig.js"

const problemOf = (error: RegoError): LoadProblem => ({
  message: error.format(),
  ...(error.location === undefined
    ? {}
    : { file: error.location.file, row: error.location.row, col: error.location.col })
})

const loadErrorOf = (cause: unknown): PolicyLoadError => {
  if (cause instanceof RegoCompileError) {
    const problems = cause.errors.map(problemOf)
    return new PolicyLoadError({ message: problems.map((p) => p.message).join("\n"), problems })
  }
  if (cause instanceof RegoError) return new PolicyLoadError({ message: cause.format(), problems: [problemOf(cause)] })
  const message = cause instanceof Error ? cause.message : String(cause)
  return new PolicyLoadError({ message: `the policies do not compile: ${message}`, problems: [{ message }] })
}

export const compile = (sources: PolicySources, limits: PolicyConfig.EvalLimits): CompiledPolicies => {
  const rego = Rego.compile({
    modules: sources.modules.map((m) => ({ file: m.path, source: m.source })),
    data: sources.data,
    defaults: { limits: { maxSteps: limits.maxSteps, timeoutMs: Duration.toMillis(limits.timeout) } }
  })
  const packages = rego.packages()
  const prepared = new Map<string, PreparedRule>()
  const ruleOf = (pkg: string, rule: string): PreparedRule => {
    const key = `${pkg}.${rule}`
    let p = prepared.get(key)
    if (p === undefined) {
      p = rego.prepareRule([...pkg.split("."), rule])
      prepared.set(key, p)
    }
    return p
  }
  const preparedSets = new Map<string, PreparedRules>()
  const rulesOf = (pkg: string, rules: ReadonlyArray<string>): PreparedRules => {
    const key = `${pkg}:${rules.join(",")}`
    let p = preparedSets.get(key)
    if (p === undefined) {
      p = rego.prepareRules(rules.map((rule) => [...pkg.split("."), rule]))
      preparedSets.set(key, p)
    }
    return p
  }
  return {
    packages,
    hasRule: (pkg, rule) => rego.node([...pkg.split("."), rule]) !== undefined,
    evaluate: (pkg, rule, input) => ruleOf(pkg, rule).evaluate(input),
    evaluateAll: (pkg, rules, input) => rulesOf(pkg, rules).evaluate(input)
  }
}

export const make = (limits: PolicyConfig.EvalLimits): PolicyCompiler["Type"] => ({
  compile: (sources) => Effect.try({ try: () => compile(sources, limits), catch: loadErrorOf })
})

export const layerWith = (limits: PolicyConfig.EvalLimits = PolicyConfig.defaultLimits): Layer.Layer<PolicyCompiler> =>
  Layer.succeed(PolicyCompiler, make(limits))

/** Limits from `POLICY_EVAL_MAX_STEPS` and `POLICY_EVAL_TIMEOUT`. */
export const layer: Layer.Layer<PolicyCompiler, ConfigError> = Layer.effect(
  PolicyCompiler,
  Effect.map(PolicyConfig.limits, make)
)
