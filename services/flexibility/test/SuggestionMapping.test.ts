/** Reference A2's mapping of the digital twin's flexibility windows to suggestions. */
import { describe, expect, it } from "@effect/vitest"
import * as SuggestionMapping from "../src/SuggestionMapping.js"

const now = Date.parse("2026-08-17T09:30:00Z")

const window = (id: string, start: string, hours: number, kwh: number, extra: Partial<{ points: number; confidence: number }> = {}) => ({
  _id: id,
  window_start: start,
  window_end: new Date(Date.parse(start) + hours * 3_600_000).toISOString(),
  community_kwh: kwh * 2,
  estimated_kwh: kwh,
  reward_points_estimated: extra.points ?? Math.round(kwh * 10),
  confidence: extra.confidence ?? 0.8
})

describe("toSuggestion", () => {
  it("maps today's window with its own clock range", () => {
    expect(SuggestionMapping.toSuggestion(window("w1", "2026-08-17T11:00:00Z", 3, 1.16, { points: 12.7 }), now)).toEqual({
      id: "w1",
      suggestion_type: "shift-consumption",
      period_start: "2026-08-17T11:00:00.000Z",
      period_end: "2026-08-17T14:00:00.000Z",
      to_is_tomorrow: false,
      from_period: "",
      clock_range: "11:00–14:00",
      to_period: "late_morning",
      to_time: "11:00",
      impact_kwh_estimated: 1.16,
      reward_points: 12,
      confidence: 0.8
    })
  })

  it("maps tomorrow's window as a shift from the evening peak", () => {
    const s = SuggestionMapping.toSuggestion(window("w2", "2026-08-18T12:30:00+02:00", 2, 0.9), now)
    expect(s).toMatchObject({
      period_start: "2026-08-18T10:30:00.000Z",
      to_is_tomorrow: true,
      from_period: "evening",
      clock_range: "17:00–21:00",
      to_period: "morning",
      to_time: "10:30"
    })
  })

  it("buckets the start hour as the reference's clock table", () => {
    const expected: Record<number, string> = {
      0: "night", 4: "night", 5: "early_morning", 7: "early_morning", 8: "morning", 10: "morning", 11: "late_morning",
      12: "midday", 13: "midday", 14: "afternoon", 16: "afternoon", 17: "evening", 20: "evening", 21: "night", 23: "night"
    }
    for (const [hour, period] of Object.entries(expected)) expect(SuggestionMapping.periodOfHour(Number(hour)), hour).toBe(period)
  })

  it("skips windows whose times cannot be read", () => {
    expect(SuggestionMapping.toSuggestion({ ...window("w3", "2026-08-17T11:00:00Z", 1, 1), window_start: "soon" }, now)).toBeUndefined()
  })
})

describe("suggestionsOf", () => {
  const windows = [
    window("big", "2026-08-17T12:00:00Z", 3, 2.4),
    window("answered", "2026-08-17T13:00:00Z", 2, 1.8),
    window("small", "2026-08-17T14:00:00Z", 1, 0.49),
    window("half", "2026-08-17T15:00:00Z", 1, 0.5),
    window("third", "2026-08-18T10:00:00Z", 2, 0.7)
  ]

  it("keeps the twin's order, drops answered and small windows, stops at two", () => {
    expect(SuggestionMapping.suggestionsOf(windows, new Set(["answered"]), now).map((s) => s.id)).toEqual(["big", "half"])
  })

  it("is empty without windows", () => {
    expect(SuggestionMapping.suggestionsOf([], new Set(), now)).toEqual([])
  })
})
