/**
 * Window-open reminders (reference A6.1), run when `meters-flow` completes (every few minutes):
 * the commitments whose window is open and that nobody took yet are taken (the same one-shot
 * view as `GET /api/commitments/pending`, so replicas and the endpoint never take one row
 * twice) and each user gets a `flexibility_reminder`. A reminder the nudging service could not
 * take is given back, so the next run tries again (the nudging service's daily deduplication
 * keeps a retried reminder from reaching the user twice).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { CommitmentsRepo } from "./CommitmentsRepo.js"
import * as Config from "./Config.js"
import type { Commitment } from "./Domain.js"
import * as NudgeEvents from "./NudgeEvents.js"
import { Nudges } from "./Nudges.js"

const batchSize = 200

export interface RemindersReport {
  readonly taken: number
  readonly sent: number
  readonly failed: number
}

export class Reminders extends Effect.Service<Reminders>()("flexibility/Reminders", {
  effect: Effect.gen(function*() {
    const repo = yield* CommitmentsRepo
    const nudges = yield* Nudges
    const { broadcastConcurrency } = yield* Config.settings

    const run = Effect.fn("Reminders.run")(function*() {
      const now = new Date(yield* Clock.currentTimeMillis).toISOString()
      const taken: Array<Commitment> = []
      while (true) {
        const batch = yield* repo.takeOpen(now, batchSize)
        taken.push(...batch)
        if (batch.length < batchSize) break
      }
      const failures: Array<Commitment> = []
      yield* Effect.forEach(
        taken,
        (c) =>
          nudges.send(NudgeEvents.windowOpen(c)).pipe(
            Effect.catchAll((failure) =>
              Effect.zipRight(
                Effect.logWarning(`reminder for commitment ${c.id} not sent: ${failure.detail}`),
                Effect.sync(() => failures.push(c))
              )
            )
          ),
        { concurrency: broadcastConcurrency, discard: true }
      )
      yield* Effect.forEach(failures, (c) => repo.release(c.id, now), { discard: true })
      const report: RemindersReport = { taken: taken.length, sent: taken.length - failures.length, failed: failures.length }
      yield* Effect.logInfo("window-open reminders").pipe(Effect.annotateLogs({ ...report }))
      return report
    })

    return { run } as const
  })
}) {}
