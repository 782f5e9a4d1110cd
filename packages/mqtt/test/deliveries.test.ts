/**
 * The embedded broker re-checks every delivery (`authorizeRead`, through a per-connection cache
 * of decisions) and disconnects a client when its token expires. Raw MQTT.js clients, so the
 * tests see exactly when the broker closes a connection and what it forwards.
 */
import { describe, expect, it } from "@effect/vitest"
import { EmbeddedBroker } from "@rec/mqtt"
import { Duration, Effect, Redacted } from "effect"
import mqtt from "mqtt"
import { startBroker } from "./support/brokers.js"

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")

/** A JWT-shaped password (the authorizers below do not verify signatures; a real one would). */
const jwt = (claims: Record<string, unknown>) =>
  `${base64url({ alg: "RS256", typ: "JWT" })}.${base64url(claims)}.${Buffer.from("signature").toString("base64url")}`

/** Everything is allowed; reads go through `read` (default: allowed), and are counted. */
const permissive = (read: (topic: string) => Effect.Effect<boolean> = () => Effect.succeed(true)) => {
  const reads: Array<string> = []
  const authorizer: EmbeddedBroker.BrokerAuthorizer = {
    ...EmbeddedBroker.allowEverything,
    authorizeRead: (_client, topic) => Effect.suspend(() => {
      reads.push(topic)
      return read(topic)
    })
  }
  return { reads, auth: EmbeddedBroker.layerAuth(authorizer) }
}

interface Received {
  readonly topic: string
  readonly payload: string
  readonly at: number
}

/**
 * An MQTT 3.1.1 client that never reconnects, its inbox attached before CONNECT (a resumed
 * session delivers right after CONNACK), ended with the scope. Fails with the CONNACK error.
 */
const connect = (url: string, options: mqtt.IClientOptions) =>
  Effect.acquireRelease(
    Effect.async<{ client: mqtt.MqttClient; inbox: Array<Received> }, Error>((resume) => {
      const client = mqtt.connect(url, { protocolVersion: 4, reconnectPeriod: 0, connectTimeout: 5_000, ...options })
      const inbox: Array<Received> = []
      client.on("message", (topic, payload) => inbox.push({ topic, payload: payload.toString("utf8"), at: Date.now() }))
      client.once("connect", () => resume(Effect.succeed({ client, inbox })))
      client.once("error", (error) => {
        client.end(true)
        resume(Effect.fail(error))
      })
      client.once("close", () => resume(Effect.fail(new Error("the broker closed the connection before CONNACK"))))
    }),
    ({ client }) => Effect.promise(() => client.endAsync(true))
  )

/** When the broker closed `client` (undefined while it is open). */
const closedAt = (client: mqtt.MqttClient) => {
  const state: { at: number | undefined } = { at: undefined }
  client.once("close", () => {
    state.at = Date.now()
  })
  return state
}

const subscribe = (client: mqtt.MqttClient, filter: string, qos: 0 | 1 = 0) =>
  Effect.promise(() => client.subscribeAsync(filter, { qos }))

/** Publishes the current time (ms) to `topic` every 50 ms until `until` (epoch ms). */
const publishClock = (client: mqtt.MqttClient, topic: string, until: number) =>
  Effect.suspend(() => Effect.promise(() => client.publishAsync(topic, String(Date.now()), { qos: 0 }))).pipe(
    Effect.zipRight(Effect.sleep(Duration.millis(50))),
    Effect.repeat({ until: () => Date.now() >= until })
  )

const waitFor = (condition: () => boolean, times = 250) =>
  Effect.sleep(Duration.millis(20)).pipe(Effect.repeat({ until: condition, times }))

describe("token expiry", () => {
  it.live("a subscriber is disconnected when its token expires and receives nothing published after it", () =>
    Effect.gen(function*() {
      const { auth } = permissive()
      const { info } = yield* startBroker(0, auth)
      // exp is in whole seconds: 3 to 4 s from now, so a loaded machine still connects and
      // subscribes well before it.
      const exp = Math.floor(Date.now() / 1000) + 4
      const expiry = exp * 1000
      const watcher = yield* connect(info.url, { clientId: "watcher", username: "svc", password: "opaque-secret" })
      yield* subscribe(watcher.client, "status/#")
      const subscriber = yield* connect(info.url, {
        clientId: "expiring",
        username: "reader",
        password: jwt({ sub: "reader", exp }),
        will: { topic: "status/expiring", payload: Buffer.from("offline"), qos: 0, retain: false }
      })
      const closed = closedAt(subscriber.client)
      yield* subscribe(subscriber.client, "meters/#")

      yield* publishClock(watcher.client, "meters/m-1", expiry + 700)

      expect(closed.at, "the broker closed the connection").toBeDefined()
      // At the expiry (timers never fire early by more than a millisecond), not much later.
      expect(closed.at!).toBeGreaterThanOrEqual(expiry - 5)
      expect(closed.at!).toBeLessThan(expiry + 500)
      expect(subscriber.inbox.length, "messages before the expiry arrived").toBeGreaterThan(2)
      expect(subscriber.inbox.filter((m) => Number(m.payload) >= expiry)).toEqual([])
      expect(subscriber.inbox.filter((m) => m.at > closed.at!)).toEqual([])
      // The expired connection may not publish either: its will is not sent.
      expect(watcher.inbox.filter((m) => m.topic.startsWith("status/"))).toEqual([])
      expect(yield* info.connectedClients).toBe(1)
    }).pipe(Effect.scoped))

  it.live("a token that has already expired is refused at CONNECT, even when the authorizer accepts it", () =>
    Effect.gen(function*() {
      const { auth } = permissive()
      const { info } = yield* startBroker(0, auth)
      const error = yield* connect(info.url, {
        clientId: "late",
        username: "reader",
        password: jwt({ sub: "reader", exp: Math.floor(Date.now() / 1000) - 30 })
      }).pipe(Effect.as("connected"), Effect.flip)
      expect(error.message).toMatch(/Bad username or password/i)
      // A JWT without `exp`, and a password that is no JWT, get no timer.
      const forever = yield* connect(info.url, { clientId: "no-exp", username: "reader", password: jwt({ sub: "reader" }) })
      const opaque = yield* connect(info.url, { clientId: "opaque", username: "a.b.c", password: "not-a-token" })
      yield* Effect.sleep(Duration.millis(300))
      expect([forever.client.connected, opaque.client.connected]).toEqual([true, true])
    }).pipe(Effect.scoped))

  it.live("the authorizer's expiresAt closes a connection whose credential is no JWT", () =>
    Effect.gen(function*() {
      const connectedAt = Date.now()
      const auth = EmbeddedBroker.layerAuth({
        ...EmbeddedBroker.allowEverything,
        authenticate: ({ password }) =>
          Effect.succeed(
            password !== undefined && Redacted.value(password) === "session-cookie"
              ? { identity: "cookie-user", expiresAt: new Date(connectedAt + 800) }
              : false
          )
      })
      const { info } = yield* startBroker(0, auth)
      const client = yield* connect(info.url, { clientId: "cookie", username: "cookie-user", password: "session-cookie" })
      const closed = closedAt(client.client)
      yield* waitFor(() => closed.at !== undefined, 100)
      expect(closed.at, "the broker closed the connection").toBeDefined()
      expect(closed.at!).toBeGreaterThanOrEqual(connectedAt + 795)
      expect(closed.at!).toBeLessThan(connectedAt + 1_300)
    }).pipe(Effect.scoped))
})

describe("delivery checks", () => {
  it.live("a policy change cuts a live subscription within the decision TTL, and allowing again restores it", () =>
    Effect.gen(function*() {
      let readable = true
      const { auth, reads } = permissive(() => Effect.sync(() => readable))
      const ttl = 300
      const { info } = yield* startBroker(0, auth, { readDecisionTtl: Duration.millis(ttl) })
      const publisher = yield* connect(info.url, { clientId: "publisher" })
      const subscriber = yield* connect(info.url, { clientId: "subscriber" })
      yield* subscribe(subscriber.client, "grid/#")

      yield* publishClock(publisher.client, "grid/n1", Date.now() + 600)
      yield* waitFor(() => subscriber.inbox.length > 0)
      const before = subscriber.inbox.length
      expect(before, "allowed deliveries arrive").toBeGreaterThan(5)

      readable = false
      const deniedFrom = Date.now()
      yield* publishClock(publisher.client, "grid/n1", deniedFrom + 1_000)
      const afterDenial = subscriber.inbox.filter((m) => Number(m.payload) >= deniedFrom)
      // Nothing published later than one TTL after the change arrives (the bound), and the
      // subscription itself was not touched: the connection is open.
      expect(afterDenial.filter((m) => Number(m.payload) > deniedFrom + ttl)).toEqual([])
      expect(subscriber.client.connected).toBe(true)

      readable = true
      const allowedFrom = Date.now()
      yield* publishClock(publisher.client, "grid/n1", allowedFrom + 1_000)
      yield* Effect.sleep(Duration.millis(100))
      expect(subscriber.inbox.filter((m) => Number(m.payload) > allowedFrom + ttl).length).toBeGreaterThan(5)
      // Decisions were reused: far fewer questions than deliveries.
      const published = 3 * 1_000 / 50
      expect(reads.length).toBeGreaterThan(2)
      expect(reads.length).toBeLessThan(published / 3)
    }).pipe(Effect.scoped))

  it.live("an allowed subscriber still receives every message in order, retained ones too; refused and failed reads drop only theirs", () =>
    Effect.gen(function*() {
      const { auth, reads } = permissive((topic) =>
        topic === "meters/boom"
          ? Effect.die("policy engine crashed")
          : Effect.succeed(topic !== "meters/secret")
      )
      const { info } = yield* startBroker(0, auth, { readDecisionTtl: Duration.minutes(1) })
      const publisher = yield* connect(info.url, { clientId: "publisher" })
      yield* Effect.promise(() => publisher.client.publishAsync("meters/m-0", "retained", { qos: 1, retain: true }))
      const subscriber = yield* connect(info.url, { clientId: "subscriber" })
      yield* subscribe(subscriber.client, "meters/#", 1)

      const expected: Array<string> = []
      for (let i = 0; i < 200; i++) {
        const topic = i % 10 === 3 ? "meters/secret" : i % 25 === 7 ? "meters/boom" : `meters/m-${1 + (i % 4)}`
        if (topic !== "meters/secret" && topic !== "meters/boom") expected.push(`${topic} ${i}`)
        // Not awaited one by one: the broker sees them back to back, new topics among them.
        publisher.client.publish(topic, String(i), { qos: 1 })
      }
      yield* waitFor(() => subscriber.inbox.length >= expected.length + 1)
      yield* Effect.sleep(Duration.millis(200))
      expect(subscriber.inbox.map((m) => `${m.topic} ${m.payload}`)).toEqual(["meters/m-0 retained", ...expected])
      // One decision per topic of this connection, reused for every later delivery.
      expect([...reads].sort()).toEqual(
        ["meters/boom", "meters/m-0", "meters/m-1", "meters/m-2", "meters/m-3", "meters/m-4", "meters/secret"]
      )
    }).pipe(Effect.scoped))

  it.live("a steady subscription never waits for a decision: it is renewed before it goes stale", () =>
    Effect.gen(function*() {
      // Slow decisions: a delivery that had to wait for one would arrive 250 ms late.
      const { auth, reads } = permissive(() => Effect.as(Effect.sleep(Duration.millis(250)), true))
      const { info } = yield* startBroker(0, auth, { readDecisionTtl: Duration.seconds(1) })
      const publisher = yield* connect(info.url, { clientId: "publisher" })
      const subscriber = yield* connect(info.url, { clientId: "subscriber" })
      yield* subscribe(subscriber.client, "grid/#")
      yield* publishClock(publisher.client, "grid/n1", Date.now() + 3_500)
      yield* Effect.sleep(Duration.millis(100))
      // The first deliveries waited for the first decision; none published after it came did.
      const firstArrival = subscriber.inbox[0]?.at ?? Infinity
      const later = subscriber.inbox.filter((m) => Number(m.payload) > firstArrival).map((m) => m.at - Number(m.payload))
      expect(later.length).toBeGreaterThan(40)
      expect(Math.max(...later)).toBeLessThan(200)
      expect(reads.length).toBeGreaterThanOrEqual(4)
    }).pipe(Effect.scoped))

  it.live("readDecisionTtl 0 asks for every delivery", () =>
    Effect.gen(function*() {
      const { auth, reads } = permissive()
      const { info } = yield* startBroker(0, auth, { readDecisionTtl: Duration.zero })
      const publisher = yield* connect(info.url, { clientId: "publisher" })
      const subscriber = yield* connect(info.url, { clientId: "subscriber" })
      yield* subscribe(subscriber.client, "jobs/+", 1)
      for (let i = 0; i < 20; i++) publisher.client.publish("jobs/a", String(i), { qos: 1 })
      yield* waitFor(() => subscriber.inbox.length >= 20)
      expect(subscriber.inbox.map((m) => m.payload)).toEqual(Array.from({ length: 20 }, (_, i) => String(i)))
      expect(reads.length).toBe(20)
    }).pipe(Effect.scoped))

  it.live("messages queued for a persistent session are checked when it resumes", () =>
    Effect.gen(function*() {
      const { auth } = permissive((topic) => Effect.succeed(topic !== "jobs/secret"))
      const { info } = yield* startBroker(0, auth)
      const first = yield* connect(info.url, { clientId: "persistent", clean: false })
      yield* subscribe(first.client, "jobs/#", 1)
      yield* Effect.promise(() => first.client.endAsync())

      const publisher = yield* connect(info.url, { clientId: "publisher" })
      for (const [topic, payload] of [["jobs/a", "1"], ["jobs/secret", "2"], ["jobs/b", "3"]] as const) {
        yield* Effect.promise(() => publisher.client.publishAsync(topic, payload, { qos: 1 }))
      }

      const resumed = yield* connect(info.url, { clientId: "persistent", clean: false })
      yield* waitFor(() => resumed.inbox.length >= 2)
      yield* Effect.sleep(Duration.millis(300))
      expect(resumed.inbox.map((m) => `${m.topic} ${m.payload}`)).toEqual(["jobs/a 1", "jobs/b 3"])
    }).pipe(Effect.scoped))
})
