/**
 * POST /ingest-event: every status of the spec's table, with one outcome per rule in every body
 * but 204's, the original's path /admin/ingest-event, e-mail recipient groups, and the typed
 * client other services derive from the contract.
 */
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { expect, layer } from "@effect/vitest"
import { Api, Domain } from "@rec/nudging-service"
import * as Effect from "effect/Effect"
import * as crypto from "node:crypto"
import { call, freshUser, ingest, serviceLayer, token } from "./support/Service.js"

const community = "it-energy-community"

const importedUp = (user: string, facts: Record<string, unknown> = {}) => ({
  event_type: "imported_up",
  user_id: user,
  community_id: community,
  facts: { facts_version: "1.0", scenario: "imported_up", time: "2026-05-03", delta_pct: 35.2, cur: 412.5, prev: 305.1, ...facts }
})

const gridAlert = (recipients: ReadonlyArray<string>, userId?: string) => ({
  event_type: "extr_event",
  ...(userId === undefined ? {} : { user_id: userId }),
  facts: {
    facts_version: "1.0",
    scenario: "extr_event",
    period: "2026-07-14",
    window_start: "13:00",
    window_end: "17:00",
    event_type: "heat",
    day_label: "today",
    email_recipients: recipients
  }
})

/** The grid gateway's recipient group id (reference grid-gateway.md 6.4). */
const groupOf = (addresses: ReadonlyArray<string>) =>
  `email-ingest:${crypto.createHash("sha256").update([...addresses].map((a) => a.toLowerCase()).sort().join("|")).digest("hex").slice(0, 16)}`

const putPreferences = (body: Record<string, unknown>) =>
  Effect.flatMap(token("svc-nudging"), (t) => call("PUT", "/preferences", { token: t, json: body }))

const notifications = (user: string, query = "") =>
  Effect.flatMap(token("svc-nudging"), (t) =>
    call("GET", `/notifications?user_id=${encodeURIComponent(user)}&community_id=${community}${query}`, { token: t }))

layer(serviceLayer(), { excludeTestServices: true, timeout: "120 seconds" })("ingest", (it) => {
  it.effect("200: the rule fires, the notification is stored and dispatched", () =>
    Effect.gen(function*() {
      const user = freshUser()
      const reply = yield* ingest(importedUp(user))
      expect(reply.status).toBe(200)
      expect(reply.body).toMatchObject({
        result: "dispatched",
        event_type: "imported_up",
        user_id: user,
        community_id: community,
        outcomes: [{ rule_id: "imported_up", outcome: "dispatched", delivery_ids: [], duplicate_of: null }]
      })
      const id = (reply.body as Domain.IngestDispatched).outcomes[0]!.notification_id
      const list = yield* notifications(user)
      expect(list.status).toBe(200)
      expect(list.body).toMatchObject({
        total: 1,
        items: [{
          id,
          rule_id: "imported_up",
          status: "dispatched",
          language: "en",
          title: "Grid import up 35.2%",
          severity: "warning",
          kind: "energy_insights",
          dedup_window: "daily"
        }]
      })
    }))

  it.effect("/admin/ingest-event (the original's path) answers the same", () =>
    Effect.gen(function*() {
      const t = yield* token("svc-flexibility")
      const reply = yield* call("POST", "/admin/ingest-event", { token: t, json: importedUp(freshUser()) })
      expect(reply.status).toBe(200)
      expect(reply.body).toMatchObject({ result: "dispatched" })
    }))

  it.effect("batch: each event ingested as POST /ingest-event would, its status and outcomes in order", () =>
    Effect.gen(function*() {
      const t = yield* token("svc-flexibility")
      const [a, b, c] = [freshUser(), freshUser(), freshUser()]
      const reply = yield* call("POST", "/ingest-events/batch", {
        token: t,
        json: {
          events: [
            importedUp(a),
            importedUp(a, { delta_pct: 50 }),
            importedUp(b, { delta_pct: 12 }),
            importedUp(c, { scenario: "imported_down" }),
            importedUp(c, { delta_pct: "lots" })
          ]
        }
      })
      expect(reply.status).toBe(200)
      const results = (reply.body as { results: Array<{ status: number; user_id: string; outcomes: Array<Domain.RuleOutcome> }> }).results
      expect(results.map((r) => r.status).sort()).toEqual([200, 204, 400, 409, 422].sort())
      expect(results[2]).toMatchObject({ status: 204, user_id: b, outcomes: [{ outcome: "not_triggered" }] })
      expect(results[3]).toMatchObject({ status: 400, user_id: c, outcomes: [{ outcome: "rejected" }] })
      expect(results[4]).toMatchObject({ status: 422, outcomes: [{ outcome: "invalid_facts" }] })
      // The two events of one user in one window: one notification, one duplicate (whichever came first).
      expect([results[0]!.status, results[1]!.status].sort()).toEqual([200, 409])
      expect((yield* notifications(a)).body).toMatchObject({ total: 1 })
    }))

  it.effect("batch: validated as a whole (400), authorized as ingest (users 403)", () =>
    Effect.gen(function*() {
      const t = yield* token("svc-flexibility")
      expect((yield* call("POST", "/ingest-events/batch", { token: t, json: { events: [] } })).status).toBe(400)
      const malformed = yield* call("POST", "/ingest-events/batch", { token: t, json: { events: [importedUp(freshUser()), { user_id: "x" }] } })
      expect(malformed).toMatchObject({ status: 400, body: { issues: [{ path: ["events", 1, "event_type"] }, { path: ["events", 1, "facts"] }] } })
      const tooMany = Array.from({ length: 501 }, () => importedUp(freshUser()))
      expect((yield* call("POST", "/ingest-events/batch", { token: t, json: { events: tooMany } })).status).toBe(400)
      const asUser = yield* call("POST", "/ingest-events/batch", { token: yield* token("admin"), json: { events: [importedUp(freshUser())] } })
      expect(asUser.status).toBe(403)
    }))

  it.effect("204: an event type no rule answers, whatever its scenario (no body)", () =>
    Effect.gen(function*() {
      for (const scenario of ["imported_up", "no_such_scenario"]) {
        const reply = yield* ingest({ event_type: "no_such_event", user_id: freshUser(), facts: { facts_version: "1", scenario } })
        expect(reply.status).toBe(204)
        expect(reply.body).toBeNull()
      }
    }))

  it.effect("204: the rule's condition is not met, and nothing is stored", () =>
    Effect.gen(function*() {
      const user = freshUser()
      const reply = yield* ingest(importedUp(user, { delta_pct: 12 }))
      expect(reply.status).toBe(204)
      expect(reply.body).toBeNull()
      expect((yield* notifications(user, "&status=all")).body).toMatchObject({ total: 0, items: [] })
    }))

  it.effect("400: the event type has rules, none for the scenario; one outcome per rule", () =>
    Effect.gen(function*() {
      const reply = yield* ingest(importedUp(freshUser(), { scenario: "imported_down" }))
      expect(reply.status).toBe(400)
      expect(reply.body).toMatchObject({
        result: "rejected",
        outcomes: [{ rule_id: "imported_up", outcome: "rejected", reason: "answers scenarios imported_up, not imported_down" }]
      })
      expect((reply.body as { detail: string }).detail).toContain("imported_up")
    }))

  it.effect("409: the same rule again in its window; the duplicate is recorded, not delivered", () =>
    Effect.gen(function*() {
      const user = freshUser()
      const first = yield* ingest(importedUp(user))
      expect(first.status).toBe(200)
      const original = (first.body as Domain.IngestDispatched).outcomes[0]!.notification_id
      const second = yield* ingest(importedUp(user, { delta_pct: 50 }))
      expect(second.status).toBe(409)
      expect(second.body).toMatchObject({
        result: "deduplicated",
        outcomes: [{ rule_id: "imported_up", outcome: "deduplicated", duplicate_of: original, delivery_ids: [] }]
      })
      // The inbox shows one notification; the duplicate's record is there when asked for.
      expect((yield* notifications(user)).body).toMatchObject({ total: 1 })
      const all = (yield* notifications(user, "&status=all")).body as Domain.NotificationPage
      expect(all.total).toBe(2)
      expect(all.items.find((n) => n.status === "deduplicated")).toMatchObject({ duplicate_of: original, rule_id: "imported_up" })
      // Another community is another recipient.
      const elsewhere = yield* ingest({ ...importedUp(user), community_id: "another-community" })
      expect(elsewhere.status).toBe(200)
    }))

  it.effect("422: missing facts, each named", () =>
    Effect.gen(function*() {
      const reply = yield* ingest({ event_type: "imported_up", user_id: freshUser(), facts: {} })
      expect(reply.status).toBe(422)
      expect(reply.body).toMatchObject({
        result: "invalid_facts",
        issues: [
          { path: ["facts", "facts_version"], message: "is missing" },
          { path: ["facts", "scenario"], message: "is missing" }
        ],
        outcomes: [{ rule_id: "imported_up", outcome: "invalid_facts" }]
      })
      const { cur: _, ...withoutCur } = importedUp(freshUser()).facts
      const missingCur = yield* ingest({ ...importedUp(freshUser()), facts: withoutCur })
      expect(missingCur.status).toBe(422)
      expect(missingCur.body).toMatchObject({ issues: [{ path: ["facts", "cur"], message: "is missing (rule imported_up needs it)" }] })
    }))

  it.effect("422: invalid facts, each named with what was expected", () =>
    Effect.gen(function*() {
      const reply = yield* ingest(importedUp(freshUser(), { delta_pct: "a lot", time: "yesterday", lang: 7, email_recipients: ["ok@rec.example", "nope"] }))
      expect(reply.status).toBe(422)
      const issues = (reply.body as { issues: ReadonlyArray<{ path: ReadonlyArray<unknown>; message: string }> }).issues
      expect(issues.map((i) => i.path.join("."))).toEqual(["facts.time", "facts.delta_pct", "facts.lang", "facts.email_recipients.1"])
      expect(issues[1]!.message).toBe("Expected a number, actual \"a lot\"")
    }))

  it.effect("202: created, but the recipient turned notifications off", () =>
    Effect.gen(function*() {
      const user = freshUser()
      expect((yield* putPreferences({ user_id: user, community_id: community, enabled: false })).status).toBe(200)
      const reply = yield* ingest(importedUp(user))
      expect(reply.status).toBe(202)
      expect(reply.body).toMatchObject({
        result: "suppressed",
        outcomes: [{ rule_id: "imported_up", outcome: "suppressed", delivery_ids: [] }]
      })
      expect((reply.body as Domain.IngestSuppressed).outcomes[0]!.reason).toMatch(/^notifications_disabled/)
      expect((yield* notifications(user)).body).toMatchObject({ items: [{ status: "suppressed", reason: "notifications_disabled" }] })
    }))

  it.effect("202: the kind is turned off; a kind that cannot be turned off still goes out", () =>
    Effect.gen(function*() {
      const user = freshUser()
      expect((yield* putPreferences({ user_id: user, community_id: community, disabled_kinds: ["energy_insights"] })).status).toBe(200)
      const reply = yield* ingest(importedUp(user))
      expect(reply.status).toBe(202)
      expect((reply.body as Domain.IngestSuppressed).outcomes[0]!.reason).toMatch(/^kind_opted_out/)

      const off = freshUser()
      expect((yield* putPreferences({ user_id: off, community_id: "", enabled: false })).status).toBe(200)
      const alert = gridAlert([], off)
      const delivered = yield* ingest({ ...alert, facts: { ...alert.facts, email_recipients: undefined } })
      expect(delivered.status).toBe(200)
      expect(delivered.body).toMatchObject({ outcomes: [{ rule_id: "extr_event", outcome: "dispatched" }] })
    }))

  it.effect("202: the daily cap holds back the notification over max_per_day", () =>
    Effect.gen(function*() {
      const user = freshUser()
      expect((yield* putPreferences({ user_id: user, community_id: community, max_per_day: 1 })).status).toBe(200)
      expect((yield* ingest(importedUp(user))).status).toBe(200)
      const price = {
        event_type: "price_up",
        user_id: user,
        community_id: community,
        facts: { facts_version: "1.0", scenario: "price_up", delta_pct: 12 }
      }
      const capped = yield* ingest(price)
      expect(capped.status).toBe(202)
      expect((capped.body as Domain.IngestSuppressed).outcomes[0]!.reason).toBe(
        "daily_cap_reached: the recipient already had the most notifications a day (1) today"
      )
    }))

  it.effect("e-mail recipient groups: the id is computed from the addresses, and must match them", () =>
    Effect.gen(function*() {
      const recipients = ["Ops@Alto-Garda.example", "grid@alto-garda.example"]
      const computed = yield* ingest(gridAlert(recipients))
      expect(computed.status).toBe(200)
      expect(computed.body).toMatchObject({ user_id: groupOf(recipients), community_id: null })
      expect((computed.body as Domain.IngestDispatched).outcomes[0]!.delivery_ids).toHaveLength(2)

      const given = yield* ingest(gridAlert(["a@x.example"], groupOf(["a@x.example"])))
      expect(given.status).toBe(200)

      const wrong = yield* ingest(gridAlert(["a@x.example"], groupOf(["b@x.example"])))
      expect(wrong.status).toBe(422)
      expect(wrong.body).toMatchObject({ issues: [{ path: ["user_id"] }] })

      const none = yield* ingest(gridAlert([], groupOf(["b@x.example"])))
      expect(none.status).toBe(422)
      expect(none.body).toMatchObject({ issues: [{ path: ["facts", "email_recipients"] }] })

      const nobody = yield* ingest(gridAlert([]))
      expect(nobody.status).toBe(422)
      expect(nobody.body).toMatchObject({ issues: [{ path: ["user_id"] }] })
    }))

  it.effect("malformed bodies are 400 naming the field (the kit's decoding), before any rule", () =>
    Effect.gen(function*() {
      const t = yield* token("svc-grid")
      const missingType = yield* call("POST", "/ingest-event", { token: t, json: { user_id: "u", facts: {} } })
      expect(missingType.status).toBe(400)
      expect(missingType.body).toMatchObject({ issues: [{ path: ["event_type"], message: "is missing" }] })
      const factsNotObject = yield* call("POST", "/ingest-event", { token: t, json: { event_type: "imported_up", user_id: "u", facts: "x" } })
      expect(factsNotObject.status).toBe(400)
      expect(factsNotObject.body).toMatchObject({ issues: [{ path: ["facts"] }] })
      const notJson = yield* call("POST", "/ingest-event", { token: t, text: { body: "{event_type:", contentType: "application/json" } })
      expect(notJson.status).toBe(400)
      expect((notJson.body as { detail: string }).detail).toMatch(/not valid JSON/)
    }))

  it.effect("the typed client decodes every answer: successes, 204 and errors with their outcomes", () =>
    Effect.gen(function*() {
      const t = yield* token("svc-grid")
      const client = yield* HttpApiClient.make(Api, {
        transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(t))
      })
      const user = freshUser()
      const ok = yield* client.ingest.ingestEvent({ payload: importedUp(user) })
      expect(ok).toMatchObject({ result: "dispatched", user_id: user })
      const none = yield* client.ingest.ingestEvent({ payload: importedUp(user, { delta_pct: 1 }) })
      expect(none).toBeInstanceOf(Domain.NoMatchingRule)
      const rejected = yield* Effect.flip(client.ingest.ingestEvent({ payload: importedUp(user, { scenario: "x" }) }))
      expect(rejected).toBeInstanceOf(Domain.IngestRejected)
      expect((rejected as Domain.IngestRejected).outcomes[0]).toMatchObject({ rule_id: "imported_up", outcome: "rejected" })
      const duplicate = yield* Effect.flip(client.ingest.adminIngestEvent({ payload: importedUp(user) }))
      expect(duplicate).toBeInstanceOf(Domain.IngestDeduplicated)
      const invalid = yield* Effect.flip(client.ingest.ingestEvent({ payload: importedUp(user, { cur: "x" }) }))
      expect(invalid).toBeInstanceOf(Domain.IngestInvalidFacts)
      expect((invalid as Domain.IngestInvalidFacts).issues).toEqual([
        { path: ["facts", "cur"], message: "Expected a number, actual \"x\"" }
      ])
      const malformed = yield* Effect.flip(client.ingest.ingestEvent({ payload: { ...importedUp(user), event_type: "" } }).pipe(
        Effect.catchTag("ParseError", (e) => Effect.fail(e))
      ))
      expect(malformed._tag === "ParseError" || malformed._tag === "BadRequest").toBe(true)
    }))
})
