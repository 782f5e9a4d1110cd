/**
 * Token placement (`PLATFORM_MQTT_TOKEN_FIELD`), renewal of a connection before its token
 * expires, and persistent sessions, against the embedded broker (which ends a connection at its
 * token's `exp`, as the platform's brokers do).
 */
import { describe, expect, it } from "@effect/vitest"
import { EmbeddedBroker } from "@rec/mqtt"
import { Duration, Effect, Fiber, Redacted, Stream } from "effect"
import { client, freePort, startBroker, testConfig } from "./support/brokers.js"

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")

/** A token provider minting a JWT-shaped token (unique `jti`) that expires `lifetimeMs` from now. */
const tokens = (lifetimeMs: number) => {
  const minted: Array<string> = []
  const token = Effect.sync(() => {
    const claims = { sub: "svc-test", jti: minted.length, exp: Math.floor((Date.now() + lifetimeMs) / 1000) }
    const jwt = `${base64url({ alg: "RS256", typ: "JWT" })}.${base64url(claims)}.${Buffer.from("sig").toString("base64url")}`
    minted.push(jwt)
    return Redacted.make(jwt)
  })
  return { minted, token }
}

/** Accepts everything and records what each CONNECT carried. */
const recording = () => {
  const connects: Array<{ clientId: string; username: string | undefined; password: string | undefined; at: number }> = []
  const auth = EmbeddedBroker.layerAuth({
    ...EmbeddedBroker.allowEverything,
    authenticate: (request) =>
      Effect.sync(() => {
        connects.push({
          clientId: request.clientId,
          username: request.username,
          password: request.password === undefined ? undefined : Redacted.value(request.password),
          at: Date.now()
        })
        return true
      })
  })
  return { connects, auth }
}

describe("MQTT tokens and sessions", () => {
  it.effect("PLATFORM_MQTT_TOKEN_FIELD decides which CONNECT field carries the token", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      const { auth, connects } = recording()
      yield* startBroker(port, auth)
      const { minted, token } = tokens(60_000)
      yield* client(testConfig(port), { token, tokenUsername: "svc-grid" })
      expect(connects.at(-1)).toMatchObject({ username: "svc-grid", password: minted.at(-1) })
      yield* client(testConfig(port, { tokenField: "username" }), { token, tokenUsername: "svc-grid" })
      expect(connects.at(-1)).toMatchObject({ username: minted.at(-1), password: undefined })
    }).pipe(Effect.scoped), 20_000)

  it.live("renews the connection with a fresh token before it expires; the subscription keeps delivering", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      const { auth, connects } = recording()
      yield* startBroker(port, auth)
      // Tokens of 3.5 to 4.5 s (`exp` has whole seconds), renewed 1.2 to 1.5 s before they
      // expire: slack for a busy machine (persistent session: no gap).
      const { minted, token } = tokens(4_500)
      const subscriber = yield* client(
        testConfig(port, {
          clientId: "renewing-subscriber",
          tokenRenewBefore: Duration.millis(1_500),
          sessionExpiry: Duration.minutes(5)
        }),
        { token, tokenUsername: "svc-test" }
      )
      const publisher = yield* client(testConfig(port))
      const received = new Set<string>()
      const messages = yield* subscriber.subscribeScoped("renewal/+")
      const collector = yield* messages.pipe(
        Stream.runForEach((m) => Effect.sync(() => received.add(m.text))),
        Effect.fork
      )
      const states: Array<string> = []
      const watcher = yield* subscriber.statusChanges.pipe(
        Stream.runForEach((s) => Effect.sync(() => states.push(s.state))),
        Effect.fork
      )
      // Eight seconds: at least two renewals.
      const sent = 80
      for (let i = 0; i < sent; i++) {
        yield* publisher.publish("renewal/t", String(i))
        yield* Effect.sleep("100 millis")
      }
      yield* Effect.sleep("50 millis").pipe(Effect.repeat({ until: () => received.size === sent, times: 100 }))
      yield* Fiber.interrupt(collector)
      yield* Fiber.interrupt(watcher)
      const subscriberConnects = connects.filter((c) => c.clientId === "renewing-subscriber")
      // At least two renewals, each with a token never used before.
      expect(subscriberConnects.length).toBeGreaterThanOrEqual(3)
      expect(new Set(subscriberConnects.map((c) => c.password)).size).toBe(subscriberConnects.length)
      expect(subscriberConnects.every((c) => minted.includes(c.password!))).toBe(true)
      // Renewed before `exp`: every next connection came before the previous token expired.
      for (let i = 1; i < subscriberConnects.length; i++) {
        const previousExp = JSON.parse(Buffer.from(subscriberConnects[i - 1]!.password!.split(".")[1]!, "base64url").toString()).exp
        expect(subscriberConnects[i]!.at).toBeLessThan(previousExp * 1000)
      }
      expect(received.size).toBe(sent)
    }).pipe(Effect.scoped), 30_000)

  it.live("a persistent session gets what was published while its client was gone, before it subscribed again", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      yield* startBroker(port)
      const config = testConfig(port, { clientId: "persistent-listener", sessionExpiry: Duration.minutes(5) })
      const publisher = yield* client(testConfig(port))

      // First life of the listener: subscribe (QoS 1), receive one message, stop.
      yield* Effect.gen(function*() {
        const listener = yield* client(config)
        const stream = yield* listener.subscribeScoped("sessions/+", { qos: 1 })
        const first = yield* stream.pipe(Stream.take(1), Stream.runCollect, Effect.fork)
        yield* publisher.publish("sessions/a", "while-up")
        expect([...(yield* Fiber.join(first).pipe(Effect.timeout("5 seconds")))].map((m) => m.text)).toEqual(["while-up"])
      }).pipe(Effect.scoped)

      // Published while the listener process is gone: the broker queues them for the session.
      for (let i = 0; i < 5; i++) yield* publisher.publish("sessions/a", `while-down-${i}`, { qos: 1 })

      // Second life: the queue arrives right after CONNACK, before the listener subscribes again.
      const listener = yield* client(config)
      yield* Effect.sleep("300 millis")
      const stream = yield* listener.subscribeScoped("sessions/+", { qos: 1 })
      const got = yield* stream.pipe(Stream.take(5), Stream.runCollect, Effect.timeout("5 seconds"))
      expect([...got].map((m) => m.text).sort()).toEqual([0, 1, 2, 3, 4].map((i) => `while-down-${i}`))
    }).pipe(Effect.scoped), 30_000)
})
