/**
 * Stopping the service while pushes are in flight (in the push worker threads or not): the
 * Dispatcher lets the batch finish, for at most the push timeout, and records its results, rather
 * than interrupting it and leaving the deliveries `sending` until their lease runs out. The
 * repositories and channels are fakes: what is under test is the order of shutdown.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
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
  ruleId: "botanswer",
  userId: "u-1",
  title: "title",
  body: "body",
  url: "/",
  severity: "info",
  language: "en"
})

const layer = (pushTakes: Duration.DurationInput, recorded: Array<string>) =>
  Dispatcher.Default.pipe(Layer.provide(Layer.mergeAll(
    Layer.succeed(DeliveriesRepo, DeliveriesRepo.make({
      claim: (ids) => Effect.succeed(ids.map(job)),
      claimDue: () => Effect.succeed([]) as unknown as ReturnType<DeliveriesRepo["claimDue"]>,
      dispatched: (ids) => Effect.sync(() => recorded.push(...ids)),
      complete: () => Effect.void
    })),
    Layer.succeed(SubscriptionsRepo, {} as SubscriptionsRepo),
    Layer.succeed(WebPush, WebPush.make({
      send: (): Effect.Effect<SendResult> => Effect.as(Effect.sleep(pushTakes), { _tag: "Delivered", status: 201 } as const),
      publicKey: "public"
    })),
    Layer.succeed(Email, {} as Email),
    Layer.succeed(ClickTracking, { sign: (id: string) => `token-${id}` } as unknown as ClickTracking),
    Settings.layer.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["WEBPUSH_TIMEOUT_SECONDS", "1"]])))))
  )))

/** Kicks two deliveries, stops the Dispatcher at once; how long stopping took. */
const stopWhileSending = (pushTakes: Duration.DurationInput, recorded: Array<string>) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const dispatcher = yield* Layer.buildWithScope(layer(pushTakes, recorded), scope).pipe(
      Effect.map((context) => context.unsafeMap.get(Dispatcher.key) as Dispatcher)
    )
    yield* dispatcher.kick(["d-1", "d-2"])
    yield* Effect.sleep("50 millis")
    const started = Date.now()
    yield* Scope.close(scope, Exit.void)
    return Date.now() - started
  })

describe("Dispatcher at shutdown", () => {
  it.live("the batch in flight finishes and its results are recorded", () =>
    Effect.gen(function*() {
      const recorded: Array<string> = []
      yield* stopWhileSending("300 millis", recorded)
      expect(recorded).toEqual(["d-1", "d-2"])
    }))

  it.live("a batch that outlasts the push timeout is interrupted (its claims wait for their lease)", () =>
    Effect.gen(function*() {
      const recorded: Array<string> = []
      const took = yield* stopWhileSending("30 seconds", recorded)
      expect(recorded).toEqual([])
      expect(took).toBeGreaterThanOrEqual(1500)
      expect(took).toBeLessThan(5000)
    }))
})
