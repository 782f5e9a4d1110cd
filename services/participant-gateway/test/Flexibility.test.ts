/**
 * The flexibility routes (issue 16 point 6) through the flexibility client with the caller's
 * token: suggestions and answers, commitments (list, create, read, cancel), the points total, and
 * another user's commitment as a 404.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { FlexibilityState, suggestion } from "./support/FakeFlexibility.js"
import * as FakeFlexibility from "./support/FakeFlexibility.js"
import { NudgingState } from "./support/FakeNudging.js"
import * as FakeNudging from "./support/FakeNudging.js"
import { TwinState } from "./support/FakeTwin.js"
import { call, gatewayLayer, token, users } from "./support/Harness.js"

const flexibility = new FlexibilityState()
const clients = Layer.mergeAll(new TwinState().layer(), FakeNudging.clientLayer(new NudgingState()), FakeFlexibility.clientLayer(flexibility))

flexibility.suggestions.set(users.participant, [
  suggestion("w-1", "2026-05-03T11:00:00.000Z", "2026-05-03T13:00:00.000Z"),
  suggestion("w-2", "2026-05-04T10:00:00.000Z", "2026-05-04T12:00:00.000Z")
])
// 450 settled commitments worth 1..450 points (three pages of 200), 3 open ones, a cancelled one.
for (let i = 1; i <= 450; i++) flexibility.add(users.participant, { status: "settled", reward_points_actual: i })
for (let i = 0; i < 3; i++) flexibility.add(users.participant, { status: "committed", reward_points_estimated: 7 })
flexibility.add(users.participant, { status: "cancelled", reward_points_estimated: 100 })
const lucas = flexibility.add(users.consumer, { status: "committed" })

interface Page {
  readonly items: ReadonlyArray<{ readonly id: string; readonly user_id: string; readonly status: string }>
  readonly total: number
}

layer(gatewayLayer(() => Effect.succeed({ clients })), { excludeTestServices: true, timeout: "60 seconds" })("flexibility", (it) => {
  it.effect("lists the caller's suggestions", () =>
    Effect.gen(function*() {
      const reply = yield* call("GET", "/api/suggestions", { token: yield* token("participant") })
      expect(reply.status).toBe(200)
      expect((reply.body as Array<{ id: string }>).map((s) => s.id)).toEqual(["w-1", "w-2"])
      expect((yield* call("GET", "/api/suggestions", { token: yield* token("participant-consumer") })).body).toEqual([])
    }))

  it.effect("accepting a suggestion commits; declining records nothing; a second accept is a 409", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      const accepted = yield* call("POST", "/api/suggestions/w-1/respond", { token: t, json: { response: "accepted" } })
      expect(accepted.status).toBe(200)
      const body = accepted.body as { commitment_id: string; status: string; reward_points_estimated: number }
      expect(body).toMatchObject({ status: "committed", reward_points_estimated: 12 })
      expect(flexibility.commitments.get(body.commitment_id)).toMatchObject({ user_id: users.participant, suggestion_id: "w-1" })
      const declined = yield* call("POST", "/api/suggestions/w-2/respond", { token: t, json: { response: "declined" } })
      expect(declined.body).toEqual({ commitment_id: null, status: "declined", reward_points_estimated: 0 })
      const twice = yield* call("POST", "/api/suggestions/w-1/respond", { token: t, json: { response: "accepted" } })
      expect(twice.status).toBe(409)
      expect(twice.body).toEqual({ detail: "Flexibility service refused respond: Already committed to w-1" })
      const unknown = yield* call("POST", "/api/suggestions/w-9/respond", { token: t, json: { response: "accepted" } })
      expect(unknown.status).toBe(404)
      const bad = yield* call("POST", "/api/suggestions/w-1/respond", { token: t, json: { response: "maybe" } })
      expect(bad.status).toBe(400)
    }))

  it.effect("lists the caller's commitments with the flexibility service's paging", () =>
    Effect.gen(function*() {
      const reply = yield* call("GET", "/api/commitments?status=committed&limit=2", { token: yield* token("participant") })
      expect(reply.status).toBe(200)
      const page = reply.body as Page
      expect(page.total).toBe(4)
      expect(page.items).toHaveLength(2)
      expect(page.items.every((c) => c.user_id === users.participant && c.status === "committed")).toBe(true)
      const asked = flexibility.callsOf("list_commitments").at(-1)!
      expect(asked.input).toEqual({ status: "committed", limit: 2, offset: 0 })
      expect((yield* call("GET", "/api/commitments?limit=0", { token: yield* token("participant") })).status).toBe(400)
    }))

  it.effect("creates a commitment (201), reads it, cancels it; a second cancel is a 409", () =>
    Effect.gen(function*() {
      const t = yield* token("participant-consumer")
      const created = yield* call("POST", "/api/commitments", {
        token: t,
        json: { suggestion_id: "w-7", period_start: "2026-05-05T10:00:00Z", period_end: "2026-05-05T11:30:00+00:00" }
      })
      expect(created.status).toBe(201)
      const c = created.body as { id: string; user_id: string; period_end: string }
      expect(c).toMatchObject({ user_id: users.consumer, period_end: "2026-05-05T11:30:00.000Z" })
      expect((yield* call("GET", `/api/commitments/${c.id}`, { token: t })).body).toEqual(created.body)
      expect((yield* call("DELETE", `/api/commitments/${c.id}`, { token: t })).status).toBe(204)
      expect(flexibility.commitments.get(c.id)!.status).toBe("cancelled")
      const again = yield* call("DELETE", `/api/commitments/${c.id}`, { token: t })
      expect(again.status).toBe(409)
    }))

  it.effect("a window that ends before it starts, or lasts over 24 hours, is a 400 before anything is sent", () =>
    Effect.gen(function*() {
      const before = flexibility.callsOf("create_commitment").length
      const reply = yield* call("POST", "/api/commitments", {
        token: yield* token("participant"),
        json: { suggestion_id: "w-7", period_start: "2026-05-05T10:00:00Z", period_end: "2026-05-07T10:00:00Z" }
      })
      expect(reply.status).toBe(400)
      expect(reply.body).toMatchObject({ issues: [{ path: ["period_end"], message: "the window may last at most 24 hours" }] })
      expect(flexibility.callsOf("create_commitment").length).toBe(before)
    }))

  it.effect("another user's commitment is a 404 for reading and cancelling", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      const read = yield* call("GET", `/api/commitments/${lucas.id}`, { token: t })
      expect(read.status).toBe(404)
      const cancel = yield* call("DELETE", `/api/commitments/${lucas.id}`, { token: t })
      expect(cancel.status).toBe(404)
      expect(flexibility.commitments.get(lucas.id)!.status).toBe("committed")
      expect((yield* call("GET", "/api/commitments/not-a-uuid", { token: t })).status).toBe(400)
    }))

  it.effect("the points total sums every settled commitment over every page, and estimates the open ones", () =>
    Effect.gen(function*() {
      const reply = yield* call("GET", "/api/points", { token: yield* token("participant") })
      expect(reply.status).toBe(200)
      // The three open ones of the fixture plus the one committed by accepting w-1 (12 points).
      expect(reply.body).toEqual({
        total_points: (450 * 451) / 2,
        settled_commitments: 450,
        pending_points_estimated: 3 * 7 + 12,
        open_commitments: 4
      })
      expect((yield* call("GET", "/api/points", { token: yield* token("nogroup") })).body).toEqual({
        total_points: 0,
        settled_commitments: 0,
        pending_points_estimated: 0,
        open_commitments: 0
      })
    }))

  it.effect("the flexibility service failing is a 502; its refusal keeps its status", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      flexibility.fail("list_suggestions", { status: 500, detail: "boom" })
      expect((yield* call("GET", "/api/suggestions", { token: t })).status).toBe(502)
      flexibility.fail("list_suggestions", { status: 403, detail: "Not allowed: users only" })
      const refused = yield* call("GET", "/api/suggestions", { token: t })
      expect(refused.status).toBe(403)
      expect(refused.body).toEqual({ detail: "Flexibility service refused list_suggestions: Not allowed: users only" })
      flexibility.heal()
    }))
})
