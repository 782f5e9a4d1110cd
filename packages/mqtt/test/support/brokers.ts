/**
 * Test helpers: brokers started and stopped inside a test, free ports, and the probe that
 * decides whether the machine's Mosquitto is there.
 */
import { EmbeddedBroker, Mqtt, MqttConfig } from "@rec/mqtt"
import { Context, Duration, Effect, Exit, Layer, Scope } from "effect"
import mqtt from "mqtt"
import * as crypto from "node:crypto"
import * as net from "node:net"

export const mosquitto = { host: "127.0.0.1", port: 1883 }

/**
 * Why the Mosquitto tests must be skipped, or `undefined` when it accepts an MQTT connection.
 * Throws under REC_REQUIRE_SERVICES=1 (CI), where a missing broker is a failure.
 */
export const mosquittoSkipReason = async (): Promise<string | undefined> => {
  const reason = await new Promise<string | undefined>((resolve) => {
    const client = mqtt.connect({ ...mosquitto, reconnectPeriod: 0, connectTimeout: 2000 })
    client.on("connect", () => {
      client.end(true)
      resolve(undefined)
    })
    client.on("error", (e) => {
      client.end(true)
      resolve(`Mosquitto at ${mosquitto.host}:${mosquitto.port} is not reachable (${e.message}); start it with scripts/services.sh`)
    })
    client.on("close", () => resolve(`Mosquitto at ${mosquitto.host}:${mosquitto.port} closed the connection`))
  })
  if (reason !== undefined && process.env["REC_REQUIRE_SERVICES"] === "1") {
    throw new Error(`${reason} (REC_REQUIRE_SERVICES=1)`)
  }
  return reason
}

/** A port nothing listens on (bound, read, released). */
export const freePort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as net.AddressInfo
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** A topic prefix no other test run uses, so tests can share the machine's broker. */
export const uniquePrefix = () => `rec-test/${crypto.randomBytes(6).toString("hex")}/`

/** Client settings that retry fast, for tests. */
export const testConfig = (port: number, overrides: Partial<MqttConfig.MqttConfig> = {}) =>
  MqttConfig.make({
    service: "mqtt-test",
    host: "127.0.0.1",
    port,
    reconnectMin: Duration.millis(100),
    reconnectMax: Duration.millis(400),
    connectTimeout: Duration.seconds(2),
    publishTimeout: Duration.seconds(5),
    startupTimeout: Duration.seconds(5),
    ...overrides
  })

/** The client as a value, alive until the test's scope closes. */
export const client = (config: MqttConfig.MqttConfig, options?: Mqtt.MqttOptions) =>
  Layer.build(Mqtt.Mqtt.Default(config, options)).pipe(Effect.map(Context.get(Mqtt.Mqtt)))

/** An embedded broker the test can stop and start again (on the same port). */
export const startBroker = (
  port: number,
  auth: Layer.Layer<EmbeddedBroker.BrokerAuth> = EmbeddedBroker.allowAll,
  options: Omit<EmbeddedBroker.EmbeddedBrokerOptions, "port"> = {}
) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    // Stopped with the test at the latest; `stop` may close it earlier.
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const info = yield* Layer.buildWithScope(EmbeddedBroker.layer({ ...options, port }).pipe(Layer.provide(auth)), scope).pipe(
      Effect.map(Context.get(EmbeddedBroker.EmbeddedBroker)),
      Effect.tapErrorCause(() => Scope.close(scope, Exit.void))
    )
    return { info, stop: Scope.close(scope, Exit.void) }
  })

/** Forwards `port` to another TCP endpoint: a real broker that "comes up" when this starts. */
export const forwarder = (port: number, target: { host: string; port: number }) =>
  Effect.acquireRelease(
    Effect.async<{ server: net.Server; sockets: Set<net.Socket> }>((resume) => {
      const sockets = new Set<net.Socket>()
      const server = net.createServer((incoming) => {
        const upstream = net.connect(target.port, target.host)
        for (const s of [incoming, upstream]) {
          sockets.add(s)
          s.on("error", () => s.destroy())
          s.on("close", () => {
            sockets.delete(s)
            incoming.destroy()
            upstream.destroy()
          })
        }
        incoming.pipe(upstream).pipe(incoming)
      })
      server.listen(port, "127.0.0.1", () => resume(Effect.succeed({ server, sockets })))
    }),
    ({ server, sockets }) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        sockets.forEach((s) => s.destroy())
      })
  )
