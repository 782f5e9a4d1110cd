/**
 * Suggestions from the simulator with the user's own token (reference A2) and the answers to
 * them (A3): accept with the digital twin's window, decline, every conflict, and what follows an
 * accepted suggestion (reminder scheduled 15 minutes before the window). A digital twin that
 * fails is a 502 with `{detail}`, not an empty list.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { assert, describe, expect, layer } from "@effect/vitest"
import { defaultSimulatorOptions, DigitalTwinClient, SimulatorSynthetic, SimulatorWorld } from "@rec/digital-twin"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Background } from "../src/Background.js"
import type { Commitment, RespondResponse, Suggestion } from "../src/Domain.js"
import * as SuggestionMapping from "../src/SuggestionMapping.js"
import {
  call,
  giulia,
  giuliaMeter,
  hourMs,
  iso,
  memberToken,
  RecordedNudges,
  serviceLayer,
  token,
  userToken
} from "./support/Harness.js"

/**
 * A synthetic community large enough that its forecast has surplus hours on any day of the year,
 * and its member who can move the most consumption: the simulator offers them windows whatever
 * the date and the weather (the dev users' community may offer none on a dark winter day).
 */
const synthetic = { id: "it-suggestions-community", members: 30 }
const member = (() => {
  const built = SimulatorSynthetic.build(defaultSimulatorOptions.seed, synthetic)
  const best = [...built.participants].sort((a, b) => b.annualConsumptionKwh * b.flexibleShare - a.annualConsumptionKwh * a.flexibleShare)[0]!
  return { sub: best.sub, meter: SimulatorWorld.meterSensorId(best) }
})()

/** A token: a dev user's name, or the synthetic member (`member`). */
const tokenOf = (who: string) => (who === "member" ? memberToken(member.sub) : userToken(who))

const suggestions = (who = "member") =>
  Effect.flatMap(tokenOf(who), (t) =>
    Effect.map(call("GET", "/api/suggestions", { token: t }), (reply) => {
      expect(reply.status, JSON.stringify(reply.body)).toBe(200)
      return reply.body as Array<Suggestion>
    }))

const respond = (id: string, payload: unknown, who = "member") =>
  Effect.flatMap(tokenOf(who), (t) => call("POST", `/api/suggestions/${encodeURIComponent(id)}/respond`, { token: t, json: payload }))

/** The windows the simulator offers a participant right now, read as they would. */
const twinWindows = (who: string, sub: string, meter: string) =>
  Effect.gen(function*() {
    const dt = yield* DigitalTwinClient
    const result = yield* dt.withToken(yield* tokenOf(who)).participants.flexibilityWindows(sub, { device_id: meter })
    return result.items
  })

layer(serviceLayer({ simulator: { syntheticCommunities: [synthetic] } }), { excludeTestServices: true, timeout: "90 seconds" })("suggestions", (it) => {
  it.effect("are the digital twin's windows, mapped, at least 0.5 kWh, at most two", () =>
    Effect.gen(function*() {
      for (const [who, sub, meter] of [["member", member.sub, member.meter], ["participant", giulia, giuliaMeter]] as const) {
        const windows = yield* twinWindows(who, sub, meter)
        const listed = yield* suggestions(who)
        expect(listed).toEqual(SuggestionMapping.suggestionsOf(windows, new Set(), Date.now()))
        expect(listed.length).toBeLessThanOrEqual(2)
        for (const s of listed) {
          expect(s.impact_kwh_estimated).toBeGreaterThanOrEqual(0.5)
          expect(windows.map((w) => w._id)).toContain(s.id)
        }
        if (who === "member") expect(listed.length).toBeGreaterThan(0)
      }
    }))

  it.effect("a user the digital twin does not know has none; services have none", () =>
    Effect.gen(function*() {
      expect(yield* suggestions("nogroup")).toEqual([])
      const service = yield* call("GET", "/api/suggestions", { token: yield* token("svc-flexibility") })
      expect(service.status).toBe(403)
      expect(service.body).toEqual({
        detail: "Not allowed: suggestions are computed with a user's own token: service accounts have none"
      })
      expect((yield* call("POST", "/api/suggestions/x/respond", { token: yield* token("svc-flexibility"), json: { response: "declined" } })).status)
        .toBe(403)
    }))

  describe("respond", () => {
    it.effect("accepting takes the window and the estimate from the digital twin, and hides the suggestion", () =>
      Effect.gen(function*() {
        const [first] = yield* suggestions()
        assert(first !== undefined)
        const respondedAt = Date.now()
        const reply = yield* respond(first.id, { response: "accepted" })
        const answeredAt = Date.now()
        expect(reply.status, JSON.stringify(reply.body)).toBe(200)
        const answer = reply.body as RespondResponse
        expect(answer).toMatchObject({ status: "committed", reward_points_estimated: first.reward_points })
        assert(answer.commitment_id !== null)
        const stored = (yield* call("GET", `/api/commitments/${answer.commitment_id}`, { token: yield* memberToken(member.sub) })).body
        expect(stored).toMatchObject({
          suggestion_id: first.id,
          period_start: first.period_start,
          period_end: first.period_end,
          community_id: synthetic.id,
          device_id: member.meter,
          status: "committed"
        })
        expect((yield* suggestions()).map((s) => s.id)).not.toContain(first.id)
        // The reminder 15 minutes before the window, keyed by user and suggestion; the twin's
        // windows follow the wall clock, so when the first one starts within those 15 minutes
        // the reminder goes out at once instead (and only then).
        yield* Effect.flatMap(Background, (b) => b.idle)
        const nudges = yield* RecordedNudges
        const remindAt = Date.parse(first.period_start) - 15 * 60_000
        const reminder = {
          event_type: "flexibility_reminder",
          user_id: member.sub,
          community_id: synthetic.id,
          facts: {
            facts_version: "1.0",
            scenario: "flexibility_reminder",
            commitment_id: answer.commitment_id,
            window_start: first.to_time,
            reward_points_estimated: String(first.reward_points),
            period: first.period_start.slice(0, 10)
          }
        }
        const scheduled = nudges.scheduled.find((e) => e.facts["suggestion_id"] === first.id)
        const sentNow = nudges.sent.find((e) => e.event_type === "flexibility_reminder" && e.facts["suggestion_id"] === first.id)
        if (remindAt > answeredAt) {
          assert(scheduled !== undefined)
          expect(sentNow).toBeUndefined()
          expect(scheduled).toMatchObject({
            ...reminder,
            external_key: `flexibility-accept:${member.sub}:${first.id}`,
            trigger_at: iso(remindAt)
          })
        } else if (remindAt <= respondedAt) {
          expect(scheduled).toBeUndefined()
          expect(sentNow).toMatchObject(reminder)
        } else {
          // The lead passed while the request ran: one of the two, never both.
          expect([scheduled, sentNow].filter((e) => e !== undefined)).toHaveLength(1)
        }
        // Answering again either way is a conflict.
        const twice = yield* respond(first.id, { response: "accepted" })
        expect(twice.status).toBe(409)
        expect(twice.body).toEqual({
          detail: `Suggestion ${first.id} already has commitment ${answer.commitment_id} (committed); cancel it first`
        })
        const decline = yield* respond(first.id, { response: "declined" })
        expect(decline.status).toBe(409)
        expect((decline.body as { detail: string }).detail).toMatch(/cancel the commitment instead of declining$/)
        // Cancelled, the window is offered again and can be accepted again.
        expect((yield* call("DELETE", `/api/commitments/${answer.commitment_id}`, { token: yield* memberToken(member.sub) })).status)
          .toBe(204)
        expect((yield* suggestions()).map((s) => s.id)).toContain(first.id)
        expect((yield* respond(first.id, { response: "accepted" })).status).toBe(200)
      }))

    it.effect("declining records a rejected commitment without the twin; again is the same answer; then no accept", () =>
      Effect.gen(function*() {
        const id = "fw-declined-by-luca"
        const declined = { commitment_id: null, status: "declined", reward_points_estimated: 0 }
        const start = Date.now() + 5 * hourMs
        const first = yield* respond(id, { response: "declined", period_start: iso(start), period_end: iso(start + hourMs), reward_points: 4 }, "participant-consumer")
        expect(first.status).toBe(200)
        expect(first.body).toEqual(declined)
        expect((yield* respond(id, { response: "declined" }, "participant-consumer")).body).toEqual(declined)
        const list = (yield* call("GET", "/api/commitments?status=rejected", { token: yield* userToken("participant-consumer") })).body as {
          items: Array<Commitment>
        }
        const rejected = list.items.filter((c) => c.suggestion_id === id)
        expect(rejected).toHaveLength(1)
        expect(rejected[0]).toMatchObject({ status: "rejected", period_start: iso(start), reward_points_estimated: 4, device_id: null })
        const accept = yield* respond(id, { response: "accepted" }, "participant-consumer")
        expect(accept.status).toBe(409)
        expect((accept.body as { detail: string }).detail).toMatch(/was declined/)
      }))

    it.effect("a window the twin does not offer is a 404; a window given in the body is taken as given", () =>
      Effect.gen(function*() {
        const unknown = yield* respond("fw-no-such-window", { response: "accepted" })
        expect(unknown.status).toBe(404)
        expect(unknown.body).toEqual({
          detail: "No open flexibility window fw-no-such-window for you (it may have ended); list /api/suggestions again"
        })
        const start = Date.now() + 4 * hourMs
        const given = yield* respond("fw-own-window", {
          response: "accepted",
          period_start: iso(start),
          period_end: iso(start + 2 * hourMs)
        })
        expect(given.status).toBe(200)
        // Without points in the body or the twin: the original's 10.
        expect(given.body).toMatchObject({ status: "committed", reward_points_estimated: 10 })
        const ended = yield* respond("fw-ended-window", {
          response: "accepted",
          period_start: iso(Date.now() - 3 * hourMs),
          period_end: iso(Date.now() - 2 * hourMs)
        })
        expect(ended.status).toBe(422)
      }))

    it.effect("bodies are validated: response, window pairs, order, points", () =>
      Effect.gen(function*() {
        const cases: ReadonlyArray<[unknown, ReadonlyArray<string>]> = [
          [{}, ["response"]],
          [{ response: "accept" }, ["response"]],
          [{ response: "accepted", period_start: iso(Date.now() + hourMs) }, ["period_end"]],
          [{ response: "accepted", period_start: iso(Date.now() + 2 * hourMs), period_end: iso(Date.now() + hourMs) }, ["period_end"]],
          [{ response: "declined", reward_points: -5 }, ["reward_points"]],
          [{ response: "declined", period_start: "tomorrow", period_end: "later" }, ["period_start", "period_end"]]
        ]
        for (const [payload, paths] of cases) {
          const reply = yield* respond("fw-x", payload)
          expect(reply.status, JSON.stringify(payload)).toBe(400)
          const issues = (reply.body as { issues: Array<{ path: Array<string> }> }).issues
          expect(issues.map((i) => i.path[0]).sort(), JSON.stringify(payload)).toEqual([...paths].sort())
        }
      }))
  })
})

/** A digital twin nobody answers on: every call fails (connection refused). */
const unreachableTwin = DigitalTwinClient.layer({ baseUrl: "http://127.0.0.1:9", timeout: "3 seconds" }).pipe(
  Layer.provide(FetchHttpClient.layer)
)

layer(serviceLayer({ digitalTwin: unreachableTwin }), { excludeTestServices: true, timeout: "60 seconds" })("digital twin down", (it) => {
  it.effect("suggestions, accepting and a user's commitment are a 502 naming the digital twin; declining still works", () =>
    Effect.gen(function*() {
      const t = yield* userToken("participant")
      const list = yield* call("GET", "/api/suggestions", { token: t })
      expect(list.status).toBe(502)
      expect((list.body as { detail: string }).detail).toMatch(/^Digital twin failed assets: The digital twin is unreachable/)
      const accept = yield* call("POST", "/api/suggestions/fw-1/respond", { token: t, json: { response: "accepted" } })
      expect(accept.status).toBe(502)
      const create = yield* call("POST", "/api/commitments", {
        token: t,
        json: { suggestion_id: "fw-1", period_start: iso(Date.now() + hourMs), period_end: iso(Date.now() + 2 * hourMs) }
      })
      expect(create.status).toBe(502)
      const decline = yield* call("POST", "/api/suggestions/fw-1/respond", { token: t, json: { response: "declined" } })
      expect(decline.status).toBe(200)
      // Nothing half-written: only the decline is stored.
      const mine = (yield* call("GET", "/api/commitments", { token: t })).body as { items: Array<Commitment> }
      expect(mine.items.map((c) => c.status)).toEqual(["rejected"])
    }))
})
