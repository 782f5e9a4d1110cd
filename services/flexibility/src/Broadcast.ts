/**
 * The flexibility-opportunity broadcast (reference A6.2), run when `rec-forecasting-flow`
 * completes: for every community of the registry (not one hard-coded community), its forecast
 * for the next 24 hours from the digital twin, the earliest surplus window, and a
 * `flexibility_opportunity` nudge to every member with a platform user.
 *
 * Each member is nudged once per pipeline run: the (run, community, member) row is claimed in
 * the database before sending (`BroadcastRepo`), so a redelivered event or a second replica
 * sends nothing twice; a member the nudging service could not take is tried again when the
 * event is delivered again. One community's failure (forecast, member list) does not stop the
 * others.
 */
import { DigitalTwinClient } from "@rec/digital-twin"
import type { Upstream } from "@rec/platform"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { BroadcastRepo } from "./BroadcastRepo.js"
import { Communities, type Community } from "./Communities.js"
import * as Config from "./Config.js"
import * as ForecastWindows from "./ForecastWindows.js"
import * as NudgeEvents from "./NudgeEvents.js"
import { Nudges } from "./Nudges.js"
import { fromDigitalTwin } from "./Participants.js"

const forecastHorizonMs = 24 * 3_600_000

export interface CommunityReport {
  readonly community: string
  /** `no_window`: the forecast shows no surplus; `failed`: the forecast or the members could not be read. */
  readonly outcome: "broadcast" | "no_window" | "failed"
  readonly members: number
  readonly sent: number
  /** Members already nudged for this run (by an earlier delivery or another replica). */
  readonly skipped: number
  readonly failed: number
  readonly error?: string
}

export class Broadcast extends Effect.Service<Broadcast>()("flexibility/Broadcast", {
  effect: Effect.gen(function*() {
    const repo = yield* BroadcastRepo
    const communities = yield* Communities
    const nudges = yield* Nudges
    const dt = yield* DigitalTwinClient
    const { broadcastConcurrency } = yield* Config.settings

    const forecastWindow = (communityId: string, now: number) =>
      dt.communities.forecast(communityId, {
        start: DateTime.unsafeMake(now),
        end: DateTime.unsafeMake(now + forecastHorizonMs)
      }).pipe(
        Effect.map((result) => ForecastWindows.detectWindows(result.items)[0]),
        Effect.mapError(fromDigitalTwin)
      )

    const community = (runId: string, c: Community) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const window = yield* forecastWindow(c.id, now)
        if (window === undefined) {
          return { community: c.id, outcome: "no_window", members: 0, sent: 0, skipped: 0, failed: 0 } as CommunityReport
        }
        const members = yield* communities.members(c.id)
        let sent = 0
        let skipped = 0
        let failed = 0
        yield* Effect.forEach(
          members,
          (member) =>
            Effect.gen(function*() {
              const delivery = { runId, communityId: c.id, userId: member.userId }
              if (!(yield* repo.claim(delivery, yield* Clock.currentTimeMillis))) {
                skipped++
                return
              }
              const outcome = yield* Effect.either(nudges.send(NudgeEvents.opportunity(member, window)))
              if (outcome._tag === "Right") {
                sent++
                yield* repo.sent(delivery, outcome.right, yield* Clock.currentTimeMillis)
              } else {
                failed++
                yield* Effect.logWarning(`opportunity nudge for ${member.userId} in ${c.id} not sent: ${outcome.left.detail}`)
                yield* repo.failed(delivery, outcome.left.detail)
              }
            }),
          { concurrency: broadcastConcurrency, discard: true }
        )
        return { community: c.id, outcome: "broadcast", members: members.length, sent, skipped, failed } as CommunityReport
      }).pipe(
        Effect.catchTag("UpstreamFailure", (failure: Upstream.UpstreamFailure) =>
          Effect.as(
            Effect.logWarning(`no opportunity broadcast for community ${c.id}: ${failure.detail}`),
            { community: c.id, outcome: "failed", members: 0, sent: 0, skipped: 0, failed: 0, error: failure.detail } as CommunityReport
          )),
        Effect.withSpan("Broadcast.community", { attributes: { "community.id": c.id } })
      )

    /** Broadcasts the opportunities of pipeline run `runId` to every community's members. */
    const run = Effect.fn("Broadcast.run")(function*(runId: string) {
      const all = yield* communities.list
      const reports = yield* Effect.forEach(all, (c) => community(runId, c))
      yield* Effect.logInfo("opportunity broadcast").pipe(Effect.annotateLogs({ run_id: runId, communities: reports }))
      return reports
    })

    return { run } as const
  })
}) {}
