/**
 * Background work that is cheaper in batches (`Announcements`, `SettledNudges`,
 * `ScheduledReminders`): items offered wait a moment (`linger`) for others, then go `size` at a
 * time through `send`, in one `Background` task while any wait. The offering request never waits.
 * On shutdown (the scope's end) what still waits is sent and the batch on the way finishes, at
 * most 10 s, before the parts `send` uses close.
 *
 * `makeKeyed` is the same for items with a key (the pre-window reminders, keyed by their
 * `external_key`): a key offered again replaces its waiting item, which then goes last; and an
 * item can be withdrawn, dropped while it waits, or awaited while its batch is on the way, so
 * that whatever undoes it (a cancel) never overtakes it.
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

export interface KeyedOptions<A> extends Options<A> {
  readonly key: (item: A) => string
}

export interface KeyedBatches<A> extends Batches<A> {
  /**
   * Withdraws the item of `key`: dropped if it still waits; if it is in the batch on the way,
   * completes once that batch was sent. Completes at once when neither.
   */
  readonly withdraw: (key: string) => Effect.Effect<void>
}

/** What waits, oldest first. */
interface Waiting<A> {
  readonly size: () => number
  readonly add: (item: A) => void
  /** Removes and gives the oldest `n` (all when fewer wait). */
  readonly take: (n: number) => ReadonlyArray<A>
}

const list = <A>(): Waiting<A> => {
  let items: Array<A> = []
  return {
    size: () => items.length,
    add: (item) => void items.push(item),
    take: (n) => {
      const batch = items.length <= n ? items : items.slice(0, n)
      items = items.length <= n ? [] : items.slice(n)
      return batch
    }
  }
}

/** By key; a key added again is moved to the end with its new item. */
const keyedMap = <A>(keyOf: (item: A) => string): Waiting<A> & { readonly delete: (key: string) => void } => {
  let items = new Map<string, A>()
  return {
    size: () => items.size,
    add: (item) => {
      const key = keyOf(item)
      items.delete(key) // re-inserted last: its turn is now
      items.set(key, item)
    },
    take: (n) => {
      if (items.size <= n) {
        const batch = [...items.values()]
        items = new Map()
        return batch
      }
      const batch: Array<A> = []
      for (const [key, item] of items) {
        if (batch.length === n) break
        batch.push(item)
        items.delete(key)
      }
      return batch
    },
    delete: (key) => void items.delete(key)
  }
}

interface InFlight<A> {
  readonly batch: ReadonlyArray<A>
  readonly done: Deferred.Deferred<void>
}

/** The linger/drain loop over `waiting`; the batch on the way is readable for `withdraw`. */
const run = <A>(options: Options<A>, waiting: Waiting<A>) =>
  Effect.gen(function*() {
    const background = yield* Background
    const { send, size } = options
    let flushing = false
    let inFlight: InFlight<A> | undefined

    /** Sends up to one batch of what waits; `false` when nothing did. */
    const sendNext = Effect.suspend(() => {
      if (waiting.size() === 0) return Effect.succeed(false)
      const flight: InFlight<A> = { batch: waiting.take(size), done: Deferred.unsafeMake<void>(FiberId.none) }
      inFlight = flight
      return send(flight.batch).pipe(
        Effect.ensuring(Effect.suspend(() => {
          if (inFlight === flight) inFlight = undefined
          return Deferred.succeed(flight.done, undefined)
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
    const drainFull: Effect.Effect<void> = Effect.flatMap(sendNext, (sent) => (sent && waiting.size() >= size ? drainFull : Effect.void))

    const flush: Effect.Effect<void> = Effect.sleep(options.linger).pipe(
      Effect.zipRight(drainFull),
      Effect.ensuring(Effect.sync(() => {
        flushing = false
      })),
      // Offered while the last batch was on the way.
      Effect.zipRight(Effect.suspend(() => (waiting.size() > 0 ? start : Effect.void)))
    )
    const start: Effect.Effect<void> = Effect.suspend(() => {
      if (flushing) return Effect.void
      flushing = true
      return background.run(options.task, flush)
    })

    const offer = (items: ReadonlyArray<A>): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (items.length === 0) return Effect.void
        for (const item of items) waiting.add(item)
        return start
      })

    yield* Effect.addFinalizer(() =>
      drain.pipe(
        Effect.zipRight(Effect.suspend(() => (inFlight === undefined ? Effect.void : Deferred.await(inFlight.done)))),
        Effect.timeoutOption(Duration.seconds(10)),
        Effect.asVoid
      )
    )

    return { offer, inFlight: () => inFlight }
  })

export const make = <A>(options: Options<A>): Effect.Effect<Batches<A>, never, Background | Scope.Scope> =>
  Effect.map(run(options, list<A>()), ({ offer }) => ({ offer }))

export const makeKeyed = <A>(options: KeyedOptions<A>): Effect.Effect<KeyedBatches<A>, never, Background | Scope.Scope> => {
  const waiting = keyedMap(options.key)
  return Effect.map(run(options, waiting), ({ inFlight, offer }) => ({
    offer,
    withdraw: (key: string) =>
      Effect.suspend(() => {
        waiting.delete(key)
        const flight = inFlight()
        return flight !== undefined && flight.batch.some((item) => options.key(item) === key) ? Deferred.await(flight.done) : Effect.void
      })
  }))
}
