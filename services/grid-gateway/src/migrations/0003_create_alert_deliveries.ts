import { SqlClient } from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * One row per (rule, pipeline run) that breached: the claim that makes alert delivery idempotent.
 * Whoever inserts it (a replica, a first delivery of the MQTT message) sends; a redelivered
 * message or another replica finds it and sends nothing, unless an earlier attempt failed or was
 * abandoned (then only the parts not yet done are sent again; see `AlertDeliveriesRepo`).
 */
export default Effect.flatMap(SqlClient, (sql) =>
  Effect.all([
    sql`CREATE TABLE alert_deliveries (
      rule_id uuid NOT NULL REFERENCES alert_rules (id) ON DELETE CASCADE,
      run_id text NOT NULL,
      network_id text NOT NULL,
      period date NOT NULL,
      hazards text[] NOT NULL,
      state text NOT NULL CHECK (state IN ('claimed', 'done', 'failed')),
      attempts integer NOT NULL DEFAULT 1,
      claimed_at timestamptz NOT NULL DEFAULT now(),
      nudge_state text CHECK (nudge_state IN ('sent', 'failed', 'none')),
      nudge_detail text,
      webhook_state text CHECK (webhook_state IN ('sent', 'failed', 'none')),
      webhook_detail text,
      completed_at timestamptz,
      PRIMARY KEY (rule_id, run_id)
    )`,
    sql`CREATE INDEX alert_deliveries_run ON alert_deliveries (run_id)`
  ], { discard: true }))
