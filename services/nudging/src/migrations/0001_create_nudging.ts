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
    // The orchestrator's write (NotificationsRepo.admit), as a function: PL/pgSQL keeps the
    // statement's plan per connection, so each ingest does not plan seven CTEs again (on PGlite,
    // where planning runs in WebAssembly, that was most of an ingest's cost).
    sql`CREATE FUNCTION admit_notification(
      p_id text, p_rule_id text, p_event_type text, p_scenario text, p_user_id text, p_community_id text,
      p_family text, p_type text, p_severity text, p_kind text, p_url text, p_facts jsonb, p_texts jsonb,
      p_language text, p_language_primary text, p_default_language text, p_editable boolean, p_default_max integer,
      p_recipient_group boolean, p_emails jsonb, p_dedup_window text, p_window_bucket text, p_day text,
      p_created_at timestamptz
    ) RETURNS TABLE (out_status text, out_reason text, out_duplicate_of text, out_max_per_day integer,
      out_language text, out_deliveries json)
    LANGUAGE plpgsql AS $fn$
    BEGIN
      RETURN QUERY
      WITH p AS (
        SELECT pr.language, pr.max_per_day, pr.enabled, pr.disabled_kinds, pr.email_enabled, pr.email FROM preferences pr
        WHERE pr.user_id = p_user_id AND pr.community_id IN (p_community_id, '')
        ORDER BY pr.community_id = p_community_id DESC LIMIT 1
      ),
      lang AS (
        SELECT candidate.l AS language FROM (VALUES
          (1, p_language), (2, p_language_primary),
          (3, lower((SELECT p.language FROM p))), (4, split_part(lower((SELECT p.language FROM p)), '-', 1)),
          (5, p_default_language), (6, 'en')) AS candidate(o, l)
        WHERE candidate.l IS NOT NULL AND p_texts ? candidate.l
        ORDER BY candidate.o LIMIT 1
      ),
      gate AS (
        SELECT CASE
          WHEN NOT p_editable THEN NULL
          WHEN NOT COALESCE((SELECT p.enabled FROM p), true) THEN 'notifications_disabled'
          WHEN COALESCE((SELECT p.disabled_kinds FROM p), '[]'::jsonb) @> to_jsonb(p_kind) THEN 'kind_opted_out'
        END AS reason,
        COALESCE((SELECT p.max_per_day FROM p), p_default_max) AS max_per_day
      ),
      k AS (
        INSERT INTO dedup_keys (rule_id, user_id, community_id, window_bucket, notification_id)
        VALUES (p_rule_id, p_user_id, p_community_id, p_window_bucket, p_id)
        ON CONFLICT DO NOTHING
        RETURNING dedup_keys.notification_id
      ),
      c AS (
        INSERT INTO daily_counts AS dc (user_id, community_id, day, delivered)
        SELECT p_user_id, p_community_id, p_day, 1 FROM k, gate WHERE gate.reason IS NULL
        ON CONFLICT (user_id, community_id, day) DO UPDATE SET delivered = dc.delivered + 1
        WHERE NOT p_editable OR dc.delivered < (SELECT gate.max_per_day FROM gate)
        RETURNING dc.delivered
      ),
      n AS (
        INSERT INTO notifications AS nn (id, rule_id, event_type, scenario, user_id, community_id, family, type, severity,
          kind, language, title, body, url, facts, status, reason, dedup_window, window_bucket, created_at)
        SELECT p_id, p_rule_id, p_event_type, p_scenario, p_user_id, p_community_id, p_family, p_type, p_severity,
          p_kind, lang.language, p_texts -> lang.language ->> 'title', p_texts -> lang.language ->> 'body', p_url, p_facts,
          CASE WHEN EXISTS (SELECT 1 FROM c) THEN 'dispatched' ELSE 'suppressed' END,
          CASE WHEN EXISTS (SELECT 1 FROM c) THEN NULL ELSE COALESCE(gate.reason, 'daily_cap_reached') END,
          p_dedup_window, p_window_bucket, p_created_at
        FROM k, gate, lang
        RETURNING nn.status, nn.reason
      ),
      d AS (
        INSERT INTO deliveries AS dd (id, notification_id, channel, subscription_id, destination, status, attempts,
          next_attempt_at, created_at, updated_at)
        SELECT gen_random_uuid()::text, p_id, target.channel, target.subscription_id, target.destination,
          'pending', 0, p_created_at, p_created_at, p_created_at
        FROM c, (
          SELECT 'webpush' AS channel, s.id AS subscription_id, s.id AS destination
          FROM push_subscriptions s
          WHERE NOT p_recipient_group AND s.user_id = p_user_id AND s.enabled
            AND (p_community_id = '' OR s.community_id IN (p_community_id, ''))
          UNION ALL
          SELECT 'email', NULL, address.a FROM (
            SELECT DISTINCT ON (lower(x.a)) x.a FROM (
              SELECT jsonb_array_elements_text(p_emails) AS a
              UNION ALL
              SELECT p.email FROM p WHERE p.email_enabled AND p.email IS NOT NULL
            ) x ORDER BY lower(x.a)
          ) address
        ) target
        RETURNING dd.id, dd.channel
      ),
      dup AS (
        INSERT INTO notifications AS nd (id, rule_id, event_type, scenario, user_id, community_id, family, type, severity,
          kind, language, title, body, url, facts, status, reason, duplicate_of, dedup_window, window_bucket, created_at)
        SELECT p_id, p_rule_id, p_event_type, p_scenario, p_user_id, p_community_id, p_family, p_type, p_severity,
          p_kind, lang.language, p_texts -> lang.language ->> 'title', p_texts -> lang.language ->> 'body', p_url, p_facts,
          'deduplicated', 'already notified in window ' || p_window_bucket, key.notification_id, p_dedup_window,
          p_window_bucket, p_created_at
        FROM dedup_keys key, lang
        WHERE NOT EXISTS (SELECT 1 FROM k) AND key.rule_id = p_rule_id AND key.user_id = p_user_id
          AND key.community_id = p_community_id AND key.window_bucket = p_window_bucket
        RETURNING nd.duplicate_of
      )
      SELECT (SELECT n.status FROM n), (SELECT n.reason FROM n), (SELECT dup.duplicate_of FROM dup),
        (SELECT gate.max_per_day FROM gate), (SELECT lang.language FROM lang),
        COALESCE((SELECT json_agg(json_build_object('id', d.id, 'channel', d.channel) ORDER BY d.channel, d.id) FROM d), '[]'::json);
    END
    $fn$`,
    sql`CREATE TABLE settings (
      key text PRIMARY KEY,
      value jsonb NOT NULL,
      created_at timestamptz NOT NULL
    )`
  ], { discard: true }))
