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
     * The orchestrator's write, one statement calling `admit_notification` (migrations 0001, 0002; one
     * transaction, atomic; see Orchestrator.ts):
     * preferences, the language, the gates, the deduplication key, the daily count, the record and
     * its deliveries. `undefined` when a concurrent duplicate committed after this statement's
     * snapshot was taken (the caller runs it again, and then sees the duplicate).
     */
    const admit = (a: AdmitStatement): Effect.Effect<AdmitResult | undefined, SqlError> =>
      Effect.map(
        sql<AdmitRow>`SELECT out_status AS status, out_reason AS reason, out_duplicate_of AS duplicate_of,
            out_max_per_day AS max_per_day, out_language AS language, out_deliveries AS deliveries
          FROM admit_notification(${a.id}, ${a.ruleId}, ${a.eventType}, ${a.scenario}, ${a.userId}, ${a.communityId},
            ${a.family}, ${a.type}, ${a.severity}, ${a.kind}, ${a.url}, ${a.facts}::jsonb, ${a.texts}::jsonb,
            ${a.languages[0] ?? null}::text, ${a.languages[1] ?? null}::text, ${a.defaultLanguage}, ${a.editable},
            ${a.defaultMaxPerDay}::int, ${a.recipientGroup}, ${a.emails}::jsonb, ${a.dedupWindow}, ${a.windowBucket},
            ${a.day}, ${a.createdAt}::timestamptz)`,
        (rows): AdmitResult | undefined => {
          const row = rows[0]!
          if (row.status !== null) {
            return row.status === "dispatched"
              ? { _tag: "Dispatched", deliveries: row.deliveries, language: row.language }
              : { _tag: "Suppressed", reason: row.reason as SuppressionReason, maxPerDay: row.maxPerDay }
          }
          return row.duplicateOf === null ? undefined : { _tag: "Deduplicated", duplicateOf: row.duplicateOf }
        }
      ).pipe(Effect.withSpan("NotificationsRepo.admit", { captureStackTrace: false }))

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
