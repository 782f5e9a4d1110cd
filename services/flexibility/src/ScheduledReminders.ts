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
 * before; on shutdown what is still waiting is sent before the nudging client closes (`Batches`). A reminder
 * withdrawn (`unschedule`) while it waits here is dropped, and one withdrawn while its batch is
 * on the way is withdrawn after that batch was answered, so a cancel never overtakes its schedule.
 */
import * as Effect from "effect/Effect"
import * as Batches from "./Batches.js"
import * as Config from "./Config.js"
import { Nudges, type ScheduledNudge } from "./Nudges.js"

export class ScheduledReminders extends Effect.Service<ScheduledReminders>()("flexibility/ScheduledReminders", {
  scoped: Effect.gen(function*() {
    const nudges = yield* Nudges
    const { reminderBatchSize, reminderBatchLinger } = yield* Config.settings

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

    // Keyed by external key: scheduling a key again replaces its event, as the nudging service does.
    const batches = yield* Batches.makeKeyed({
      task: "schedule_reminders",
      size: reminderBatchSize,
      linger: reminderBatchLinger,
      send,
      key: (event: ScheduledNudge) => event.external_key
    })

    /** Schedules `event` soon (in the background). */
    const schedule = (event: ScheduledNudge): Effect.Effect<void> => batches.offer([event])

    /** Withdraws the reminder of `externalKey`: dropped if still waiting, after its batch if on the way. */
    const unschedule = (externalKey: string) => Effect.zipRight(batches.withdraw(externalKey), nudges.unschedule(externalKey))

    return { schedule, unschedule } as const
  })
}) {}
