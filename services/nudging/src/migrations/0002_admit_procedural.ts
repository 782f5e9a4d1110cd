/**
 * `admit_notification` (migration 0001) rewritten as procedural PL/pgSQL with the same signature,
 * results and guarantees: each step is a small statement of its own (its plan kept per
 * connection), and only the steps an ingest needs run. The single statement of seven CTEs it
 * replaces had its whole plan started on every call (five `INSERT`s, the duplicate's and the
 * e-mail branch's included, their indexes opened, a dozen init plans): on PostgreSQL 15 that
 * start-up was about a fifth of the backend's CPU per ingest (`perf` of a backend calling it:
 * `ExecutorStart` 18%, `ExecInitModifyTable` 10%). See docs/performance.md (nudging, third session).
 *
 * The same steps, in the same order:
 *
 * 1. the recipient's preferences (community row, else the user's row without a community);
 * 2. the language among the rendered templates; none: nothing is written (the caller's second
 *    attempt finds nothing either and fails, as before);
 * 3. the gate (notifications off, kind opted out; kinds users cannot turn off pass);
 * 4. the deduplication key, unless the window is `always` (its bucket is the notification's own
 *    id, so the key could never conflict: it is not stored). A key already there: the record is
 *    written as `deduplicated` with the notification it duplicates (read by a statement of its
 *    own, so a duplicate committed while this one waited on the key is seen);
 * 5. the day's count, incremented only below the cap, under the row's lock (`ON CONFLICT DO
 *    UPDATE ... WHERE`), so concurrent ingests and instances never exceed it;
 * 6. the record, `dispatched` or `suppressed` with its reason;
 * 7. for a dispatched one, a delivery per e-mail address (the event's and the opted-in
 *    preference's, one per address whatever its case), only when there are any, and per enabled
 *    push subscription.
 *
 * One call is one statement of the caller's, so one transaction: nothing is half-written.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql`CREATE OR REPLACE FUNCTION admit_notification(
    p_id text, p_rule_id text, p_event_type text, p_scenario text, p_user_id text, p_community_id text,
    p_family text, p_type text, p_severity text, p_kind text, p_url text, p_facts jsonb, p_texts jsonb,
    p_language text, p_language_primary text, p_default_language text, p_editable boolean, p_default_max integer,
    p_recipient_group boolean, p_emails jsonb, p_dedup_window text, p_window_bucket text, p_day text,
    p_created_at timestamptz
  ) RETURNS TABLE (out_status text, out_reason text, out_duplicate_of text, out_max_per_day integer,
    out_language text, out_deliveries json)
  LANGUAGE plpgsql AS $fn$
  DECLARE
    v_pref_language text;
    v_enabled boolean;
    v_disabled_kinds jsonb;
    v_max integer;
    v_email_enabled boolean;
    v_email text;
    v_lang text;
    v_reason text;
    v_key text;
    v_counted boolean := false;
    v_deliveries jsonb;
  BEGIN
    SELECT pr.language, pr.max_per_day, pr.enabled, pr.disabled_kinds, pr.email_enabled, pr.email
      INTO v_pref_language, v_max, v_enabled, v_disabled_kinds, v_email_enabled, v_email
      FROM preferences pr
      WHERE pr.user_id = p_user_id AND pr.community_id IN (p_community_id, '')
      ORDER BY pr.community_id = p_community_id DESC LIMIT 1;
    v_pref_language := lower(v_pref_language);
    v_lang := CASE
      WHEN p_language IS NOT NULL AND p_texts ? p_language THEN p_language
      WHEN p_language_primary IS NOT NULL AND p_texts ? p_language_primary THEN p_language_primary
      WHEN v_pref_language IS NOT NULL AND p_texts ? v_pref_language THEN v_pref_language
      WHEN v_pref_language IS NOT NULL AND p_texts ? split_part(v_pref_language, '-', 1)
        THEN split_part(v_pref_language, '-', 1)
      WHEN p_default_language IS NOT NULL AND p_texts ? p_default_language THEN p_default_language
      WHEN p_texts ? 'en' THEN 'en'
    END;
    v_max := COALESCE(v_max, p_default_max);
    IF v_lang IS NULL THEN
      RETURN QUERY SELECT NULL::text, NULL::text, NULL::text, v_max, NULL::text, '[]'::json;
      RETURN;
    END IF;
    v_reason := CASE
      WHEN NOT p_editable THEN NULL
      WHEN NOT COALESCE(v_enabled, true) THEN 'notifications_disabled'
      WHEN COALESCE(v_disabled_kinds, '[]'::jsonb) @> to_jsonb(p_kind) THEN 'kind_opted_out'
    END;

    IF p_dedup_window <> 'always' THEN
      INSERT INTO dedup_keys (rule_id, user_id, community_id, window_bucket, notification_id)
        VALUES (p_rule_id, p_user_id, p_community_id, p_window_bucket, p_id)
        ON CONFLICT DO NOTHING;
      IF NOT FOUND THEN
        SELECT key.notification_id INTO v_key FROM dedup_keys key
          WHERE key.rule_id = p_rule_id AND key.user_id = p_user_id AND key.community_id = p_community_id
            AND key.window_bucket = p_window_bucket;
        IF v_key IS NOT NULL THEN
          INSERT INTO notifications (id, rule_id, event_type, scenario, user_id, community_id, family, type, severity,
            kind, language, title, body, url, facts, status, reason, duplicate_of, dedup_window, window_bucket, created_at)
          VALUES (p_id, p_rule_id, p_event_type, p_scenario, p_user_id, p_community_id, p_family, p_type, p_severity,
            p_kind, v_lang, p_texts -> v_lang ->> 'title', p_texts -> v_lang ->> 'body', p_url, p_facts,
            'deduplicated', 'already notified in window ' || p_window_bucket, v_key, p_dedup_window, p_window_bucket,
            p_created_at);
        END IF;
        RETURN QUERY SELECT NULL::text, NULL::text, v_key, v_max, v_lang, '[]'::json;
        RETURN;
      END IF;
    END IF;

    IF v_reason IS NULL THEN
      INSERT INTO daily_counts AS dc (user_id, community_id, day, delivered)
        VALUES (p_user_id, p_community_id, p_day, 1)
        ON CONFLICT (user_id, community_id, day) DO UPDATE SET delivered = dc.delivered + 1
        WHERE NOT p_editable OR dc.delivered < v_max;
      v_counted := FOUND;
    END IF;

    INSERT INTO notifications (id, rule_id, event_type, scenario, user_id, community_id, family, type, severity,
      kind, language, title, body, url, facts, status, reason, dedup_window, window_bucket, created_at)
    VALUES (p_id, p_rule_id, p_event_type, p_scenario, p_user_id, p_community_id, p_family, p_type, p_severity,
      p_kind, v_lang, p_texts -> v_lang ->> 'title', p_texts -> v_lang ->> 'body', p_url, p_facts,
      CASE WHEN v_counted THEN 'dispatched' ELSE 'suppressed' END,
      CASE WHEN v_counted THEN NULL ELSE COALESCE(v_reason, 'daily_cap_reached') END,
      p_dedup_window, p_window_bucket, p_created_at);
    IF NOT v_counted THEN
      RETURN QUERY SELECT 'suppressed'::text, COALESCE(v_reason, 'daily_cap_reached'), NULL::text, v_max, v_lang,
        '[]'::json;
      RETURN;
    END IF;

    -- E-mail deliveries first, then push (each by id): the order the statement it replaces returned.
    IF jsonb_array_length(p_emails) > 0 OR (v_email_enabled AND v_email IS NOT NULL) THEN
      WITH d AS (
        INSERT INTO deliveries (id, notification_id, channel, subscription_id, destination, status, attempts,
          next_attempt_at, created_at, updated_at)
        SELECT gen_random_uuid()::text, p_id, 'email', NULL, address.a, 'pending', 0, p_created_at, p_created_at,
          p_created_at
        FROM (
          SELECT DISTINCT ON (lower(x.a)) x.a FROM (
            SELECT jsonb_array_elements_text(p_emails) AS a
            UNION ALL
            SELECT v_email WHERE v_email_enabled AND v_email IS NOT NULL
          ) x ORDER BY lower(x.a)
        ) address
        RETURNING id, channel
      )
      SELECT jsonb_agg(jsonb_build_object('id', d.id, 'channel', d.channel) ORDER BY d.id) INTO v_deliveries FROM d;
    END IF;
    IF NOT p_recipient_group THEN
      WITH d AS (
        INSERT INTO deliveries (id, notification_id, channel, subscription_id, destination, status, attempts,
          next_attempt_at, created_at, updated_at)
        SELECT gen_random_uuid()::text, p_id, 'webpush', s.id, s.id, 'pending', 0, p_created_at, p_created_at,
          p_created_at
        FROM push_subscriptions s
        WHERE s.user_id = p_user_id AND s.enabled AND (p_community_id = '' OR s.community_id IN (p_community_id, ''))
        RETURNING id, channel
      )
      SELECT COALESCE(v_deliveries, '[]'::jsonb)
          || COALESCE(jsonb_agg(jsonb_build_object('id', d.id, 'channel', d.channel) ORDER BY d.id), '[]'::jsonb)
        INTO v_deliveries FROM d;
    END IF;
    RETURN QUERY SELECT 'dispatched'::text, NULL::text, NULL::text, v_max, v_lang,
      COALESCE(v_deliveries, '[]'::jsonb)::json;
  END
  $fn$`.pipe(Effect.asVoid))
