/**
 * The audit trail: one structured log record per decision, written whatever `LOG_LEVEL` says
 * (turn it off with `POLICY_AUDIT_ENABLED=false`).
 *
 * ```json
 * {"time":"…","level":"INFO","service":"policy","message":"policy_decision","request_id":"…",
 *  "user_id":"…","source_service":"grid-gateway","subject_id":"…","subject_type":"user",
 *  "package":"rec.dataset.access","resource_type":"dataset","resource_id":"meters",
 *  "action":"read","allowed":false,"reason":"missing dataset scope for requesting client",
 *  "latency_ms":0.21,"cached":false}
 * ```
 *
 * Never recorded: tokens, claims, the input's attributes or context (they may carry personal
 * data); the subject is its id and type only. Failed evaluations are `policy_error` records at
 * level ERROR with the same identifying fields and the error message.
 */
import type { Decision, PolicyInput } from "@rec/policy"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Config from "./Config.js"

export interface DecisionContext {
  /** The calling service (`X-Source-Service`, the RPC caller, `mosquitto`), if known. */
  readonly source: string | undefined
  readonly package: string
  readonly input: PolicyInput.PolicyInput
  /** Milliseconds spent deciding (cache lookup and evaluation). */
  readonly latencyMs: number
}

const identify = (context: DecisionContext) => {
  const subject = context.input.subject
  return {
    source_service: context.source ?? null,
    subject_id: subject?.id ?? null,
    subject_type: subject?.type ?? "anonymous",
    package: context.package,
    resource_type: context.input.resource.type,
    resource_id: context.input.resource.id,
    action: context.input.action.name,
    latency_ms: Math.round(context.latencyMs * 1000) / 1000
  }
}

export class Audit extends Effect.Service<Audit>()("@rec/policy-service/Audit", {
  effect: Effect.gen(function*() {
    const { audit } = yield* Config.settings
    const write = <A, E, R>(effect: Effect.Effect<A, E, R>) => Logger.withMinimumLogLevel(effect, LogLevel.Info)

    const decision = (context: DecisionContext, result: Decision.Decision): Effect.Effect<void> =>
      audit
        ? write(
          Effect.logInfo("policy_decision").pipe(
            Effect.annotateLogs({
              ...identify(context),
              allowed: result.allowed,
              reason: result.reason,
              cached: result.cached
            })
          )
        )
        : Effect.void

    const failure = (context: DecisionContext, error: Decision.DecisionError): Effect.Effect<void> =>
      audit
        ? write(
          Effect.logError("policy_error").pipe(
            Effect.annotateLogs({ ...identify(context), error: error._tag, error_message: error.message })
          )
        )
        : Effect.void

    const evaluation = (context: DecisionContext, rule: string, defined: boolean): Effect.Effect<void> =>
      audit
        ? write(
          Effect.logInfo("policy_evaluation").pipe(Effect.annotateLogs({ ...identify(context), rule, defined }))
        )
        : Effect.void

    return { decision, evaluation, failure, enabled: audit } as const
  })
}) {}
