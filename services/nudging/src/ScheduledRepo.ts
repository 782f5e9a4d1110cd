/**
 * SQL of scheduled events: upsert by `external_key`, cancel, and the due events claimed one at a
 * time with `FOR UPDATE SKIP LOCKED` (so several instances never ingest the same event).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import type * as Domain from "./Domain.js"

interface Row {
  readonly id: string
  readonly externalKey: string | null
  readonly eventType: string
  readonly userId: string | null
  readonly communityId: string | null
  readonly triggerAt: string
  readonly facts: Record<string, unknown>
  readonly status: "pending" | "dispatched" | "failed" | "cancelled"
  readonly httpStatus: number | null
  readonly outcomes: ReadonlyArray<Domain.RuleOutcome>
  readonly lastError: string | null
  readonly createdAt: string
  readonly updatedAt: string
  readonly dispatchedAt: string | null
}

const toEvent = (row: Row): Domain.ScheduledEvent => ({
  id: row.id,
  external_key: row.externalKey,
  event_type: row.eventType,
  user_id: row.userId,
  community_id: row.communityId,
  trigger_at: row.triggerAt,
  facts: row.facts,
  status: row.status,
  http_status: row.httpStatus,
  outcomes: row.outcomes,
  last_error: row.lastError,
  created_at: row.createdAt,
  updated_at: row.updatedAt,
  dispatched_at: row.dispatchedAt
})

export interface NewScheduledEvent {
  readonly id: string
  readonly externalKey: string | null
  readonly eventType: string
  readonly userId: string | null
  readonly communityId: string | null
  readonly triggerAt: string
  readonly facts: unknown
}

export class ScheduledRepo extends Effect.Service<ScheduledRepo>()("nudging/ScheduledRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(`id, external_key, event_type, user_id, community_id, trigger_at, facts, status,
      http_status, outcomes, last_error, created_at, updated_at, dispatched_at`)

    /** Inserts, or replaces the event of the same key (pending again); whether it was new. */
    const upsert = (e: NewScheduledEvent, now: string) =>
      Effect.map(
        sql<Row & { inserted: boolean }>`INSERT INTO scheduled_events (id, external_key, event_type, user_id, community_id,
            trigger_at, facts, status, outcomes, created_at, updated_at)
          VALUES (${e.id}, ${e.externalKey}, ${e.eventType}, ${e.userId}, ${e.communityId}, ${e.triggerAt},
            ${JSON.stringify(e.facts)}::jsonb, 'pending', '[]'::jsonb, ${now}, ${now})
          ON CONFLICT (external_key) DO UPDATE SET event_type = excluded.event_type, user_id = excluded.user_id,
            community_id = excluded.community_id, trigger_at = excluded.trigger_at, facts = excluded.facts,
            status = 'pending', http_status = NULL, outcomes = '[]'::jsonb, last_error = NULL, dispatched_at = NULL,
            updated_at = excluded.updated_at
          RETURNING ${columns}, (xmax = 0) AS inserted`,
        (rows) => ({ event: toEvent(rows[0]!), created: rows[0]!.inserted })
      )

    /**
     * `upsert` for many events in one statement (the rows as one JSON parameter); the keys must
     * be distinct (PostgreSQL cannot update one row twice in a statement). Per event, in order:
     * its id (the existing row's when replaced) and whether it was new.
     */
    const upsertMany = (events: ReadonlyArray<NewScheduledEvent>, now: string) =>
      Effect.map(
        sql<{ id: string; externalKey: string | null; inserted: boolean; ord: number }>`WITH input AS (
            SELECT * FROM jsonb_to_recordset(${JSON.stringify(events.map((e, ord) => ({ ord, ...e })))}::jsonb)
              AS r(ord int, id text, "externalKey" text, "eventType" text, "userId" text, "communityId" text,
                "triggerAt" timestamptz, facts jsonb)
          ), upserted AS (
            INSERT INTO scheduled_events (id, external_key, event_type, user_id, community_id, trigger_at, facts, status,
                outcomes, created_at, updated_at)
              SELECT id, "externalKey", "eventType", "userId", "communityId", "triggerAt", facts, 'pending', '[]'::jsonb,
                ${now}, ${now} FROM input ORDER BY ord
            ON CONFLICT (external_key) DO UPDATE SET event_type = excluded.event_type, user_id = excluded.user_id,
              community_id = excluded.community_id, trigger_at = excluded.trigger_at, facts = excluded.facts,
              status = 'pending', http_status = NULL, outcomes = '[]'::jsonb, last_error = NULL, dispatched_at = NULL,
              updated_at = excluded.updated_at
            RETURNING id, external_key, (xmax = 0) AS inserted
          )
          SELECT u.id, u.external_key, u.inserted, i.ord FROM upserted u
            JOIN input i ON i.id = u.id OR i."externalKey" = u.external_key
          ORDER BY i.ord`,
        (rows) => rows.map((r) => ({ id: r.id, externalKey: r.externalKey, created: r.inserted }))
      )

    const byKey = (key: string) =>
      Effect.map(sql<Row>`SELECT ${columns} FROM scheduled_events WHERE external_key = ${key}`, (rows) =>
        rows[0] === undefined ? undefined : toEvent(rows[0]))

    /** Cancels a pending (or already cancelled) event: its new state, else the state it is in. */
    const cancel = (key: string, now: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ status: Row["status"] }>`UPDATE scheduled_events SET status = 'cancelled', updated_at = ${now}
          WHERE external_key = ${key} AND status IN ('pending', 'cancelled') RETURNING status`
        if (rows.length > 0) return "cancelled" as const
        const current = yield* sql<{ status: Row["status"] }>`SELECT status FROM scheduled_events WHERE external_key = ${key}`
        const state: Row["status"] | "missing" = current.length === 0 ? "missing" : current[0]!.status
        return state
      })

    /** Locks the next due event until the transaction ends (skipping ones other instances hold). */
    const lockNextDue = (now: string) =>
      Effect.map(
        sql<Row>`SELECT ${columns} FROM scheduled_events WHERE status = 'pending' AND trigger_at <= ${now}
          ORDER BY trigger_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`,
        (rows) => (rows[0] === undefined ? undefined : toEvent(rows[0]))
      )

    const markDispatched = (id: string, httpStatus: number, outcomes: ReadonlyArray<Domain.RuleOutcome>, now: string) =>
      sql`UPDATE scheduled_events SET status = 'dispatched', http_status = ${httpStatus},
        outcomes = ${JSON.stringify(outcomes)}::jsonb, last_error = NULL, dispatched_at = ${now}, updated_at = ${now}
        WHERE id = ${id}`.pipe(Effect.asVoid)

    const markFailed = (id: string, error: string, now: string) =>
      sql`UPDATE scheduled_events SET status = 'failed', last_error = ${error}, updated_at = ${now} WHERE id = ${id}`.pipe(
        Effect.asVoid
      )

    /** The daily counts of days before `day` (YYYY-MM-DD) are no longer read. */
    const forgetCountsBefore = (day: string) => sql`DELETE FROM daily_counts WHERE day < ${day}`.pipe(Effect.asVoid)

    return { upsert, upsertMany, byKey, cancel, lockNextDue, markDispatched, markFailed, forgetCountsBefore }
  })
}) {}
