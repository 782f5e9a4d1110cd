/**
 * The gateway's own data: acceptances of the terms of use (one row per user and version, the
 * first acceptance kept), the settings the user saved in the app (mirrored in the nudging
 * service's preferences, `revision` guarding concurrent saves) and the browsers the user
 * registered for web push (the endpoint itself, a capability URL, stays with the nudging
 * service: only its SHA-256 and origin are kept here).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.all([
    sql`CREATE TABLE terms_acceptances (
      user_id text NOT NULL,
      terms_version text NOT NULL,
      accepted_at timestamptz NOT NULL,
      PRIMARY KEY (user_id, terms_version)
    )`,
    sql`CREATE TABLE settings (
      user_id text PRIMARY KEY,
      notifications_enabled boolean NOT NULL,
      preferred_language text NOT NULL,
      max_per_day integer NOT NULL CHECK (max_per_day BETWEEN 1 AND 100),
      revision integer NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    sql`CREATE TABLE push_subscriptions (
      user_id text NOT NULL,
      endpoint_sha256 text NOT NULL,
      subscription_id text NOT NULL,
      endpoint_origin text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (user_id, endpoint_sha256)
    )`
  ], { discard: true }))
