/**
 * SQL of preferences: one row per (user, community); the row with the empty community applies
 * to every community without a row of its own.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export interface PreferencesRow {
  readonly userId: string
  readonly communityId: string
  readonly language: string | null
  readonly maxPerDay: number | null
  readonly enabled: boolean
  readonly disabledKinds: ReadonlyArray<string>
  readonly emailEnabled: boolean
  readonly email: string | null
  readonly updatedAt: string
}

export interface PreferencesWrite {
  readonly userId: string
  readonly communityId: string
  readonly language: string | null
  readonly maxPerDay: number | null
  readonly enabled: boolean
  readonly disabledKinds: ReadonlyArray<string>
  readonly emailEnabled: boolean
  readonly email: string | null
}

export class PreferencesRepo extends Effect.Service<PreferencesRepo>()("nudging/PreferencesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal("user_id, community_id, language, max_per_day, enabled, disabled_kinds, email_enabled, email, updated_at")

    /** The row of exactly (user, community). */
    const find = (userId: string, communityId: string) =>
      Effect.map(
        sql<PreferencesRow>`SELECT ${columns} FROM preferences WHERE user_id = ${userId} AND community_id = ${communityId}`,
        (rows) => rows[0]
      )

    /** The row that applies to (user, community): its own, else the user's row without a community. */
    const effective = (userId: string, communityId: string) =>
      Effect.map(
        sql<PreferencesRow>`SELECT ${columns} FROM preferences
          WHERE user_id = ${userId} AND community_id IN (${communityId}, '')
          ORDER BY community_id = ${communityId} DESC LIMIT 1`,
        (rows) => rows[0]
      )

    const upsert = (p: PreferencesWrite, now: string) =>
      Effect.map(
        sql<PreferencesRow>`INSERT INTO preferences (user_id, community_id, language, max_per_day, enabled, disabled_kinds,
            email_enabled, email, created_at, updated_at)
          VALUES (${p.userId}, ${p.communityId}, ${p.language}, ${p.maxPerDay}, ${p.enabled},
            ${JSON.stringify(p.disabledKinds)}::jsonb, ${p.emailEnabled}, ${p.email}, ${now}, ${now})
          ON CONFLICT (user_id, community_id) DO UPDATE SET language = excluded.language,
            max_per_day = excluded.max_per_day, enabled = excluded.enabled, disabled_kinds = excluded.disabled_kinds,
            email_enabled = excluded.email_enabled, email = excluded.email, updated_at = excluded.updated_at
          RETURNING ${columns}`,
        (rows) => rows[0]!
      )

    return { find, effective, upsert }
  })
}) {}
