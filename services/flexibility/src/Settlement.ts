/**
 * Settlement of a day (reference A4), run when `rec-flexibility-flow` completes: every
 * commitment still `committed`, with a community and a meter, whose window ended on that day
 * (UTC) is settled from the digital twin's hourly consumption in its window
 * (`rec_settlement_1h`, with this service's token): `actual_kwh` = the sum, points =
 * `round(kWh x 10)` with ties to even (`Points`).
 *
 * - Idempotent and safe under replicas: the results are written in one statement that only
 *   changes rows still `committed`, so a second run (a redelivered event, another replica)
 *   settles nothing twice and nudges only the rows it changed.
 * - Rows the twin has no data for (or could not answer for) stay `committed` for a later run.
 * - Identical windows of one meter are asked once.
 */
import { DigitalTwinClient } from "@rec/digital-twin"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { CommitmentsRepo, type SettlementCandidate, type SettlementResult } from "./CommitmentsRepo.js"
import * as Config from "./Config.js"
import { Notices } from "./Notices.js"
import { fromDigitalTwin } from "./Participants.js"
import * as Points from "./Points.js"

const dayMs = 86_400_000

export interface SettlementReport {
  readonly day: string
  /** Committed commitments whose window ended that day. */
  readonly candidates: number
  /** Settled by this run. */
  readonly settled: number
  /** Left committed: the digital twin had no readings for the window. */
  readonly noData: number
  /** Left committed: the digital twin failed. */
  readonly failed: number
}

const keyOf = (c: SettlementCandidate) => `${c.community_id}\u0000${c.device_id}\u0000${c.period_start}\u0000${c.period_end}`

export class Settlement extends Effect.Service<Settlement>()("flexibility/Settlement", {
  effect: Effect.gen(function*() {
    const repo = yield* CommitmentsRepo
    const dt = yield* DigitalTwinClient
    const notices = yield* Notices
    const { settlementConcurrency } = yield* Config.settings

    /** The hourly readings of one window: `Some` settlement, `None` without data. */
    const measure = (c: SettlementCandidate) =>
      dt.communities.settlement(c.community_id, {
        device_id: c.device_id,
        window_start: DateTime.unsafeMake(c.period_start),
        window_end: DateTime.unsafeMake(c.period_end)
      }).pipe(
        Effect.map((result) =>
          result.items.length === 0 ? Option.none() : Option.some(Points.settle(result.items.map((row) => row.consumption_kwh)))
        ),
        Effect.mapError(fromDigitalTwin)
      )

    /** Settles the commitments whose window ended on `day` (`YYYY-MM-DD`, UTC). */
    const run = Effect.fn("Settlement.run")(function*(day: string, runId: string) {
      const start = Date.parse(`${day}T00:00:00Z`)
      const now = yield* Clock.currentTimeMillis
      const candidates = yield* repo.settlementCandidates(
        new Date(start).toISOString(),
        new Date(start + dayMs).toISOString(),
        new Date(now).toISOString()
      )
      const groups = new Map<string, Array<SettlementCandidate>>()
      for (const c of candidates) {
        const key = keyOf(c)
        const group = groups.get(key)
        if (group === undefined) groups.set(key, [c])
        else group.push(c)
      }
      let noData = 0
      let failed = 0
      const results: Array<SettlementResult> = []
      yield* Effect.forEach(
        groups.values(),
        (group) =>
          measure(group[0]!).pipe(
            Effect.match({
              onFailure: (failure) => {
                failed += group.length
                return Effect.logWarning(`settlement of ${group.length} commitment(s) postponed: ${failure.detail}`)
              },
              onSuccess: Option.match({
                onNone: () => {
                  noData += group.length
                  return Effect.void
                },
                onSome: ({ kwh, points }) => {
                  for (const c of group) results.push({ id: c.id, points, kwh })
                  return Effect.void
                }
              })
            }),
            Effect.flatten
          ),
        { concurrency: settlementConcurrency, discard: true }
      )
      const settled = yield* repo.settleMany(results, runId, new Date(now).toISOString())
      yield* notices.settled(settled)
      const report: SettlementReport = { day, candidates: candidates.length, settled: settled.length, noData, failed }
      yield* Effect.logInfo("settlement run").pipe(Effect.annotateLogs({ ...report, run_id: runId }))
      return report
    })

    return { run } as const
  })
}) {}
