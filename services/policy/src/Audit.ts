/**
 * The audit trail: one structured record per decision, a JSON line on stdout in the platform's
 * log format, written whatever `LOG_LEVEL` says (turn it off with `POLICY_AUDIT_ENABLED=false`):
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
 * level ERROR with the same identifying fields and the error; rule queries over RPC are
 * `policy_evaluation` records.
 *
 * Records are written directly (`Logging.formatLine`, a string built without intermediate
 * objects) rather than through Effect's logger: a decision is the hot path and the logger's
 * annotation machinery costs more than the rest of a cached decision. Tests replace the
 * `AuditSink`.
 */
import type { Decision, PolicyInput } from "@rec/policy"
import { Logging, RequestContext } from "@rec/platform"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Config from "./Config.js"

export interface AuditRecord {
  readonly level: "INFO" | "ERROR"
  readonly message: "policy_decision" | "policy_evaluation" | "policy_error"
  readonly request_id: string | undefined
  readonly user_id: string | undefined
  readonly fields: Readonly<Record<string, unknown>>
}

/** One JSON line in the platform's log format (without the newline). */
export const format = (record: AuditRecord): string =>
  Logging.formatLine({
    service: Config.Service.name,
    level: record.level,
    message: record.message,
    requestId: record.request_id,
    userId: record.user_id
  }, record.fields)

/**
 * Records leave with the service's other log lines (`Logging.stdoutLines`): the lines of one
 * turn of the event loop in one write, in order; what is pending is written when the process
 * exits.
 */
export const stdoutWriter = (): { readonly write: (record: AuditRecord) => void } => {
  const lines = Logging.stdoutLines()
  return { write: (record) => lines.write(format(record)) }
}

/** Where audit records go. The default writes JSON lines to stdout. */
export class AuditSink extends Context.Reference<AuditSink>()("@rec/policy-service/AuditSink", {
  defaultValue: stdoutWriter
}) {}

export interface DecisionContext {
  /** The calling service (`X-Source-Service`, the RPC caller, `mosquitto`), if known. */
  readonly source: string | undefined
  readonly package: string
  readonly input: PolicyInput.PolicyInput
  /** Milliseconds spent deciding (cache lookup and evaluation). */
  readonly latencyMs: number
}

/**
 * The identifying fields of a record followed by `extra`, in one object literal per record kind:
 * an object spread from another (`{...identify(context), allowed}`) is built in V8's slow
 * dictionary mode and serialises three times slower.
 */
const identified = <Extra extends Record<string, unknown>>(context: DecisionContext, extra: Extra) => {
  const subject = context.input.subject
  const record = {
    source_service: context.source ?? null,
    subject_id: subject?.id ?? null,
    subject_type: subject?.type ?? "anonymous",
    package: context.package,
    resource_type: context.input.resource.type,
    resource_id: context.input.resource.id,
    action: context.input.action.name,
    latency_ms: Math.round(context.latencyMs * 1000) / 1000
  }
  return Object.assign(record, extra)
}

export class Audit extends Effect.Service<Audit>()("@rec/policy-service/Audit", {
  effect: Effect.gen(function*() {
    const { audit } = yield* Config.settings
    const sink = yield* AuditSink

    const write = (
      level: AuditRecord["level"],
      message: AuditRecord["message"],
      fields: Record<string, unknown>
    ): Effect.Effect<void> =>
      audit
        ? Effect.map(RequestContext.CurrentRequest, (request) =>
          sink.write({
            level,
            message,
            request_id: request.requestId === "" ? undefined : request.requestId,
            user_id: request.userId,
            fields
          }))
        : Effect.void

    const decision = (context: DecisionContext, result: Decision.Decision): Effect.Effect<void> =>
      write("INFO", "policy_decision", identified(context, { allowed: result.allowed, reason: result.reason, cached: result.cached }))

    const evaluation = (context: DecisionContext, rule: string, defined: boolean): Effect.Effect<void> =>
      write("INFO", "policy_evaluation", identified(context, { rule, defined }))

    const failure = (context: DecisionContext, error: Decision.DecisionError): Effect.Effect<void> =>
      write("ERROR", "policy_error", identified(context, { error: error._tag, error_message: error.message }))

    return { decision, evaluation, failure, enabled: audit } as const
  })
}) {}
