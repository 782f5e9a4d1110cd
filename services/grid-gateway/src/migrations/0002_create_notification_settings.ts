import { SqlClient } from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * One row per user who saved settings: default recipients of their rules and the webhook with its
 * signing secret (the secret is needed in clear to sign, so it is stored as is; it never leaves the
 * service after the answer that created it).
 */
export default Effect.flatMap(SqlClient, (sql) =>
  sql`CREATE TABLE notification_settings (
    user_id text PRIMARY KEY CHECK (user_id <> ''),
    email_recipients text[] CHECK (email_recipients IS NULL OR cardinality(email_recipients) > 0),
    webhook_url text,
    webhook_secret text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((webhook_url IS NULL) = (webhook_secret IS NULL))
  )`)
