/**
 * The opportunity broadcast's deliveries, one row per pipeline run, community and member: the
 * primary key makes the broadcast idempotent per `run_id` (a redelivered event, or a second
 * replica handling the same event, finds the rows and sends nothing twice). A row is `sending`
 * while a replica holds it, `sent` once the nudging service took it, `failed` when it refused;
 * failed rows, and rows whose sender died (claimed long ago), are taken again by a redelivery.
 */
import { SqlClient } from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.flatMap(SqlClient, (sql) =>
  sql`CREATE TABLE opportunity_nudges (
    run_id text NOT NULL,
    community_id text NOT NULL,
    user_id text NOT NULL,
    status varchar(10) NOT NULL DEFAULT 'sending',
    attempts integer NOT NULL DEFAULT 1,
    claimed_at timestamptz NOT NULL DEFAULT now(),
    sent_at timestamptz,
    outcome text,
    last_error text,
    PRIMARY KEY (run_id, community_id, user_id),
    CONSTRAINT opportunity_nudges_status CHECK (status IN ('sending', 'sent', 'failed'))
  )`)
