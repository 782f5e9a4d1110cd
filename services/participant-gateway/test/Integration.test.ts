/**
 * The gateway with its real typed clients over real HTTP: the digital twin simulator (the real
 * one, `@rec/digital-twin`), and the nudging and flexibility contracts served by small fakes
 * (`FakeNudging.serve`, `FakeFlexibility.serve`) that verify the token the gateway forwards. What
 * reaches them is the user's own token; their refusals, failures and silence come back as the
 * `Upstream` rule says.
 */
import { expect, layer } from "@effect/vitest"
import { makeClient as makeTwinClient, SimulatorServer } from "@rec/digital-twin"
import { Clients } from "@rec/participant-gateway-service"
import { OutboundHttp } from "@rec/platform"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Period from "@rec/participant-gateway-service/Period"
import { servedUrl } from "./support/Fakes.js"
import { FlexibilityState, suggestion } from "./support/FakeFlexibility.js"
import * as FakeFlexibility from "./support/FakeFlexibility.js"
import { NudgingState } from "./support/FakeNudging.js"
import * as FakeNudging from "./support/FakeNudging.js"
import { call, gatewayLayer, token, users, verifierFor } from "./support/Harness.js"

const nudging = new NudgingState()
const flexibility = new FlexibilityState()
let twinUrl = ""

nudging.notify(users.participant, "it-energy-community", { id: "giulia-1" })
const lucas = nudging.notify(users.consumer, "it-energy-community", { id: "luca-1" })
flexibility.suggestions.set(users.participant, [suggestion("w-1", "2026-05-03T11:00:00.000Z", "2026-05-03T13:00:00.000Z")])

const gateway = gatewayLayer((idp) =>
  Effect.gen(function*() {
    const verifier = verifierFor(idp.issuer)
    twinUrl = yield* servedUrl(SimulatorServer.layerTest().pipe(Layer.provide(verifier)))
    return {
      env: {
        DIGITAL_TWIN_API_URL: twinUrl,
        NUDGING_API_URL: yield* FakeNudging.serve(nudging, verifier),
        FLEXIBILITY_API_URL: yield* FakeFlexibility.serve(flexibility, verifier),
        NUDGING_API_TIMEOUT: "700 millis",
        INCENTIVE_TARIFFS: "it-energy-community=0.118"
      }
    }
  })
)

const round3 = (n: number) => Math.round(n * 1000) / 1000

layer(gateway, { excludeTestServices: true, timeout: "90 seconds" })("with real HTTP upstreams", (it) => {
  it.effect("the overview of last month equals the digital twin's own readings summed", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      const rome = Option.getOrThrow(DateTime.zoneMakeNamed("Europe/Rome"))
      const now = DateTime.unsafeNow()
      const thisMonth = Period.window(Period.current(now, rome), rome)
      const period = Period.current(DateTime.subtract(thisMonth.start, { hours: 1 }), rome)
      const reply = yield* call("GET", `/api/overview?period=${period}`, { token: t })
      expect(reply.status).toBe(200)
      const body = reply.body as Record<string, number | string>
      expect(body).toMatchObject({
        community_id: "it-energy-community",
        period,
        device_id: "member-giulia-romano-meter",
        incentive_tariff_eur_per_kwh: 0.118
      })

      // The same question to the digital twin directly, with the same token.
      const window = Period.window(period, rome)
      const payload = { device_id: "member-giulia-romano-meter", start: window.start, end: window.end }
      const [readings, virtual] = yield* Effect.gen(function*() {
        const twin = (yield* makeTwinClient({ baseUrl: twinUrl })).withToken(t)
        return [
          yield* twin.participants.metersData(users.participant, payload),
          yield* twin.participants.virtualConsumption(users.participant, payload)
        ] as const
      }).pipe(Effect.provide(OutboundHttp.layer))
      const production = round3(readings.items.reduce((s, r) => s + r.production_kwh, 0))
      const consumption = round3(readings.items.reduce((s, r) => s + r.consumption_kwh, 0))
      const shared = round3(virtual.items.reduce((s, v) => s + v.virtual_consumption_kwh, 0))
      expect(readings.items.length).toBeGreaterThan(27 * 96)
      expect(body.production_kwh).toBe(production)
      expect(body.consumption_kwh).toBe(consumption)
      expect(body.shared_kwh).toBe(shared)
      expect(body.incentive_eur).toBe(Math.round(shared * 0.118 * 100) / 100)
      expect(shared).toBeGreaterThan(0)
      expect(shared).toBeLessThanOrEqual(consumption)
    }))

  it.effect("someone the digital twin does not know as a participant gets the 404", () =>
    Effect.gen(function*() {
      const reply = yield* call("GET", "/api/overview", { token: yield* token("viewer") })
      expect(reply.status).toBe(404)
    }))

  it.effect("notifications go to the nudging service with the user's own token and community", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      const page = yield* call("GET", "/api/notifications", { token: t })
      expect(page.status).toBe(200)
      expect((page.body as { items: Array<{ id: string }> }).items.map((n) => n.id)).toEqual(["giulia-1"])
      // The fake identified the caller from the token it verified, not from the gateway's word.
      expect(nudging.callsOf("list_notifications").at(-1)).toMatchObject({
        user: users.participant,
        input: { user_id: users.participant, community_id: "it-energy-community" }
      })
      expect((yield* call("POST", "/api/notifications/giulia-1/read", { token: t })).status).toBe(200)
      const other = yield* call("POST", `/api/notifications/${lucas.id}/read`, { token: t })
      expect(other.status).toBe(404)
      expect(other.body).toEqual({ detail: "Nudging service refused mark_read: No notification luca-1" })
      expect((yield* call("DELETE", `/api/notifications/${lucas.id}`, { token: t })).status).toBe(404)
      expect(nudging.notifications.get(lucas.id)).toMatchObject({ read_at: null, deleted: false })
    }))

  it.effect("settings and push through the nudging contract; its refusal and its silence", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      const saved = yield* call("PUT", "/api/settings", {
        token: t,
        json: { notifications_enabled: true, preferred_language: "it", max_per_day: 4 }
      })
      expect(saved.status).toBe(200)
      expect(saved.body).toMatchObject({ stored: true, notification_preferences: { max_per_day: 4, stored: true } })
      expect((yield* call("GET", "/api/settings/vapid-public-key", { token: t })).body).toEqual({
        public_key: FakeNudging.vapidPublicKey
      })
      const subscribed = yield* call("POST", "/api/settings/push-subscribe", {
        token: t,
        json: { endpoint: "https://fcm.googleapis.com/fcm/send/abc", keys: { p256dh: "BNcR", auth: "tBHI" } }
      })
      expect(subscribed.body).toMatchObject({ push: { subscribed: true, subscriptions: 1 } })

      nudging.fail("put_preferences", { status: 422, detail: "language: unknown" })
      const refused = yield* call("PUT", "/api/settings", {
        token: t,
        json: { notifications_enabled: true, preferred_language: "it", max_per_day: 9 }
      })
      expect(refused.status).toBe(422)
      expect((refused.body as { detail: string }).detail).toBe(
        "Settings not saved, nothing was changed: Nudging service refused put_preferences: language: unknown"
      )
      nudging.fail("get_preferences", "hang")
      const silent = yield* call("GET", "/api/settings", { token: t })
      expect(silent.status).toBe(504)
      expect(silent.body).toEqual({ detail: "Nudging service did not answer get_preferences within 700ms" })
      nudging.fail("get_preferences", { status: 500, detail: "boom" })
      expect((yield* call("GET", "/api/settings", { token: t })).status).toBe(502)
      nudging.heal()
      expect((yield* call("GET", "/api/settings", { token: t })).body).toMatchObject({ max_per_day: 4 })
    }))

  it.effect("flexibility through its contract: the caller's commitments only", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      const accepted = yield* call("POST", "/api/suggestions/w-1/respond", { token: t, json: { response: "accepted" } })
      expect(accepted.status).toBe(200)
      const id = (accepted.body as { commitment_id: string }).commitment_id
      expect((yield* call("GET", `/api/commitments/${id}`, { token: t })).body).toMatchObject({ id, user_id: users.participant })
      const luca = yield* token("participant-consumer")
      expect((yield* call("GET", `/api/commitments/${id}`, { token: luca })).status).toBe(404)
      expect((yield* call("DELETE", `/api/commitments/${id}`, { token: luca })).status).toBe(404)
      expect((yield* call("GET", "/api/points", { token: t })).body).toEqual({
        total_points: 0,
        settled_commitments: 0,
        pending_points_estimated: 12,
        open_commitments: 1
      })
      expect((yield* call("DELETE", `/api/commitments/${id}`, { token: t })).status).toBe(204)
    }))
})

layer(OutboundHttp.layer)("clients", (it) => {
  it.effect("an unreachable service is a 502 naming it", () =>
    Effect.gen(function*() {
      const nudgingClient = yield* Clients.nudgingOperations("http://127.0.0.1:1", "2 seconds")
      const failure = yield* Effect.flip(nudgingClient.vapidPublicKey(Redacted.make("t")))
      expect(failure.status).toBe(502)
      expect(failure.detail).toMatch(/^Nudging service is unreachable \(vapid_public_key\)/)
      const flexibilityClient = yield* Clients.flexibilityOperations("http://127.0.0.1:1", "2 seconds")
      expect((yield* Effect.flip(flexibilityClient.suggestions(Redacted.make("t")))).status).toBe(502)
      const twin = yield* Clients.twinOperations("http://127.0.0.1:1", "2 seconds")
      expect((yield* Effect.flip(twin.profile(Redacted.make("t"), users.participant))).status).toBe(502)
    }))
})
