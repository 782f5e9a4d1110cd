/**
 * Nudges through the nudging (notification) service (reference A6): events ingested now, and
 * events scheduled for later. The events themselves are built by `NudgeEvents`; this tag is the
 * transport, so tests swap it for a recording fake and production uses the nudging service's
 * typed client (client credentials, `NUDGING_SCOPE`).
 */
import type { Upstream } from "@rec/platform"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

export interface NudgeEvent {
  readonly event_type: string
  readonly user_id: string
  readonly community_id: string | null
  readonly facts: Readonly<Record<string, string>>
}

export interface ScheduledNudge extends NudgeEvent {
  /** When the nudging service should ingest the event (ISO 8601). */
  readonly trigger_at: string
  /** Scheduling again with the same key replaces the earlier event. */
  readonly external_key: string
}

/**
 * What the nudging service did with an event: a notification went out (`delivered`), was held
 * back by the user's preferences or daily cap (`suppressed`), had been sent before (`duplicate`,
 * its deduplication), or no rule wanted it (`ignored`). None of them is worth sending again.
 */
export type NudgeOutcome = "delivered" | "suppressed" | "duplicate" | "ignored"

export interface NudgesService {
  readonly send: (event: NudgeEvent) => Effect.Effect<NudgeOutcome, Upstream.UpstreamFailure>
  /**
   * `send` for several events in one call: per event, in order, its outcome or why the nudging
   * service refused it (400/422); the call fails as a whole only when the batch was not taken.
   * Optional (fakes may leave it out): without it, events go one `send` at a time.
   */
  readonly sendMany?: (
    events: ReadonlyArray<NudgeEvent>
  ) => Effect.Effect<ReadonlyArray<NudgeOutcome | Upstream.UpstreamFailure>, Upstream.UpstreamFailure>
  readonly schedule: (event: ScheduledNudge) => Effect.Effect<void, Upstream.UpstreamFailure>
  /**
   * `schedule` for several events in one call (distinct keys; all are taken or none). Optional
   * (fakes may leave it out): without it, events go one `schedule` at a time.
   */
  readonly scheduleMany?: (events: ReadonlyArray<ScheduledNudge>) => Effect.Effect<void, Upstream.UpstreamFailure>
  /** Withdraws a scheduled event that has not fired yet; nothing to withdraw is not a failure. */
  readonly unschedule: (externalKey: string) => Effect.Effect<void, Upstream.UpstreamFailure>
}

export class Nudges extends Context.Tag("flexibility/Nudges")<Nudges, NudgesService>() {}
