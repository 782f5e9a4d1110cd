/**
 * End to end: the embedded MQTT broker delegates authentication and ACL checks to the policy
 * service over HTTP (the way Mosquitto with mosquitto-go-auth does); MQTT clients present dev
 * identity provider tokens as their password.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { expect, layer } from "@effect/vitest"
import { EmbeddedBroker } from "@rec/mqtt"
import { BrokerAuth } from "@rec/policy-service"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Mqtt from "mqtt"
import { serviceLayer, tokens } from "./helpers.js"

/** The broker, wired to the policy service under test. */
const BrokerLive = Layer.unwrapEffect(
  Effect.map(HttpServer.HttpServer, (server) =>
    EmbeddedBroker.layer({ port: 0 }).pipe(
      Layer.provide(BrokerAuth.layer({ url: `http://127.0.0.1:${(server.address as HttpServer.TcpAddress).port}` }))
    ))
)

const TestLive = BrokerLive.pipe(Layer.provideMerge(serviceLayer()))

/** A connected MQTT client, ended with the scope; fails with the CONNACK error when refused. */
const connect = (password: string | undefined, clientId: string) =>
  Effect.flatMap(EmbeddedBroker.EmbeddedBroker, (broker) =>
    Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          Mqtt.connectAsync(broker.url, {
            clientId,
            ...(password === undefined ? {} : { username: "", password }),
            reconnectPeriod: 0,
            connectTimeout: 5_000
          }),
        catch: (error) => error as Error
      }),
      (client) => Effect.promise(() => client.endAsync(true))
    ))

/** The granted QoS, or 128 when the broker refused the filter (mqtt.js rejects the SUBACK then). */
const subscribe = (client: Mqtt.MqttClient, filter: string) =>
  Effect.tryPromise(() => client.subscribeAsync(filter, { qos: 0 })).pipe(
    Effect.map((granted) => granted[0]?.qos),
    Effect.catchAll((error) =>
      String(error.cause).includes("Subscribe error") ? Effect.succeed(128) : Effect.die(error.cause)
    )
  )

/** Messages arriving at `client`, collected. */
const inbox = (client: Mqtt.MqttClient) => {
  const received: Array<{ topic: string; payload: string }> = []
  client.on("message", (topic, payload) => received.push({ topic, payload: payload.toString("utf8") }))
  return received
}

const waitFor = (condition: () => boolean) =>
  Effect.sleep(Duration.millis(20)).pipe(Effect.repeat({ until: condition, times: 150 }))

layer(TestLive, { excludeTestServices: true, timeout: "60 seconds" })("embedded broker with the policy service", (it) => {
  it.scoped("a valid token connects; subscriptions follow the ACL", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      const viewer = yield* connect(yield* mint("viewer"), "viewer-1")
      expect(viewer.connected).toBe(true)
      expect(yield* subscribe(viewer, "rec/telemetry/+/+/readings")).toBe(0)
      // Refused filters get SUBACK 0x80; the connection stays.
      expect(yield* subscribe(viewer, "#")).toBe(128)
      expect(yield* subscribe(viewer, "rec/digital-twin/#")).toBe(128)
      expect(viewer.connected).toBe(true)
    }))

  it.scoped("messages flow only where the ACL allows publishing", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      const admin = yield* connect(yield* mint("admin"), "admin-1")
      const viewer = yield* connect(yield* mint("viewer"), "viewer-2")
      const twin = yield* connect(yield* mint("svc-digital-twin"), "twin-1")
      expect(yield* subscribe(admin, "rec/#")).toBe(0)
      expect(yield* subscribe(viewer, "rec/telemetry/+/+/readings")).toBe(0)
      const adminInbox = inbox(admin)
      const viewerInbox = inbox(viewer)

      // The twin may publish its events (mqtt.write capability + dt.write rule).
      yield* Effect.promise(() => twin.publishAsync("rec/digital-twin/events/meter/m-1", "kwh=4.2", { qos: 1 }))
      // Administrators publish anywhere; the viewer receives readings.
      yield* Effect.promise(() => admin.publishAsync("rec/telemetry/pv/m-1/readings", "42", { qos: 1 }))
      yield* waitFor(() => adminInbox.length >= 2 && viewerInbox.length >= 1)
      expect(adminInbox.map((m) => m.topic)).toEqual(
        expect.arrayContaining(["rec/digital-twin/events/meter/m-1", "rec/telemetry/pv/m-1/readings"])
      )
      expect(viewerInbox).toEqual([{ topic: "rec/telemetry/pv/m-1/readings", payload: "42" }])

      // A viewer may not publish: the broker drops the message and closes the connection.
      const closed = Effect.async<void>((resume) => {
        if (!viewer.connected) return resume(Effect.void)
        viewer.once("close", () => resume(Effect.void))
      })
      viewer.publish("rec/telemetry/pv/m-1/readings", "forged", { qos: 0 })
      yield* closed.pipe(Effect.timeout(Duration.seconds(5)))
      yield* Effect.sleep(Duration.millis(200))
      expect(adminInbox.map((m) => m.payload)).not.toContain("forged")
    }))

  it.scoped("each connection is checked with the token it connected with, also under a reused client id", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      const viewer = yield* connect(yield* mint("viewer"), "shared-id")
      expect(yield* subscribe(viewer, "rec/#")).toBe(128)
      // The same client id with an administrator's token takes the session over.
      const closed = Effect.async<void>((resume) => {
        viewer.once("close", () => resume(Effect.void))
      })
      const admin = yield* connect(yield* mint("admin"), "shared-id")
      yield* closed.pipe(Effect.timeout(Duration.seconds(5)))
      expect(yield* subscribe(admin, "rec/#")).toBe(0)
    }))

  it.scoped("an invalid, expired or missing token is refused at connect", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      const expired = yield* mint("viewer", { expired: true })
      const valid = yield* mint("viewer")
      const forged = valid.slice(0, valid.lastIndexOf(".") + 1) + "Zm9yZ2Vk"
      for (const [name, password] of [["expired", expired], ["forged", forged], ["garbage", "not-a-token"]] as const) {
        const error = yield* Effect.flip(connect(password, `bad-${name}`))
        expect(error.message, name).toMatch(/Bad username or password|Not authorized/i)
      }
      const anonymous = yield* Effect.flip(connect(undefined, "anonymous-1"))
      expect(anonymous.message).toMatch(/Not authorized|Bad username or password/i)
    }))
})
