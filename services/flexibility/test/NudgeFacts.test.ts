/**
 * The reminder's facts are written without a `Date` per call (`SuggestionMapping.clockTime` by
 * arithmetic, `NudgeEvents`' day remembered per day): the same text as through `Date`, checked on
 * generated time values across (and at the ends of) the range a `Date` holds.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import type { Commitment } from "../src/Domain.js"
import * as NudgeEvents from "../src/NudgeEvents.js"
import { clockTime } from "../src/SuggestionMapping.js"

const viaDate = (ms: number) => {
  const d = new Date(ms)
  return `${String(d.getUTCHours()).padStart(2, "0")}:${String(d.getUTCMinutes()).padStart(2, "0")}`
}

const maxTime = 8.64e15
const timeValues = FastCheck.oneof(
  FastCheck.integer({ min: -maxTime, max: maxTime }),
  FastCheck.integer({ min: Date.UTC(1960, 0, 1), max: Date.UTC(2100, 0, 1) }),
  FastCheck.double({ min: -maxTime, max: maxTime, noNaN: true }),
  FastCheck.constantFrom(0, -0, -1, 1, maxTime, -maxTime, 86_399_999, -86_400_000, -86_400_001)
)

describe("reminder facts", () => {
  it("clockTime is what a Date gives, in and out of its range", () => {
    FastCheck.assert(FastCheck.property(timeValues, (ms) => clockTime(ms) === viaDate(ms)), { numRuns: 20_000 })
    for (const ms of [NaN, Infinity, -Infinity, maxTime + 1, -maxTime - 1]) expect(clockTime(ms)).toBe(viaDate(ms))
  })

  it("a pre-window reminder's facts are the Date-computed ones", () => {
    const hour = 3_600_000
    const instants = FastCheck.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2100, 0, 1) })
    FastCheck.assert(
      FastCheck.property(instants, FastCheck.integer({ min: 1, max: 24 * hour }), (start, length) => {
        const c = {
          id: "c-1",
          user_id: "u-1",
          suggestion_id: "s-1",
          community_id: null,
          reward_points_estimated: 7,
          period_start: new Date(start).toISOString(),
          period_end: new Date(start + length).toISOString()
        } as unknown as Commitment
        const reminder = NudgeEvents.preWindow(c, 15 * 60_000, 0)
        expect(reminder._tag).toBe(start - 15 * 60_000 <= 0 ? "Now" : "Later")
        if (reminder._tag === "Later") {
          expect(reminder.event.trigger_at).toBe(new Date(start - 15 * 60_000).toISOString())
          expect(reminder.event.external_key).toBe("flexibility-accept:u-1:s-1")
        }
        expect(Object.keys(reminder.event.facts)).toEqual([
          "facts_version",
          "scenario",
          "commitment_id",
          "suggestion_id",
          "window_start",
          "window_end",
          "reward_points_estimated",
          "period"
        ])
        expect(reminder.event.facts).toEqual({
          facts_version: "1.0",
          scenario: "flexibility_reminder",
          commitment_id: "c-1",
          suggestion_id: "s-1",
          window_start: viaDate(start),
          window_end: viaDate(start + length),
          reward_points_estimated: "7",
          period: new Date(start).toISOString().slice(0, 10)
        })
      }),
      { numRuns: 5_000 }
    )
  })
})
