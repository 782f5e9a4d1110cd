/**
 * Settlement on `rec-flexibility-flow` (reference A4) against the simulator's hourly
 * consumption: the points are the ledger's (`round(kWh x 10)`, ties to even, Python's sum), rows
 * without data or whose twin call failed stay committed for a later run, a second run settles
 * nothing twice and nudges nobody twice. A fake twin with exact halves checks the rounding end to
 * end.
 */
import { assert, describe, expect, layer } from "@effect/vitest"
import { DigitalTwinClient, type DigitalTwinClientService } from "@rec/digital-twin"
import type { PipelineRuns } from "@rec/mqtt"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Background } from "../src/Background.js"
import type { Commitment } from "../src/Domain.js"
import { PipelineReactions } from "../src/PipelineListener.js"
import * as Points from "../src/Points.js"
import {
  call,
  community,
  dayStart,
  giulia,
  giuliaMeter,
  hourMs,
  iso,
  luca,
  RecordedNudges,
  serviceLayer,
  token
} from "./support/Harness.js"

const yesterday = dayStart(-1)
const day = iso(yesterday).slice(0, 10)

const flexibilityRun = (runId: string, period = day): PipelineRuns.PipelineRunEvent => ({
  flow: "rec-flexibility-flow",
  namespace: "rec",
  status: "completed",
  run_id: runId,
  timestamp: new Date().toISOString(),
  period
})

const handle = (event: PipelineRuns.PipelineRunEvent) =>
  Effect.flatMap(PipelineReactions, (r) => r.handle(event)).pipe(Effect.zipRight(Effect.flatMap(Background, (b) => b.idle)))

/** A commitment made by the admin account, as a pipeline would. */
const commit = (fields: { user: string; suggestion: string; start: number; end: number; device?: string | null; community?: string | null }) =>
  Effect.gen(function*() {
    const reply = yield* call("POST", "/api/commitments", {
      token: yield* token("svc-flexibility"),
      json: {
        user_id: fields.user,
        suggestion_id: fields.suggestion,
        period_start: iso(fields.start),
        period_end: iso(fields.end),
        community_id: fields.community === undefined ? community : fields.community,
        device_id: fields.device === undefined ? giuliaMeter : fields.device,
        reward_points_estimated: 5
      }
    })
    expect(reply.status, JSON.stringify(reply.body)).toBe(201)
    return reply.body as Commitment
  })

const read = (id: string) =>
  Effect.flatMap(token("svc-flexibility"), (t) => Effect.map(call("GET", `/api/commitments/${id}`, { token: t }), (r) => r.body as Commitment))

layer(serviceLayer(), { excludeTestServices: true, timeout: "90 seconds" })("settlement against the simulator", (it) => {
  it.effect("settles the day's ended windows with the twin's hourly consumption; the rest waits", () =>
    Effect.gen(function*() {
      const dt = yield* DigitalTwinClient
      const morning = yield* commit({ user: giulia, suggestion: "s-morning", start: yesterday + 10 * hourMs, end: yesterday + 12 * hourMs })
      // Another suggestion over the same window of the same meter: one question to the twin, same answer.
      const twin = yield* commit({ user: giulia, suggestion: "s-morning-2", start: yesterday + 10 * hourMs, end: yesterday + 12 * hourMs })
      const evening = yield* commit({ user: giulia, suggestion: "s-evening", start: yesterday + 18 * hourMs, end: yesterday + 21 * hourMs })
      // No whole hour inside the window: the twin has no hourly row for it.
      const short = yield* commit({ user: giulia, suggestion: "s-short", start: yesterday + 10 * hourMs + 15 * 60_000, end: yesterday + 10 * hourMs + 45 * 60_000 })
      // A meter the twin does not know: its call fails.
      const unknown = yield* commit({ user: luca, suggestion: "s-unknown", start: yesterday + 8 * hourMs, end: yesterday + 9 * hourMs, device: "no-such-meter" })
      // Without a meter it cannot be settled at all.
      const deviceless = yield* commit({ user: luca, suggestion: "s-nodevice", start: yesterday + 8 * hourMs, end: yesterday + 9 * hourMs, device: null })
      // Ends today: not yesterday's.
      const overnight = yield* commit({ user: giulia, suggestion: "s-overnight", start: yesterday + 23 * hourMs, end: yesterday + 25 * hourMs })
      const cancelled = yield* commit({ user: giulia, suggestion: "s-cancelled", start: yesterday + 9 * hourMs, end: yesterday + 10 * hourMs })
      expect((yield* call("DELETE", `/api/commitments/${cancelled.id}`, { token: yield* token("svc-flexibility") })).status).toBe(204)

      yield* handle(flexibilityRun("run-1"))

      for (const c of [morning, evening]) {
        const rows = (yield* dt.communities.settlement(community, {
          device_id: giuliaMeter,
          window_start: DateTime.unsafeMake(c.period_start),
          window_end: DateTime.unsafeMake(c.period_end)
        })).items
        expect(rows.length).toBe((Date.parse(c.period_end) - Date.parse(c.period_start)) / hourMs)
        const expected = Points.settle(rows.map((r) => r.consumption_kwh))
        const settled = yield* read(c.id)
        expect(settled).toMatchObject({ status: "settled", reward_points_actual: expected.points, actual_kwh: expected.kwh })
        expect(expected.points).toBe(Points.roundHalfEven(Points.pythonSum(rows.map((r) => r.consumption_kwh)) * 10))
      }
      expect(yield* read(twin.id)).toMatchObject({ status: "settled", reward_points_actual: (yield* read(morning.id)).reward_points_actual })
      for (const c of [short, unknown, deviceless, overnight]) {
        expect((yield* read(c.id)).status, c.suggestion_id).toBe("committed")
      }
      expect((yield* read(cancelled.id)).status).toBe("cancelled")

      // Each settled user is told once.
      const nudges = yield* RecordedNudges
      const settledNudges = () => nudges.sent.filter((e) => e.event_type === "commitment_settled")
      expect(settledNudges().map((e) => e.facts["commitment_id"]).sort()).toEqual([morning.id, twin.id, evening.id].sort())

      // Again (a redelivered event, another replica): nothing changes, nobody is told twice.
      const before = yield* read(morning.id)
      yield* handle(flexibilityRun("run-1"))
      yield* handle(flexibilityRun("run-2"))
      expect(yield* read(morning.id)).toEqual(before)
      expect(settledNudges()).toHaveLength(3)

      // Today's run settles the overnight window once it has ended.
      yield* handle(flexibilityRun("run-3", iso(dayStart(0)).slice(0, 10)))
      expect((yield* read(overnight.id)).status).toBe(Date.now() >= Date.parse(overnight.period_end) ? "settled" : "committed")
    }))

  it.effect("other flows and days leave commitments alone; a day's run only settles that day", () =>
    Effect.gen(function*() {
      const c = yield* commit({ user: giulia, suggestion: "s-two-days-ago", start: dayStart(-2) + 10 * hourMs, end: dayStart(-2) + 11 * hourMs })
      yield* handle({ ...flexibilityRun("run-x"), flow: "some-other-flow" })
      yield* handle(flexibilityRun("run-y"))
      expect((yield* read(c.id)).status).toBe("committed")
      yield* handle(flexibilityRun("run-z", iso(dayStart(-2)).slice(0, 10)))
      expect((yield* read(c.id)).status).toBe("settled")
    }))
})

/** A digital twin whose hourly consumption is given per meter (exact halves at x10). */
const halvesTwin = (readings: Readonly<Record<string, ReadonlyArray<number>>>) =>
  Layer.succeed(DigitalTwinClient, {
    communities: {
      settlement: (_community: string, payload: { readonly device_id: string; readonly window_start: DateTime.Utc; readonly window_end: DateTime.Utc }) =>
        Effect.succeed({
          items: (readings[payload.device_id] ?? []).map((kwh, i) => ({
            ts: iso(payload.window_start.epochMillis + i * hourMs),
            device_id: payload.device_id,
            consumption_kwh: kwh,
            window_start: iso(payload.window_start.epochMillis),
            window_end: iso(payload.window_end.epochMillis)
          })),
          limit: 24,
          offset: 0,
          count: (readings[payload.device_id] ?? []).length
        })
    }
  } as unknown as DigitalTwinClientService) // only settlement is called by a settlement run

describe("rounding end to end", () => {
  const readings = {
    "m-025": [0.05, 0.1, 0.1], // 0.25 kWh: 2.5 points -> 2 (a naive sum gives 0.25000000000000006 -> 3)
    "m-035": [0.15, 0.2], // 0.35 kWh: 3.5 -> 4
    "m-045": [0.45], // 4.5 -> 4
    "m-055": [0.5, 0.05], // 0.55 kWh: 5.5 -> 6
    "m-1": [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1] // Python 3.12's sum is 1.0 exactly: 10
  }
  const expected: Record<string, number> = { "m-025": 2, "m-035": 4, "m-045": 4, "m-055": 6, "m-1": 10 }

  layer(serviceLayer({ digitalTwin: halvesTwin(readings) }), { excludeTestServices: true, timeout: "60 seconds" })("fake twin", (it) => {
    it.effect("points round half to even, as the original's ledger", () =>
      Effect.gen(function*() {
        const made = []
        for (const device of Object.keys(readings)) {
          made.push(yield* commit({ user: `u-${device}`, suggestion: `s-${device}`, start: yesterday + 10 * hourMs, end: yesterday + 13 * hourMs, device }))
        }
        yield* handle(flexibilityRun("run-halves"))
        for (const c of made) {
          const settled = yield* read(c.id)
          assert(c.device_id !== null)
          expect(settled.reward_points_actual, c.device_id).toBe(expected[c.device_id])
          expect(settled.actual_kwh, c.device_id).toBe(Points.pythonSum(readings[c.device_id as keyof typeof readings]))
        }
      }))
  })
})
