/**
 * Commitments (reference A10, with the original's gaps closed): the window's end follows its
 * start, the status is one of four, points are never negative, settlement keeps `actual_kwh`,
 * and one user holds at most one answer (committed, settled or declined) per suggestion: a
 * cancelled commitment frees the suggestion again.
 */
import { SqlClient } from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.flatMap(SqlClient, (sql) =>
  Effect.all([
    sql`CREATE TABLE flexibility_commitments (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      user_id varchar(255) NOT NULL,
      suggestion_id varchar(255) NOT NULL,
      suggestion_type varchar(50) NOT NULL,
      community_id varchar(255),
      device_id varchar(255),
      period_start timestamptz NOT NULL,
      period_end timestamptz NOT NULL,
      committed_at timestamptz NOT NULL DEFAULT now(),
      settled_at timestamptz,
      reminded_at timestamptz,
      cancelled_at timestamptz,
      status varchar(20) NOT NULL DEFAULT 'committed',
      reward_points_estimated integer NOT NULL DEFAULT 0,
      reward_points_actual integer,
      actual_kwh double precision,
      settlement_run_id text,
      CONSTRAINT flexibility_commitments_window CHECK (period_end > period_start),
      CONSTRAINT flexibility_commitments_status CHECK (status IN ('committed', 'settled', 'rejected', 'cancelled')),
      CONSTRAINT flexibility_commitments_points CHECK (
        reward_points_estimated >= 0 AND (reward_points_actual IS NULL OR reward_points_actual >= 0)
      ),
      CONSTRAINT flexibility_commitments_kwh CHECK (actual_kwh IS NULL OR actual_kwh >= 0),
      CONSTRAINT flexibility_commitments_settled CHECK (
        (status = 'settled') = (settled_at IS NOT NULL AND reward_points_actual IS NOT NULL)
      ),
      CONSTRAINT flexibility_commitments_cancelled CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL))
    )`,
    // One answer per user and suggestion; cancelling frees it.
    sql`CREATE UNIQUE INDEX flexibility_commitments_answer
      ON flexibility_commitments (user_id, suggestion_id) WHERE status <> 'cancelled'`,
    // A user's list, newest first.
    sql`CREATE INDEX flexibility_commitments_user ON flexibility_commitments (user_id, committed_at DESC, id DESC)`,
    // Everyone's list (services) and the export, by time.
    sql`CREATE INDEX flexibility_commitments_committed_at ON flexibility_commitments (committed_at, id)`,
    // Open commitments by window: pending, reminders, settlement.
    sql`CREATE INDEX flexibility_commitments_open ON flexibility_commitments (period_end, period_start)
      WHERE status = 'committed'`
  ], { discard: true }))
