/**
 * Sends the deliveries of the outbox: right after the ingest that queued them committed
 * (`kick`, in the background: the ingest answers without waiting for push services), and every
 * `NUDGING_DELIVERY_POLL_SECONDS` for the ones that are due (retries, deliveries of an instance
 * that stopped, kicks that lost to another instance).
 *
 * A failed attempt that is worth retrying waits `NUDGING_DELIVERY_RETRY_BASE_SECONDS`, doubled
 * per attempt up to `NUDGING_DELIVERY_RETRY_MAX_SECONDS` (or the push service's `Retry-After`
 * when longer); after `NUDGING_DELIVERY_MAX_ATTEMPTS` it is `failed`. A push subscription the
 * push service no longer knows (404/410) is disabled and the delivery is `gone`. Delivery is at
 * least once: an instance stopped in the middle of a send leaves a claim that another attempt
 * takes over when its lease runs out.
 *
 * Tracing: `kick` remembers the span of the caller (the ingest request, the scheduler's run),
 * and the attempt of each kicked delivery is a child of it, so the push or e-mail is in the same
 * trace as the request that caused it although it is sent in the background. Deliveries found
 * by the poll (retries, another instance's leftovers) start their own trace.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Tracer from "effect/Tracer"
import * as FiberSet from "effect/FiberSet"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import { ClickTracking } from "./ClickTracking.js"
import { type Completion, DeliveriesRepo, type Job } from "./DeliveriesRepo.js"
import { Email } from "./Email.js"
import { Settings } from "./Settings.js"
import { SubscriptionsRepo } from "./SubscriptionsRepo.js"
import { WebPush } from "./WebPush.js"

/**
 * Pushes or e-mails in flight per batch, batches in flight per instance, deliveries claimed per
 * statement. A batch's sends run in a fixed set of workers (`Effect.forEach` with this
 * concurrency), never as one fiber per delivery queued on a semaphore: releasing a permit of
 * Effect's semaphore wakes every waiter, so a backlog of N deliveries cost O(N^2) wake-ups (about
 * 10 ms of CPU per push with a thousand queued, against 1 ms for the push itself). One batch at
 * a time: the deliveries kicked while it is sent are claimed together afterwards (under load,
 * one claim and one completion statement for many pushes instead of for one or two each).
 */
const concurrency = 32
const batchesInFlight = 1
const batch = 100

/** A just-committed delivery, and the span of the request that queued it (continued by its attempt). */
interface Kicked {
  readonly id: string
  readonly parent: Tracer.AnySpan | undefined
}

export class Dispatcher extends Effect.Service<Dispatcher>()("nudging/Dispatcher", {
  scoped: Effect.gen(function*() {
    const repo = yield* DeliveriesRepo
    const subscriptions = yield* SubscriptionsRepo
    const webPush = yield* WebPush
    const email = yield* Email
    const clicks = yield* ClickTracking
    const settings = yield* Settings
    const fibers = yield* FiberSet.make()
    /** Batches in flight (kicked or polled). */
    const slots = yield* Effect.makeSemaphore(batchesInFlight)
    const clock = yield* Effect.clock
    const lease = Duration.times(Duration.max(settings.pushTimeout, Duration.seconds(20)), 3)

    const iso = (millis: number) => new Date(millis).toISOString()

    const backoff = (attempts: number, retryAfter: Duration.Duration | undefined) => {
      const exponential = Duration.times(settings.retryBase, 2 ** Math.max(0, attempts - 1))
      const delay = Duration.min(exponential, settings.retryMax)
      return retryAfter === undefined ? delay : Duration.max(delay, Duration.min(retryAfter, settings.retryMax))
    }

    const retryOrFail = (job: Job, error: string, retryAfter: Duration.Duration | undefined, now: number): Completion =>
      job.attempts >= settings.deliveryMaxAttempts
        ? { _tag: "Failed", error: `${error} (gave up after ${job.attempts} attempts)` }
        : { _tag: "Retry", error, nextAttemptAt: iso(now + Duration.toMillis(backoff(job.attempts, retryAfter))) }

    const attempt = (job: Job): Effect.Effect<Completion> =>
      Effect.gen(function*() {
        if (job.channel === "webpush") {
          if (job.endpoint === null || job.p256dh === null || job.auth === null || job.subscriptionEnabled !== true) {
            return { _tag: "Failed", error: "the push subscription was removed before delivery" } as const
          }
          const result = yield* webPush.send(
            { endpoint: job.endpoint, p256dh: job.p256dh, auth: job.auth },
            {
              title: job.title,
              body: job.body,
              data: { url: job.url, notification_id: job.notificationId, rule_id: job.ruleId, click_token: clicks.sign(job.notificationId) }
            },
            job.severity
          )
          const now = yield* clock.currentTimeMillis
          switch (result._tag) {
            case "Delivered":
              return { _tag: "Dispatched" } as const
            case "Gone":
              if (job.subscriptionId !== null) yield* subscriptions.markGone(job.subscriptionId, iso(now)).pipe(Effect.orDie)
              return { _tag: "Gone", error: result.message } as const
            case "Rejected":
              return { _tag: "Failed", error: result.message } as const
            case "Retry":
              return retryOrFail(job, result.message, result.retryAfter, now)
          }
        }
        const link = `${settings.publicUrl}/track/click?token=${encodeURIComponent(clicks.sign(job.notificationId))}`
        const result = yield* email.send({ to: job.destination, subject: job.title, text: `${job.body}\n\n${link}\n`, language: job.language })
        const now = yield* clock.currentTimeMillis
        switch (result._tag) {
          case "Delivered":
            return { _tag: "Dispatched" } as const
          case "Rejected":
            return { _tag: "Failed", error: result.message } as const
          case "Retry":
            return retryOrFail(job, result.message, undefined, now)
        }
      })

    /**
     * Sends a batch (at most `concurrency` pushes or e-mails in flight), then records the
     * results. `parents`: the span that queued each delivery, when known (see `kick`).
     */
    const deliverAll = (jobs: ReadonlyArray<Job>, parents: ReadonlyMap<string, Tracer.AnySpan> = new Map()) =>
      Effect.gen(function*() {
        if (jobs.length === 0) return
        const completions = yield* Effect.forEach(jobs, (job) =>
          attempt(job).pipe(
            Effect.map((completion) => [job, completion] as const),
            Effect.withSpan("Dispatcher.attempt", {
              attributes: { "nudging.channel": job.channel, "nudging.attempt": job.attempts, "nudging.delivery_id": job.id },
              // The call site is always this line: no stack captured per delivery.
              captureStackTrace: false,
              ...(parents.has(job.id) ? { parent: parents.get(job.id)! } : {})
            })
          ), { concurrency })
        const now = iso(yield* clock.currentTimeMillis)
        yield* repo.dispatched(completions.flatMap(([job, c]) => (c._tag === "Dispatched" ? [job.id] : [])), now)
        for (const [job, completion] of completions) {
          if (completion._tag === "Dispatched") continue
          yield* repo.complete(job, completion, now)
          yield* Effect.logWarning(`delivery ${job.id} (${job.channel}) ${completion._tag.toLowerCase()}: ${completion.error}`)
        }
      })

    /** Claims and sends the deliveries that are due; how many were claimed. */
    const runDue = slots.withPermits(1)(Effect.gen(function*() {
      const now = yield* clock.currentTimeMillis
      const jobs = yield* repo.claimDue(iso(now), iso(now + Duration.toMillis(lease)), batch)
      yield* deliverAll(jobs)
      return jobs.length
    })).pipe(Effect.withSpan("Dispatcher.runDue"))

    // Deliveries just committed by ingests: claimed together (one statement per batch) and sent
    // in the background; whatever is lost here (a claim another instance won, a crash) the poll
    // below finds. A batch is claimed only once a slot is free: while the sender is busy,
    // kicked deliveries wait in the queue (not claimed, so not leased) and the next claim takes
    // more of them at once.
    const kicked = yield* Queue.unbounded<Kicked>()
    /** Kicked deliveries not yet sent (or given up to the poll): `awaitIdle`. */
    let outstanding = 0
    const claimKicked = Effect.gen(function*() {
      const first = yield* Queue.takeBetween(kicked, 1, batch)
      yield* slots.take(1)
      // Under load ingests commit deliveries while the previous claim or batch runs: they are
      // claimed together (one statement for many, which the single session of PGlite especially
      // feels). No timer to wait for more: on PGlite a busy process runs its statements in
      // microtasks and a timer fires only once it is idle (a 5 ms wait took seconds).
      const all: Array<Kicked> = Array.from(first)
      yield* Effect.yieldNow()
      if (all.length < batch) for (const k of yield* Queue.takeUpTo(kicked, batch - all.length)) all.push(k)
      const parents = new Map<string, Tracer.AnySpan>()
      const ids: Array<string> = []
      for (const k of all) {
        ids.push(k.id)
        if (k.parent !== undefined) parents.set(k.id, k.parent)
      }
      const now = yield* clock.currentTimeMillis
      const done = Effect.zipRight(slots.release(1), Effect.sync(() => {
        outstanding -= all.length
      }))
      // The claim itself is not part of any one request's trace (it serves many).
      const jobs = yield* repo.claim(ids, iso(now), iso(now + Duration.toMillis(lease))).pipe(Effect.onError(() => done))
      yield* FiberSet.run(fibers, deliverAll(jobs, parents).pipe(
        Effect.catchAllCause((cause) => Effect.logError("sending deliveries failed; the poller retries them", cause)),
        Effect.ensuring(done)
      ))
    }).pipe(Effect.catchAllCause((cause) => Effect.logError("claiming deliveries failed; the poller retries them", cause)))
    yield* claimKicked.pipe(Effect.forever, Effect.forkScoped)

    /** Hands these (just committed) deliveries to the sender, with the caller's span as their attempts' parent. */
    const kick = (ids: ReadonlyArray<string>) =>
      ids.length === 0 ? Effect.void : Effect.flatMap(Effect.option(Effect.currentSpan), (span) => {
        outstanding += ids.length
        const parent = span._tag === "Some" ? span.value : undefined
        return Queue.offerAll(kicked, ids.map((id): Kicked => ({ id, parent })))
      }).pipe(Effect.asVoid)

    /** Runs batches until none is due. */
    const drain = Effect.iterate(batch, { while: (n) => n === batch, body: () => runDue })

    yield* drain.pipe(
      Effect.catchAllCause((cause) => Effect.logError("delivery poll failed", cause)),
      Effect.repeat(Schedule.spaced(settings.deliveryPoll)),
      Effect.forkScoped
    )

    // At shutdown (finalizers run last registered first, so before the batches' fibers are
    // interrupted) the batches in flight may finish, for at most the push timeout: their pushes,
    // in a worker thread or not, get their results recorded instead of waiting out their lease.
    // Finalizers are uninterruptible: the wait is made interruptible for the timeout to end it.
    yield* Effect.addFinalizer(() =>
      FiberSet.awaitEmpty(fibers).pipe(
        Effect.interruptible,
        Effect.timeoutOption(Duration.sum(settings.pushTimeout, Duration.seconds(1))),
        Effect.asVoid
      )
    )

    return {
      kick,
      runDue,
      /** Waits until every kicked delivery was claimed and its send finished (tests, benchmarks). */
      awaitIdle: Effect.gen(function*() {
        while (outstanding > 0 || (yield* FiberSet.size(fibers)) > 0) {
          yield* Effect.sleep("10 millis")
        }
      })
    }
  })
}) {}
