/**
 * The nudge an alert sends through the nudging service (reference grid-gateway.md §6.5): an
 * `extr_event` ingest event for the rule's recipients (the synthetic `email-ingest:<hash>` user
 * with their addresses) or, without recipients, for the rule's owner (a web notification).
 *
 * `AlertNudges` is the seam: the real layer calls the nudging service's typed client with the
 * gateway's client-credentials token (`NUDGING_SCOPE`); unit tests provide a recording fake.
 */
import type { Upstream } from "@rec/platform"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { RiskType } from "./Domain.js"
import * as Recipients from "./Recipients.js"

/** wind only: `wind`, heat only: `heat`, both: `thunderstorm` (the nudging templates' hazards). */
export type Hazard = "wind" | "heat" | "thunderstorm"

export const hazardOf = (breached: ReadonlyArray<RiskType>): Hazard =>
  breached.includes("wind") && breached.includes("heat") ? "thunderstorm" : breached.includes("heat") ? "heat" : "wind"

export interface ExtrEventFacts {
  readonly facts_version: "1.0"
  readonly scenario: "extr_event"
  /** The day the alert is about, `YYYY-MM-DD`. */
  readonly period: string
  /** `HH:MM`. */
  readonly window_start: string
  readonly window_end: string
  readonly event_type: Hazard
  /** `today`, `tomorrow`, `yesterday` relative to the run, else the date. */
  readonly day_label: string
  readonly email_recipients: ReadonlyArray<string>
}

export interface GridAlertNudge {
  readonly event_type: "extr_event"
  readonly user_id: string
  readonly facts: ExtrEventFacts
}

const addDays = (day: string, days: number) => {
  const d = new Date(`${day}T00:00:00Z`)
  d.setUTCDate(d.getUTCDate() + days)
  return d.toISOString().slice(0, 10)
}

/** How the message names the day: relative to the day the run happened. */
export const dayLabel = (period: string, runDay: string): string =>
  period === runDay ? "today" : period === addDays(runDay, 1) ? "tomorrow" : period === addDays(runDay, -1) ? "yesterday" : period

export const nudgeFor = (options: {
  readonly owner: string
  readonly recipients: ReadonlyArray<string>
  readonly breached: ReadonlyArray<RiskType>
  readonly period: string
  readonly runDay: string
  readonly windowStart: string
  readonly windowEnd: string
}): GridAlertNudge => ({
  event_type: "extr_event",
  user_id: options.recipients.length > 0 ? Recipients.syntheticUserId(options.recipients) : options.owner,
  facts: {
    facts_version: "1.0",
    scenario: "extr_event",
    period: options.period,
    window_start: options.windowStart,
    window_end: options.windowEnd,
    event_type: hazardOf(options.breached),
    day_label: dayLabel(options.period, options.runDay),
    email_recipients: options.recipients
  }
})

/** What the nudging service said (`accepted`, `suppressed`, `no_rule_fired`, `deduplicated`, ...). */
export interface NudgeReceipt {
  readonly outcome: string
}

export interface AlertNudgesService {
  /** Sends one nudge; a failure says what the nudging service (or the way to it) did. */
  readonly send: (nudge: GridAlertNudge) => Effect.Effect<NudgeReceipt, Upstream.UpstreamFailure>
}

export class AlertNudges extends Context.Tag("@rec/grid-gateway/AlertNudges")<AlertNudges, AlertNudgesService>() {}
