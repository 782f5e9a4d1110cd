/**
 * Reactions to pipeline runs (reference A7): completed runs arrive on `PIPELINE_RUNS_TOPIC`
 * (default `rec/pipelines/runs/+`, a shared subscription when `MQTT_SHARED_GROUP` is set) through
 * `@rec/mqtt`'s `PipelineRuns` listener, and by flow:
 *
 * | flow | reaction |
 * |---|---|
 * | `meters-flow` | window-open reminders (`Reminders`) |
 * | `rec-forecasting-flow` | opportunity broadcast to every community's members (`Broadcast`), once per member and run |
 * | `rec-flexibility-flow` | settlement of the run's day (`Settlement`): `period`, else the timestamp's date |
 *
 * Other flows and statuses are ignored. Every reaction is idempotent, as QoS 1 delivery is at
 * least once; a failing reaction is logged and the next event handled.
 */
import { PipelineRuns } from "@rec/mqtt"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { Broadcast } from "./Broadcast.js"
import { Reminders } from "./Reminders.js"
import { Settlement } from "./Settlement.js"

export const flows = {
  reminders: "meters-flow",
  broadcast: "rec-forecasting-flow",
  settlement: "rec-flexibility-flow"
} as const

export class PipelineReactions extends Effect.Service<PipelineReactions>()("flexibility/PipelineReactions", {
  effect: Effect.gen(function*() {
    const reminders = yield* Reminders
    const broadcast = yield* Broadcast
    const settlement = yield* Settlement

    /** The reaction to one completed run. */
    const handle = (event: PipelineRuns.PipelineRunEvent): Effect.Effect<void, unknown> => {
      switch (event.flow) {
        case flows.reminders:
          return Effect.asVoid(reminders.run())
        case flows.broadcast:
          return Effect.asVoid(broadcast.run(event.run_id))
        case flows.settlement:
          return Effect.asVoid(settlement.run(PipelineRuns.dayOf(event), event.run_id))
        default:
          return Effect.void
      }
    }

    return { handle } as const
  })
}) {}

/**
 * Listens for the service's lifetime (started with the service, stopped with it). A subscription
 * the broker refuses (its ACL check failed or timed out, as on a busy machine at start) is logged
 * and tried again with backoff (up to every minute), as the grid gateway's listener does, so a
 * transient refusal does not leave the service deaf until a restart.
 */
export const layer = (options: PipelineRuns.ConsumeOptions = {}) =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      const reactions = yield* PipelineReactions
      yield* PipelineRuns.consume(reactions.handle, options).pipe(
        Effect.tapError((error) => Effect.logError("pipeline-run listener stopped; retrying", error)),
        Effect.retry(Schedule.exponential("1 second").pipe(Schedule.union(Schedule.spaced("1 minute")))),
        Effect.catchAll((error) => Effect.logError("pipeline-run listener stopped", error)),
        Effect.forkScoped
      )
    })
  )
