/**
 * The nudge an alert sends through the nudging service (reference grid-gateway.md §6.5): an
 * `extr_event` ingest event for the rule's recipients (the synthetic `email-ingest:<hash>` user
 * with their addresses) or, without recipients, for the rule's owner (a web notification).
 *
 * `AlertNudges` is the seam: the real layer calls the nudging service's typed client with the
 * gateway's client-credentials token (`NUDGING_SCOPE`); unit tests provide a recording fake.
 */
import { ClientCredentials, ServiceClient } from "@rec/auth"
import { Api as NudgingApi } from "@rec/nudging-service/Api"
import { OutboundHttp, type Upstream } from "@rec/platform"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as GridConfig from "./Config.js"
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

/**
 * What the nudging service did: `dispatched` (200), `suppressed` by the recipient's preferences
 * or the daily cap (202), `no_rule_fired` (204), `deduplicated` (409: it already told this
 * recipient in the rule's window). Each is an answer, not a failure: sending again would not
 * change it.
 */
export interface NudgeReceipt {
  readonly outcome: "dispatched" | "suppressed" | "no_rule_fired" | "deduplicated"
}

export interface AlertNudgesService {
  /** Sends one nudge; a failure says what the nudging service (or the way to it) did. */
  readonly send: (nudge: GridAlertNudge) => Effect.Effect<NudgeReceipt, Upstream.UpstreamFailure>
}

/**
 * The nudging service's ingest endpoint (`POST /ingest-event`) through the typed client derived
 * from its contract (`@rec/nudging-service/Api`), with the gateway's client-credentials token
 * (scope `NUDGING_SCOPE`; `nudging.ingest` is what the nudging service checks). Its 400 and 422
 * (the event was refused), 5xx, unreadable answers and timeouts are failures (`Upstream`); a
 * redelivered pipeline run tries the nudge again.
 */
export const make = (options: {
  readonly baseUrl: string
  readonly timeout?: GridConfig.NudgingSettings["timeout"] | undefined
  readonly tokens?: ClientCredentials.TokenProvider | undefined
}) =>
  Effect.map(
    ServiceClient.make(NudgingApi, { name: "nudging service", baseUrl: options.baseUrl, tokens: options.tokens, timeout: options.timeout }),
    (nudging): AlertNudgesService => ({
      send: (nudge) =>
        nudging.call(
          "ingest_event",
          nudging.client.ingest.ingestEvent({ payload: { ...nudge, facts: { ...nudge.facts } } }).pipe(
            Effect.map((answer): NudgeReceipt => ({ outcome: "result" in answer ? answer.result : "no_rule_fired" })),
            Effect.catchTag("IngestDeduplicated", () => Effect.succeed<NudgeReceipt>({ outcome: "deduplicated" }))
          )
        )
    })
  )

export class AlertNudges extends Context.Tag("@rec/grid-gateway/AlertNudges")<AlertNudges, AlertNudgesService>() {
  /**
   * From the environment: `NUDGING_API_URL`, `NUDGING_TIMEOUT`, and the gateway's client
   * (`PLATFORM_OIDC_CLIENT_ID`/`_SECRET`, token endpoint from `PLATFORM_OIDC_BASE_URL`) with
   * `NUDGING_SCOPE`. Without a client id every nudge fails with 503 "No credentials".
   */
  static readonly layer: Layer.Layer<AlertNudges, unknown> = Layer.effect(
    AlertNudges,
    Effect.gen(function*() {
      const { nudging } = yield* GridConfig.settings
      const clientId = yield* Config.option(Config.nonEmptyString("PLATFORM_OIDC_CLIENT_ID"))
      const tokens = Option.isNone(clientId)
        ? undefined
        : yield* ClientCredentials.fromConfig({ scope: GridConfig.nudgingScope })
      return yield* make({ baseUrl: nudging.baseUrl, timeout: nudging.timeout, tokens })
    })
  ).pipe(Layer.provide(OutboundHttp.layer))
}
