import { describe, expect, it } from "@effect/vitest"
import type { Mqtt } from "@rec/mqtt"
import { Chunk, Duration, Effect, Fiber, Option, Schema, Stream } from "effect"
import mqtt from "mqtt"
import { client, forwarder, freePort, mosquitto, mosquittoSkipReason, testConfig, uniquePrefix } from "./support/brokers.js"

// These tests use the machine's Mosquitto (127.0.0.1:1883, shared with other test runs: every
// test works under its own random topic prefix). Skipped with this reason when it does not
// answer; under REC_REQUIRE_SERVICES=1 the probe throws and the file fails instead.
const skip = await mosquittoSkipReason()
const title = (name: string) => (skip === undefined ? name : `${name} (skipped: ${skip})`)

const awaitState = (client: Mqtt.Mqtt, state: Mqtt.MqttStatus["state"]) =>
  client.statusChanges.pipe(
    Stream.filter((s) => s.state === state),
    Stream.runHead,
    Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error(`client never became ${state}`) })
  )

const Event = Schema.Struct({ flow: Schema.String, status: Schema.Literal("started", "completed", "failed") })

describe.skipIf(skip !== undefined)(title("Mqtt with Mosquitto"), () => {
  it.live("round-trips QoS 1 over MQTT 5 and carries the trace to the consumer", () =>
    Effect.gen(function*() {
      const prefix = uniquePrefix()
      const config = testConfig(mosquitto.port, { topicPrefix: prefix })
      const consumer = yield* client(config)
      const producer = yield* client({ ...config, clientId: `${config.clientId}-p` })
      expect((yield* consumer.status).protocolVersion).toBe(5)

      const handled: Array<{ value: typeof Event.Type; traceId: string; parentSpanId: string | undefined; user: unknown }> = []
      yield* consumer.consumeJson("celine/pipelines/runs/+", Event, (value, message) =>
        Effect.gen(function*() {
          const span = yield* Effect.currentSpan
          handled.push({
            value,
            traceId: span.traceId,
            parentSpanId: Option.getOrUndefined(Option.map(span.parent, (p) => p.spanId)),
            user: message.userProperties["source"]
          })
        }), { qos: 1 }).pipe(Effect.forkScoped)
      yield* Effect.sleep("200 millis")

      const published = yield* producer.publishJson(
        "celine/pipelines/runs/grid",
        Event,
        { flow: "grid-resilience-flow", status: "completed" },
        { qos: 1, userProperties: { source: "test" } }
      ).pipe(
        Effect.zipRight(Effect.currentSpan),
        Effect.withSpan("test.publisher")
      )
      yield* Effect.sleep("50 millis").pipe(Effect.repeat({ until: () => handled.length === 1, times: 100 }))
      const [first] = handled
      expect(first?.value).toEqual({ flow: "grid-resilience-flow", status: "completed" })
      expect(first?.user).toBe("test")
      // Same trace; the consumer span's parent is the producer's `Mqtt.publish` span.
      expect(first?.traceId).toBe(published.traceId)
      expect(first?.parentSpanId).toBeDefined()
      expect(first?.parentSpanId).not.toBe(published.spanId)
    }).pipe(Effect.scoped))

  it.live("a subscription survives losing the connection", () =>
    Effect.gen(function*() {
      const prefix = uniquePrefix()
      const config = testConfig(mosquitto.port, { topicPrefix: prefix })
      const subscriber = yield* client(config)
      const received: Array<string> = []
      yield* subscriber.subscribe("readings/#").pipe(
        Stream.tap((m) => Effect.sync(() => received.push(m.text))),
        Stream.runDrain,
        Effect.forkScoped
      )
      yield* Effect.sleep("100 millis")
      const publisher = yield* client({ ...config, clientId: `${config.clientId}-p` })
      yield* publisher.publish("readings/m1", "before")
      yield* Effect.sleep("20 millis").pipe(Effect.repeat({ until: () => received.length === 1, times: 100 }))

      // Another connection with the same client id makes Mosquitto drop ours (session takeover);
      // with a clean session the broker forgets its subscriptions.
      const intruder = mqtt.connect({ ...mosquitto, clientId: config.clientId, reconnectPeriod: 0 })
      yield* Effect.addFinalizer(() => Effect.sync(() => intruder.end(true)))
      yield* awaitState(subscriber, "reconnecting")
      intruder.end(true)
      yield* awaitState(subscriber, "connected")

      yield* publisher.publish("readings/m1", "after")
      yield* Effect.sleep("20 millis").pipe(Effect.repeat({ until: () => received.length === 2, times: 150 }))
      expect(received).toEqual(["before", "after"])
    }).pipe(Effect.scoped))

  it.live("starts degraded while the broker is unreachable and connects when it appears", () =>
    Effect.gen(function*() {
      // A port that leads to Mosquitto only once the forwarder starts: the broker "comes up".
      const port = yield* freePort
      const prefix = uniquePrefix()
      const subscriber = yield* client(testConfig(port, { topicPrefix: prefix, startupTimeout: Duration.millis(300) }))
      expect((yield* subscriber.status).state).toBe("reconnecting")
      const received = yield* subscriber.subscribe("alerts/+").pipe(Stream.take(1), Stream.runCollect, Effect.fork)

      yield* forwarder(port, mosquitto)
      yield* awaitState(subscriber, "connected")
      const publisher = yield* client(testConfig(mosquitto.port, { topicPrefix: prefix }))
      yield* publisher.publish("alerts/n1", "heat", { qos: 1 })
      const messages = yield* Fiber.join(received).pipe(Effect.timeout("5 seconds"))
      expect(Chunk.toReadonlyArray(messages).map((m) => m.text)).toEqual(["heat"])
    }).pipe(Effect.scoped))

  it.live("retained messages reach later subscribers", () =>
    Effect.gen(function*() {
      const prefix = uniquePrefix()
      const publisher = yield* client(testConfig(mosquitto.port, { topicPrefix: prefix }))
      yield* publisher.publish("status/grid", "online", { qos: 1, retain: true })
      // An empty retained message clears it, so the broker keeps nothing from this test.
      yield* Effect.addFinalizer(() => publisher.publish("status/grid", "", { qos: 1, retain: true }).pipe(Effect.ignore))
      const late = yield* client(testConfig(mosquitto.port, { topicPrefix: prefix }))
      const [message] = Chunk.toReadonlyArray(
        yield* late.subscribe("status/+").pipe(Stream.take(1), Stream.runCollect, Effect.timeout("5 seconds"))
      )
      expect(message?.text).toBe("online")
      expect(message?.retain).toBe(true)
    }).pipe(Effect.scoped))
})
