/**
 * End to end: the embedded MQTT broker delegates authentication and ACL checks to the policy
 * service over HTTP (the way Mosquitto with mosquitto-go-auth does); MQTT clients present dev
 * identity provider tokens as their password. Every delivery is checked too (read, `acc 1`),
 * and a connection ends when its token expires.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { expect, layer } from "@effect/vitest"
import { EmbeddedBroker } from "@rec/mqtt"
import { BrokerAuth } from "@rec/policy-service"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Mqtt from "mqtt"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { post, repoPolicies, serviceLayer, tokens } from "./helpers.js"

/** The broker, wired to the policy service under test. */
const brokerLive = (options: EmbeddedBroker.EmbeddedBrokerOptions = {}) =>
  Layer.unwrapEffect(
    Effect.map(HttpServer.HttpServer, (server) =>
      EmbeddedBroker.layer({ ...options, port: 0 }).pipe(
        Layer.provide(BrokerAuth.layer({ url: `http://127.0.0.1:${(server.address as HttpServer.TcpAddress).port}` }))
      ))
  )

const TestLive = brokerLive().pipe(Layer.provideMerge(serviceLayer()))

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

/** Publishes the current time (ms) to `topic` every 50 ms until `until` (epoch ms). */
const publishClock = (client: Mqtt.MqttClient, topic: string, until: number) =>
  Effect.suspend(() => Effect.promise(() => client.publishAsync(topic, String(Date.now()), { qos: 0 }))).pipe(
    Effect.zipRight(Effect.sleep(Duration.millis(50))),
    Effect.repeat({ until: () => Date.now() >= until })
  )

/** When the broker closed `client` (undefined while it is open). */
const closedAt = (client: Mqtt.MqttClient) => {
  const state: { at: number | undefined } = { at: undefined }
  client.once("close", () => {
    state.at = Date.now()
  })
  return state
}

/** The `exp` claim of a token, in ms. */
const expiryOf = (token: string) =>
  (JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")) as { exp: number }).exp * 1000

const sentAfter = (received: ReadonlyArray<{ payload: string }>, at: number) =>
  received.filter((m) => Number(m.payload) > at)

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

layer(TestLive, { excludeTestServices: true, timeout: "60 seconds" })("deliveries and token expiry", (it) => {
  it.scoped("a subscriber whose token expires is disconnected then and receives nothing published after", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      const token = yield* mint("viewer", { expiresIn: Duration.seconds(2) })
      const expiry = expiryOf(token)
      const admin = yield* connect(yield* mint("admin"), "clock-1")
      const viewer = yield* connect(token, "short-lived-viewer")
      const closed = closedAt(viewer)
      expect(yield* subscribe(viewer, "rec/telemetry/+/+/readings")).toBe(0)
      const received = inbox(viewer)

      // The policy service accepts this token for a few seconds past exp (clock tolerance):
      // only the broker's timer ends the subscription at exp.
      yield* publishClock(admin, "rec/telemetry/pv/m-exp/readings", expiry + 700)
      expect(closed.at, "the broker closed the connection").toBeDefined()
      expect(closed.at!).toBeGreaterThanOrEqual(expiry - 5)
      expect(closed.at!).toBeLessThan(expiry + 500)
      expect(received.length, "readings before the expiry arrived").toBeGreaterThan(3)
      expect(sentAfter(received, expiry - 1)).toEqual([])
    }))
})

/** The directory of a copy of the repository's policies the next test tightens. */
class PolicyCopy extends Context.Tag("test/PolicyCopy")<PolicyCopy, string>() {}

/** Copies the policies; the copy is removed with the layer. */
const policyCopy = Layer.unwrapScoped(
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => {
        const directory = fs.mkdtempSync(path.join(os.tmpdir(), "rec-broker-policies-"))
        fs.cpSync(repoPolicies, directory, { recursive: true })
        return directory
      }),
      (directory) => Effect.sync(() => fs.rmSync(directory, { recursive: true, force: true }))
    ),
    (directory) => Layer.succeed(PolicyCopy, directory)
  )
)

/** The read decision is reused for this long: the bound on how late a policy change bites. */
const readTtl = 300

const ReloadLive = Layer.unwrapEffect(
  Effect.map(PolicyCopy, (directory) =>
    brokerLive({ readDecisionTtl: Duration.millis(readTtl) }).pipe(Layer.provideMerge(serviceLayer({ directory }))))
).pipe(Layer.provideMerge(policyCopy))

layer(ReloadLive, { excludeTestServices: true, timeout: "60 seconds" })("deliveries after a policy change", (it) => {
  it.scoped("a stricter policy stops a live subscription within the read TTL; allowed subscribers keep receiving", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      const adminToken = yield* mint("admin")
      const admin = yield* connect(adminToken, "clock-2")
      const viewer = yield* connect(yield* mint("viewer"), "viewer-reload")
      expect(yield* subscribe(viewer, "rec/telemetry/+/+/readings")).toBe(0)
      expect(yield* subscribe(admin, "rec/telemetry/#")).toBe(0)
      const viewerInbox = inbox(viewer)
      const adminInbox = inbox(admin)
      const topic = "rec/telemetry/pv/m-reload/readings"

      yield* publishClock(admin, topic, Date.now() + 600)
      yield* waitFor(() => viewerInbox.length > 3)
      expect(viewerInbox.length, "the viewer receives readings before the change").toBeGreaterThan(3)

      // Members may still subscribe to readings, but no longer read them.
      const directory = yield* PolicyCopy
      const dataFile = path.join(directory, "data.json")
      const data = JSON.parse(fs.readFileSync(dataFile, "utf8")) as {
        rec: { mqtt: { rules: Array<{ description: string; actions: unknown }> } }
      }
      const rule = data.rec.mqtt.rules.find((r) => r.description === "community members read telemetry readings")
      expect(rule?.actions).toEqual(["subscribe", "read"])
      rule!.actions = ["subscribe"]
      fs.writeFileSync(dataFile, JSON.stringify(data, null, 2))
      const reloaded = yield* post("/reload", { token: adminToken })
      expect(reloaded.status).toBe(200)
      const changedAt = Date.now()

      yield* publishClock(admin, topic, changedAt + 1_200)
      yield* Effect.sleep(Duration.millis(100))
      expect(sentAfter(viewerInbox, changedAt + readTtl)).toEqual([])
      expect(viewer.connected, "only deliveries stop; the connection stays").toBe(true)
      expect(sentAfter(adminInbox, changedAt + readTtl).length, "administrators still receive").toBeGreaterThan(10)
    }))
})
