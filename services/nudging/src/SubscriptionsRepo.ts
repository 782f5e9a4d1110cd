/**
 * SQL of browser push subscriptions. A subscription registered without a community receives
 * the notifications of every community; one with a community, that community's (and the
 * notifications without a community).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export interface SubscriptionRow {
  readonly id: string
  readonly userId: string
  readonly communityId: string
  readonly endpoint: string
  readonly p256dh: string
  readonly auth: string
  readonly enabled: boolean
  readonly disabledReason: "unsubscribed" | "gone" | null
  readonly createdAt: string
  readonly updatedAt: string
}

export class SubscriptionsRepo extends Effect.Service<SubscriptionsRepo>()("nudging/SubscriptionsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal("id, user_id, community_id, endpoint, p256dh, auth, enabled, disabled_reason, created_at, updated_at")

    const upsert = (s: {
      readonly id: string
      readonly userId: string
      readonly communityId: string
      readonly endpoint: string
      readonly p256dh: string
      readonly auth: string
    }, now: string) =>
      Effect.map(
        sql<SubscriptionRow>`INSERT INTO push_subscriptions (id, user_id, community_id, endpoint, p256dh, auth, enabled,
            created_at, updated_at)
          VALUES (${s.id}, ${s.userId}, ${s.communityId}, ${s.endpoint}, ${s.p256dh}, ${s.auth}, true, ${now}, ${now})
          ON CONFLICT (user_id, community_id, endpoint) DO UPDATE SET p256dh = excluded.p256dh, auth = excluded.auth,
            enabled = true, disabled_reason = NULL, updated_at = excluded.updated_at
          RETURNING ${columns}`,
        (rows) => rows[0]!
      )

    /** Disables the user's subscriptions in exactly that community (one endpoint, or all); how many. */
    const unsubscribe = (userId: string, communityId: string, endpoint: string | undefined, now: string) =>
      Effect.map(
        sql<{ id: string }>`UPDATE push_subscriptions SET enabled = false, disabled_reason = 'unsubscribed', updated_at = ${now}
          WHERE user_id = ${userId} AND community_id = ${communityId} AND enabled
            AND ${endpoint === undefined ? sql`true` : sql`endpoint = ${endpoint}`}
          RETURNING id`,
        (rows) => rows.length
      )

    /** Enabled subscriptions that receive a notification of (user, community). */
    const forRecipient = (userId: string, communityId: string) =>
      sql<SubscriptionRow>`SELECT ${columns} FROM push_subscriptions
        WHERE user_id = ${userId} AND enabled
          AND ${communityId === "" ? sql`true` : sql`community_id IN (${communityId}, '')`}
        ORDER BY created_at, id`

    /** The push service no longer knows it (404/410). */
    const markGone = (id: string, now: string) =>
      sql`UPDATE push_subscriptions SET enabled = false, disabled_reason = 'gone', updated_at = ${now} WHERE id = ${id}`.pipe(
        Effect.asVoid
      )

    return { upsert, unsubscribe, forRecipient, markGone }
  })
}) {}
