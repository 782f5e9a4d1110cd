/**
 * Flexibility opportunities in a community's forecast (reference A6.2): hours from 05:00 (UTC)
 * whose expected surplus exceeds 0.5 kWh, consecutive hours merged into one window, the
 * window's energy the sum of its hours. The broadcast offers the earliest window.
 *
 * One change from the original: `datetime` is read with its offset instead of cutting the
 * offset off (which shifted every hour of a non-UTC forecast).
 */
import type { EnergySchemas } from "@rec/digital-twin"
import * as Points from "./Points.js"

type ForecastItem = typeof EnergySchemas.ForecastItem.Type

export const surplusThresholdKwh = 0.5
export const firstHour = 5
const hourMs = 3_600_000
/** Gap tolerated between the end of one hour and the start of the next. */
const mergeToleranceMs = 5 * 60_000

export interface OpportunityWindow {
  readonly start: number
  readonly end: number
  /** Rounded to 2 decimals, as the original. */
  readonly estimatedKwh: number
}

/** `2026-08-17 10:00:00+00:00` (the digital twin's form) or any ISO 8601 date-time; NaN when unreadable. */
export const parseForecastTime = (text: string): number => {
  const iso = text.trim().replace(" ", "T")
  // A naive time is read as UTC (the digital twin's forecast is in UTC).
  return Date.parse(/(Z|[+-]\d{2}:?\d{2})$/.test(iso) ? iso : `${iso}Z`)
}

export const detectWindows = (items: ReadonlyArray<ForecastItem>): Array<OpportunityWindow> => {
  const hours = items
    .map((item) => ({ start: parseForecastTime(item.datetime), kwh: item.prediction }))
    .filter((h) => !Number.isNaN(h.start) && new Date(h.start).getUTCHours() >= firstHour && h.kwh > surplusThresholdKwh)
    .sort((a, b) => a.start - b.start)
  const windows: Array<{ start: number; end: number; kwh: number }> = []
  for (const hour of hours) {
    const last = windows[windows.length - 1]
    if (last !== undefined && hour.start <= last.end + mergeToleranceMs) {
      last.end += hourMs
      last.kwh += hour.kwh
    } else {
      windows.push({ start: hour.start, end: hour.start + hourMs, kwh: hour.kwh })
    }
  }
  return windows
    .filter((w) => w.end - w.start >= hourMs)
    .map((w) => ({ start: w.start, end: w.end, estimatedKwh: Math.round(w.kwh * 100) / 100 }))
}

/** `str(float)` of Python for the values the facts carry (`3.0`, not `3`). */
export const pythonFloatText = (x: number): string => (Number.isInteger(x) ? `${x}.0` : String(x))

/** The opportunity nudge's facts for a window (reference A6.2, step 5). */
export const opportunityFacts = (window: OpportunityWindow, clock: (ms: number) => string) => ({
  facts_version: "1.0",
  scenario: "flexibility_opportunity",
  window_start: clock(window.start),
  window_end: clock(window.end),
  estimated_kwh: pythonFloatText(window.estimatedKwh),
  reward_points: String(Points.pointsFor(window.estimatedKwh)),
  period: new Date(window.start).toISOString().slice(0, 10)
})
