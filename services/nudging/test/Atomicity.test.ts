/**
 * Nothing half-written: when the database refuses part of an ingest (here a trigger refuses one
 * delivery row), the notification and its other deliveries are not stored either, the caller gets
 * 503, and the same event succeeds once the database accepts it again (no deduplication slot was
 * taken). A scheduled event whose ingest fails is marked failed with the error, and its writes are
 * rolled back to a savepoint while the event's own state is kept.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import type { Domain } from "@rec/nudging-service"
import { Scheduler } from "@rec/nudging-service/Scheduler"
import * as Effect from "effect/Effect"
import * as crypto from "node:crypto"
import { call, ingest, serviceLayer, Time, token } from "./support/Service.js"

const alert = (recipients: ReadonlyArray<string>) => ({
  event_type: "extr_event",
  facts: {
    facts_version: "1.0",
    scenario: "extr_event",
    period: "2026-08-01",
    window_start: "10:00",
    window_end: "12:00",
    event_type: "wind",
    email_recipients: recipients
  }
})

const installTrigger = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.all([
    sql`CREATE OR REPLACE FUNCTION refuse_delivery() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'delivery refused by test trigger'; END $$`,
    sql`CREATE TRIGGER refuse_delivery BEFORE INSERT ON deliveries FOR EACH ROW
      WHEN (NEW.destination LIKE 'explode%') EXECUTE FUNCTION refuse_delivery()`
  ], { discard: true }))

const dropTrigger = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DROP TRIGGER refuse_delivery ON deliveries`)

layer(serviceLayer(), { excludeTestServices: true, timeout: "120 seconds" })("atomicity", (it) => {
  it.effect("a failing write leaves no notification and no delivery; the event can be sent again", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const recipients = ["ops@x.example", "explode@x.example"]
      yield* installTrigger
      const refused = yield* ingest(alert(recipients))
      expect(refused).toMatchObject({ status: 503, body: { detail: "The database is unavailable; try again shortly" } })
      const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM notifications WHERE rule_id = 'extr_event'`
      expect(rows[0]!.n).toBe(0)
      expect((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM deliveries`)[0]!.n).toBe(0)

      yield* dropTrigger
      const accepted = yield* ingest(alert(recipients))
      expect(accepted.status).toBe(200)
      expect((accepted.body as Domain.IngestDispatched).outcomes[0]!.delivery_ids).toHaveLength(2)
    }))

  it.effect("a scheduled event whose ingest fails is marked failed; only its own state is written", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const time = yield* Time
      const scheduler = yield* Scheduler
      time.set("2026-08-02T08:00:00Z")
      const t = yield* token("svc-grid")
      const scheduled = yield* call("POST", "/scheduled-events", {
        token: t,
        json: { ...alert(["explode-later@x.example"]), external_key: "atomic-1", trigger_at: "2026-08-02T08:00:00Z" }
      })
      expect(scheduled.status).toBe(201)
      yield* installTrigger
      expect(yield* scheduler.runDue).toBe(1)
      yield* dropTrigger
      const event = (yield* call("GET", "/scheduled-events/atomic-1", { token: t })).body as Domain.ScheduledEvent
      expect(event.status).toBe("failed")
      expect(event.last_error).toMatch(/^ingest failed: /)
      const group = `email-ingest:${crypto.createHash("sha256").update("explode-later@x.example").digest("hex").slice(0, 16)}`
      const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM notifications WHERE user_id = ${group}`
      expect(rows[0]!.n).toBe(0)
    }))
})
