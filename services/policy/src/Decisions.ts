/**
 * Asking the policy engine, with the audit record every decision leaves. Every endpoint (HTTP,
 * MQTT, RPC) decides through here.
 */
import { type Decision, PolicyEngine } from "@rec/policy"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import { Audit, type DecisionContext } from "./Audit.js"
import type { Question } from "./Inputs.js"

export class Decisions extends Effect.Service<Decisions>()("@rec/policy-service/Decisions", {
  effect: Effect.gen(function*() {
    const engine = yield* PolicyEngine
    const audit = yield* Audit

    /** Runs `run`, then writes its audit record (`record`) or the failure record. */
    const audited = <A>(
      question: Question,
      source: string | undefined,
      run: Effect.Effect<A, Decision.DecisionError>,
      record: (context: DecisionContext, a: A) => Effect.Effect<void>
    ): Effect.Effect<A, Decision.DecisionError> =>
      Effect.suspend(() => {
        const started = performance.now()
        const context = (): DecisionContext => ({
          source,
          package: question.package,
          input: question.input,
          latencyMs: performance.now() - started
        })
        return run.pipe(
          Effect.tap((a) => record(context(), a)),
          Effect.tapError((error) => audit.failure(context(), error))
        )
      })

    /** One audited decision. */
    const decide = (question: Question, source: string | undefined): Effect.Effect<Decision.Decision, Decision.DecisionError> =>
      audited(question, source, engine.decide(question.package, question.input), audit.decision)

    /**
     * A boolean rule other than `allow` (the MQTT `superuser` rule), audited as a decision on
     * that rule; anything but `true` is a denial.
     */
    const check = (
      question: Question,
      rule: string,
      source: string | undefined,
      reasons: { readonly allowed: string; readonly denied: string }
    ): Effect.Effect<Decision.Decision, Decision.DecisionError> =>
      audited(
        question,
        source,
        Effect.map(engine.evaluate(question.package, rule, question.input), (value: Option.Option<unknown>) => {
          const allowed = value._tag === "Some" && value.value === true
          return {
            allowed,
            reason: allowed ? reasons.allowed : reasons.denied,
            package: question.package,
            cached: false
          } satisfies Decision.Decision
        }),
        audit.decision
      )

    /** The raw value of a rule (RPC `Evaluate`), audited as a `policy_evaluation` record. */
    const evaluate = (
      question: Question,
      rule: string,
      source: string | undefined
    ): Effect.Effect<Option.Option<unknown>, Decision.DecisionError> =>
      audited(
        question,
        source,
        engine.evaluate(question.package, rule, question.input),
        (context, value) => audit.evaluation(context, rule, value._tag === "Some")
      )

    const status = engine.status
    const reload = engine.reload

    return { decide, check, evaluate, status, reload } as const
  })
}) {}
