/**
 * Nudges on pipeline runs (reference A6): the opportunity broadcast on `rec-forecasting-flow`
 * reaches every member of every community the registry lists (two communities of the simulator
 * here) once per run, whatever the number of deliveries or replicas; a member the nudging
 * service refused is tried again on the next delivery; a community without a forecast does not
 * stop the others. Window-open reminders on `meters-flow` go out once per commitment, and one the
 * nudging service refused is sent on the next run.
 */
import { assert, describe, expect, layer } from "@effect/vitest"
import { DigitalTwinClient, SimulatorSynthetic, SimulatorWorld } from "@rec/digital-twin"
import type { PipelineRuns } from "@rec/mqtt"
import { Upstream } from "@rec/platform"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { Background } from "../src/Background.js"
import type { Commitment } from "../src/Domain.js"
import * as ForecastWindows from "../src/ForecastWindows.js"
import { PipelineReactions } from "../src/PipelineListener.js"
import * as Points from "../src/Points.js"
import { clockTime } from "../src/SuggestionMapping.js"
import { call, community, fixedCommunities, hourMs, iso, RecordedNudges, serviceLayer, token } from "./support/Harness.js"

const second = { id: "it-second-community", members: 8 }
const firstMembers = SimulatorWorld.community.participants.map((p) => p.sub)
const secondMembers = Array.from({ length: second.members }, (_, i) => SimulatorSynthetic.participantSub(second.id, i + 1, second.members))

const run = (flow: string, runId: string): PipelineRuns.PipelineRunEvent => ({
  flow,
  namespace: "rec",
  status: "completed",
  run_id: runId,
  timestamp: new Date().toISOString()
})

const handle = (event: PipelineRuns.PipelineRunEvent) =>
  Effect.flatMap(PipelineReactions, (r) => r.handle(event)).pipe(Effect.zipRight(Effect.flatMap(Background, (b) => b.idle)))

const opportunities = Effect.map(RecordedNudges, (n) => n.sent.filter((e) => e.event_type === "flexibility_opportunity"))

const setup = serviceLayer({
  simulator: { syntheticCommunities: [second] },
  communities: fixedCommunities({
    [community]: firstMembers,
    [second.id]: secondMembers,
    // Listed by the registry, unknown to the digital twin: no forecast.
    "it-ghost-community": ["ghost-1", "ghost-2"]
  })
})

layer(setup, { excludeTestServices: true, timeout: "90 seconds" })("nudges on pipeline runs", (it) => {
  describe("opportunity broadcast", () => {
    it.effect("reaches every member of both communities once, with its community's first window", () =>
      Effect.gen(function*() {
        const dt = yield* DigitalTwinClient
        const now = Date.now()
        const expectedWindow = (id: string, at: number) =>
          Effect.map(
            dt.communities.forecast(id, { start: DateTime.unsafeMake(at), end: DateTime.unsafeMake(at + 24 * hourMs) }),
            (f) => ForecastWindows.detectWindows(f.items)[0]
          )
        // Two replicas handling the same event at once, then the event delivered again.
        yield* Effect.all([handle(run("rec-forecasting-flow", "forecast-1")), handle(run("rec-forecasting-flow", "forecast-1"))], {
          concurrency: 2
        })
        yield* handle(run("rec-forecasting-flow", "forecast-1"))
        const sent = yield* opportunities
        const recipients = sent.map((e) => `${e.community_id}/${e.user_id}`).sort()
        expect(recipients).toEqual([
          ...firstMembers.map((m) => `${community}/${m}`),
          ...secondMembers.map((m) => `${second.id}/${m}`)
        ].sort())
        const after = Date.now()
        for (const id of [community, second.id]) {
          // The forecast as the broadcast read it (an hour may have begun in between: either side).
          const windows = [yield* expectedWindow(id, now), yield* expectedWindow(id, after)]
          assert(windows[0] !== undefined, `the simulator's forecast of ${id} has a surplus window`)
          const facts = sent.find((e) => e.community_id === id)?.facts
          const expected = windows.flatMap((w) =>
            w === undefined ? [] : [{
              facts_version: "1.0",
              scenario: "flexibility_opportunity",
              window_start: clockTime(w.start),
              window_end: clockTime(w.end),
              estimated_kwh: ForecastWindows.pythonFloatText(w.estimatedKwh),
              reward_points: String(Points.roundHalfEven(w.estimatedKwh * 10)),
              period: iso(w.start).slice(0, 10)
            }]
          )
          expect(expected).toContainEqual(facts)
          // Every member of a community gets the same facts.
          expect(new Set(sent.filter((e) => e.community_id === id).map((e) => JSON.stringify(e.facts))).size).toBe(1)
        }
        // A new run is a new broadcast.
        yield* handle(run("rec-forecasting-flow", "forecast-2"))
        expect((yield* opportunities).length).toBe(2 * (firstMembers.length + secondMembers.length))
      }))

    it.effect("a member the nudging service refused is tried again when the event comes again, alone", () =>
      Effect.gen(function*() {
        const nudges = yield* RecordedNudges
        const unlucky = secondMembers[3]!
        nudges.answer = (event) =>
          event.user_id === unlucky
            ? new Upstream.UpstreamFailure({ upstream: "nudging service", operation: "ingest_event", status: 502, detail: "down" })
            : "delivered"
        const before = (yield* opportunities).length
        yield* handle(run("rec-forecasting-flow", "forecast-3"))
        const first = (yield* opportunities).slice(before)
        expect(first.map((e) => e.user_id)).not.toContain(unlucky)
        expect(first.length).toBe(firstMembers.length + secondMembers.length - 1)
        nudges.answer = () => "delivered"
        yield* handle(run("rec-forecasting-flow", "forecast-3"))
        const retried = (yield* opportunities).slice(before + first.length)
        expect(retried.map((e) => e.user_id)).toEqual([unlucky])
      }))
  })

  describe("window-open reminders", () => {
    it.effect("each open commitment is reminded once; a refused reminder is sent on the next run", () =>
      Effect.gen(function*() {
        const admin = yield* token("svc-flexibility")
        const open = []
        for (const user of ["r-user-1", "r-user-2", "r-user-3"]) {
          const reply = yield* call("POST", "/api/commitments", {
            token: admin,
            json: {
              user_id: user,
              suggestion_id: "s-open",
              community_id: community,
              period_start: iso(Date.now() - hourMs / 2),
              period_end: iso(Date.now() + hourMs),
              reward_points_estimated: 9
            }
          })
          open.push(reply.body as Commitment)
        }
        const nudges = yield* RecordedNudges
        nudges.answer = (event) =>
          event.user_id === "r-user-2"
            ? new Upstream.UpstreamFailure({ upstream: "nudging service", operation: "ingest_event", status: 504, detail: "timeout" })
            : "delivered"
        const reminders = () => nudges.sent.filter((e) => e.event_type === "flexibility_reminder" && e.facts["suggestion_id"] === undefined)
        yield* handle(run("meters-flow", "meters-1"))
        expect(reminders().map((e) => e.user_id).sort()).toEqual(["r-user-1", "r-user-3"])
        const one = reminders().find((e) => e.user_id === "r-user-1")
        expect(one).toMatchObject({
          community_id: community,
          facts: {
            facts_version: "1.0",
            scenario: "flexibility_reminder",
            commitment_id: open[0]!.id,
            window_start: clockTime(Date.parse(open[0]!.period_start)),
            window_end: clockTime(Date.parse(open[0]!.period_end)),
            reward_points_estimated: "9",
            period: open[0]!.period_start.slice(0, 10)
          }
        })
        nudges.answer = () => "delivered"
        yield* handle(run("meters-flow", "meters-2"))
        yield* handle(run("meters-flow", "meters-3"))
        expect(reminders().map((e) => e.user_id).sort()).toEqual(["r-user-1", "r-user-2", "r-user-3"])
        // Taken by the reminders, so not pending any more.
        const pending = (yield* call("GET", "/api/commitments/pending", { token: admin })).body as Array<Commitment>
        expect(pending.filter((c) => c.suggestion_id === "s-open")).toEqual([])
      }))
  })
})
