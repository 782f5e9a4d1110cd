/**
 * The commitment lifecycle over HTTP with real tokens, the simulator and PGlite: every state
 * move and every error status of the commitment routes, the full `total`, paging, the one-shot
 * pending view, the export, and what follows a commitment (reminder scheduled, withdrawn,
 * settled nudge).
 */
import { assert, describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Background } from "../src/Background.js"
import type { Commitment } from "../src/Domain.js"
import {
  call,
  community,
  giulia,
  giuliaMeter,
  hourMs,
  iso,
  luca,
  RecordedNudges,
  serviceLayer,
  token,
  userToken
} from "./support/Harness.js"

const soon = () => Date.now() + 2 * hourMs

/** A body for POST /api/commitments, a window starting in `fromNowMs`. */
const body = (suggestion: string, fromNowMs = 2 * hourMs, hours = 1) => ({
  suggestion_id: suggestion,
  period_start: iso(Date.now() + fromNowMs),
  period_end: iso(Date.now() + fromNowMs + hours * hourMs)
})

const create = (who: string, payload: unknown) =>
  Effect.flatMap(userToken(who), (t) => call("POST", "/api/commitments", { token: t, json: payload }))

const created = (who: string, payload: unknown) =>
  Effect.map(create(who, payload), (reply) => {
    expect(reply.status, JSON.stringify(reply.body)).toBe(201)
    return reply.body as Commitment
  })

const admin = token("svc-flexibility")

layer(serviceLayer(), { excludeTestServices: true, timeout: "90 seconds" })("commitments", (it) => {
  describe("create", () => {
    it.effect("a user commits their own meter in their community, read from the digital twin", () =>
      Effect.gen(function*() {
        const c = yield* created("participant", { ...body("s-create"), reward_points_estimated: 7, user_id: giulia })
        expect(c).toMatchObject({
          user_id: giulia,
          suggestion_id: "s-create",
          suggestion_type: "shift-consumption",
          community_id: community,
          device_id: giuliaMeter,
          status: "committed",
          reward_points_estimated: 7,
          reward_points_actual: null,
          actual_kwh: null,
          settled_at: null,
          cancelled_at: null,
          reminded_at: null
        })
        expect(c.id).toMatch(/^[0-9a-f-]{36}$/)
        expect(Date.parse(c.committed_at)).toBeGreaterThan(Date.now() - 60_000)
      }))

    it.effect("a service names the user and takes community and device as given", () =>
      Effect.gen(function*() {
        const reply = yield* call("POST", "/api/commitments", {
          token: yield* admin,
          json: { ...body("s-service"), user_id: "someone", community_id: "c-x", device_id: "d-x" }
        })
        expect(reply.status).toBe(201)
        expect(reply.body).toMatchObject({ user_id: "someone", community_id: "c-x", device_id: "d-x", reward_points_estimated: 0 })
        const missing = yield* call("POST", "/api/commitments", { token: yield* admin, json: body("s-service-2") })
        expect(missing.status).toBe(400)
        expect(missing.body).toMatchObject({ issues: [{ path: ["user_id"] }] })
        // A past commitment a service records: stored, but nobody is reminded of a window that has ended.
        const past = yield* call("POST", "/api/commitments", {
          token: yield* admin,
          json: { ...body("s-service-past", -5 * hourMs), user_id: "someone" }
        })
        expect(past.status).toBe(201)
        yield* Effect.flatMap(Background, (b) => b.idle)
        const nudges = yield* RecordedNudges
        expect(nudges.scheduled.map((e) => e.facts["suggestion_id"])).toContain("s-service")
        const forPast = [...nudges.scheduled, ...nudges.sent].filter((e) => e.facts["suggestion_id"] === "s-service-past")
        expect(forPast).toEqual([])
      }))

    it.effect("a second answer to one suggestion is a 409; after a cancel the suggestion is free again", () =>
      Effect.gen(function*() {
        const first = yield* created("participant", body("s-twice"))
        const second = yield* create("participant", body("s-twice", 3 * hourMs))
        expect(second.status).toBe(409)
        expect(second.body).toEqual({
          detail: `Suggestion s-twice already has commitment ${first.id} (committed); cancel it first`
        })
        // Another user may commit to the same suggestion.
        yield* created("participant-consumer", body("s-twice"))
        expect((yield* call("DELETE", `/api/commitments/${first.id}`, { token: yield* userToken("participant") })).status).toBe(204)
        yield* created("participant", body("s-twice"))
      }))

    it.effect("bad windows, bad devices and foreign communities are refused with what is wrong", () =>
      Effect.gen(function*() {
        const cases: ReadonlyArray<[unknown, number, unknown]> = [
          [{ ...body("s-bad"), period_end: iso(Date.now()) }, 400, { issues: [{ path: ["period_end"], message: "must be after period_start" }] }],
          [{ ...body("s-bad", hourMs, 25) }, 400, { issues: [{ path: ["period_end"], message: "the window may last at most 24 hours" }] }],
          [{ ...body("s-bad"), period_start: "2026-01-01T10:00:00" }, 400, { issues: [{ path: ["period_start"] }] }],
          [{ ...body("s-bad"), period_start: "yesterday" }, 400, { issues: [{ path: ["period_start"] }] }],
          [{ ...body("s-bad"), reward_points_estimated: -1 }, 400, { issues: [{ path: ["reward_points_estimated"] }] }],
          [{ ...body("s-bad"), reward_points_estimated: 2.5 }, 400, { issues: [{ path: ["reward_points_estimated"] }] }],
          [{ ...body("s-bad"), suggestion_id: "" }, 400, { issues: [{ path: ["suggestion_id"] }] }],
          [{ period_start: iso(soon()) }, 400, { issues: [{ path: ["suggestion_id"] }, { path: ["period_end"] }] }],
          [[], 400, {}],
          [{ ...body("s-bad", -3 * hourMs) }, 422, { detail: "The window has ended; commit to a window still to come" }],
          [{ ...body("s-bad"), device_id: "member-luca-greco-meter" }, 422, {
            detail: `Device member-luca-greco-meter is not one of your meters (${giuliaMeter})`
          }],
          [{ ...body("s-bad"), community_id: "another" }, 422, {
            detail: `You are not a member of community another (yours: ${community})`
          }],
          [{ ...body("s-bad"), user_id: luca }, 403, { detail: "Not allowed: not resource owner" }]
        ]
        for (const [payload, status, expected] of cases) {
          const reply = yield* create("participant", payload)
          expect(reply.status, JSON.stringify(payload)).toBe(status)
          expect(reply.body, JSON.stringify(payload)).toMatchObject(expected as object)
        }
        const malformed = yield* call("POST", "/api/commitments", {
          token: yield* userToken("participant"),
          text: { body: "{\"suggestion_id\": ", contentType: "application/json" }
        })
        expect(malformed.status).toBe(400)
        expect((malformed.body as { detail: string }).detail).toMatch(/not valid JSON/)
        // Nothing was stored by any of them.
        const list = yield* call("GET", "/api/commitments?limit=200", { token: yield* admin })
        expect((list.body as { items: Array<Commitment> }).items.filter((c) => c.suggestion_id === "s-bad")).toEqual([])
      }))

    it.effect("a user the digital twin does not know cannot commit (it could never be settled)", () =>
      Effect.gen(function*() {
        const reply = yield* create("nogroup", body("s-nobody"))
        expect(reply.status).toBe(422)
        expect(reply.body).toEqual({
          detail: "The digital twin knows no community membership of yours, so a commitment could never be settled"
        })
      }))
  })

  describe("read, list, cancel", () => {
    it.effect("the owner reads and cancels; another user gets 404; a cancelled commitment cannot move again", () =>
      Effect.gen(function*() {
        const c = yield* created("participant", body("s-cancel"))
        const owner = yield* userToken("participant")
        const other = yield* userToken("participant-consumer")
        expect((yield* call("GET", `/api/commitments/${c.id}`, { token: owner })).body).toEqual(c)
        const foreign = yield* call("GET", `/api/commitments/${c.id}`, { token: other })
        expect(foreign.status).toBe(404)
        expect(foreign.body).toEqual({ detail: `No commitment ${c.id}` })
        expect((yield* call("DELETE", `/api/commitments/${c.id}`, { token: other })).status).toBe(404)
        expect((yield* call("DELETE", `/api/commitments/${c.id}`, { token: owner })).status).toBe(204)
        const again = yield* call("DELETE", `/api/commitments/${c.id}`, { token: owner })
        expect(again.status).toBe(409)
        expect(again.body).toEqual({ detail: `Commitment ${c.id} is cancelled; only a committed commitment can be cancelled` })
        const read = (yield* call("GET", `/api/commitments/${c.id}`, { token: owner })).body as Commitment
        expect(read.status).toBe("cancelled")
        expect(read.cancelled_at).not.toBeNull()
        const settle = yield* call("PATCH", `/api/commitments/${c.id}/settle`, { token: yield* admin, json: { reward_points_actual: 3 } })
        expect(settle.status).toBe(409)
        // Its reminder was withdrawn.
        yield* Effect.flatMap(Background, (b) => b.idle)
        expect((yield* RecordedNudges).unscheduled).toContain(`flexibility-accept:${giulia}:s-cancel`)
      }))

    it.effect("unknown ids are 404, malformed ids 400", () =>
      Effect.gen(function*() {
        const t = yield* userToken("participant")
        const unknown = "00000000-0000-4000-8000-000000000000"
        expect((yield* call("GET", `/api/commitments/${unknown}`, { token: t })).status).toBe(404)
        expect((yield* call("GET", `/api/commitments/${unknown}`, { token: yield* admin })).status).toBe(404)
        expect((yield* call("DELETE", `/api/commitments/${unknown}`, { token: t })).status).toBe(404)
        expect((yield* call("PATCH", `/api/commitments/${unknown}/settle`, { token: yield* admin, json: { reward_points_actual: 1 } })).status)
          .toBe(404)
        const bad = yield* call("GET", "/api/commitments/not-a-uuid", { token: t })
        expect(bad.status).toBe(400)
        expect(bad.body).toMatchObject({ issues: [{ path: ["id"] }] })
      }))

    it.effect("lists return the full total, page with limit and offset, and filter by status", () =>
      Effect.gen(function*() {
        const t = yield* userToken("participant-consumer")
        for (let i = 0; i < 5; i++) yield* created("participant-consumer", body(`s-page-${i}`, (2 + i) * hourMs))
        const all = (yield* call("GET", "/api/commitments?limit=200", { token: t })).body as { items: Array<Commitment>; total: number }
        expect(all.items.every((c) => c.user_id === luca)).toBe(true)
        expect(all.total).toBe(all.items.length)
        const page = (yield* call("GET", "/api/commitments?limit=2&offset=1", { token: t })).body as {
          items: Array<Commitment>
          total: number
          limit: number
          offset: number
        }
        expect(page.items).toEqual(all.items.slice(1, 3))
        expect(page).toMatchObject({ total: all.total, limit: 2, offset: 1 })
        // Newest first.
        expect(all.items.map((c) => c.committed_at)).toEqual([...all.items.map((c) => c.committed_at)].sort().reverse())
        const beyond = (yield* call("GET", `/api/commitments?offset=${all.total + 10}`, { token: t })).body
        expect(beyond).toMatchObject({ items: [], total: all.total })
        const committed = (yield* call("GET", "/api/commitments?status=committed&limit=200", { token: t })).body as {
          items: Array<Commitment>
          total: number
        }
        expect(committed.items.every((c) => c.status === "committed")).toBe(true)
        expect(committed.total).toBe(all.items.filter((c) => c.status === "committed").length)
        // Everyone's for a reading service; one user's with user_id.
        const everyone = (yield* call("GET", "/api/commitments?limit=1", { token: yield* admin })).body as { total: number }
        expect(everyone.total).toBeGreaterThan(all.total)
        const lucas = (yield* call("GET", `/api/commitments?user_id=${luca}&limit=200`, { token: yield* admin })).body
        expect(lucas).toEqual({ ...all, limit: 200, offset: 0 })
      }))

    it.effect("list parameters are validated", () =>
      Effect.gen(function*() {
        const t = yield* userToken("participant")
        for (const query of ["limit=0", "limit=201", "limit=abc", "limit=1.5", "offset=-1", "status=pending", "status="]) {
          const reply = yield* call("GET", `/api/commitments?${query}`, { token: t })
          expect(reply.status, query).toBe(400)
          expect((reply.body as { issues: Array<unknown> }).issues.length, query).toBeGreaterThan(0)
        }
        expect((yield* call("GET", "/api/commitments?limit=200&offset=0", { token: t })).status).toBe(200)
        const foreign = yield* call("GET", `/api/commitments?user_id=${luca}`, { token: t })
        expect(foreign.status).toBe(403)
        expect(foreign.body).toEqual({ detail: "Not allowed: not resource owner" })
      }))
  })

  describe("settle", () => {
    it.effect("an admin settles with the points given and the kWh kept; once", () =>
      Effect.gen(function*() {
        const c = yield* created("participant", body("s-settle"))
        const t = yield* admin
        const bad = yield* call("PATCH", `/api/commitments/${c.id}/settle`, { token: t, json: { reward_points_actual: -2, actual_kwh: -1 } })
        expect(bad.status).toBe(400)
        expect((bad.body as { issues: Array<{ path: Array<string> }> }).issues.map((i) => i.path[0]).sort())
          .toEqual(["actual_kwh", "reward_points_actual"])
        const user = yield* call("PATCH", `/api/commitments/${c.id}/settle`, {
          token: yield* userToken("participant"),
          json: { reward_points_actual: 1000 }
        })
        expect(user.status).toBe(403)
        expect(user.body).toEqual({ detail: "Not allowed: settle is for service accounts only" })
        const settled = yield* call("PATCH", `/api/commitments/${c.id}/settle`, { token: t, json: { reward_points_actual: 17, actual_kwh: 1.72 } })
        expect(settled.status).toBe(200)
        expect(settled.body).toMatchObject({ status: "settled", reward_points_actual: 17, actual_kwh: 1.72 })
        expect((settled.body as Commitment).settled_at).not.toBeNull()
        const again = yield* call("PATCH", `/api/commitments/${c.id}/settle`, { token: t, json: { reward_points_actual: 1 } })
        expect(again.status).toBe(409)
        expect((yield* call("DELETE", `/api/commitments/${c.id}`, { token: yield* userToken("participant") })).status).toBe(409)
        yield* Effect.flatMap(Background, (b) => b.idle)
        const nudge = (yield* RecordedNudges).sent.find((e) => e.facts["commitment_id"] === c.id)
        assert(nudge !== undefined)
        expect(nudge).toMatchObject({
          event_type: "commitment_settled",
          user_id: giulia,
          community_id: community,
          facts: { scenario: "commitment_settled", reward_points_actual: "17", actual_kwh: "1.72", facts_version: "1.0" }
        })
      }))
  })

  describe("pending", () => {
    it.effect("returns each open, unreminded commitment once, and only to admins", () =>
      Effect.gen(function*() {
        const open = yield* created("participant-consumer", body("s-open", -hourMs / 2, 2))
        const later = yield* created("participant-consumer", body("s-later", 3 * hourMs, 1))
        const t = yield* admin
        const first = (yield* call("GET", "/api/commitments/pending", { token: t })).body as Array<Commitment>
        expect(first.map((c) => c.id)).toContain(open.id)
        expect(first.map((c) => c.id)).not.toContain(later.id)
        expect(first.find((c) => c.id === open.id)?.reminded_at).not.toBeNull()
        const second = (yield* call("GET", "/api/commitments/pending", { token: t })).body as Array<Commitment>
        expect(second.map((c) => c.id)).not.toContain(open.id)
        const user = yield* call("GET", "/api/commitments/pending", { token: yield* userToken("participant-consumer") })
        expect(user.status).toBe(403)
        expect((yield* call("GET", "/api/commitments/pending", { token: yield* token("svc-pipelines") })).status).toBe(403)
        expect((yield* call("GET", "/api/commitments/pending?limit=0", { token: t })).status).toBe(400)
      }))
  })

  describe("export", () => {
    it.effect("every commitment oldest first, for the export scope; created_after is inclusive", () =>
      Effect.gen(function*() {
        yield* created("participant", body("s-export"))
        const pipelines = yield* token("svc-pipelines")
        const reply = yield* call("GET", "/api/commitments/export", { token: pipelines })
        expect(reply.status).toBe(200)
        expect(reply.headers["content-type"]).toMatch(/^application\/json/)
        const rows = reply.body as Array<Commitment>
        const everyone = (yield* call("GET", "/api/commitments?limit=200", { token: yield* admin })).body as { total: number }
        expect(rows.length).toBe(everyone.total)
        expect(rows.map((c) => c.committed_at)).toEqual([...rows.map((c) => c.committed_at)].sort())
        expect(new Set(rows.map((c) => c.status)).size).toBeGreaterThan(1)
        const pivot = rows[Math.floor(rows.length / 2)]!
        const after = (yield* call("GET", `/api/commitments/export?created_after=${encodeURIComponent(pivot.committed_at)}`, {
          token: pipelines
        })).body as Array<Commitment>
        expect(after).toEqual(rows.filter((c) => c.committed_at >= pivot.committed_at))
        const future = yield* call("GET", `/api/commitments/export?created_after=${encodeURIComponent(iso(Date.now() + 86_400_000))}`, {
          token: pipelines
        })
        expect(future.body).toEqual([])
        expect((yield* call("GET", "/api/commitments/export?created_after=yesterday", { token: pipelines })).status).toBe(400)
        expect((yield* call("GET", "/api/commitments/export", { token: yield* userToken("participant") })).status).toBe(403)
        expect((yield* call("GET", "/api/commitments/export", { token: yield* token("svc-no-scopes") })).status).toBe(403)
      }))
  })

  describe("authentication", () => {
    it.effect("every route needs a valid token", () =>
      Effect.gen(function*() {
        const id = "00000000-0000-4000-8000-000000000000"
        const routes: ReadonlyArray<[Parameters<typeof call>[0], string]> = [
          ["GET", "/api/suggestions"],
          ["POST", "/api/suggestions/s-1/respond"],
          ["POST", "/api/commitments"],
          ["GET", "/api/commitments"],
          ["GET", "/api/commitments/pending"],
          ["GET", "/api/commitments/export"],
          ["GET", `/api/commitments/${id}`],
          ["DELETE", `/api/commitments/${id}`],
          ["PATCH", `/api/commitments/${id}/settle`]
        ]
        const expired = yield* userToken("participant", { expired: true })
        const idToken = yield* userToken("participant", { kind: "id" })
        for (const [method, path] of routes) {
          const none = yield* call(method, path, { json: {} })
          expect(none.status, `${method} ${path}`).toBe(401)
          expect(none.body).toEqual({ detail: "Missing bearer token" })
          expect((yield* call(method, path, { token: expired, json: {} })).body).toEqual({ detail: "Token has expired" })
          expect((yield* call(method, path, { token: idToken, json: {} })).status).toBe(401)
          expect((yield* call(method, path, { token: "not.a.jwt", json: {} })).status).toBe(401)
        }
        // The proxy header works as Authorization does.
        const proxied = yield* call("GET", "/api/commitments", { headers: { "x-auth-request-access-token": yield* userToken("participant") } })
        expect(proxied.status).toBe(200)
      }))
  })
})
