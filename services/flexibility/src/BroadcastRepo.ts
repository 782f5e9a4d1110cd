/**
 * Who was sent a run's opportunity nudge (`opportunity_nudges`): the claim that makes the
 * broadcast idempotent per pipeline run. `claim` takes a (run, community, member) row, or
 * takes it again when its last attempt failed or its sender has been silent for
 * `staleAfterMs`; it returns false when the row is sent or being sent by someone else.
 */
import { SqlClient } from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/** A claim older than this is taken to belong to a replica that died while sending. */
export const staleAfterMs = 10 * 60_000

export interface Delivery {
  readonly runId: string
  readonly communityId: string
  readonly userId: string
}

export class BroadcastRepo extends Effect.Service<BroadcastRepo>()("flexibility/BroadcastRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient

    const claim = (d: Delivery, now: number) =>
      sql<{ attempts: number }>`INSERT INTO opportunity_nudges (run_id, community_id, user_id, claimed_at)
        VALUES (${d.runId}, ${d.communityId}, ${d.userId}, ${new Date(now).toISOString()})
        ON CONFLICT (run_id, community_id, user_id) DO UPDATE
          SET status = 'sending', attempts = opportunity_nudges.attempts + 1, claimed_at = EXCLUDED.claimed_at,
              last_error = NULL
          WHERE opportunity_nudges.status = 'failed'
             OR (opportunity_nudges.status = 'sending' AND opportunity_nudges.claimed_at < ${new Date(now - staleAfterMs).toISOString()})
        RETURNING attempts`.pipe(Effect.map((rows) => rows.length > 0), Effect.withSpan("BroadcastRepo.claim"))

    const sent = (d: Delivery, outcome: string, now: number) =>
      sql`UPDATE opportunity_nudges SET status = 'sent', sent_at = ${new Date(now).toISOString()}, outcome = ${outcome}
        WHERE run_id = ${d.runId} AND community_id = ${d.communityId} AND user_id = ${d.userId}`.pipe(
        Effect.asVoid,
        Effect.withSpan("BroadcastRepo.sent")
      )

    const failed = (d: Delivery, error: string) =>
      sql`UPDATE opportunity_nudges SET status = 'failed', last_error = ${error.slice(0, 2000)}
        WHERE run_id = ${d.runId} AND community_id = ${d.communityId} AND user_id = ${d.userId}`.pipe(
        Effect.asVoid,
        Effect.withSpan("BroadcastRepo.failed")
      )

    return { claim, sent, failed } as const
  })
}) {}
