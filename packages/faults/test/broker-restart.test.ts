/**
 * Broker restarted: a private Mosquitto (persistence on) is stopped (SIGTERM) and started again
 * while pipeline-run events are being published at QoS 1. The listener has a persistent session
 * (stable client id, MQTT 5 session expiry), so nothing published across the restart is lost;
 * redeliveries are recognised by `run_id` (handlers are idempotent), and counted.
 */
import { describe, expect, it } from "@effect/vitest"
import { PrivateMosquitto } from "@rec/faults"
import { Mqtt, MqttConfig, PipelineRuns } from "@rec/mqtt"
import { Context, Duration, Effect, Fiber, Layer, Stream } from "effect"

const skip = PrivateMosquitto.skipReason()

const clientConfig = (port: number, overrides: Partial<MqttConfig.MqttConfig>) =>
  MqttConfig.make({
    service: "faults",
    host: "127.0.0.1",
    port,
    reconnectMin: Duration.millis(100),
    reconnectMax: Duration.millis(500),
    connectTimeout: Duration.seconds(2),
    publishTimeout: Duration.seconds(20),
    startupTimeout: Duration.seconds(10),
    ...overrides
  })

const client = (config: MqttConfig.MqttConfig) =>
  Layer.build(Mqtt.Mqtt.Default(config)).pipe(Effect.map(Context.get(Mqtt.Mqtt)))

const event = (i: number): PipelineRuns.PipelineRunEvent => ({
  flow: "grid-forecast",
  namespace: "faults",
  status: "completed",
  run_id: `run-${String(i).padStart(4, "0")}`,
  timestamp: new Date().toISOString()
})

describe.skipIf(skip !== undefined)(`broker restart${skip ? ` (skipped: ${skip})` : ""}`, () => {
  it.live("N events published across a Mosquitto restart: N handled, 0 lost, duplicates absorbed", () =>
    Effect.gen(function*() {
      const broker = yield* PrivateMosquitto.make
      const listener = yield* client(clientConfig(broker.port, {
        clientId: `faults-listener-${process.pid}`,
        sessionExpiry: Duration.minutes(10)
      }))
      // Baseline in the same run: a listener with a clean session (the client's default).
      const cleanListener = yield* client(clientConfig(broker.port, {}))
      const publisher = yield* client(clientConfig(broker.port, {}))

      const cleanHandled = new Set<string>()
      const cleanMessages = yield* cleanListener.subscribeScoped("faults/runs/+", { qos: 1 })
      const cleanConsumer = yield* cleanMessages.pipe(
        Stream.runForEach((m) => Effect.sync(() => cleanHandled.add((JSON.parse(m.text) as { run_id: string }).run_id))),
        Effect.fork
      )
      const handled = new Set<string>()
      let deliveries = 0
      const messages = yield* listener.subscribeScoped("faults/runs/+", { qos: 1 })
      const consumer = yield* messages.pipe(
        Stream.runForEach((m) =>
          Effect.sync(() => {
            deliveries++
            // The idempotent handler: a run already seen changes nothing.
            handled.add((JSON.parse(m.text) as { run_id: string }).run_id)
          })
        ),
        Effect.fork
      )

      const total = 300
      const restartAt = 100
      let restartedAt = 0
      let reconnectedAfterMs = 0
      for (let i = 0; i < total; i++) {
        if (i === restartAt) {
          // Stopped with messages in flight; the publisher's next publishes wait for the broker.
          yield* broker.stop
          yield* Effect.fork(
            Effect.gen(function*() {
              yield* Effect.sleep("1 second")
              yield* broker.start
              restartedAt = Date.now()
              yield* listener.awaitConnected("20 seconds")
              reconnectedAfterMs = Date.now() - restartedAt
            })
          )
        }
        yield* publisher.publishJson(`faults/runs/${i % 3}`, PipelineRuns.PipelineRunEvent, event(i), { qos: 1 })
      }
      yield* Effect.sleep("50 millis").pipe(Effect.repeat({ until: () => handled.size === total, times: 400 }))
      yield* Effect.sleep("500 millis")
      yield* Fiber.interrupt(consumer)
      yield* Fiber.interrupt(cleanConsumer)
      const lost = total - handled.size
      const duplicates = deliveries - handled.size
      console.log(
        `FIGURE broker-restart: published=${total} handled=${handled.size} lost=${lost} duplicates=${duplicates} ` +
          `listener-reconnected-after-broker-start=${reconnectedAfterMs}ms ` +
          `baseline-clean-session: handled=${cleanHandled.size} lost=${total - cleanHandled.size}`
      )
      expect(restartedAt).toBeGreaterThan(0)
      expect(lost).toBe(0)
      expect(handled.size).toBe(total)
    }).pipe(Effect.scoped), 90_000)

  it.live("events published while the listener is disconnected survive a broker restart (persistent session)", () =>
    Effect.gen(function*() {
      const broker = yield* PrivateMosquitto.make
      const listenerConfig = clientConfig(broker.port, {
        clientId: `faults-queued-${process.pid}`,
        sessionExpiry: Duration.minutes(10)
      })
      const publisher = yield* client(clientConfig(broker.port, {}))
      // First life: subscribe, then stop (a service shut down for a deploy).
      yield* Effect.scoped(Effect.gen(function*() {
        const listener = yield* client(listenerConfig)
        yield* listener.subscribeScoped("faults/queued/+", { qos: 1 })
      }))
      const queued = 50
      for (let i = 0; i < queued; i++) {
        yield* publisher.publishJson("faults/queued/a", PipelineRuns.PipelineRunEvent, event(i), { qos: 1 })
      }
      // The broker restarts while the messages wait in the listener's session.
      yield* broker.stop
      yield* broker.start
      const listener = yield* client(listenerConfig)
      const stream = yield* listener.subscribeScoped("faults/queued/+", { qos: 1 })
      const got = yield* stream.pipe(Stream.take(queued), Stream.runCollect, Effect.timeout("20 seconds"))
      const ids = new Set([...got].map((m) => (JSON.parse(m.text) as { run_id: string }).run_id))
      console.log(`FIGURE broker-restart-queued: queued=${queued} delivered-after-restart=${ids.size}`)
      expect(ids.size).toBe(queued)
    }).pipe(Effect.scoped), 60_000)
})
