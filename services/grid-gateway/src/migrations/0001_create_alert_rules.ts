import { SqlClient } from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * Alert rules (reference grid-gateway.md §4.1, without the original's migration debris): owned by
 * a user, on one network, hazards a non-empty subset of wind/heat, recipients an optional list of
 * addresses (null: the owner's settings decide). The constraints repeat the API's validation so
 * no other writer can store what the dispatcher could not read.
 */
export default Effect.flatMap(SqlClient, (sql) =>
  Effect.all([
    sql`CREATE TABLE alert_rules (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      user_id text NOT NULL CHECK (user_id <> ''),
      network_id text NOT NULL CHECK (network_id <> ''),
      risk_types text[] NOT NULL CHECK (cardinality(risk_types) > 0 AND risk_types <@ ARRAY['wind', 'heat']::text[]),
      threshold text NOT NULL CHECK (threshold IN ('WARNING', 'ALERT')),
      recipients text[] CHECK (recipients IS NULL OR cardinality(recipients) > 0),
      active boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`,
    sql`CREATE INDEX alert_rules_user_created ON alert_rules (user_id, created_at, id)`,
    sql`CREATE INDEX alert_rules_active_network ON alert_rules (network_id) WHERE active`
  ], { discard: true }))
