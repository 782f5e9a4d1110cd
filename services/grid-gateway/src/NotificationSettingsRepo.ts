/**
 * SQL of the notification settings (`notification_settings`, migration 0002), one row per user
 * who saved any. Changes run in one transaction holding the user's row, so two concurrent
 * updates cannot interleave (and a webhook secret answered to one caller is the one stored).
 */
import { SqlClient } from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

export const SettingsRow = Schema.Struct({
  userId: Schema.String,
  emailRecipients: Schema.NullOr(Schema.Array(Schema.String)),
  webhookUrl: Schema.NullOr(Schema.String),
  webhookSecret: Schema.NullOr(Schema.String),
  updatedAt: Schema.String
})
export type SettingsRow = typeof SettingsRow.Type

export interface SettingsValues {
  readonly emailRecipients: ReadonlyArray<string> | null
  readonly webhookUrl: string | null
  readonly webhookSecret: string | null
}

export class NotificationSettingsRepo extends Effect.Service<NotificationSettingsRepo>()(
  "@rec/grid-gateway/NotificationSettingsRepo",
  {
    effect: Effect.gen(function*() {
      const sql = yield* SqlClient

      const find = SqlSchema.findOne({
        Request: Schema.String,
        Result: SettingsRow,
        execute: (userId) => sql`SELECT * FROM notification_settings WHERE user_id = ${userId}`
      })

      const lockedRow = SqlSchema.findOne({
        Request: Schema.String,
        Result: SettingsRow,
        execute: (userId) => sql`SELECT * FROM notification_settings WHERE user_id = ${userId} FOR UPDATE`
      })

      const write = SqlSchema.single({
        Request: Schema.Struct({
          userId: Schema.String,
          emailRecipients: Schema.NullOr(Schema.Array(Schema.String)),
          webhookUrl: Schema.NullOr(Schema.String),
          webhookSecret: Schema.NullOr(Schema.String)
        }),
        Result: SettingsRow,
        execute: (row) =>
          sql`INSERT INTO notification_settings ${sql.insert(row)}
              ON CONFLICT (user_id) DO UPDATE SET email_recipients = EXCLUDED.email_recipients,
                webhook_url = EXCLUDED.webhook_url, webhook_secret = EXCLUDED.webhook_secret, updated_at = now()
              RETURNING *`
      })

      /**
       * Reads the user's row under a lock (created empty first if missing), lets `change`
       * compute the new values from it (or fail, which rolls everything back) and writes them, in
       * one transaction. `change` must not wait on anything outside the database (a PGlite
       * session is held meanwhile).
       */
      const modify = <A, E>(
        userId: string,
        change: (
          current: Option.Option<SettingsRow>
        ) => Effect.Effect<{ readonly values: SettingsValues; readonly result: A }, E>
      ) =>
        Effect.gen(function*() {
          yield* sql`INSERT INTO notification_settings (user_id) VALUES (${userId}) ON CONFLICT (user_id) DO NOTHING`
          const current = yield* lockedRow(userId)
          const { result, values } = yield* change(current)
          const row = yield* write({ userId, ...values })
          return { row, result }
        }).pipe(sql.withTransaction, Effect.withSpan("NotificationSettingsRepo.modify"))

      return {
        find: (userId: string) => find(userId).pipe(Effect.withSpan("NotificationSettingsRepo.find")),
        modify
      } as const
    })
  }
) {}
