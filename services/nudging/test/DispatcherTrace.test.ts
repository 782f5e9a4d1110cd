/**
 * Deliveries are sent in the background, after the ingest answered; their attempt must still be
 * in the trace of the request that queued them (issue 18: one trace from the grid gateway through
 * the nudging service to the push). The repositories and channels are fakes here: what is under
 * test is which span the Dispatcher's attempt (and so the push's client span) continues.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Tracer from "effect/Tracer"
import { ClickTracking } from "../src/ClickTracking.js"
import { DeliveriesRepo, type Job } from "../src/DeliveriesRepo.js"
import { Dispatcher } from "../src/Dispatcher.js"
import { Email } from "../src/Email.js"
import { Settings } from "../src/Settings.js"
import { SubscriptionsRepo } from "../src/SubscriptionsRepo.js"
import { type SendResult, WebPush } from "../src/WebPush.js"

const job = (id: string): Job => ({
  id,
  notificationId: `n-${id}`,
  channel: "webpush",
  destination: "s-1",
  attempts: 1,
  subscriptionId: "s-1",
  endpoint: "https://push.example/1",
  p256dh: "key",
  auth: "secret",
  subscriptionEnabled: true,
  ruleId: "extr_event",
  userId: "u-1",
  title: "title",
  body: "body",
  url: "/",
  severity: "warning",
  language: "en"
})

/** The span current when each push was sent, by endpoint call. */
const sentUnder: Array<Option.Option<Tracer.Span>> = []

const fakes = Layer.mergeAll(
  Layer.succeed(DeliveriesRepo, DeliveriesRepo.make({
    claim: (ids) => Effect.succeed(ids.map(job)),
    // A SQL statement is an Effect with more methods; the Dispatcher only runs it.
    claimDue: () => Effect.succeed([]) as unknown as ReturnType<DeliveriesRepo["claimDue"]>,
    dispatched: () => Effect.void,
    complete: () => Effect.void
  })),
  Layer.succeed(SubscriptionsRepo, {} as SubscriptionsRepo),
  Layer.succeed(WebPush, WebPush.make({
    send: (): Effect.Effect<SendResult> =>
      Effect.map(Effect.option(Effect.currentSpan), (span) => {
        sentUnder.push(span)
        return { _tag: "Delivered", status: 201 } as const
      }),
    publicKey: "public"
  })),
  Layer.succeed(Email, {} as Email),
  Layer.succeed(ClickTracking, { sign: (id: string) => `token-${id}` } as unknown as ClickTracking),
  Settings.layer
)

const parentIds = (span: Tracer.AnySpan): Array<string> => {
  const out: Array<string> = []
  let current: Option.Option<Tracer.AnySpan> = span._tag === "Span" ? span.parent : Option.none()
  while (Option.isSome(current)) {
    out.push(current.value.spanId)
    current = current.value._tag === "Span" ? current.value.parent : Option.none()
  }
  return out
}

describe("Dispatcher tracing", () => {
  it.live("a kicked delivery's attempt continues the trace of the request that queued it", () =>
    Effect.gen(function*() {
      sentUnder.length = 0
      const dispatcher = yield* Dispatcher
      const request = yield* Effect.gen(function*() {
        const span = yield* Effect.currentSpan
        yield* dispatcher.kick(["d-1", "d-2"])
        return span
      }).pipe(Effect.withSpan("POST /ingest-event"))
      yield* dispatcher.awaitIdle
      expect(sentUnder).toHaveLength(2)
      for (const span of sentUnder) {
        expect(Option.isSome(span)).toBe(true)
        const attempt = Option.getOrThrow(span)
        expect(attempt.name).toBe("Dispatcher.attempt")
        expect(attempt.traceId).toBe(request.traceId)
        expect(parentIds(attempt)[0]).toBe(request.spanId)
      }
    }).pipe(Effect.provide(Dispatcher.Default.pipe(Layer.provide(fakes)))))

  it.live("a kick outside any span starts the attempt's own trace", () =>
    Effect.gen(function*() {
      sentUnder.length = 0
      const dispatcher = yield* Dispatcher
      yield* dispatcher.kick(["d-3"])
      yield* dispatcher.awaitIdle
      expect(sentUnder).toHaveLength(1)
      const attempt = Option.getOrThrow(sentUnder[0]!)
      expect(attempt.name).toBe("Dispatcher.attempt")
      expect(parentIds(attempt)).toEqual([])
    }).pipe(Effect.provide(Dispatcher.Default.pipe(Layer.provide(fakes)))))
})
