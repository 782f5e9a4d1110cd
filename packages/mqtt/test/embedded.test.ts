import { describe, expect, it } from "@effect/vitest"
import { EmbeddedBroker, type Mqtt } from "@rec/mqtt"
import { Chunk, Duration, Effect, Fiber, Redacted, Schema, Stream } from "effect"
import { client, freePort, startBroker, testConfig } from "./support/brokers.js"

const Reading = Schema.Struct({ meterId: Schema.String, kwh: Schema.Number, at: Schema.DateTimeUtc })

/** Waits until `mqtt` reports `state`, failing the test after five seconds. */
const awaitState = (mqtt: Mqtt.Mqtt, state: Mqtt.MqttStatus["state"]) =>
  mqtt.statusChanges.pipe(
    Stream.filter((s) => s.state === state),
    Stream.runHead,
    Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error(`client never became ${state}`) })
  )

describe("Mqtt with the embedded broker", () => {
  it.live("round-trips a QoS 1 message, falling back to MQTT 3.1.1", () =>
    Effect.gen(function*() {
      const { info } = yield* startBroker(0)
      const mqtt = yield* client(testConfig(info.port))
      const status = yield* mqtt.status
      expect(status).toMatchObject({ state: "connected", protocolVersion: 4, failedAttempts: 0 })
      const messages = yield* mqtt.subscribeScoped("meters/+/readings", { qos: 1 })
      yield* mqtt.publish("meters/m-1/readings", "42.5", { qos: 1 })
      yield* mqtt.publish("meters/m-1/other", "ignored", { qos: 1 })
      const [received] = yield* messages.pipe(Stream.take(1), Stream.runCollect, Effect.map(Chunk.toReadonlyArray))
      expect(received?.topic).toBe("meters/m-1/readings")
      expect(received?.text).toBe("42.5")
      expect(received?.qos).toBe(1)
      expect(yield* info.connectedClients).toBe(1)
    }).pipe(Effect.scoped))

  it.live("starts degraded while the broker is down, then messages flow once it is up", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      const started = Date.now()
      const mqtt = yield* client(testConfig(port, { startupTimeout: Duration.millis(500) }))
      // Start-up waited MQTT_STARTUP_TIMEOUT_SECONDS, then went on without a broker.
      expect(Date.now() - started).toBeGreaterThanOrEqual(450)
      const degraded = yield* mqtt.status
      expect(degraded.state).toBe("reconnecting")
      expect(degraded.failedAttempts).toBeGreaterThan(0)
      expect(degraded.lastError).toMatch(/ECONNREFUSED/)
      const unavailable = yield* mqtt.check.pipe(Effect.flip)
      expect(unavailable._tag).toBe("MqttUnavailable")
      expect(unavailable.message).toContain(`127.0.0.1:${port}`)

      // Subscribed while disconnected: it takes effect on the first connection.
      const received = yield* mqtt.subscribe("alerts/#").pipe(Stream.take(1), Stream.runCollect, Effect.fork)
      yield* startBroker(port)
      yield* awaitState(mqtt, "connected")
      expect((yield* mqtt.check).state).toBe("connected")
      yield* mqtt.publish("alerts/grid-1", "wind", { qos: 1 })
      const messages = yield* Fiber.join(received).pipe(Effect.timeout("5 seconds"))
      expect(Chunk.toReadonlyArray(messages).map((m) => m.text)).toEqual(["wind"])
    }).pipe(Effect.scoped))

  it.live("a subscription survives a broker restart", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      const first = yield* startBroker(port)
      const mqtt = yield* client(testConfig(port))
      const received: Array<string> = []
      const messages = yield* mqtt.subscribeScoped("pipelines/runs/+")
      const collector = yield* messages.pipe(
        Stream.tap((m) => Effect.sync(() => received.push(m.text))),
        Stream.take(2),
        Stream.runDrain,
        Effect.fork
      )
      yield* mqtt.publish("pipelines/runs/grid", "before")
      // The broker delivers after acknowledging the publish: wait for it before stopping.
      yield* Effect.sleep("20 millis").pipe(Effect.repeat({ until: () => received.length === 1, times: 100 }))

      yield* first.stop
      yield* awaitState(mqtt, "reconnecting")
      yield* startBroker(port)
      yield* awaitState(mqtt, "connected")
      // The new broker knows nothing of the old session: only a resubscription delivers this.
      yield* mqtt.publish("pipelines/runs/grid", "after")
      yield* Fiber.join(collector).pipe(Effect.timeout("5 seconds"))
      expect(received).toEqual(["before", "after"])
    }).pipe(Effect.scoped))

  it.live("a publish fails with not-connected when no broker answers in time", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      const mqtt = yield* client(
        testConfig(port, { startupTimeout: Duration.zero, publishTimeout: Duration.millis(300) })
      )
      const error = yield* mqtt.publish("x/y", "z").pipe(Effect.flip)
      expect(error).toMatchObject({ _tag: "MqttPublishError", reason: "not-connected", topic: "x/y" })
      const invalid = yield* mqtt.publish("x/+", "z").pipe(Effect.flip)
      expect(invalid.reason).toBe("invalid-topic")
      const badFilter = yield* mqtt.subscribeScoped("a/#/b").pipe(Effect.flip)
      expect(badFilter.reason).toBe("invalid-filter")
    }).pipe(Effect.scoped))

  it.live("JSON helpers encode and decode with Schema and drop payloads that do not match", () =>
    Effect.gen(function*() {
      const { info } = yield* startBroker(0)
      const mqtt = yield* client(testConfig(info.port, { topicPrefix: "tenant-a/" }))
      const received = yield* mqtt.subscribeJson("readings/+", Reading).pipe(Stream.take(1), Stream.runCollect, Effect.fork)
      yield* Effect.sleep("100 millis")
      yield* mqtt.publish("readings/m-1", "{ not json")
      yield* mqtt.publish("readings/m-1", JSON.stringify({ meterId: "m-1", kwh: "many" }))
      const at = new Date("2024-05-01T10:15:00Z")
      yield* mqtt.publishJson("readings/m-1", Reading, { meterId: "m-1", kwh: 1.25, at: Schema.decodeSync(Schema.DateTimeUtc)(at.toISOString()) })
      const [message] = Chunk.toReadonlyArray(yield* Fiber.join(received).pipe(Effect.timeout("5 seconds")))
      expect(message?.value.meterId).toBe("m-1")
      expect(message?.value.kwh).toBe(1.25)
      // The prefix isolates the application's topics and is invisible to it.
      expect(message?.message.topic).toBe("readings/m-1")
      const bad = yield* mqtt.publishJson("readings/m-1", Reading, { meterId: 1 } as never).pipe(Effect.flip)
      expect(bad.reason).toBe("encode")
    }).pipe(Effect.scoped))

  it.live("publishJsonMany sends every valid message in order and names each one that could not go", () =>
    Effect.gen(function*() {
      const { info } = yield* startBroker(0)
      const mqtt = yield* client(testConfig(info.port, { topicPrefix: "tenant-b/" }))
      const received = yield* mqtt.subscribeJson("readings/+", Reading).pipe(Stream.take(3), Stream.runCollect, Effect.fork)
      yield* Effect.sleep("100 millis")
      const at = Schema.decodeSync(Schema.DateTimeUtc)("2024-05-01T10:15:00Z")
      const results = yield* mqtt.publishJsonMany(Reading, [
        { topic: "readings/m-1", value: { meterId: "m-1", kwh: 1, at } },
        { topic: "readings/+", value: { meterId: "m-x", kwh: 1, at } },
        { topic: "readings/m-2", value: { meterId: 2 } as never },
        { topic: "readings/m-3", value: { meterId: "m-3", kwh: 3, at } },
        { topic: "readings/m-4", value: { meterId: "m-4", kwh: 4, at } }
      ], { qos: 1 })
      expect(results.map((r) => r?.reason)).toEqual([undefined, "invalid-topic", "encode", undefined, undefined])
      const messages = Chunk.toReadonlyArray(yield* Fiber.join(received).pipe(Effect.timeout("5 seconds")))
      expect(messages.map((m) => [m.message.topic, m.value.kwh])).toEqual([["readings/m-1", 1], ["readings/m-3", 3], ["readings/m-4", 4]])
    }).pipe(Effect.scoped))

  it.live("publishJsonMany without a broker: each message times out as not-connected", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      const mqtt = yield* client(testConfig(port, { startupTimeout: Duration.zero, publishTimeout: Duration.millis(300) }))
      const results = yield* mqtt.publishJsonMany(Schema.String, [{ topic: "x/1", value: "a" }, { topic: "x/2", value: "b" }])
      expect(results.map((r) => r?.reason)).toEqual(["not-connected", "not-connected"])
    }).pipe(Effect.scoped))

  it.live("consume runs every message in a consumer span and survives a failing handler", () =>
    Effect.gen(function*() {
      const { info } = yield* startBroker(0)
      const mqtt = yield* client(testConfig(info.port))
      const seen: Array<{ text: string; span: string }> = []
      const consumer = yield* mqtt.consume("jobs/#", (message) =>
        Effect.gen(function*() {
          const span = yield* Effect.currentSpan
          seen.push({ text: message.text, span: span.name })
          if (message.text === "boom") return yield* Effect.fail("handler failed")
        })).pipe(Effect.fork)
      yield* Effect.sleep("200 millis")
      for (const text of ["one", "boom", "two"]) yield* mqtt.publish("jobs/a", text)
      yield* Effect.sleep("300 millis").pipe(Effect.repeat({ until: () => seen.length >= 3, times: 15 }))
      expect(seen).toEqual([
        { text: "one", span: "Mqtt.consume" },
        { text: "boom", span: "Mqtt.consume" },
        { text: "two", span: "Mqtt.consume" }
      ])
      expect(consumer.unsafePoll()).toBeNull()
    }).pipe(Effect.scoped))
})

describe("embedded broker hooks", () => {
  const token = "eyJhbGciOiJSUzI1NiJ9.valid.signature"
  const auth = EmbeddedBroker.layerAuth({
    authenticate: ({ username, password }) =>
      Effect.succeed(username === "svc-grid" && password !== undefined && Redacted.value(password) === token),
    authorizePublish: (client, topic) => Effect.succeed(client.username === "svc-grid" && topic.startsWith("grid/")),
    authorizeSubscribe: (_client, filter) =>
      filter === "explode/#" ? Effect.die("policy engine crashed") : Effect.succeed(!filter.startsWith("secret/")),
    authorizeRead: (client) => Effect.succeed(client.username === "svc-grid")
  })

  it.live("authenticate refuses a wrong password and accepts the right one", () =>
    Effect.gen(function*() {
      const { info } = yield* startBroker(0, auth)
      let issued = 0
      const refused = yield* client(testConfig(info.port, { startupTimeout: Duration.millis(500) }), {
        credentials: Effect.sync(() => {
          issued++
          return { username: "svc-grid", password: Redacted.make("forged") }
        })
      })
      const status = yield* refused.status
      expect(status.state).toBe("reconnecting")
      expect(status.lastError).toMatch(/Bad username or password/i)
      // Credentials are fetched again for every attempt (a token provider hands out fresh JWTs).
      expect(issued).toBeGreaterThan(2)

      const accepted = yield* client(testConfig(info.port), {
        credentials: Effect.succeed({ username: "svc-grid", password: Redacted.make(token) })
      })
      expect((yield* accepted.status).state).toBe("connected")
    }).pipe(Effect.scoped))

  it.live("authorizeSubscribe refuses one filter and a failing hook counts as a refusal", () =>
    Effect.gen(function*() {
      const { info } = yield* startBroker(0, auth)
      const mqtt = yield* client(testConfig(info.port), {
        credentials: Effect.succeed({ username: "svc-grid", password: Redacted.make(token) })
      })
      const secret = yield* mqtt.subscribeScoped("secret/#").pipe(Effect.flip)
      expect(secret).toMatchObject({ _tag: "MqttSubscribeError", reason: "refused", filter: "secret/#" })
      const crashed = yield* mqtt.subscribeScoped("explode/#").pipe(Effect.flip)
      expect(crashed.reason).toBe("refused")
      const allowed = yield* mqtt.subscribeScoped("grid/#")
      yield* mqtt.publish("grid/n1", "ok")
      const [message] = Chunk.toReadonlyArray(yield* allowed.pipe(Stream.take(1), Stream.runCollect, Effect.timeout("5 seconds")))
      expect(message?.text).toBe("ok")
    }).pipe(Effect.scoped))

  it.live("authorizePublish drops a refused message; the publisher reconnects and carries on", () =>
    Effect.gen(function*() {
      const { info } = yield* startBroker(0, auth)
      const credentials = Effect.succeed({ username: "svc-grid", password: Redacted.make(token) })
      const subscriber = yield* client(testConfig(info.port), { credentials })
      const publisher = yield* client(testConfig(info.port, { publishTimeout: Duration.seconds(1) }), { credentials })
      const messages = yield* subscriber.subscribeScoped("#")
      const refused = yield* publisher.publish("other/topic", "nope", { qos: 1 }).pipe(Effect.flip)
      expect(refused._tag).toBe("MqttPublishError")
      yield* awaitState(publisher, "connected")
      yield* publisher.publish("grid/n1", "allowed", { qos: 1 })
      const [first] = Chunk.toReadonlyArray(yield* messages.pipe(Stream.take(1), Stream.runCollect, Effect.timeout("5 seconds")))
      expect(first?.topic).toBe("grid/n1")
    }).pipe(Effect.scoped))

  it.live("publish, subscribe and read hooks get the credentials and identity their connection authenticated with", () =>
    Effect.gen(function*() {
      const seen: Array<{ hook: string; clientId: string; password: string | undefined; identity: unknown; what: string }> = []
      const record = (hook: string, client: EmbeddedBroker.BrokerClient, what: string) =>
        seen.push({
          hook,
          clientId: client.clientId,
          password: client.password === undefined ? undefined : Redacted.value(client.password),
          identity: client.identity,
          what
        })
      const identities = EmbeddedBroker.layerAuth({
        // The token names the user; the identity is what a real authorizer would verify once.
        authenticate: ({ password }) =>
          Effect.succeed(
            password !== undefined && Redacted.value(password).startsWith("token-of-")
              ? { identity: { user: Redacted.value(password).slice("token-of-".length) } }
              : false
          ),
        authorizePublish: (client, topic) =>
          Effect.sync(() => record("publish", client, topic)).pipe(
            Effect.as((client.identity as { user: string }).user === topic.split("/")[1])
          ),
        authorizeSubscribe: (client, filter) =>
          Effect.sync(() => record("subscribe", client, filter)).pipe(
            Effect.as((client.identity as { user: string }).user === filter.split("/")[1])
          ),
        authorizeRead: (client, topic) =>
          Effect.sync(() => record("read", client, topic)).pipe(
            Effect.as((client.identity as { user: string }).user === topic.split("/")[1])
          )
      })
      const { info } = yield* startBroker(0, identities)
      const as = (user: string) =>
        client(testConfig(info.port), { credentials: Effect.succeed({ username: "any", password: Redacted.make(`token-of-${user}`) }) })
      const alice = yield* as("alice")
      const bob = yield* as("bob")
      const inbox = yield* alice.subscribeScoped("users/alice/#")
      expect((yield* bob.subscribeScoped("users/alice/#").pipe(Effect.flip)).reason).toBe("refused")
      yield* bob.subscribeScoped("users/bob/#")
      yield* alice.publish("users/alice/notes", "hello", { qos: 1 })
      const [note] = Chunk.toReadonlyArray(yield* inbox.pipe(Stream.take(1), Stream.runCollect, Effect.timeout("5 seconds")))
      expect(note?.text).toBe("hello")
      expect(seen.map((s) => [s.hook, s.what, s.identity, s.password])).toEqual([
        ["subscribe", "users/alice/#", { user: "alice" }, "token-of-alice"],
        ["subscribe", "users/alice/#", { user: "bob" }, "token-of-bob"],
        ["subscribe", "users/bob/#", { user: "bob" }, "token-of-bob"],
        ["publish", "users/alice/notes", { user: "alice" }, "token-of-alice"],
        ["read", "users/alice/notes", { user: "alice" }, "token-of-alice"]
      ])
    }).pipe(Effect.scoped))

  it.live("reports a port that is already taken", () =>
    Effect.gen(function*() {
      const { info } = yield* startBroker(0)
      const error = yield* startBroker(info.port).pipe(Effect.flip)
      expect(error._tag).toBe("MqttBrokerError")
      expect(error.message).toMatch(/EADDRINUSE/)
    }).pipe(Effect.scoped))
})
