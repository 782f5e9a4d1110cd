/** Reference A6.2's window detection in a community's forecast. */
import { describe, expect, it } from "@effect/vitest"
import * as ForecastWindows from "../src/ForecastWindows.js"

const hour = (datetime: string, prediction: number) => ({ datetime, prediction, period: "1h", lower: prediction - 1, upper: prediction + 1 })

describe("detectWindows", () => {
  it("merges consecutive surplus hours from 05:00 and sums their energy", () => {
    const items = [
      hour("2026-08-17 04:00:00+00:00", 3), // before 05:00: ignored
      hour("2026-08-17 05:00:00+00:00", 0.4), // under the threshold
      hour("2026-08-17 09:00:00+00:00", 0.6),
      hour("2026-08-17 10:00:00+00:00", 1.234),
      hour("2026-08-17 11:00:00+00:00", 2),
      hour("2026-08-17 12:00:00+00:00", 0.5), // not above 0.5
      hour("2026-08-17 13:00:00+00:00", 0.51)
    ]
    expect(ForecastWindows.detectWindows(items)).toEqual([
      { start: Date.parse("2026-08-17T09:00:00Z"), end: Date.parse("2026-08-17T12:00:00Z"), estimatedKwh: 3.83 },
      { start: Date.parse("2026-08-17T13:00:00Z"), end: Date.parse("2026-08-17T14:00:00Z"), estimatedKwh: 0.51 }
    ])
  })

  it("reads offsets instead of cutting them off, and sorts the hours", () => {
    const items = [hour("2026-08-17T12:00:00+02:00", 1), hour("2026-08-17 09:00:00", 1)]
    expect(ForecastWindows.detectWindows(items)).toEqual([
      { start: Date.parse("2026-08-17T09:00:00Z"), end: Date.parse("2026-08-17T11:00:00Z"), estimatedKwh: 2 }
    ])
  })

  it("finds nothing in a forecast without surplus or with unreadable times", () => {
    expect(ForecastWindows.detectWindows([hour("2026-08-17 10:00:00+00:00", -2), hour("later", 5)])).toEqual([])
  })
})

describe("opportunityFacts", () => {
  it("are the original's strings: HH:MM, kWh as Python prints a float, points rounded half to even", () => {
    const window = { start: Date.parse("2026-08-17T09:00:00Z"), end: Date.parse("2026-08-17T11:00:00Z"), estimatedKwh: 0.25 }
    expect(ForecastWindows.opportunityFacts(window, (ms) => new Date(ms).toISOString().slice(11, 16))).toEqual({
      facts_version: "1.0",
      scenario: "flexibility_opportunity",
      window_start: "09:00",
      window_end: "11:00",
      estimated_kwh: "0.25",
      reward_points: "2",
      period: "2026-08-17"
    })
    expect(ForecastWindows.pythonFloatText(3)).toBe("3.0")
  })
})
