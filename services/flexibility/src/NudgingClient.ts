/**
 * `Nudges` over the nudging service's typed client (`@rec/nudging-service`'s `Api`, through
 * `@rec/auth`'s `ServiceClient`), with this service's client-credentials token (`NUDGING_SCOPE`;
 * the nudging service wants `nudging.ingest`). Its answers become outcomes: 200 delivered, 202
 * suppressed, 204 no rule, 409 deduplicated; anything else is an `UpstreamFailure` (400/422 kept,
 * 5xx and unreachable 502, timeout 504, no credentials 503).
 */
import { ServiceClient } from "@rec/auth"
import { Api as NudgingApi } from "@rec/nudging-service/Api"
import { OutboundHttp, Upstream } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Config from "./Config.js"
import { type NudgeOutcome, Nudges, type NudgesService } from "./Nudges.js"
import * as ServiceTokens from "./ServiceTokens.js"

export const make = (options: ServiceClient.Options) =>
  Effect.gen(function*() {
    const nudging = yield* ServiceClient.make(NudgingApi, options)

    const send: NudgesService["send"] = (event) =>
      nudging.call(
        "ingest_event",
        nudging.client.ingest.ingestEvent({ payload: { ...event, facts: { ...event.facts } } }).pipe(
          Effect.map((answer): NudgeOutcome =>
            "result" in answer ? (answer.result === "dispatched" ? "delivered" : "suppressed") : "ignored"
          ),
          Effect.catchTag("IngestDeduplicated", () => Effect.succeed<NudgeOutcome>("duplicate"))
        )
      )

    const sendMany: NudgesService["sendMany"] = (events) =>
      nudging.call(
        "ingest_events",
        nudging.client.ingest.ingestBatch({ payload: { events: events.map((event) => ({ ...event, facts: { ...event.facts } })) } })
      ).pipe(
        Effect.map(({ results }) =>
          results.map((r): NudgeOutcome | Upstream.UpstreamFailure => {
            switch (r.status) {
              case 200:
                return "delivered"
              case 202:
                return "suppressed"
              case 204:
                return "ignored"
              case 409:
                return "duplicate"
              default:
                return new Upstream.UpstreamFailure({
                  upstream: "nudging service",
                  operation: "ingest_event",
                  status: r.status,
                  upstreamStatus: r.status,
                  detail: `The nudging service refused the event (${r.status}): ${r.detail}`,
                  upstreamDetail: r.detail
                })
            }
          })
        )
      )

    const schedule: NudgesService["schedule"] = (event) =>
      nudging.call(
        "schedule_event",
        nudging.client.scheduled.schedule({ payload: { ...event, facts: { ...event.facts } } })
      ).pipe(Effect.asVoid)

    const scheduleMany: NudgesService["scheduleMany"] = (events) =>
      nudging.call(
        "schedule_events",
        nudging.client.scheduled.scheduleBatch({ payload: { events: events.map((event) => ({ ...event, facts: { ...event.facts } })) } })
      ).pipe(Effect.asVoid)

    const unschedule: NudgesService["unschedule"] = (externalKey) =>
      nudging.call(
        "cancel_scheduled_event",
        nudging.client.scheduled.cancel({ path: { external_key: externalKey } }).pipe(
          // Never scheduled, or already sent: nothing left to withdraw.
          Effect.catchTags({ NotFound: () => Effect.void, Conflict: () => Effect.void })
        )
      )

    return Nudges.of({ send, sendMany, schedule, scheduleMany, unschedule })
  })

/** From the environment: `NUDGING_API_URL`, `NUDGING_SCOPE`, `NUDGING_TIMEOUT`, the service's client. */
export const layer = Layer.effect(
  Nudges,
  Effect.gen(function*() {
    const settings = yield* Config.nudging
    const tokens = yield* ServiceTokens.forScope(settings.scope)
    return yield* make({ name: "nudging service", baseUrl: settings.baseUrl, tokens, timeout: settings.timeout })
  })
).pipe(Layer.provide(OutboundHttp.layer))
