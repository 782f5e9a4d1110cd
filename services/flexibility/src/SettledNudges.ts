/**
 * The `commitment_settled` nudges, sent to the nudging service in batches (`POST
 * /ingest-events/batch`): a settled commitment's nudge waits here a moment
 * (`nudgeBatchLinger`) and goes with the others of that moment, up to `nudgeBatchSize` a call.
 * One typed-client call per settled commitment cost more CPU than settling it (docs/performance.md,
 * "Flexibility service"); a settlement run of 10,000 is now 50 calls instead of 10,000.
 *
 * Nothing is lost that one call per nudge would keep: an event the nudging service refuses is
 * logged, as before; a batch it does not take (unreachable, an older nudging service without the
 * batch route) is sent again one event at a time, each failure logged; on shutdown what still
 * waits is sent before the nudging client closes (`Batches`).
 */
import * as Effect from "effect/Effect"
import * as Batches from "./Batches.js"
import * as Config from "./Config.js"
import type { Commitment } from "./Domain.js"
import * as NudgeEvents from "./NudgeEvents.js"
import { type NudgeEvent, Nudges } from "./Nudges.js"

interface Waiting {
  readonly commitmentId: string
  readonly event: NudgeEvent
}

export class SettledNudges extends Effect.Service<SettledNudges>()("flexibility/SettledNudges", {
  scoped: Effect.gen(function*() {
    const nudges = yield* Nudges
    const { nudgeBatchSize, nudgeBatchLinger, broadcastConcurrency } = yield* Config.settings

    const notSent = (w: Waiting, detail: string) => Effect.logWarning(`commitment_settled nudge for ${w.commitmentId} not sent: ${detail}`)

    /** One batch; when the nudging service does not take it, its events one at a time (a few at once). */
    const oneAtATime = (batch: ReadonlyArray<Waiting>) =>
      Effect.forEach(batch, (w) => nudges.send(w.event).pipe(Effect.catchAll((e) => notSent(w, e.detail))), {
        concurrency: broadcastConcurrency,
        discard: true
      })
    const send = (batch: ReadonlyArray<Waiting>) =>
      (nudges.sendMany === undefined ? oneAtATime(batch) : nudges.sendMany(batch.map((w) => w.event)).pipe(
        Effect.flatMap((results) =>
          Effect.forEach(results, (result, i) => (typeof result === "string" ? Effect.void : notSent(batch[i]!, result.detail)), {
            discard: true
          })
        ),
        Effect.catchAll((failure) =>
          Effect.zipRight(
            batch.length > 1
              ? Effect.logWarning(`batch of ${batch.length} commitment_settled nudges not taken (${failure.detail}); sending them one at a time`)
              : Effect.void,
            oneAtATime(batch)
          )
        )
      )).pipe(
        Effect.withSpan("SettledNudges.send", { attributes: { "flexibility.nudges": batch.length } })
      )

    const batches = yield* Batches.make({ task: "settled_nudges", size: nudgeBatchSize, linger: nudgeBatchLinger, send })

    /** The settled nudges of `settled`, soon (in the background). */
    const offer = (settled: ReadonlyArray<Commitment>): Effect.Effect<void> =>
      batches.offer(settled.map((c) => ({ commitmentId: c.id, event: NudgeEvents.settled(c) })))

    return { offer } as const
  })
}) {}
