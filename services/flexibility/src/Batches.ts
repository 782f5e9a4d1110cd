/**
 * Background work that is cheaper in batches (`SettledNudges`, `Announcements`): items offered
 * wait a moment (`linger`) for others, then go `size` at a time through `send`, in one
 * `Background` task while any wait. The offering request never waits. On shutdown (the scope's
 * end) what still waits is sent and the batch on the way finishes, at most 10 s, before the
 * parts `send` uses close.
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import type * as Scope from "effect/Scope"
import { Background } from "./Background.js"

export interface Options<A> {
  /** The background task's name (logs, spans). */
  readonly task: string
  readonly size: number
  readonly linger: Duration.Duration
  /** Sends one batch; its failures are its own to log. */
  readonly send: (batch: ReadonlyArray<A>) => Effect.Effect<void>
}

export interface Batches<A> {
  /** Queues `items` to be sent soon. */
  readonly offer: (items: ReadonlyArray<A>) => Effect.Effect<void>
}

export const make = <A>(options: Options<A>): Effect.Effect<Batches<A>, never, Background | Scope.Scope> =>
  Effect.gen(function*() {
    const background = yield* Background
    const { send, size } = options
    let waiting: Array<A> = []
    let flushing = false
    let inFlight: Deferred.Deferred<void> | undefined

    /** Sends up to one batch of what waits; `false` when nothing did. */
    const sendNext = Effect.suspend(() => {
      if (waiting.length === 0) return Effect.succeed(false)
      const batch = waiting.length <= size ? waiting : waiting.slice(0, size)
      waiting = waiting.length <= size ? [] : waiting.slice(size)
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

    /**
     * Sends what waits, then goes on at once only while a full batch waits: items offered while
     * a batch was on the way wait for the next linger instead of following in a small batch of
     * their own (under load that chain kept batches small, and every batch has a fixed cost).
     */
    const drainFull: Effect.Effect<void> = Effect.flatMap(sendNext, (sent) => (sent && waiting.length >= size ? drainFull : Effect.void))

    const flush: Effect.Effect<void> = Effect.sleep(options.linger).pipe(
      Effect.zipRight(drainFull),
      Effect.ensuring(Effect.sync(() => {
        flushing = false
      })),
      // Offered while the last batch was on the way.
      Effect.zipRight(Effect.suspend(() => (waiting.length > 0 ? start : Effect.void)))
    )
    const start: Effect.Effect<void> = Effect.suspend(() => {
      if (flushing) return Effect.void
      flushing = true
      return background.run(options.task, flush)
    })

    const offer = (items: ReadonlyArray<A>): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (items.length === 0) return Effect.void
        for (const item of items) waiting.push(item)
        return start
      })

    yield* Effect.addFinalizer(() =>
      drain.pipe(
        Effect.zipRight(Effect.suspend(() => (inFlight === undefined ? Effect.void : Deferred.await(inFlight)))),
        Effect.timeoutOption(Duration.seconds(10)),
        Effect.asVoid
      )
    )

    return { offer }
  })
