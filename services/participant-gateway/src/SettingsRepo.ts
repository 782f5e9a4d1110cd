/**
 * SQL of the settings a user saved in the app: one row per user. Writes are conditional on the
 * revision the caller read (`update`) or on there being no row yet (`insert`), so of two
 * concurrent saves exactly one wins, on any number of gateway instances.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

export interface SettingsValues {
  readonly notificationsEnabled: boolean
  readonly preferredLanguage: string
  readonly maxPerDay: number
}

export interface SettingsRow extends SettingsValues {
  readonly revision: number
  readonly updatedAt: string
}

export class SettingsRepo extends Effect.Service<SettingsRepo>()("participant-gateway/SettingsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal("notifications_enabled, preferred_language, max_per_day, revision, updated_at")

    const find = (userId: string) =>
      Effect.map(
        sql<SettingsRow>`SELECT ${columns} FROM settings WHERE user_id = ${userId}`,
        (rows) => Option.fromNullable(rows[0])
      )

    /** The first save of `userId`; `None` when another save created the row first. */
    const insert = (userId: string, v: SettingsValues, now: string) =>
      Effect.map(
        sql<SettingsRow>`INSERT INTO settings (user_id, notifications_enabled, preferred_language, max_per_day, revision,
            created_at, updated_at)
          VALUES (${userId}, ${v.notificationsEnabled}, ${v.preferredLanguage}, ${v.maxPerDay}, 1, ${now}, ${now})
          ON CONFLICT (user_id) DO NOTHING
          RETURNING ${columns}`,
        (rows) => Option.fromNullable(rows[0])
      )

    /** A later save, if the row is still at `revision`; `None` when another save came first. */
    const update = (userId: string, v: SettingsValues, revision: number, now: string) =>
      Effect.map(
        sql<SettingsRow>`UPDATE settings SET notifications_enabled = ${v.notificationsEnabled},
            preferred_language = ${v.preferredLanguage}, max_per_day = ${v.maxPerDay}, revision = revision + 1,
            updated_at = ${now}
          WHERE user_id = ${userId} AND revision = ${revision}
          RETURNING ${columns}`,
        (rows) => Option.fromNullable(rows[0])
      )

    return { find, insert, update }
  })
}) {}
