/**
 * SQL of the delivery outbox. Lists of ids travel as one JSON parameter, so each statement has
 * one text whatever the number of ids (PostgreSQL parses and plans less). A delivery is claimed (`pending` -> `sending`, with a lease and one
 * more attempt) with `FOR UPDATE SKIP LOCKED`, so instances never send the same delivery twice
 * at once; a claim whose instance died is taken again once its lease ran out. The result of an
 * attempt closes it: `dispatched`, `pending` again with the next attempt's time, `failed`, or
 * `gone`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import * as Effect from "effect/Effect"
import type * as Domain from "./Domain.js"

export interface Job {
  readonly id: string
  readonly notificationId: string
  readonly channel: Domain.Channel
  readonly destination: string
  readonly attempts: number
  readonly subscriptionId: string | null
  readonly endpoint: string | null
  readonly p256dh: string | null
  readonly auth: string | null
  readonly subscriptionEnabled: boolean | null
  readonly ruleId: string
  readonly userId: string
  readonly title: string
  readonly body: string
  readonly url: string
  readonly severity: Domain.Severity
  readonly language: string
}

export type Completion =
  | { readonly _tag: "Dispatched" }
  | { readonly _tag: "Retry"; readonly error: string; readonly nextAttemptAt: string }
  | { readonly _tag: "Failed"; readonly error: string }
  | { readonly _tag: "Gone"; readonly error: string }

export class DeliveriesRepo extends Effect.Service<DeliveriesRepo>()("nudging/DeliveriesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The claimed deliveries with what sending them needs (one statement with the claim). */
    const withJobs = (claim: Statement.Statement<unknown>) =>
      sql<Job>`WITH claimed AS (${claim})
        SELECT claimed.id, claimed.notification_id, claimed.channel, claimed.destination, claimed.attempts,
          claimed.subscription_id, s.endpoint, s.p256dh, s.auth, s.enabled AS subscription_enabled,
          n.rule_id, n.user_id, n.title, n.body, n.url, n.severity, n.language
        FROM claimed
        JOIN notifications n ON n.id = claimed.notification_id
        LEFT JOIN push_subscriptions s ON s.id = claimed.subscription_id`

    const claimed = sql.literal("d.id, d.notification_id, d.channel, d.destination, d.attempts, d.subscription_id")

    /** Claims these deliveries if they are still pending (the ones an ingest just committed). */
    const claim = (ids: ReadonlyArray<string>, now: string, leaseUntil: string): Effect.Effect<ReadonlyArray<Job>, SqlError> =>
      ids.length === 0 ? Effect.succeed([]) : withJobs(sql`UPDATE deliveries d
          SET status = 'sending', attempts = d.attempts + 1, lease_until = ${leaseUntil}, updated_at = ${now}
          FROM (SELECT id FROM deliveries
                WHERE id IN (SELECT jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb)) AND status = 'pending'
                FOR UPDATE SKIP LOCKED) due
          WHERE d.id = due.id
          RETURNING ${claimed}`)

    /** Claims up to `limit` deliveries that are due, and `sending` ones whose lease expired. */
    const claimDue = (now: string, leaseUntil: string, limit: number) =>
      withJobs(sql`UPDATE deliveries d
          SET status = 'sending', attempts = d.attempts + 1, lease_until = ${leaseUntil}, updated_at = ${now}
          FROM (SELECT id FROM deliveries
                WHERE (status = 'pending' AND next_attempt_at <= ${now}) OR (status = 'sending' AND lease_until < ${now})
                ORDER BY next_attempt_at LIMIT ${limit}
                FOR UPDATE SKIP LOCKED) due
          WHERE d.id = due.id
          RETURNING ${claimed}`)

    /** Deliveries the push service or mail server accepted, in one statement. */
    const dispatched = (ids: ReadonlyArray<string>, now: string) =>
      ids.length === 0 ? Effect.void : sql`UPDATE deliveries SET status = 'dispatched', dispatched_at = ${now}, error = NULL,
        next_attempt_at = NULL, lease_until = NULL, updated_at = ${now}
        WHERE id IN (SELECT jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb))`.pipe(Effect.asVoid)

    const complete = (job: Job, completion: Completion, now: string) =>
      Effect.gen(function*() {
        switch (completion._tag) {
          case "Dispatched":
            yield* sql`UPDATE deliveries SET status = 'dispatched', dispatched_at = ${now}, error = NULL,
              next_attempt_at = NULL, lease_until = NULL, updated_at = ${now} WHERE id = ${job.id}`
            return
          case "Retry":
            yield* sql`UPDATE deliveries SET status = 'pending', error = ${completion.error},
              next_attempt_at = ${completion.nextAttemptAt}, lease_until = NULL, updated_at = ${now} WHERE id = ${job.id}`
            return
          case "Failed":
          case "Gone":
            yield* sql`UPDATE deliveries SET status = ${completion._tag === "Failed" ? "failed" : "gone"},
              error = ${completion.error}, next_attempt_at = NULL, lease_until = NULL, updated_at = ${now}
              WHERE id = ${job.id}`
            // A recipient without an inbox (an e-mail group) got nothing at all: the notification failed.
            yield* sql`UPDATE notifications n SET status = 'failed', reason = ${completion.error}
              WHERE n.id = ${job.notificationId} AND n.status = 'dispatched' AND n.user_id LIKE 'email-ingest:%'
                AND NOT EXISTS (SELECT 1 FROM deliveries o WHERE o.notification_id = n.id
                  AND o.status IN ('pending', 'sending', 'dispatched'))`
            return
        }
      }).pipe(Effect.asVoid)

    return { claim, claimDue, dispatched, complete }
  })
}) {}
