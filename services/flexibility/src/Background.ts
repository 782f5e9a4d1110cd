/**
 * Work that follows a request but must not hold its answer up or fail it: publishing an
 * accepted commitment, scheduling its reminder, the settled nudge. Each task runs in a fiber of
 * the service's scope (so shutdown interrupts what is left), and a failure is logged with the
 * task's name, never thrown at the caller. `idle` waits until no task is running (tests, drain).
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"

export class Background extends Effect.Service<Background>()("flexibility/Background", {
  scoped: Effect.gen(function*() {
    const fibers = yield* FiberSet.make<void, never>()

    const run = <E, R>(task: string, effect: Effect.Effect<void, E, R>): Effect.Effect<void, never, R> =>
      FiberSet.run(
        fibers,
        effect.pipe(
          Effect.catchAllCause((cause) =>
            Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logWarning(`${task} failed`, cause)
          ),
          Effect.withSpan(`Background.${task}`)
        )
      ).pipe(Effect.asVoid)

    return { run, idle: FiberSet.awaitEmpty(fibers) } as const
  })
}) {}
