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
 * waits is sent before the nudging client closes.
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import { Background } from "./Background.js"
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
    const background = yield* Background
    const { nudgeBatchSize, nudgeBatchLinger, broadcastConcurrency } = yield* Config.settings

    let waiting: Array<Waiting> = []
    let flushing = false
    let inFlight: Deferred.Deferred<void> | undefined

    const notSent = (w: Waiting, detail: string) => Effect.logWarning(`commitment_settled nudge for ${w.commitmentId} not sent: ${detail}`)

    /** One batch; when the nudging service does not take it, its events one at a time (a few at once). */
    const send = (batch: ReadonlyArray<Waiting>) =>
      nudges.sendMany(batch.map((w) => w.event)).pipe(
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
            Effect.forEach(batch, (w) => nudges.send(w.event).pipe(Effect.catchAll((e) => notSent(w, e.detail))), {
              concurrency: broadcastConcurrency,
              discard: true
            })
          )
        ),
        Effect.withSpan("SettledNudges.send", { attributes: { "flexibility.nudges": batch.length } })
      )

    /** Takes up to a batch of the waiting nudges and sends them; `false` when none were waiting. */
    const sendNext = Effect.suspend(() => {
      if (waiting.length === 0) return Effect.succeed(false)
      const batch = waiting.length <= nudgeBatchSize ? waiting : waiting.slice(0, nudgeBatchSize)
      waiting = waiting.length <= nudgeBatchSize ? [] : waiting.slice(nudgeBatchSize)
      const done = Deferred.unsafeMake<void>(FiberId.none)
      inFlight = done
      return send(batch).pipe(
        Effect.ensuring(Effect.suspend(() => {
          if (inFlight === done) inFlight = undefined
          return Deferred.succeed(done, undefined)
        })),
        Effect.as(true)
      )
    })

    const drain: Effect.Effect<void> = Effect.flatMap(sendNext, (more) => (more ? drain : Effect.void))

    const flush = Effect.sleep(nudgeBatchLinger).pipe(
      Effect.zipRight(drain),
      Effect.ensuring(Effect.sync(() => {
        flushing = false
      })),
      // Offered while the last batch was on the way.
      Effect.zipRight(Effect.suspend(() => (waiting.length > 0 ? start : Effect.void)))
    )
    const start: Effect.Effect<void> = Effect.suspend(() => {
      if (flushing) return Effect.void
      flushing = true
      return background.run("settled_nudges", flush)
    })

    /** The settled nudges of `settled`, soon (in the background). */
    const offer = (settled: ReadonlyArray<Commitment>): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (settled.length === 0) return Effect.void
        for (const c of settled) waiting.push({ commitmentId: c.id, event: NudgeEvents.settled(c) })
        return start
      })

    // Shutdown: what still waits goes out, and the batch on the way is answered, before the
    // nudging client closes (at most 10 s).
    yield* Effect.addFinalizer(() =>
      drain.pipe(
        Effect.zipRight(Effect.suspend(() => (inFlight === undefined ? Effect.void : Deferred.await(inFlight)))),
        Effect.timeoutOption(Duration.seconds(10)),
        Effect.asVoid
      )
    )

    return { offer } as const
  })
}) {}
