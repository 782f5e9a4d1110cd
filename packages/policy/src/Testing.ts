/**
 * `PolicyEngine` layers for unit tests of services that decide with policies: the decisions
 * come from a function, so a test states exactly what the policies answer. For tests against
 * the real policies use `Engines.embeddedWith({ directory, watch: false })`.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { Decision, Filter, PolicyStatus } from "./Decision.js"
import { PolicyLoadError } from "./Decision.js"
import { PolicyEngine, type PolicyEngineService } from "./PolicyEngine.js"
import type { PolicyInput } from "./PolicyInput.js"

export interface Answer {
  readonly allowed: boolean
  readonly reason?: string | undefined
  readonly filters?: ReadonlyArray<Filter> | undefined
}

const status: PolicyStatus = {
  loaded: true,
  policy_count: 0,
  packages: [],
  fail_open: false,
  cache: { enabled: false, hits: 0, misses: 0, size: 0, max_size: 0, ttl_seconds: 0 }
}

export interface Options {
  /**
   * Values of other rules for `evaluate` (`undefined`: the rule is undefined). Without it,
   * `allow`, `reason` and `filters` come from the answer and every other rule is undefined.
   */
  readonly rules?: ((pkg: string, rule: string, input: PolicyInput) => unknown) | undefined
}

/** An engine answering with `answer(package, input)`; it records every question in `asked`. */
export const make = (
  answer: (pkg: string, input: PolicyInput) => Answer,
  options: Options = {}
): PolicyEngineService & { readonly asked: Array<{ readonly package: string; readonly input: PolicyInput }> } => {
  const asked: Array<{ readonly package: string; readonly input: PolicyInput }> = []
  const decide = (pkg: string, input: PolicyInput) =>
    Effect.sync((): Decision => {
      asked.push({ package: pkg, input })
      const a = answer(pkg, input)
      return {
        allowed: a.allowed,
        reason: a.reason ?? (a.allowed ? "allowed" : "denied"),
        ...(a.filters === undefined ? {} : { filters: a.filters }),
        package: pkg,
        cached: false
      }
    })
  return {
    asked,
    decide,
    decideAll: (requests) => Effect.forEach(requests, (r) => decide(r.package, r.input)),
    evaluate: (pkg, rule, input) =>
      Effect.sync(() => {
        if (options.rules !== undefined) return Option.fromNullable(options.rules(pkg, rule, input))
        const a = answer(pkg, input)
        return rule === "allow"
          ? Option.some(a.allowed)
          : rule === "reason"
          ? Option.some(a.reason ?? (a.allowed ? "allowed" : "denied"))
          : rule === "filters"
          ? Option.fromNullable(a.filters)
          : Option.none()
      }),
    status: Effect.succeed(status),
    reload: Effect.fail(new PolicyLoadError({ message: "the test policy engine cannot reload", problems: [] }))
  }
}

export const layer = (
  answer: (pkg: string, input: PolicyInput) => Answer,
  options?: Options
): Layer.Layer<PolicyEngine> => Layer.sync(PolicyEngine, () => make(answer, options))

export const allowAll: Layer.Layer<PolicyEngine> = layer(() => ({ allowed: true, reason: "test: allow all" }))

export const denyAll: Layer.Layer<PolicyEngine> = layer(() => ({ allowed: false, reason: "test: deny all" }))
