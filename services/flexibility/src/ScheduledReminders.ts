/**
 * The pre-window reminders of new commitments (reference A6.3), scheduled on the nudging service
 * in batches: each commitment's reminder waits here a moment (`reminderBatchLinger`) and goes
 * with the others of that moment in one `POST /scheduled-events/batch` (up to
 * `reminderBatchSize`). One call per commitment through the typed client cost more CPU than the
 * commitment itself (docs/performance.md, "Flexibility service"); a batch costs about as much as
 * one call. The commitment's answer never waits for it (`Background`).
 *
 * Nothing is lost that one call per reminder would keep: a batch the nudging service refuses
 * (or one that cannot reach it) is tried again one reminder at a time, each failure logged, as
 * before; on shutdown what is still waiting is sent before the nudging client closes. A reminder
 * withdrawn (`unschedule`) while it waits here is dropped, and one withdrawn while its batch is
 * on the way is withdrawn after that batch was answered, so a cancel never overtakes its schedule.
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import { Background } from "./Background.js"
import * as Config from "./Config.js"
import { Nudges, type ScheduledNudge } from "./Nudges.js"

interface InFlight {
  readonly keys: ReadonlySet<string>
  readonly done: Deferred.Deferred<void>
}

export class ScheduledReminders extends Effect.Service<ScheduledReminders>()("flexibility/ScheduledReminders", {
  scoped: Effect.gen(function*() {
    const nudges = yield* Nudges
    const background = yield* Background
    const { reminderBatchSize, reminderBatchLinger } = yield* Config.settings

    /** Waiting reminders by external key (scheduling a key again replaces its event, as the nudging service does). */
    let waiting = new Map<string, ScheduledNudge>()
    let flushing = false
    let inFlight: InFlight | undefined

    /** One batch; when the nudging service does not take it, its reminders one at a time. */
    const oneAtATime = (batch: ReadonlyArray<ScheduledNudge>) =>
      Effect.forEach(batch, (event) =>
        nudges.schedule(event).pipe(
          Effect.catchAll((e) => Effect.logWarning(`reminder ${event.external_key} not scheduled: ${e.detail}`))
        ), { discard: true })
    const send = (batch: ReadonlyArray<ScheduledNudge>) =>
      (nudges.scheduleMany === undefined ? oneAtATime(batch) : nudges.scheduleMany(batch).pipe(
        Effect.catchAll((failure) =>
          batch.length === 1
            ? Effect.logWarning(`reminder ${batch[0]!.external_key} not scheduled: ${failure.detail}`)
            : Effect.zipRight(
              Effect.logWarning(`batch of ${batch.length} reminders not scheduled (${failure.detail}); scheduling them one at a time`),
              oneAtATime(batch)
            )
        )
      )).pipe(
        Effect.withSpan("ScheduledReminders.send", { attributes: { "flexibility.reminders": batch.length } })
      )

    /** Takes up to a batch of the waiting reminders and sends them; `false` when none were waiting. */
    const sendNext = Effect.suspend(() => {
      if (waiting.size === 0) return Effect.succeed(false)
      let batch: Array<ScheduledNudge>
      if (waiting.size <= reminderBatchSize) {
        batch = [...waiting.values()]
        waiting = new Map()
      } else {
        batch = []
        for (const [key, event] of waiting) {
          if (batch.length === reminderBatchSize) break
          batch.push(event)
          waiting.delete(key)
        }
      }
      const flight: InFlight = { keys: new Set(batch.map((e) => e.external_key)), done: Deferred.unsafeMake<void>(FiberId.none) }
      inFlight = flight
      return send(batch).pipe(
        Effect.ensuring(Effect.suspend(() => {
          if (inFlight === flight) inFlight = undefined
          return Deferred.succeed(flight.done, undefined)
        })),
        Effect.as(true)
      )
    })

    const drain: Effect.Effect<void> = Effect.flatMap(sendNext, (more) => (more ? drain : Effect.void))

    /**
     * Sends what waits, then goes on at once only while a full batch waits: reminders that came
     * while a batch was on the way wait for the next linger instead of following in a small batch
     * of their own (under load that chain made batches of ~14 instead of ~60, and each call to the
     * nudging service costs about what a create does; docs/performance.md, "Flexibility service").
     */
    const drainFull: Effect.Effect<void> = Effect.flatMap(
      sendNext,
      (sent) => (sent && waiting.size >= reminderBatchSize ? drainFull : Effect.void)
    )

    /** Runs while reminders wait: a moment for others to join, then batches (full ones back to back). */
    const flush = Effect.sleep(reminderBatchLinger).pipe(
      Effect.zipRight(drainFull),
      Effect.ensuring(Effect.sync(() => {
        flushing = false
      })),
      // Offered while the last batch was on the way.
      Effect.zipRight(Effect.suspend(() => (waiting.size > 0 ? start : Effect.void)))
    )
    const start: Effect.Effect<void> = Effect.suspend(() => {
      if (flushing) return Effect.void
      flushing = true
      return background.run("schedule_reminders", flush)
    })

    /** Schedules `event` soon (in the background). */
    const schedule = (event: ScheduledNudge): Effect.Effect<void> =>
      Effect.suspend(() => {
        waiting.delete(event.external_key) // re-inserted last: its turn is now
        waiting.set(event.external_key, event)
        return start
      })

    /** Withdraws the reminder of `externalKey`: dropped if still waiting, after its batch if on the way. */
    const unschedule = (externalKey: string) =>
      Effect.suspend(() => {
        waiting.delete(externalKey)
        const flight = inFlight
        const before = flight !== undefined && flight.keys.has(externalKey) ? Deferred.await(flight.done) : Effect.void
        return Effect.zipRight(before, nudges.unschedule(externalKey))
      })

    // Shutdown: what still waits goes out, and the batch on the way is answered, before the
    // nudging client closes (at most 10 s).
    yield* Effect.addFinalizer(() =>
      drain.pipe(
        Effect.zipRight(Effect.suspend(() => (inFlight === undefined ? Effect.void : Deferred.await(inFlight.done)))),
        Effect.timeoutOption(Duration.seconds(10)),
        Effect.asVoid
      )
    )

    return { schedule, unschedule } as const
  })
}) {}
