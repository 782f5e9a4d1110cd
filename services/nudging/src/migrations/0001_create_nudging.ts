/**
 * The nudging schema: rules and kinds (from the seed), preferences, notifications (the records
 * recipients see, deduplicated ones included), their deduplication keys and the daily counts of
 * the cap, deliveries (the outbox of web push and e-mail, with retries), push subscriptions,
 * scheduled events, settings (generated VAPID keys and click-tracking secret).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.all([
    sql`CREATE TABLE kinds (
      kind text PRIMARY KEY,
      editable boolean NOT NULL,
      definition jsonb NOT NULL,
      digest text NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    sql`CREATE TABLE rules (
      id text PRIMARY KEY,
      enabled boolean NOT NULL,
      definition jsonb NOT NULL,
      digest text NOT NULL,
      source text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    sql`CREATE TABLE preferences (
      user_id text NOT NULL,
      community_id text NOT NULL,
      language text,
      max_per_day integer CHECK (max_per_day BETWEEN 1 AND 100),
      enabled boolean NOT NULL DEFAULT true,
      disabled_kinds jsonb NOT NULL DEFAULT '[]',
      email_enabled boolean NOT NULL DEFAULT false,
      email text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (user_id, community_id)
    )`,
    sql`CREATE TABLE notifications (
      id text PRIMARY KEY,
      rule_id text NOT NULL,
      event_type text NOT NULL,
      scenario text NOT NULL,
      user_id text NOT NULL,
      community_id text NOT NULL,
      family text NOT NULL,
      type text NOT NULL,
      severity text NOT NULL,
      kind text NOT NULL,
      language text NOT NULL,
      title text NOT NULL,
      body text NOT NULL,
      url text NOT NULL,
      facts jsonb NOT NULL,
      status text NOT NULL CHECK (status IN ('dispatched', 'suppressed', 'deduplicated', 'failed')),
      reason text,
      duplicate_of text REFERENCES notifications (id),
      dedup_window text NOT NULL,
      window_bucket text NOT NULL,
      created_at timestamptz NOT NULL,
      read_at timestamptz,
      clicked_at timestamptz,
      click_action text,
      deleted_at timestamptz
    )`,
    // The deduplication: one notification per rule, recipient, community and window bucket.
    sql`CREATE TABLE dedup_keys (
      rule_id text NOT NULL,
      user_id text NOT NULL,
      community_id text NOT NULL,
      window_bucket text NOT NULL,
      notification_id text NOT NULL,
      PRIMARY KEY (rule_id, user_id, community_id, window_bucket)
    )`,
    // The daily cap: notifications that went out per recipient and local day, incremented under
    // the row's lock only while below the recipient's max_per_day.
    sql`CREATE TABLE daily_counts (
      user_id text NOT NULL,
      community_id text NOT NULL,
      day text NOT NULL,
      delivered integer NOT NULL,
      PRIMARY KEY (user_id, community_id, day)
    )`,
    sql`CREATE INDEX daily_counts_day ON daily_counts (day)`,
    sql`CREATE INDEX notifications_recipient ON notifications (user_id, community_id, created_at DESC)`,
    sql`CREATE TABLE push_subscriptions (
      id text PRIMARY KEY,
      user_id text NOT NULL,
      community_id text NOT NULL,
      endpoint text NOT NULL,
      p256dh text NOT NULL,
      auth text NOT NULL,
      enabled boolean NOT NULL,
      disabled_reason text CHECK (disabled_reason IN ('unsubscribed', 'gone')),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      UNIQUE (user_id, community_id, endpoint)
    )`,
    sql`CREATE TABLE deliveries (
      id text PRIMARY KEY,
      notification_id text NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
      channel text NOT NULL CHECK (channel IN ('webpush', 'email')),
      subscription_id text REFERENCES push_subscriptions (id) ON DELETE SET NULL,
      destination text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'sending', 'dispatched', 'failed', 'gone')),
      attempts integer NOT NULL DEFAULT 0,
      error text,
      next_attempt_at timestamptz,
      lease_until timestamptz,
      dispatched_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    sql`CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status IN ('pending', 'sending')`,
    sql`CREATE INDEX deliveries_notification ON deliveries (notification_id)`,
    sql`CREATE TABLE scheduled_events (
      id text PRIMARY KEY,
      external_key text UNIQUE,
      event_type text NOT NULL,
      user_id text,
      community_id text,
      trigger_at timestamptz NOT NULL,
      facts jsonb NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'dispatched', 'failed', 'cancelled')),
      http_status integer,
      outcomes jsonb NOT NULL DEFAULT '[]',
      last_error text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      dispatched_at timestamptz
    )`,
    sql`CREATE INDEX scheduled_events_due ON scheduled_events (trigger_at) WHERE status = 'pending'`,
    sql`CREATE TABLE settings (
      key text PRIMARY KEY,
      value jsonb NOT NULL,
      created_at timestamptz NOT NULL
    )`
  ], { discard: true }))
