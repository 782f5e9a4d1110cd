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

/** A new notification, as the orchestrator decided it. */
export interface NewNotification {
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
  readonly language: string
  readonly title: string
  readonly body: string
  readonly url: string
  readonly facts: unknown
  readonly status: "dispatched" | "suppressed"
  readonly reason: string | null
  readonly dedupWindow: string
  readonly windowBucket: string
  readonly createdAt: string
}

export interface NewDelivery {
  readonly id: string
  readonly notificationId: string
  readonly channel: Domain.Channel
  readonly subscriptionId: string | null
  readonly destination: string
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

/** Lock keys of recipients: one per (user, community), shared by every instance. */
const recipientLockClass = 0x6e6f7469 // "noti"

export class NotificationsRepo extends Effect.Service<NotificationsRepo>()("nudging/NotificationsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(notificationColumns)
    const deliveryCols = sql.literal(deliveryColumns)

    /**
     * Serialises the orchestration of one recipient until the transaction ends, across
     * connections and instances: the daily cap is read and the record written under it.
     */
    const lockRecipient = (userId: string, communityId: string) =>
      sql`SELECT pg_advisory_xact_lock(${recipientLockClass}, hashtext(${JSON.stringify([userId, communityId])}))`.pipe(
        Effect.asVoid
      )

    /** Notifications that reached the recipient (or were meant to) in [from, to). */
    const countDelivered = (userId: string, communityId: string, from: string, to: string) =>
      Effect.map(
        sql<{ n: number }>`SELECT count(*)::int AS n FROM notifications
          WHERE user_id = ${userId} AND community_id = ${communityId}
            AND status IN ('dispatched', 'failed') AND created_at >= ${from} AND created_at < ${to}`,
        (rows) => rows[0]?.n ?? 0
      )

    /** Inserts unless the window already has a notification of the rule; `false` then. */
    const insertUnlessDuplicate = (n: NewNotification): Effect.Effect<boolean, SqlError> =>
      Effect.map(
        sql`INSERT INTO notifications (id, rule_id, event_type, scenario, user_id, community_id, family, type,
            severity, kind, language, title, body, url, facts, status, reason, dedup_window, window_bucket, created_at)
          VALUES (${n.id}, ${n.ruleId}, ${n.eventType}, ${n.scenario}, ${n.userId}, ${n.communityId}, ${n.family},
            ${n.type}, ${n.severity}, ${n.kind}, ${n.language}, ${n.title}, ${n.body}, ${n.url},
            ${JSON.stringify(n.facts)}::jsonb, ${n.status}, ${n.reason}, ${n.dedupWindow}, ${n.windowBucket},
            ${n.createdAt})
          ON CONFLICT (rule_id, user_id, community_id, window_bucket) WHERE status <> 'deduplicated' DO NOTHING
          RETURNING id`,
        (rows) => rows.length === 1
      )

    /** Records a deduplicated attempt pointing at the window's notification; its id. */
    const insertDuplicate = (n: NewNotification) =>
      Effect.map(
        sql<{ duplicateOf: string }>`INSERT INTO notifications (id, rule_id, event_type, scenario, user_id, community_id,
            family, type, severity, kind, language, title, body, url, facts, status, reason, duplicate_of, dedup_window,
            window_bucket, created_at)
          SELECT ${n.id}, ${n.ruleId}, ${n.eventType}, ${n.scenario}, ${n.userId}, ${n.communityId}, ${n.family},
            ${n.type}, ${n.severity}, ${n.kind}, ${n.language}, ${n.title}, ${n.body}, ${n.url},
            ${JSON.stringify(n.facts)}::jsonb, 'deduplicated', ${`already notified in window ${n.windowBucket}`}, original.id,
            ${n.dedupWindow}, ${n.windowBucket}, ${n.createdAt}
          FROM notifications original
          WHERE original.rule_id = ${n.ruleId} AND original.user_id = ${n.userId}
            AND original.community_id = ${n.communityId} AND original.window_bucket = ${n.windowBucket}
            AND original.status <> 'deduplicated'
          RETURNING duplicate_of`,
        (rows) => rows[0]?.duplicateOf
      )

    const insertDeliveries = (deliveries: ReadonlyArray<NewDelivery>, now: string) =>
      deliveries.length === 0
        ? Effect.void
        : sql`INSERT INTO deliveries ${
          sql.insert(deliveries.map((d) => ({
            id: d.id,
            notificationId: d.notificationId,
            channel: d.channel,
            subscriptionId: d.subscriptionId,
            destination: d.destination,
            status: "pending",
            attempts: 0,
            nextAttemptAt: now,
            createdAt: now,
            updatedAt: now
          })))
        }`.pipe(Effect.asVoid)

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
      lockRecipient,
      countDelivered,
      insertUnlessDuplicate,
      insertDuplicate,
      insertDeliveries,
      list,
      find,
      ownerOf,
      markRead,
      softDelete,
      recordClick
    }
  })
}) {}
