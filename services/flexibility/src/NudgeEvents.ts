/**
 * The nudges the flexibility service sends (reference A6), as events for the nudging service:
 *
 * - `flexibility_reminder` when a committed window opens (A6.1, on `meters-flow`), and scheduled
 *   15 minutes before the window when a commitment is made (A6.3; sent at once when that moment
 *   has passed);
 * - `flexibility_opportunity` to every member of a community when its forecast shows a surplus
 *   window (A6.2, on `rec-forecasting-flow`);
 * - `commitment_settled` when a commitment is settled (the nudging seed has the rule; the
 *   original never emitted it).
 *
 * Facts are strings, times of day `HH:MM` in UTC, `period` the UTC day of the window, as the
 * nudging rules of the original expect.
 */
import type { Commitment } from "./Domain.js"
import type { OpportunityWindow } from "./ForecastWindows.js"
import { opportunityFacts, pythonFloatText } from "./ForecastWindows.js"
import type { Member } from "./Communities.js"
import type { NudgeEvent, ScheduledNudge } from "./Nudges.js"
import { clockTime } from "./SuggestionMapping.js"

const factsVersion = "1.0"

/**
 * The UTC day (`YYYY-MM-DD`) of a time value: as `new Date(ms).toISOString()` writes it, which
 * is done once per day seen (a few days are all a running service sees), not once per commitment.
 */
const days = new Map<number, string>()
const day = (ms: number): string => {
  // Truncated first, as a `Date` keeps it (`Date.parse` gives integers anyway).
  const index = Math.floor(Math.trunc(ms) / 86_400_000)
  let text = days.get(index)
  if (text === undefined) {
    // Throws for an invalid time value, as before (`NaN` is never stored: `toISOString` throws first).
    text = new Date(ms).toISOString().slice(0, 10)
    if (days.size >= 1_000) days.clear()
    days.set(index, text)
  }
  return text
}

/** The window's facts; `startMs` is `Date.parse(c.period_start)`, when the caller has it already. */
const windowFacts = (c: Commitment, startMs = Date.parse(c.period_start)) => ({
  window_start: clockTime(startMs),
  window_end: clockTime(Date.parse(c.period_end)),
  reward_points_estimated: String(c.reward_points_estimated),
  period: day(startMs)
})

/** The window of a commitment opened (A6.1). */
export const windowOpen = (c: Commitment): NudgeEvent => ({
  event_type: "flexibility_reminder",
  user_id: c.user_id,
  community_id: c.community_id,
  facts: { facts_version: factsVersion, scenario: "flexibility_reminder", commitment_id: c.id, ...windowFacts(c) }
})

/** The key that makes scheduling the reminder of one user's suggestion idempotent (A6.3). */
export const reminderKey = (c: Commitment) => `flexibility-accept:${c.user_id}:${c.suggestion_id}`

export type PreWindowReminder =
  | { readonly _tag: "Now"; readonly event: NudgeEvent }
  | { readonly _tag: "Later"; readonly event: ScheduledNudge }

/** The reminder `leadMs` before the window (A6.3): scheduled, or at once when that moment has passed. */
export const preWindow = (c: Commitment, leadMs: number, now: number): PreWindowReminder => {
  const startMs = Date.parse(c.period_start)
  const triggerAt = startMs - leadMs
  const event: NudgeEvent = {
    event_type: "flexibility_reminder",
    user_id: c.user_id,
    community_id: c.community_id,
    facts: {
      facts_version: factsVersion,
      scenario: "flexibility_reminder",
      commitment_id: c.id,
      suggestion_id: c.suggestion_id,
      ...windowFacts(c, startMs)
    }
  }
  return triggerAt <= now
    ? { _tag: "Now", event }
    : { _tag: "Later", event: { ...event, trigger_at: new Date(triggerAt).toISOString(), external_key: reminderKey(c) } }
}

/** A community's flexibility opportunity, for one member (A6.2). */
export const opportunity = (member: Member, window: OpportunityWindow): NudgeEvent => ({
  event_type: "flexibility_opportunity",
  user_id: member.userId,
  community_id: member.communityId,
  facts: opportunityFacts(window, clockTime)
})

/** A commitment was settled: its points and the energy measured. */
export const settled = (c: Commitment): NudgeEvent => ({
  event_type: "commitment_settled",
  user_id: c.user_id,
  community_id: c.community_id,
  facts: {
    facts_version: factsVersion,
    scenario: "commitment_settled",
    commitment_id: c.id,
    suggestion_id: c.suggestion_id,
    reward_points_actual: String(c.reward_points_actual ?? 0),
    actual_kwh: c.actual_kwh === null ? "" : pythonFloatText(c.actual_kwh),
    ...windowFacts(c)
  }
})
