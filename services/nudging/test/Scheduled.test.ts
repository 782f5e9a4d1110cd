/**
 * Scheduled events: upsert by external_key, dispatch when due (the status and outcomes ingest
 * would have answered kept on the event), cancel, validation, and two instances polling one
 * PostgreSQL: every due event is ingested exactly once (FOR UPDATE SKIP LOCKED).
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import { Database, Testing } from "@rec/db"
import { type Domain, migrations } from "@rec/nudging-service"
import { Scheduler } from "@rec/nudging-service/Scheduler"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { call, freshUser, ingest, instance, serviceLayer, support, Time, token } from "./support/Service.js"

const community = "it-energy-community"

/** The flexibility service's pre-window reminder (reference nudging-flexibility.md A6.3). */
const reminder = (user: string, key: string, triggerAt: string, overrides: Record<string, unknown> = {}) => ({
  event_type: "flexibility_reminder",
  user_id: user,
  community_id: community,
  external_key: key,
  trigger_at: triggerAt,
  facts: {
    facts_version: "1.0",
    scenario: "flexibility_reminder",
    commitment_id: "c-1",
    suggestion_id: "s-1",
    window_start: "12:00",
    window_end: "14:00",
    reward_points_estimated: "12",
    period: "2026-06-10",
    ...overrides
  }
})

const schedule = (body: unknown, as = "svc-flexibility", path = "/scheduled-events") =>
  Effect.flatMap(token(as), (t) => call("POST", path, { token: t, json: body }))

describe("scheduled events", () => {
  layer(serviceLayer(), { excludeTestServices: true, timeout: "120 seconds" })("one instance", (it) => {
    it.effect("upsert by external key, dispatch when due, outcome kept", () =>
      Effect.gen(function*() {
        const time = yield* Time
        const scheduler = yield* Scheduler
        time.set("2026-06-10T09:00:00Z")
        const user = freshUser()
        const key = `flexibility-accept:${user}:s-1`
        const created = yield* schedule(reminder(user, key, "2026-06-10T11:45:00Z"))
        expect(created.status).toBe(201)
        expect(created.body).toMatchObject({
          created: true,
          event: { external_key: key, status: "pending", trigger_at: "2026-06-10T11:45:00.000Z", http_status: null, outcomes: [] }
        })
        const replaced = yield* schedule(reminder(user, key, "2026-06-10T11:46:00+00:00"), "svc-flexibility", "/admin/scheduled-events")
        expect(replaced.status).toBe(200)
        expect(replaced.body).toMatchObject({ created: false, event: { trigger_at: "2026-06-10T11:46:00.000Z", status: "pending" } })

        time.set("2026-06-10T11:45:30Z")
        yield* scheduler.runDue
        const t = yield* token("svc-flexibility")
        expect((yield* call("GET", `/scheduled-events/${encodeURIComponent(key)}`, { token: t })).body).toMatchObject({ status: "pending" })

        time.set("2026-06-10T11:46:01Z")
        const dispatched = yield* scheduler.runDue
        expect(dispatched).toBeGreaterThanOrEqual(1)
        const event = (yield* call("GET", `/scheduled-events/${encodeURIComponent(key)}`, { token: t })).body as Domain.ScheduledEvent
        expect(event).toMatchObject({
          status: "dispatched",
          http_status: 200,
          outcomes: [{ rule_id: "flexibility_reminder", outcome: "dispatched" }],
          dispatched_at: expect.any(String)
        })
        // The window-open reminder of the same day collapses into the scheduled one.
        const { external_key: _k, trigger_at: _t, ...immediate } = reminder(user, key, "")
        const again = yield* ingest(immediate, "svc-flexibility")
        expect(again.status).toBe(409)
        expect(again.body).toMatchObject({ outcomes: [{ duplicate_of: event.outcomes[0]!.notification_id }] })
      }))

    it.effect("cancel: a pending event is not dispatched; a dispatched one cannot be cancelled; unknown keys are 404", () =>
      Effect.gen(function*() {
        const time = yield* Time
        const scheduler = yield* Scheduler
        time.set("2026-06-11T09:00:00Z")
        const t = yield* token("svc-flexibility")
        const cancelled = `cancel-${freshUser()}`
        const kept = `keep-${freshUser()}`
        expect((yield* schedule(reminder(freshUser(), cancelled, "2026-06-11T10:00:00Z"))).status).toBe(201)
        expect((yield* schedule(reminder(freshUser(), kept, "2026-06-11T10:00:00Z"))).status).toBe(201)
        expect((yield* call("DELETE", `/scheduled-events/${cancelled}`, { token: t })).status).toBe(204)
        expect((yield* call("DELETE", `/scheduled-events/${cancelled}`, { token: t })).status).toBe(204)
        time.set("2026-06-11T10:00:01Z")
        yield* scheduler.runDue
        expect((yield* call("GET", `/scheduled-events/${cancelled}`, { token: t })).body).toMatchObject({ status: "cancelled" })
        expect((yield* call("GET", `/scheduled-events/${kept}`, { token: t })).body).toMatchObject({ status: "dispatched" })
        const late = yield* call("DELETE", `/scheduled-events/${kept}`, { token: t })
        expect(late).toMatchObject({ status: 409, body: { detail: `The event ${kept} is already dispatched` } })
        expect((yield* call("DELETE", "/scheduled-events/no-such-key", { token: t })).status).toBe(404)
        expect((yield* call("GET", "/scheduled-events/no-such-key", { token: t })).status).toBe(404)
      }))

    it.effect("an event whose ingest would be refused is dispatched with that status", () =>
      Effect.gen(function*() {
        const time = yield* Time
        const scheduler = yield* Scheduler
        time.set("2026-06-12T09:00:00Z")
        const key = `zero-${freshUser()}`
        expect((yield* schedule(reminder(freshUser(), key, "2026-06-12T09:00:00Z", { reward_points_estimated: 0 }))).status).toBe(201)
        yield* scheduler.runDue
        const t = yield* token("svc-flexibility")
        expect((yield* call("GET", `/scheduled-events/${key}`, { token: t })).body).toMatchObject({
          status: "dispatched",
          http_status: 204,
          outcomes: [{ rule_id: "flexibility_reminder", outcome: "not_triggered" }]
        })
      }))

    it.effect("batch: upserts every event in one request (a key given twice keeps its last); dispatched as single ones", () =>
      Effect.gen(function*() {
        const time = yield* Time
        const scheduler = yield* Scheduler
        time.set("2026-06-13T09:00:00Z")
        const t = yield* token("svc-flexibility")
        const [u1, u2, u3] = [freshUser(), freshUser(), freshUser()]
        const existing = `batch-existing-${u1}`
        expect((yield* schedule(reminder(u1, existing, "2026-06-13T12:00:00Z"))).status).toBe(201)
        const twice = `batch-twice-${u2}`
        const fresh = `batch-fresh-${u3}`
        const batch = yield* schedule({
          events: [
            reminder(u1, existing, "2026-06-13T10:00:00Z"),
            reminder(u2, twice, "2026-06-13T23:00:00Z"),
            reminder(u3, fresh, "2026-06-13T10:00:00Z"),
            reminder(u2, twice, "2026-06-13T10:00:00Z")
          ]
        }, "svc-flexibility", "/scheduled-events/batch")
        expect(batch.status).toBe(200)
        const body = batch.body as { created: number; replaced: number; events: Array<{ id: string; external_key: string; created: boolean }> }
        expect(body).toMatchObject({
          created: 2,
          replaced: 1,
          events: [
            { external_key: existing, created: false },
            { external_key: twice, created: true },
            { external_key: fresh, created: true }
          ]
        })
        const replaced = (yield* call("GET", `/scheduled-events/${existing}`, { token: t })).body as Domain.ScheduledEvent
        expect(replaced).toMatchObject({ id: body.events[0]!.id, trigger_at: "2026-06-13T10:00:00.000Z", status: "pending" })
        expect((yield* call("GET", `/scheduled-events/${twice}`, { token: t })).body).toMatchObject({
          trigger_at: "2026-06-13T10:00:00.000Z"
        })
        time.set("2026-06-13T10:00:01Z")
        yield* scheduler.runDue
        for (const key of [existing, twice, fresh]) {
          expect((yield* call("GET", `/scheduled-events/${key}`, { token: t })).body).toMatchObject({
            status: "dispatched",
            http_status: 200,
            outcomes: [{ rule_id: "flexibility_reminder", outcome: "dispatched" }]
          })
        }
      }))

    it.effect("batch: one invalid event stores none (422 naming it); empty or oversized batches and users are refused", () =>
      Effect.gen(function*() {
        const t = yield* token("svc-flexibility")
        const user = freshUser()
        const good = `batch-good-${user}`
        const bad = yield* schedule({
          events: [reminder(user, good, "2026-06-14T10:00:00Z"), { ...reminder(user, `batch-bad-${user}`, "2026-06-14T10:00:00Z"), facts: { facts_version: "1.0" } }]
        }, "svc-flexibility", "/scheduled-events/batch")
        expect(bad.status).toBe(422)
        expect(bad.body).toMatchObject({ issues: [{ path: ["events", 1, "facts", "scenario"], message: "is missing" }] })
        expect((yield* call("GET", `/scheduled-events/${good}`, { token: t })).status).toBe(404)
        const empty = yield* schedule({ events: [] }, "svc-flexibility", "/scheduled-events/batch")
        expect(empty.status).toBe(400)
        const tooMany = yield* schedule({
          events: Array.from({ length: 501 }, (_, i) => reminder(user, `many-${i}-${user}`, "2026-06-14T10:00:00Z"))
        }, "svc-flexibility", "/scheduled-events/batch")
        expect(tooMany.status).toBe(400)
        const noZone = yield* schedule({ events: [reminder(user, good, "2026-06-14T10:00:00")] }, "svc-flexibility", "/scheduled-events/batch")
        expect(noZone).toMatchObject({ status: 400, body: { issues: [{ path: ["events", 0, "trigger_at"] }] } })
        const asUser = yield* schedule({ events: [reminder(user, good, "2026-06-14T10:00:00Z")] }, "admin", "/scheduled-events/batch")
        expect(asUser).toMatchObject({ status: 403, body: { detail: "Not allowed: users may not ingest events" } })
      }))

    it.effect("facts are checked when scheduling (422 naming each); users may not schedule", () =>
      Effect.gen(function*() {
        const user = freshUser()
        const bad = yield* schedule({ ...reminder(user, "k", "2026-06-10T11:45:00Z"), facts: { facts_version: "1.0" } })
        expect(bad.status).toBe(422)
        expect(bad.body).toMatchObject({ issues: [{ path: ["facts", "scenario"], message: "is missing" }] })
        const noZone = yield* schedule(reminder(user, "k", "2026-06-10T11:45:00"))
        expect(noZone.status).toBe(400)
        expect(noZone.body).toMatchObject({ issues: [{ path: ["trigger_at"] }] })
        const asUser = yield* schedule(reminder(user, "k", "2026-06-10T11:45:00Z"), "admin")
        expect(asUser).toMatchObject({ status: 403, body: { detail: "Not allowed: users may not ingest events" } })
      }))
  })
})

const skip = await Testing.postgresSkipReason()

describe.skipIf(skip !== undefined)(`on PostgreSQL${skip === undefined ? "" : ` (skipped: ${skip})`}`, () => {
  layer(support, { excludeTestServices: true, timeout: "180 seconds" })("two instances", (it) => {
    it.scoped("poll together: every due event is ingested exactly once", () =>
      Effect.gen(function*() {
        const options = { service: "nudging", migrations }
        const target = yield* Testing.makePostgresDatabase(options)
        const database = () => Database.layerWith(options, Testing.postgresConfig(options, target))
        const a = yield* Layer.build(instance({ database: database() }))
        const b = yield* Layer.build(instance({ database: database() }))
        const time = yield* Time
        time.set("2026-06-20T08:00:00Z")
        const client = Context.get(a, HttpClient.HttpClient)
        const t = yield* token("svc-flexibility")
        const users = Array.from({ length: 12 }, () => freshUser())
        yield* Effect.forEach(users, (user) =>
          Effect.flatMap(
            HttpClientRequest.bodyJson(
              HttpClientRequest.bearerToken(HttpClientRequest.post("/scheduled-events"), t),
              reminder(user, `k-${user}`, "2026-06-20T08:00:00Z")
            ),
            (request) => Effect.map(client.execute(request), (r) => expect(r.status).toBe(201))
          ).pipe(Effect.scoped, Effect.orDie))

        const [fromA, fromB] = yield* Effect.all([
          Context.get(a, Scheduler).runDue,
          Context.get(b, Scheduler).runDue
        ], { concurrency: 2 })
        expect(fromA + fromB).toBe(12)
        const sql = Context.get(a, SqlClient.SqlClient)
        const events = yield* sql<{ status: string; n: number }>`SELECT status, count(*)::int AS n FROM scheduled_events GROUP BY status`
        expect(events).toEqual([{ status: "dispatched", n: 12 }])
        const notifications = yield* sql<{ status: string; n: number }>`
          SELECT status, count(*)::int AS n FROM notifications WHERE rule_id = 'flexibility_reminder' GROUP BY status`
        expect(notifications).toEqual([{ status: "dispatched", n: 12 }])
      }))
  })
})
