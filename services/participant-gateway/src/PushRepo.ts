/**
 * SQL of the browsers a user registered for web push through the gateway (the push status of
 * the settings). The endpoint URL is a capability: only its SHA-256 is kept, to recognise the
 * browser again; the nudging service holds the subscription itself.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"

export interface PushRow {
  readonly userId: string
  readonly endpointSha256: string
  readonly subscriptionId: string
  readonly endpointOrigin: string
  readonly createdAt: string
  readonly updatedAt: string
}

export interface PushCount {
  readonly subscriptions: number
  readonly lastSubscribedAt: string | null
}

export const endpointDigest = (endpoint: string): string => createHash("sha256").update(endpoint).digest("hex")

export class PushRepo extends Effect.Service<PushRepo>()("participant-gateway/PushRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const status = (userId: string) =>
      Effect.map(
        sql<{ readonly subscriptions: number; readonly lastSubscribedAt: string | null }>`
          SELECT count(*)::int AS subscriptions, max(updated_at) AS last_subscribed_at
          FROM push_subscriptions WHERE user_id = ${userId}`,
        (rows): PushCount => rows[0] ?? { subscriptions: 0, lastSubscribedAt: null }
      )

    const upsert = (row: Omit<PushRow, "createdAt" | "updatedAt">, now: string) =>
      sql`INSERT INTO push_subscriptions (user_id, endpoint_sha256, subscription_id, endpoint_origin, created_at, updated_at)
        VALUES (${row.userId}, ${row.endpointSha256}, ${row.subscriptionId}, ${row.endpointOrigin}, ${now}, ${now})
        ON CONFLICT (user_id, endpoint_sha256) DO UPDATE SET subscription_id = excluded.subscription_id,
          endpoint_origin = excluded.endpoint_origin, updated_at = excluded.updated_at`.pipe(Effect.asVoid)

    /** Removes one browser (by endpoint digest) or all of the user's; answers what was removed. */
    const remove = (userId: string, endpointSha256: string | undefined) =>
      endpointSha256 === undefined
        ? sql<PushRow>`DELETE FROM push_subscriptions WHERE user_id = ${userId} RETURNING *`
        : sql<PushRow>`DELETE FROM push_subscriptions WHERE user_id = ${userId} AND endpoint_sha256 = ${endpointSha256}
            RETURNING *`

    /** Puts back rows `remove` took (when the nudging service could not remove them). */
    const restore = (rows: ReadonlyArray<PushRow>) =>
      rows.length === 0 ? Effect.void : sql`INSERT INTO push_subscriptions ${
        sql.insert(rows.map((r) => ({
          userId: r.userId,
          endpointSha256: r.endpointSha256,
          subscriptionId: r.subscriptionId,
          endpointOrigin: r.endpointOrigin,
          createdAt: r.createdAt,
          updatedAt: r.updatedAt
        })))
      } ON CONFLICT (user_id, endpoint_sha256) DO NOTHING`.pipe(Effect.asVoid)

    return { status, upsert, remove, restore }
  })
}) {}
