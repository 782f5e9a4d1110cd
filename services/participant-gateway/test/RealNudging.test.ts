/**
 * The gateway against the real nudging service (`@rec/nudging-service`'s `Http.makeTest`: its
 * policies, its database, its rules) and the digital twin simulator, both verifying the user's
 * forwarded token: notifications ingested by a platform service reach the user through the
 * gateway, another user's stay out of reach, settings land in the nudging preferences, push
 * subscriptions are registered and removed.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { expect, layer } from "@effect/vitest"
import { TokenVerifier } from "@rec/auth"
import { Testing } from "@rec/db"
import { SimulatorServer } from "@rec/digital-twin"
import { Http as NudgingHttp, migrations as nudgingMigrations } from "@rec/nudging-service"
import { Engines } from "@rec/policy"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { servedUrl } from "./support/Fakes.js"
import { call, gatewayLayer, repoPolicies, token, users, verifierFor } from "./support/Harness.js"

/** A push service that accepts every message (the nudging service delivers to it). */
const pushService = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly server: http.Server }>((resume) => {
    const server = http.createServer((request, response) => {
      request.resume()
      request.on("end", () => response.writeHead(201).end())
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })))
  }),
  ({ server }) => Effect.async<void>((resume) => {
    server.close(() => resume(Effect.void))
    server.closeAllConnections()
  })
)

let nudgingUrl = ""
let pushUrl = ""

const gateway = gatewayLayer((idp) =>
  Effect.gen(function*() {
    const verifier = verifierFor(idp.issuer)
    const push = yield* pushService
    pushUrl = push.url
    const nudging = NudgingHttp.makeTest({
      engine: Engines.embeddedWith({ directory: repoPolicies, watch: false }),
      verifier: TokenVerifier.layerFor(idp.issuer, { algorithms: ["RS256"], audience: [idp.audience], clockTolerance: Duration.seconds(5) }),
      database: Testing.layerPglite({ service: "nudging", migrations: nudgingMigrations })
    }).pipe(
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({
        WEBPUSH_ALLOWED_ENDPOINTS: "http://127.0.0.1:*",
        NUDGING_DELIVERY_POLL_SECONDS: "0.2",
        SCHEDULER_POLL_SECONDS: "3600",
        LOG_LEVEL: "warn"
      })))))
    )
    nudgingUrl = yield* servedUrl(nudging as Layer.Layer<HttpServer.HttpServer, unknown>)
    return {
      env: {
        NUDGING_API_URL: nudgingUrl,
        DIGITAL_TWIN_API_URL: yield* servedUrl(SimulatorServer.layerTest().pipe(Layer.provide(verifier)))
      }
    }
  })
)

/** An event for the user, ingested as the grid gateway would (a service with `nudging.ingest`). */
const welcome = (user: string) =>
  Effect.gen(function*() {
    const svc = yield* token("svc-grid")
    const response = yield* Effect.promise(() =>
      fetch(`${nudgingUrl}/ingest-event`, {
        method: "POST",
        headers: { authorization: `Bearer ${svc}`, "content-type": "application/json" },
        body: JSON.stringify({
          event_type: "welcome",
          user_id: user,
          community_id: "it-energy-community",
          facts: { facts_version: "1.0", scenario: "welcome", terms_accepted: true }
        })
      })
    )
    return { status: response.status, body: (yield* Effect.promise(() => response.json())) as { outcomes: Array<{ notification_id: string }> } }
  })

interface Page {
  readonly items: ReadonlyArray<{ readonly id: string; readonly title: string; readonly read_at: string | null }>
  readonly total: number
}

layer(gateway, { excludeTestServices: true, timeout: "120 seconds" })("with the nudging service", (it) => {
  it.effect("a notification for the user is listed, read and deleted through the gateway; another user's is a 404", () =>
    Effect.gen(function*() {
      const ingested = yield* welcome(users.participant)
      expect(ingested.status).toBe(200)
      const id = ingested.body.outcomes[0]!.notification_id
      const lucas = (yield* welcome(users.consumer)).body.outcomes[0]!.notification_id

      const t = yield* token("participant")
      const page = (yield* call("GET", "/api/notifications", { token: t })).body as Page
      expect(page.items.map((n) => n.id)).toEqual([id])
      expect(page.items[0]!.title).toMatch(/comunità energetica|energy community/)

      const read = yield* call("POST", `/api/notifications/${id}/read`, { token: t })
      expect(read.status).toBe(200)
      expect((read.body as { read_at: string | null }).read_at).not.toBeNull()
      expect(((yield* call("GET", "/api/notifications?unread=true", { token: t })).body as Page).total).toBe(0)

      expect((yield* call("POST", `/api/notifications/${lucas}/read`, { token: t })).status).toBe(404)
      expect((yield* call("DELETE", `/api/notifications/${lucas}`, { token: t })).status).toBe(404)
      const luca = (yield* call("GET", "/api/notifications", { token: yield* token("participant-consumer") })).body as Page
      expect(luca.items.map((n) => n.id)).toEqual([lucas])
      expect(luca.items[0]!.read_at).toBeNull()

      expect((yield* call("DELETE", `/api/notifications/${id}`, { token: t })).status).toBe(204)
      expect(((yield* call("GET", "/api/notifications", { token: t })).body as Page).total).toBe(0)
    }))

  it.effect("settings are the nudging preferences of the user's community, saved in both places", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      const before = yield* call("GET", "/api/settings", { token: t })
      expect(before.status).toBe(200)
      expect(before.body).toMatchObject({ stored: false, notification_preferences: { community_id: "it-energy-community", stored: false } })
      const saved = yield* call("PUT", "/api/settings", {
        token: t,
        json: { notifications_enabled: false, preferred_language: "en", max_per_day: 2 }
      })
      expect(saved.status).toBe(200)
      expect(saved.body).toMatchObject({
        notifications_enabled: false,
        preferred_language: "en",
        max_per_day: 2,
        stored: true,
        notification_preferences: { enabled: false, language: "en", max_per_day: 2, stored: true }
      })
      // What the nudging service itself now says, asked with the user's own token.
      const direct = yield* Effect.promise(() =>
        fetch(`${nudgingUrl}/preferences?user_id=${users.participant}&community_id=it-energy-community`, {
          headers: { authorization: `Bearer ${t}` }
        }).then((r) => r.json())
      )
      expect(direct).toMatchObject({ enabled: false, language: "en", max_per_day: 2 })
      // The gateway's bounds are the nudging service's: its largest daily cap is accepted by both.
      const largest = yield* call("PUT", "/api/settings", {
        token: t,
        json: { notifications_enabled: true, preferred_language: "en", max_per_day: 100 }
      })
      expect(largest.status).toBe(200)
      expect(largest.body).toMatchObject({ max_per_day: 100, notification_preferences: { max_per_day: 100 } })
      // Another user's settings are untouched, in the gateway and in the nudging service.
      const luca = yield* call("GET", "/api/settings", { token: yield* token("participant-consumer") })
      expect(luca.body).toMatchObject({ stored: false, notification_preferences: { stored: false } })
    }))

  it.effect("push: the VAPID key, a subscription registered and removed", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      const key = yield* call("GET", "/api/settings/vapid-public-key", { token: t })
      expect(key.status).toBe(200)
      expect((key.body as { public_key: string }).public_key).toMatch(/^[A-Za-z0-9_-]{80,}$/)
      const subscription = {
        endpoint: `${pushUrl}/push/abc`,
        expirationTime: null,
        keys: {
          p256dh: "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM",
          auth: "tBHItJI5svbpez7KI4CCXg"
        }
      }
      const subscribed = yield* call("POST", "/api/settings/push-subscribe", { token: t, json: subscription })
      expect(subscribed.status).toBe(200)
      expect(subscribed.body).toMatchObject({ subscription: { enabled: true }, push: { subscribed: true, subscriptions: 1 } })
      const removed = yield* call("POST", "/api/settings/push-unsubscribe", { token: t, json: { endpoint: subscription.endpoint } })
      expect(removed.body).toEqual({ removed: 1, push: { subscribed: false, subscriptions: 0, last_subscribed_at: null } })
    }))
})
