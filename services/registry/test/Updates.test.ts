/**
 * Update events over MQTT (`Updates`, configured from the environment as in production): after
 * an import the registry publishes `rec/registry/updates/<community>` on the broker of
 * `PLATFORM_MQTT_HOST`, connecting with its client-credentials token of the dev identity
 * provider; without a broker configured it starts and imports as usual (`mqtt: disabled`); with
 * a configured broker that is down it starts anyway, reports `degraded` and imports with
 * `notified: false`.
 */
import { expect, layer } from "@effect/vitest"
import { DevIdp } from "@rec/dev-idp"
import { EmbeddedBroker, Mqtt, MqttConfig } from "@rec/mqtt"
import { Updates } from "@rec/registry-service"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as net from "node:net"
import { communityKey, get, importExample, serviceLayer } from "./helpers.js"

/** Who connected to the broker (the token's client, read from its claims). */
const connections: Array<{ readonly username: string; readonly client: unknown }> = []

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")) as Record<string, unknown>

const recordingAuth = EmbeddedBroker.layerAuth({
  authenticate: ({ password, username }) =>
    Effect.sync(() => {
      const token = password === undefined ? "" : Redacted.value(password)
      connections.push({ username: username ?? "", client: token.includes(".") ? claimsOf(token)["client_id"] : undefined })
      return true
    }),
  authorizePublish: () => Effect.succeed(true),
  authorizeSubscribe: () => Effect.succeed(true),
  authorizeRead: () => Effect.succeed(true)
})

const broker = EmbeddedBroker.layer({ port: 0 }).pipe(Layer.provide(recordingAuth))

const envWithBroker = Effect.gen(function*() {
  const info = yield* EmbeddedBroker.EmbeddedBroker
  const idp = yield* DevIdp
  return {
    PLATFORM_MQTT_HOST: "127.0.0.1",
    PLATFORM_MQTT_PORT: String(info.port),
    MQTT_STARTUP_TIMEOUT_SECONDS: "10",
    PLATFORM_OIDC_BASE_URL: idp.issuer,
    PLATFORM_OIDC_CLIENT_ID: "svc-rec-registry",
    PLATFORM_OIDC_CLIENT_SECRET: "dev-only-secret-svc-rec-registry"
  }
})

/** A follower of the updates, as another service would be. */
const follower = Effect.gen(function*() {
  const info = yield* EmbeddedBroker.EmbeddedBroker
  const config = MqttConfig.make({ service: "follower", host: "127.0.0.1", port: info.port, startupTimeout: Duration.seconds(5) })
  return yield* Layer.build(Mqtt.Mqtt.Default(config)).pipe(Effect.map(Context.get(Mqtt.Mqtt)))
})

layer(serviceLayer({ env: envWithBroker, updates: "env" }).pipe(Layer.provideMerge(broker)), {
  excludeTestServices: true,
  timeout: "120 seconds"
})("with a broker", (it) => {
  it.scoped("an import publishes rec/registry/updates/<community>; the registry connects with its own token", () =>
    Effect.gen(function*() {
      const mqtt = yield* follower
      const messages = yield* mqtt.subscribeJson("rec/registry/updates/#", Updates.UpdateEvent).pipe(Stream.take(2), Stream.runCollect, Effect.fork)
      yield* Effect.sleep("200 millis")
      const first = yield* importExample()
      expect(first.body).toMatchObject({ notified: true })
      const second = yield* importExample()
      expect(second.body).toMatchObject({ notified: true })
      const received = Chunk.toReadonlyArray(yield* messages.await.pipe(Effect.flatten, Effect.timeout("10 seconds")))
      expect(received.map((m) => m.value)).toEqual([
        expect.objectContaining({ community: communityKey, event: "imported", replaced: false, counts: expect.objectContaining({ members: 7, assets: 15 }) }),
        expect.objectContaining({ community: communityKey, event: "imported", replaced: true })
      ])
      expect(received[0]?.message.topic).toBe(`rec/registry/updates/${communityKey}`)
      expect(Date.parse(received[0]!.value.at)).not.toBeNaN()
      expect(connections.find((c) => c.client === "svc-rec-registry")).toEqual({ username: "svc-rec-registry", client: "svc-rec-registry" })
      const ready = yield* get("/ready")
      expect(ready.body).toEqual({ status: "ready", checks: { db: "ok", policies: "ok", mqtt: "connected" } })
    }))
})

/** A port nothing listens on. */
const freePort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as net.AddressInfo
    server.close(() => resume(Effect.succeed(port)))
  })
})

layer(
  serviceLayer({
    env: Effect.map(freePort, (port) => ({ PLATFORM_MQTT_HOST: "127.0.0.1", PLATFORM_MQTT_PORT: String(port), MQTT_STARTUP_TIMEOUT_SECONDS: "0" })),
    updates: "env"
  }),
  { excludeTestServices: true, timeout: "120 seconds" }
)("with a broker that is down", (it) => {
  it.effect("starts, reports degraded readiness (200), imports without notifying", () =>
    Effect.gen(function*() {
      const ready = yield* get("/ready")
      expect(ready.status).toBe(200)
      expect(ready.body).toMatchObject({ status: "degraded", checks: { db: "ok", policies: "ok" } })
      expect(["reconnecting", "starting"]).toContain((ready.body as { checks: { mqtt: string } }).checks.mqtt)
      const started = performance.now()
      const reply = yield* importExample()
      expect(reply.body).toMatchObject({ notified: false })
      expect(performance.now() - started).toBeLessThan(5_000)
    }))
})

layer(serviceLayer({ updates: "env" }), { excludeTestServices: true, timeout: "120 seconds" })("without a broker configured", (it) => {
  it.effect("is ready with mqtt disabled and imports without notifying", () =>
    Effect.gen(function*() {
      expect((yield* get("/ready")).body).toEqual({ status: "ready", checks: { db: "ok", policies: "ok", mqtt: "disabled" } })
      expect((yield* importExample()).body).toMatchObject({ notified: false })
    }))
})
