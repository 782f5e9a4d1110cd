/**
 * The claims that make alert delivery idempotent per (rule, pipeline run) across redelivered
 * MQTT messages and replicas (`alert_deliveries`, migration 0003).
 *
 * `claim` inserts the row, or takes over one whose earlier attempt failed or was abandoned
 * (claimed longer ago than the lease, say by a replica that died), in one statement: PostgreSQL
 * lets exactly one caller insert or update a row of a given key, so exactly one sends. The
 * parts already done (the nudge, the webhook) are returned so a retry sends only the rest.
 */
import { SqlClient } from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** A claim older than this, still not completed, is taken to be abandoned. */
export const leaseSeconds = 600

/** Attempts per (rule, run) at most, the first included. */
export const maxAttempts = 5

export const PartState = Schema.Literal("sent", "failed", "none")
export type PartState = typeof PartState.Type

export const Claim = Schema.Struct({
  attempts: Schema.Number,
  nudgeState: Schema.NullOr(PartState),
  webhookState: Schema.NullOr(PartState)
})
export type Claim = typeof Claim.Type

export interface ClaimRequest {
  readonly ruleId: string
  readonly runId: string
  readonly networkId: string
  readonly period: string
  readonly hazards: ReadonlyArray<string>
}

export interface Outcome {
  readonly nudge: { readonly state: PartState; readonly detail: string | null }
  readonly webhook: { readonly state: PartState; readonly detail: string | null }
}

export const DeliveryRow = Schema.Struct({
  ruleId: Schema.String,
  runId: Schema.String,
  networkId: Schema.String,
  period: Schema.String,
  hazards: Schema.Array(Schema.String),
  state: Schema.String,
  attempts: Schema.Number,
  nudgeState: Schema.NullOr(Schema.String),
  nudgeDetail: Schema.NullOr(Schema.String),
  webhookState: Schema.NullOr(Schema.String),
  webhookDetail: Schema.NullOr(Schema.String)
})

export class AlertDeliveriesRepo extends Effect.Service<AlertDeliveriesRepo>()("@rec/grid-gateway/AlertDeliveriesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient

    const claim = SqlSchema.findOne({
      Request: Schema.Struct({
        ruleId: Schema.String,
        runId: Schema.String,
        networkId: Schema.String,
        period: Schema.String,
        hazards: Schema.Array(Schema.String)
      }),
      Result: Claim,
      execute: (r) =>
        sql`INSERT INTO alert_deliveries (rule_id, run_id, network_id, period, hazards, state)
            VALUES (${r.ruleId}, ${r.runId}, ${r.networkId}, ${r.period}, ${r.hazards}, 'claimed')
            ON CONFLICT (rule_id, run_id) DO UPDATE
              SET state = 'claimed', claimed_at = now(), attempts = alert_deliveries.attempts + 1
              WHERE alert_deliveries.attempts < ${maxAttempts}
                AND (alert_deliveries.state = 'failed'
                  OR (alert_deliveries.state = 'claimed'
                    AND alert_deliveries.claimed_at < now() - make_interval(secs => ${leaseSeconds})))
            RETURNING attempts, nudge_state, webhook_state`
    })

    const complete = (ruleId: string, runId: string, outcome: Outcome) => {
      const failed = outcome.nudge.state === "failed" || outcome.webhook.state === "failed"
      return sql`UPDATE alert_deliveries
        SET state = ${failed ? "failed" : "done"}, completed_at = now(),
          nudge_state = ${outcome.nudge.state}, nudge_detail = ${outcome.nudge.detail},
          webhook_state = ${outcome.webhook.state}, webhook_detail = ${outcome.webhook.detail}
        WHERE rule_id = ${ruleId} AND run_id = ${runId}`.pipe(Effect.asVoid)
    }

    const ofRun = SqlSchema.findAll({
      Request: Schema.String,
      Result: DeliveryRow,
      execute: (runId) => sql`SELECT rule_id, run_id, network_id, period::text AS period, hazards, state, attempts,
        nudge_state, nudge_detail, webhook_state, webhook_detail FROM alert_deliveries WHERE run_id = ${runId} ORDER BY rule_id`
    })

    return {
      /** The claim to send for this (rule, run), or none when someone else has it or it is done. */
      claim: (request: ClaimRequest) => claim(request).pipe(Effect.withSpan("AlertDeliveriesRepo.claim")),
      complete: (ruleId: string, runId: string, outcome: Outcome) =>
        complete(ruleId, runId, outcome).pipe(Effect.withSpan("AlertDeliveriesRepo.complete")),
      /** The deliveries of a run (operators' inspection, tests). */
      ofRun: (runId: string) => ofRun(runId).pipe(Effect.withSpan("AlertDeliveriesRepo.ofRun"))
    } as const
  })
}) {}
