/**
 * The digital twin's flexibility windows as suggestions (reference A2): at most two, the
 * largest impact first (the digital twin sends them best first), windows under 0.5 kWh and
 * windows the user already answered left out, times of day in UTC as in the original.
 */
import type { EnergySchemas } from "@rec/digital-twin"
import type { Suggestion } from "./Domain.js"
import { defaultSuggestionType } from "./Domain.js"

type FlexibilityWindow = typeof EnergySchemas.FlexibilityWindow.Type

export const maxSuggestions = 2

/** Windows moving less than this are not worth a suggestion. */
export const minImpactKwh = 0.5

/** The evening peak a suggestion for tomorrow asks to shift consumption away from. */
const tomorrowClockRange = "17:00–21:00"

const defaultConfidence = 0.75

const pad = (n: number) => String(n).padStart(2, "0")

const msPerDay = 86_400_000
/** The largest time value a `Date` holds (ECMAScript's range, ±100,000,000 days). */
const maxTime = 8.64e15
const twoDigits = Array.from({ length: 60 }, (_, i) => pad(i))

/**
 * `HH:MM` in UTC. By arithmetic on the time value (UTC days are all 86,400,000 ms in ECMAScript)
 * instead of a `Date` per call: it runs for every new commitment's reminder; a time value a
 * `Date` cannot hold goes through `Date` as before (`NaN:NaN`).
 */
export const clockTime = (ms: number): string => {
  if (!(Math.abs(ms) <= maxTime)) {
    const d = new Date(ms)
    return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`
  }
  // A `Date` keeps the time value truncated towards zero (ECMAScript's TimeClip).
  const inDay = ((Math.trunc(ms) % msPerDay) + msPerDay) % msPerDay
  return `${twoDigits[Math.floor(inDay / 3_600_000)]}:${twoDigits[Math.floor((inDay % 3_600_000) / 60_000)]}`
}

/** Part of the day by the hour a window starts in (reference A2's buckets). */
export const periodOfHour = (hour: number): Suggestion["to_period"] =>
  hour < 5
    ? "night"
    : hour < 8
    ? "early_morning"
    : hour < 11
    ? "morning"
    : hour < 12
    ? "late_morning"
    : hour < 14
    ? "midday"
    : hour < 17
    ? "afternoon"
    : hour < 21
    ? "evening"
    : "night"

/** One window as a suggestion at `now`, or `undefined` when its times cannot be read. */
export const toSuggestion = (window: FlexibilityWindow, now: number): Suggestion | undefined => {
  const start = Date.parse(window.window_start)
  const end = Date.parse(window.window_end)
  if (Number.isNaN(start) || Number.isNaN(end)) return undefined
  const today = new Date(now).toISOString().slice(0, 10)
  const tomorrow = new Date(start).toISOString().slice(0, 10) > today
  return {
    id: window._id,
    suggestion_type: defaultSuggestionType,
    period_start: new Date(start).toISOString(),
    period_end: new Date(end).toISOString(),
    to_is_tomorrow: tomorrow,
    from_period: tomorrow ? "evening" : "",
    clock_range: tomorrow ? tomorrowClockRange : `${clockTime(start)}–${clockTime(end)}`,
    to_period: periodOfHour(new Date(start).getUTCHours()),
    to_time: clockTime(start),
    impact_kwh_estimated: window.estimated_kwh,
    // Python's int(): towards zero.
    reward_points: Number.isFinite(window.reward_points_estimated) ? Math.trunc(window.reward_points_estimated) : 0,
    confidence: Number.isFinite(window.confidence) ? window.confidence : defaultConfidence
  }
}

/**
 * The suggestions of a user at `now`: windows in the digital twin's order, without the ones in
 * `answered` (suggestion ids the user committed to or declined) and the ones under
 * `minImpactKwh`, at most `maxSuggestions`.
 */
export const suggestionsOf = (
  windows: ReadonlyArray<FlexibilityWindow>,
  answered: ReadonlySet<string>,
  now: number
): Array<Suggestion> => {
  const out: Array<Suggestion> = []
  for (const window of windows) {
    if (out.length === maxSuggestions) break
    if (answered.has(window._id) || !(window.estimated_kwh >= minImpactKwh)) continue
    const suggestion = toSuggestion(window, now)
    if (suggestion !== undefined) out.push(suggestion)
  }
  return out
}
