/**
 * SQL of notification records and their deliveries: what the orchestrator writes in its
 * transaction, and what recipients read, mark read and delete.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type * as Domain from "./Domain.js"

export interface NotificationRow {
  readonly id: string
  readonly ruleId: string
  readonly eventType: string
  readonly scenario: string
  readonly userId: string
  readonly communityId: string
  readonly family: string
  readonly type: Domain.RuleType
  readonly severity: Domain.Severity
  readonly kind: string
  readonly language: string
  readonly title: string
  readonly body: string
  readonly url: string
  readonly status: Domain.NotificationStatus
  readonly reason: string | null
  readonly duplicateOf: string | null
  readonly dedupWindow: Domain.DedupWindow
  readonly windowBucket: string
  readonly createdAt: string
  readonly readAt: string | null
  readonly clickedAt: string | null
  readonly clickAction: string | null
}

export interface DeliveryRow {
  readonly id: string
  readonly notificationId: string
  readonly channel: Domain.Channel
  readonly destination: string
  readonly status: Domain.DeliveryStatus
  readonly attempts: number
  readonly error: string | null
  readonly nextAttemptAt: string | null
  readonly dispatchedAt: string | null
}

export type SuppressionReason = "notifications_disabled" | "kind_opted_out" | "daily_cap_reached"

/** What the orchestrator hands to `admit`: the record as far as JavaScript knows it. */
export interface AdmitStatement {
  readonly id: string
  readonly ruleId: string
  readonly eventType: string
  readonly scenario: string
  readonly userId: string
  readonly communityId: string
  readonly family: string
  readonly type: string
  readonly severity: string
  readonly kind: string
  readonly url: string
  /** JSON of the checked facts. */
  readonly facts: string
  /** JSON `{language: {title, body}}`: the rule's templates rendered in each of their languages. */
  readonly texts: string
  /** The event's language (`facts.lang`) and its primary subtag, lower-case, when given. */
  readonly languages: ReadonlyArray<string>
  readonly defaultLanguage: string
  /** A kind users cannot turn off: no gate, no cap (it still counts). */
  readonly editable: boolean
  readonly defaultMaxPerDay: number
  readonly recipientGroup: boolean
  /** JSON list of the event's e-mail addresses. */
  readonly emails: string
  readonly dedupWindow: string
  readonly windowBucket: string
  /** The recipient's local day (the cap's). */
  readonly day: string
  readonly createdAt: string
}

export type AdmitResult =
  | {
    readonly _tag: "Dispatched"
    readonly deliveries: ReadonlyArray<{ readonly id: string; readonly channel: Domain.Channel }>
    readonly language: string
  }
  | { readonly _tag: "Suppressed"; readonly reason: SuppressionReason; readonly maxPerDay: number }
  | { readonly _tag: "Deduplicated"; readonly duplicateOf: string }

interface AdmitRow {
  readonly status: "dispatched" | "suppressed" | null
  readonly reason: string | null
  readonly duplicateOf: string | null
  readonly maxPerDay: number
  readonly language: string
  readonly deliveries: ReadonlyArray<{ readonly id: string; readonly channel: Domain.Channel }>
}

export const toNotification = (row: NotificationRow, deliveries: ReadonlyArray<DeliveryRow>): Domain.Notification => ({
  id: row.id,
  rule_id: row.ruleId,
  event_type: row.eventType,
  scenario: row.scenario,
  user_id: row.userId,
  community_id: row.communityId === "" ? null : row.communityId,
  family: row.family,
  type: row.type,
  severity: row.severity,
  kind: row.kind,
  language: row.language,
  title: row.title,
  body: row.body,
  url: row.url,
  status: row.status,
  reason: row.reason,
  duplicate_of: row.duplicateOf,
  dedup_window: row.dedupWindow,
  window_bucket: row.windowBucket,
  deliveries: deliveries.map((d) => ({
    id: d.id,
    channel: d.channel,
    destination: d.destination,
    status: d.status,
    attempts: d.attempts,
    error: d.error,
    next_attempt_at: d.status === "pending" ? d.nextAttemptAt : null,
    dispatched_at: d.dispatchedAt
  })),
  created_at: row.createdAt,
  read_at: row.readAt,
  clicked_at: row.clickedAt,
  click_action: row.clickAction
})

const notificationColumns = `id, rule_id, event_type, scenario, user_id, community_id, family, type, severity, kind,
  language, title, body, url, status, reason, duplicate_of, dedup_window, window_bucket, created_at, read_at,
  clicked_at, click_action`

const deliveryColumns = "id, notification_id, channel, destination, status, attempts, error, next_attempt_at, dispatched_at"

export class NotificationsRepo extends Effect.Service<NotificationsRepo>()("nudging/NotificationsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(notificationColumns)
    const deliveryCols = sql.literal(deliveryColumns)

    /**
     * The orchestrator's write, one statement (so one transaction, atomic; see Orchestrator.ts):
     * preferences, the language, the gates, the deduplication key, the daily count, the record and
     * its deliveries. `undefined` when a concurrent duplicate committed after this statement's
     * snapshot was taken (the caller runs it again, and then sees the duplicate).
     */
    const admit = (a: AdmitStatement): Effect.Effect<AdmitResult | undefined, SqlError> =>
      Effect.map(
        sql<AdmitRow>`WITH p AS (
            SELECT language, max_per_day, enabled, disabled_kinds, email_enabled, email FROM preferences
            WHERE user_id = ${a.userId} AND community_id IN (${a.communityId}, '')
            ORDER BY community_id = ${a.communityId} DESC LIMIT 1
          ),
          lang AS (
            SELECT candidate.l AS language FROM (VALUES
              (1, ${a.languages[0] ?? null}::text), (2, ${a.languages[1] ?? null}::text),
              (3, lower((SELECT language FROM p))), (4, split_part(lower((SELECT language FROM p)), '-', 1)),
              (5, ${a.defaultLanguage}::text), (6, 'en')) AS candidate(o, l)
            WHERE candidate.l IS NOT NULL AND ${a.texts}::jsonb ? candidate.l
            ORDER BY candidate.o LIMIT 1
          ),
          gate AS (
            SELECT CASE
              WHEN NOT ${a.editable}::boolean THEN NULL
              WHEN NOT COALESCE((SELECT enabled FROM p), true) THEN 'notifications_disabled'
              WHEN COALESCE((SELECT disabled_kinds FROM p), '[]'::jsonb) @> to_jsonb(${a.kind}::text) THEN 'kind_opted_out'
            END AS reason,
            COALESCE((SELECT max_per_day FROM p), ${a.defaultMaxPerDay}::int) AS max_per_day
          ),
          k AS (
            INSERT INTO dedup_keys (rule_id, user_id, community_id, window_bucket, notification_id)
            VALUES (${a.ruleId}, ${a.userId}, ${a.communityId}, ${a.windowBucket}, ${a.id})
            ON CONFLICT DO NOTHING
            RETURNING notification_id
          ),
          c AS (
            INSERT INTO daily_counts (user_id, community_id, day, delivered)
            SELECT ${a.userId}, ${a.communityId}, ${a.day}, 1 FROM k, gate WHERE gate.reason IS NULL
            ON CONFLICT (user_id, community_id, day) DO UPDATE SET delivered = daily_counts.delivered + 1
            WHERE NOT ${a.editable}::boolean OR daily_counts.delivered < (SELECT max_per_day FROM gate)
            RETURNING delivered
          ),
          n AS (
            INSERT INTO notifications (id, rule_id, event_type, scenario, user_id, community_id, family, type, severity,
              kind, language, title, body, url, facts, status, reason, dedup_window, window_bucket, created_at)
            SELECT ${a.id}, ${a.ruleId}, ${a.eventType}, ${a.scenario}, ${a.userId}, ${a.communityId}, ${a.family},
              ${a.type}, ${a.severity}, ${a.kind}, lang.language, ${a.texts}::jsonb -> lang.language ->> 'title',
              ${a.texts}::jsonb -> lang.language ->> 'body', ${a.url}, ${a.facts}::jsonb,
              CASE WHEN EXISTS (SELECT 1 FROM c) THEN 'dispatched' ELSE 'suppressed' END,
              CASE WHEN EXISTS (SELECT 1 FROM c) THEN NULL ELSE COALESCE(gate.reason, 'daily_cap_reached') END,
              ${a.dedupWindow}, ${a.windowBucket}, ${a.createdAt}
            FROM k, gate, lang
            RETURNING status, reason
          ),
          d AS (
            INSERT INTO deliveries (id, notification_id, channel, subscription_id, destination, status, attempts,
              next_attempt_at, created_at, updated_at)
            SELECT gen_random_uuid()::text, ${a.id}, target.channel, target.subscription_id, target.destination,
              'pending', 0, ${a.createdAt}, ${a.createdAt}, ${a.createdAt}
            FROM c, (
              SELECT 'webpush' AS channel, s.id AS subscription_id, s.id AS destination
              FROM push_subscriptions s
              WHERE NOT ${a.recipientGroup}::boolean AND s.user_id = ${a.userId} AND s.enabled
                AND (${a.communityId} = '' OR s.community_id IN (${a.communityId}, ''))
              UNION ALL
              SELECT 'email', NULL, address.a FROM (
                SELECT DISTINCT ON (lower(x.a)) x.a FROM (
                  SELECT jsonb_array_elements_text(${a.emails}::jsonb) AS a
                  UNION ALL
                  SELECT email FROM p WHERE email_enabled AND email IS NOT NULL
                ) x ORDER BY lower(x.a)
              ) address
            ) target
            RETURNING id, channel
          ),
          dup AS (
            INSERT INTO notifications (id, rule_id, event_type, scenario, user_id, community_id, family, type, severity,
              kind, language, title, body, url, facts, status, reason, duplicate_of, dedup_window, window_bucket, created_at)
            SELECT ${a.id}, ${a.ruleId}, ${a.eventType}, ${a.scenario}, ${a.userId}, ${a.communityId}, ${a.family},
              ${a.type}, ${a.severity}, ${a.kind}, lang.language, ${a.texts}::jsonb -> lang.language ->> 'title',
              ${a.texts}::jsonb -> lang.language ->> 'body', ${a.url}, ${a.facts}::jsonb, 'deduplicated',
              ${`already notified in window ${a.windowBucket}`}, key.notification_id, ${a.dedupWindow}, ${a.windowBucket},
              ${a.createdAt}
            FROM dedup_keys key, lang
            WHERE NOT EXISTS (SELECT 1 FROM k) AND key.rule_id = ${a.ruleId} AND key.user_id = ${a.userId}
              AND key.community_id = ${a.communityId} AND key.window_bucket = ${a.windowBucket}
            RETURNING duplicate_of
          )
          SELECT (SELECT status FROM n) AS status, (SELECT reason FROM n) AS reason,
            (SELECT duplicate_of FROM dup) AS duplicate_of, (SELECT max_per_day FROM gate) AS max_per_day,
            (SELECT language FROM lang) AS language,
            COALESCE((SELECT json_agg(json_build_object('id', id, 'channel', channel) ORDER BY channel, id) FROM d), '[]'::json)
              AS deliveries`,
        (rows): AdmitResult | undefined => {
          const row = rows[0]!
          if (row.status !== null) {
            return row.status === "dispatched"
              ? { _tag: "Dispatched", deliveries: row.deliveries, language: row.language }
              : { _tag: "Suppressed", reason: row.reason as SuppressionReason, maxPerDay: row.maxPerDay }
          }
          return row.duplicateOf === null ? undefined : { _tag: "Deduplicated", duplicateOf: row.duplicateOf }
        }
      ).pipe(Effect.withSpan("NotificationsRepo.admit"))

    const deliveriesOf = (ids: ReadonlyArray<string>) =>
      ids.length === 0
        ? Effect.succeed(new Map<string, Array<DeliveryRow>>())
        : Effect.map(
          sql<DeliveryRow>`SELECT ${deliveryCols} FROM deliveries WHERE ${sql.in("notification_id", ids)}
            ORDER BY created_at, id`,
          (rows) => {
            const out = new Map<string, Array<DeliveryRow>>()
            for (const row of rows) {
              const list = out.get(row.notificationId) ?? []
              list.push(row)
              out.set(row.notificationId, list)
            }
            return out
          }
        )

    const withDeliveries = (rows: ReadonlyArray<NotificationRow>) =>
      Effect.map(deliveriesOf(rows.map((r) => r.id)), (deliveries) =>
        rows.map((row) => toNotification(row, deliveries.get(row.id) ?? [])))

    const list = (query: {
      readonly userId: string
      readonly communityId: string
      readonly limit: number
      readonly offset: number
      readonly unread: boolean
      readonly status: Domain.NotificationStatus | "all" | undefined
    }) =>
      Effect.gen(function*() {
        const statusFilter = query.status === undefined
          ? sql`status <> 'deduplicated'`
          : query.status === "all"
          ? sql`true`
          : sql`status = ${query.status}`
        const where = sql`user_id = ${query.userId} AND community_id = ${query.communityId} AND deleted_at IS NULL
          AND ${statusFilter} AND ${query.unread ? sql`read_at IS NULL` : sql`true`}`
        const rows = yield* sql<NotificationRow>`SELECT ${columns} FROM notifications WHERE ${where}
          ORDER BY created_at DESC, id DESC LIMIT ${query.limit} OFFSET ${query.offset}`
        const total = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM notifications WHERE ${where}`
        return { items: yield* withDeliveries(rows), total: total[0]?.n ?? 0 }
      }).pipe(Effect.withSpan("NotificationsRepo.list"))

    /** A notification that is not deleted, with its deliveries. */
    const find = (id: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<NotificationRow>`SELECT ${columns} FROM notifications WHERE id = ${id} AND deleted_at IS NULL`
        if (rows.length === 0) return undefined
        return (yield* withDeliveries(rows))[0]
      })

    /** The owner of a notification that is not deleted. */
    const ownerOf = (id: string) =>
      Effect.map(
        sql<{ userId: string }>`SELECT user_id FROM notifications WHERE id = ${id} AND deleted_at IS NULL`,
        (rows) => rows[0]?.userId
      )

    const markRead = (id: string, at: string) =>
      sql`UPDATE notifications SET read_at = COALESCE(read_at, ${at}) WHERE id = ${id} AND deleted_at IS NULL`.pipe(
        Effect.asVoid
      )

    const softDelete = (id: string, at: string) =>
      sql`UPDATE notifications SET deleted_at = COALESCE(deleted_at, ${at}) WHERE id = ${id}`.pipe(Effect.asVoid)

    /** Records the first click; `false` when there is no such notification. */
    const recordClick = (id: string, action: string, at: string) =>
      Effect.map(
        sql<{ url: string }>`UPDATE notifications
          SET clicked_at = COALESCE(clicked_at, ${at}), click_action = COALESCE(click_action, ${action}),
              read_at = COALESCE(read_at, ${at})
          WHERE id = ${id} RETURNING url`,
        (rows) => rows[0]?.url
      )

    return {
      admit,
      list,
      find,
      ownerOf,
      markRead,
      softDelete,
      recordClick
    }
  })
}) {}
