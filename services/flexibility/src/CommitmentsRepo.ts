/**
 * The SQL of commitments. Column names are the API's (snake_case, no name transforms) and
 * `@rec/db` hands timestamps over as ISO 8601 UTC strings, so rows are API records as they are.
 *
 * Concurrency lives here, in single statements: a new answer is `INSERT ... ON CONFLICT DO
 * NOTHING` against the one-answer-per-suggestion index; state moves are `UPDATE ... WHERE status
 * = 'committed'` (the loser of a race updates nothing); the pending view takes rows with `FOR
 * UPDATE SKIP LOCKED` and marks them in the same statement, so two instances never take one row.
 */
import { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Tracing } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Stream from "effect/Stream"
import type { Commitment, CommitmentStatus } from "./Domain.js"
import * as Spans from "./Spans.js"

export interface NewCommitment {
  readonly user_id: string
  readonly suggestion_id: string
  readonly suggestion_type: string
  readonly community_id: string | null
  readonly device_id: string | null
  readonly period_start: string
  readonly period_end: string
  readonly status: Extract<CommitmentStatus, "committed" | "rejected">
  readonly reward_points_estimated: number
}

export interface ListQuery {
  readonly userId?: string | undefined
  readonly status?: CommitmentStatus | undefined
  readonly limit: number
  readonly offset: number
}

/** What settlement needs of a commitment. */
export interface SettlementCandidate {
  readonly id: string
  readonly user_id: string
  readonly community_id: string
  readonly device_id: string
  readonly period_start: string
  readonly period_end: string
}

export interface SettlementResult {
  readonly id: string
  readonly points: number
  readonly kwh: number
}

const columns = [
  "id",
  "user_id",
  "suggestion_id",
  "suggestion_type",
  "community_id",
  "device_id",
  "period_start",
  "period_end",
  "committed_at",
  "settled_at",
  "reminded_at",
  "cancelled_at",
  "status",
  "reward_points_estimated",
  "reward_points_actual",
  "actual_kwh"
].join(", ")

/**
 * The create path's statement, written once: its text never changes, so building it from a
 * template with `sql.insert` (a copy of the row, its columns quoted and placeholders numbered)
 * on every request was work for nothing. Placeholders are PostgreSQL's, which PGlite shares.
 */
const insertStatement = `INSERT INTO flexibility_commitments
  (user_id, suggestion_id, suggestion_type, community_id, device_id, period_start, period_end, status, reward_points_estimated)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
  ON CONFLICT DO NOTHING RETURNING ${columns}`

export class CommitmentsRepo extends Effect.Service<CommitmentsRepo>()("flexibility/CommitmentsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient
    // The statements' spans only when exported (`Spans`); `@effect/sql`'s own `sql.execute` spans stay.
    const span = Spans.named(yield* Tracing.TracingEnabled)
    const all = sql.literal(columns)
    const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullable(rows[0])

    /** The new row, or `None` when the user already answered this suggestion. */
    const insert = (row: NewCommitment) =>
      sql.unsafe<Commitment>(insertStatement, [
        row.user_id,
        row.suggestion_id,
        row.suggestion_type,
        row.community_id,
        row.device_id,
        row.period_start,
        row.period_end,
        row.status,
        row.reward_points_estimated
      ]).pipe(
        Effect.map(first),
        span("CommitmentsRepo.insert")
      )

    /** The user's answer to a suggestion (a commitment that is not cancelled). */
    const findAnswer = (userId: string, suggestionId: string) =>
      sql<Commitment>`SELECT ${all} FROM flexibility_commitments
        WHERE user_id = ${userId} AND suggestion_id = ${suggestionId} AND status <> 'cancelled'`.pipe(
        Effect.map(first),
        span("CommitmentsRepo.findAnswer")
      )

    /** Suggestion ids the user answered (committed, settled or declined). */
    const answeredIds = (userId: string, suggestionIds: ReadonlyArray<string>) =>
      suggestionIds.length === 0
        ? Effect.succeed(new Set<string>())
        : sql<{ suggestion_id: string }>`SELECT suggestion_id FROM flexibility_commitments
            WHERE user_id = ${userId} AND status <> 'cancelled' AND ${sql.in("suggestion_id", suggestionIds)}`.pipe(
            Effect.map((rows) => new Set(rows.map((r) => r.suggestion_id))),
            span("CommitmentsRepo.answeredIds")
          )

    const get = (id: string) =>
      sql<Commitment>`SELECT ${all} FROM flexibility_commitments WHERE id = ${id}`.pipe(
        Effect.map(first),
        span("CommitmentsRepo.get")
      )

    const list = (query: ListQuery) => {
      const filters = sql.and([
        ...(query.userId === undefined ? [] : [sql`user_id = ${query.userId}`]),
        ...(query.status === undefined ? [] : [sql`status = ${query.status}`])
      ])
      return Effect.all({
        items: sql<Commitment>`SELECT ${all} FROM flexibility_commitments WHERE ${filters}
          ORDER BY committed_at DESC, id DESC LIMIT ${query.limit} OFFSET ${query.offset}`,
        total: Effect.map(
          sql<{ total: string }>`SELECT count(*) AS total FROM flexibility_commitments WHERE ${filters}`,
          (rows) => Number(rows[0]?.total ?? 0)
        )
      }, { concurrency: 2 }).pipe(span("CommitmentsRepo.list"))
    }

    /** committed -> cancelled; `None` when the row is not (or no longer) committed. */
    const cancel = (id: string, now: string) =>
      sql<Commitment>`UPDATE flexibility_commitments SET status = 'cancelled', cancelled_at = ${now}
        WHERE id = ${id} AND status = 'committed' RETURNING ${all}`.pipe(
        Effect.map(first),
        span("CommitmentsRepo.cancel")
      )

    /** committed -> settled with the points given; `None` when the row is not (or no longer) committed. */
    const settle = (id: string, points: number, kwh: number | null, now: string) =>
      sql<Commitment>`UPDATE flexibility_commitments
        SET status = 'settled', reward_points_actual = ${points}, actual_kwh = ${kwh}, settled_at = ${now}
        WHERE id = ${id} AND status = 'committed' RETURNING ${all}`.pipe(
        Effect.map(first),
        span("CommitmentsRepo.settle")
      )

    /**
     * Takes up to `limit` commitments whose window is open at `now` and that nobody took yet,
     * marking them reminded at `now` in the same statement (one-shot view). Rows another
     * transaction is taking are skipped, not waited for.
     */
    const takeOpen = (now: string, limit: number) =>
      sql<Commitment>`UPDATE flexibility_commitments SET reminded_at = ${now}
        WHERE id IN (
          SELECT id FROM flexibility_commitments
          WHERE status = 'committed' AND reminded_at IS NULL AND period_start <= ${now} AND period_end > ${now}
          ORDER BY period_start, id
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED
        )
        RETURNING ${all}`.pipe(
        Effect.map((rows) => [...rows].sort((a, b) => a.period_start.localeCompare(b.period_start) || a.id.localeCompare(b.id))),
        span("CommitmentsRepo.takeOpen")
      )

    /** Gives a taken row back (its reminder could not be sent), unless something else changed it. */
    const release = (id: string, takenAt: string) =>
      sql`UPDATE flexibility_commitments SET reminded_at = NULL
        WHERE id = ${id} AND reminded_at = ${takenAt} AND status = 'committed'`.pipe(
        Effect.asVoid,
        span("CommitmentsRepo.release")
      )

    /** Every commitment, oldest first, from a cursor (constant memory). */
    const exportAll = (createdAfter: string | undefined): Stream.Stream<Commitment, SqlError> =>
      sql<Commitment>`SELECT ${all} FROM flexibility_commitments
        WHERE ${createdAfter === undefined ? sql`TRUE` : sql`committed_at >= ${createdAfter}`}
        ORDER BY committed_at, id`.stream

    /**
     * Committed commitments with a meter and a community whose window ended in
     * (`from`, `to`] and by `now`: the ones a settlement of that day settles.
     */
    const settlementCandidates = (from: string, to: string, now: string) =>
      sql<SettlementCandidate>`SELECT id, user_id, community_id, device_id, period_start, period_end
        FROM flexibility_commitments
        WHERE status = 'committed' AND community_id IS NOT NULL AND device_id IS NOT NULL
          AND period_end > ${from} AND period_end <= ${to} AND period_end <= ${now}
        ORDER BY id`.pipe(span("CommitmentsRepo.settlementCandidates"))

    /**
     * Settles every result in one statement (so one transaction): rows still committed become
     * settled with their points and kWh; the rows changed are returned, so a row settled by a
     * concurrent run is neither settled twice nor nudged twice.
     */
    const settleMany = (results: ReadonlyArray<SettlementResult>, runId: string, now: string) =>
      results.length === 0
        ? Effect.succeed<ReadonlyArray<Commitment>>([])
        : sql<Commitment>`UPDATE flexibility_commitments AS c
            SET status = 'settled', reward_points_actual = v.points, actual_kwh = v.kwh, settled_at = ${now},
                settlement_run_id = ${runId}
            FROM jsonb_to_recordset(${JSON.stringify(results)}::jsonb) AS v(id uuid, points integer, kwh double precision)
            WHERE c.id = v.id AND c.status = 'committed'
            RETURNING ${sql.literal(columns.split(", ").map((c) => `c.${c}`).join(", "))}`.pipe(
            span("CommitmentsRepo.settleMany", { count: results.length })
          )

    return {
      insert,
      findAnswer,
      answeredIds,
      get,
      list,
      cancel,
      settle,
      takeOpen,
      release,
      exportAll,
      settlementCandidates,
      settleMany
    } as const
  })
}) {}
