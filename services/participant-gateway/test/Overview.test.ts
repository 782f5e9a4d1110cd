/**
 * `GET /api/overview` (issue 16 point 3) over a digital twin kept in memory: the sums of the
 * month's 15-minute readings, the shared energy and its incentive, the month in Europe/Rome, no
 * membership as a 404 and the digital twin's failures as 502/504.
 */
import { expect, layer } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { FlexibilityState } from "./support/FakeFlexibility.js"
import * as FakeFlexibility from "./support/FakeFlexibility.js"
import { NudgingState } from "./support/FakeNudging.js"
import * as FakeNudging from "./support/FakeNudging.js"
import { TwinState } from "./support/FakeTwin.js"
import { call, gatewayLayer, token, users } from "./support/Harness.js"

const twin = new TwinState()
twin.member(users.participant)
twin.member(users.consumer, "other-community", null)
twin.outsider(users.nogroup)
const clients = Layer.mergeAll(twin.layer(), FakeNudging.clientLayer(new NudgingState()), FakeFlexibility.clientLayer(new FlexibilityState()))

// Every request asks the digital twin here (the cache has its own tests below).
const env = { INCENTIVE_TARIFFS: "other-community=0.2", OVERVIEW_CACHE_TTL: "0 seconds" }

interface Overview {
  readonly community_id: string
  readonly period: string
  readonly production_kwh: number
  readonly consumption_kwh: number
  readonly shared_kwh: number
  readonly incentive_eur: number
  readonly incentive_tariff_eur_per_kwh: number
  readonly device_id: string | null
  readonly from: string
  readonly to: string
}

layer(gatewayLayer(() => Effect.succeed({ clients, env })), { excludeTestServices: true, timeout: "60 seconds" })("overview", (it) => {
  it.effect("sums the month's readings of the meter: production, consumption, shared energy, incentive", () =>
    Effect.gen(function*() {
      twin.calls.length = 0
      const reply = yield* call("GET", "/api/overview?period=2025-02", { token: yield* token("participant") })
      expect(reply.status).toBe(200)
      // February 2025 in Europe/Rome: 28 days of 96 intervals.
      expect(reply.body).toEqual({
        community_id: "it-energy-community",
        community_name: "Comunità Energetica Alto Garda",
        period: "2025-02",
        production_kwh: 672,
        consumption_kwh: 1344,
        shared_kwh: 268.8,
        incentive_eur: 29.57,
        incentive_tariff_eur_per_kwh: 0.11,
        device_id: `meter-${users.participant}`,
        from: "2025-01-31T23:00:00.000Z",
        to: "2025-02-28T23:00:00.000Z",
        time_zone: "Europe/Rome"
      })
      const asked = twin.calls.filter((c) => c.operation === "meters_data")
      expect(asked).toHaveLength(1)
      expect(asked[0]!.sub).toBe(users.participant)
    }))

  it.effect("a month with the change to summer time has an hour less", () =>
    Effect.gen(function*() {
      twin.reading = () => ({ production: 0.001, consumption: 0.002, shared: 0.0005 })
      const reply = yield* call("GET", "/api/overview?period=2025-03", { token: yield* token("participant") })
      const body = reply.body as Overview
      // 31 days x 96 intervals - 4 (02:00-03:00 on 30 March does not exist).
      expect(body.production_kwh).toBe(2.972)
      expect(body.consumption_kwh).toBe(5.944)
      expect(body.shared_kwh).toBe(1.486)
      expect(body.incentive_eur).toBe(0.16)
      expect([body.from, body.to]).toEqual(["2025-02-28T23:00:00.000Z", "2025-03-31T22:00:00.000Z"])
      twin.reading = () => ({ production: 0.25, consumption: 0.5, shared: 0.1 })
    }))

  it.effect("defaults to the current month, counted up to the last quarter hour that ended", () =>
    Effect.gen(function*() {
      const before = Date.now()
      const reply = yield* call("GET", "/api/overview", { token: yield* token("participant") })
      expect(reply.status).toBe(200)
      const body = reply.body as Overview
      const now = DateTime.unsafeNow()
      const rome = DateTime.toParts(DateTime.unsafeMakeZoned(now, { timeZone: "Europe/Rome" }))
      expect(body.period).toBe(`${rome.year}-${String(rome.month).padStart(2, "0")}`)
      const to = Date.parse(body.to)
      expect(to % 900_000).toBe(0)
      expect(to).toBeGreaterThan(before - 900_000)
      expect(to).toBeLessThanOrEqual(Date.now())
      const intervals = (to - Date.parse(body.from)) / 900_000
      expect(body.production_kwh).toBeCloseTo(intervals * 0.25, 3)
    }))

  it.effect("a community's own tariff; a member without a meter has zeros", () =>
    Effect.gen(function*() {
      const reply = yield* call("GET", "/api/overview?period=2025-02", { token: yield* token("participant-consumer") })
      expect(reply.status).toBe(200)
      expect(reply.body).toMatchObject({
        community_id: "other-community",
        production_kwh: 0,
        consumption_kwh: 0,
        shared_kwh: 0,
        incentive_eur: 0,
        incentive_tariff_eur_per_kwh: 0.2,
        device_id: null
      })
    }))

  it.effect("no membership, or not a participant at all: 404 saying so", () =>
    Effect.gen(function*() {
      const outsider = yield* call("GET", "/api/overview", { token: yield* token("nogroup") })
      expect(outsider.status).toBe(404)
      expect(outsider.body).toEqual({
        detail: "You are not a member of an energy community, so there is no community overview for you"
      })
      const unknown = yield* call("GET", "/api/overview", { token: yield* token("viewer") })
      expect(unknown.status).toBe(404)
      expect(unknown.body).toEqual(outsider.body)
    }))

  it.effect("a period that is not YYYY-MM, or has not begun, is a 400", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      const bad = yield* call("GET", "/api/overview?period=2025-13", { token: t })
      expect(bad.status).toBe(400)
      expect(bad.body).toMatchObject({ issues: [{ path: ["period"], message: "must be a month as YYYY-MM, e.g. 2026-03" }] })
      expect((yield* call("GET", "/api/overview?period=march", { token: t })).status).toBe(400)
      const future = yield* call("GET", "/api/overview?period=2999-01", { token: t })
      expect(future.status).toBe(400)
      expect(future.body).toEqual({ detail: "The period 2999-01 has not begun yet" })
    }))

  it.effect("the digital twin failing is a 502, silent a 504; a refusal of the profile keeps its status", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      twin.fail("meters_data", 500)
      const failed = yield* call("GET", "/api/overview?period=2025-02", { token: t })
      expect(failed.status).toBe(502)
      expect(failed.body).toEqual({ detail: "Digital twin failed meters_data: The digital twin answered 500" })
      twin.heal()
      twin.fail("rec_virtual_consumption_per_device_15m", 504)
      const slow = yield* call("GET", "/api/overview?period=2025-02", { token: t })
      expect(slow.status).toBe(504)
      twin.heal()
      twin.fail("profile", 503)
      expect((yield* call("GET", "/api/overview?period=2025-02", { token: t })).status).toBe(502)
      twin.heal()
      twin.fail("profile", 403)
      const refused = yield* call("GET", "/api/overview?period=2025-02", { token: t })
      expect(refused.status).toBe(403)
      expect(refused.body).toEqual({ detail: "Digital twin refused profile: The digital twin answered 403" })
      twin.heal()
    }))

  it.effect("the readings are asked for as soon as the assets answer, not after the profile", () =>
    Effect.gen(function*() {
      twin.delays.set("profile", 300)
      twin.events.length = 0
      const reply = yield* call("GET", "/api/overview?period=2025-02", { token: yield* token("participant") })
      twin.delays.clear()
      expect(reply.status).toBe(200)
      expect((reply.body as Overview).production_kwh).toBe(672)
      expect(twin.events.indexOf("start meters_data")).toBeGreaterThanOrEqual(0)
      expect(twin.events.indexOf("start meters_data")).toBeLessThan(twin.events.indexOf("end profile"))
    }))

  it.effect("a non-member gets the 404 even when the assets cannot be read", () =>
    Effect.gen(function*() {
      twin.fail("assets", 500)
      const reply = yield* call("GET", "/api/overview", { token: yield* token("nogroup") })
      expect(reply.status).toBe(404)
      twin.heal()
    }))
})

// The same digital twin, with the cache on (its default).
const cachedTwin = new TwinState()
cachedTwin.member(users.participant)
cachedTwin.member(users.consumer)
const cachedClients = Layer.mergeAll(
  cachedTwin.layer(),
  FakeNudging.clientLayer(new NudgingState()),
  FakeFlexibility.clientLayer(new FlexibilityState())
)

layer(gatewayLayer(() => Effect.succeed({ clients: cachedClients })), { excludeTestServices: true, timeout: "60 seconds" })(
  "overview cache",
  (it) => {
    it.effect("an overview is reused for the same user and month until the next quarter hour, and for no one else", () =>
      Effect.gen(function*() {
        const giulia = yield* token("participant")
        const first = yield* call("GET", "/api/overview?period=2025-02", { token: giulia })
        const asked = cachedTwin.calls.length
        expect(asked).toBe(4)
        // The world changes: the cached answer does not (a month long past; the cache lasts 60 s).
        cachedTwin.reading = () => ({ production: 1, consumption: 1, shared: 1 })
        const again = yield* call("GET", "/api/overview?period=2025-02", { token: giulia })
        expect(again.body).toEqual(first.body)
        expect(cachedTwin.calls.length).toBe(asked)
        // Another month, another user: asked again.
        const march = yield* call("GET", "/api/overview?period=2025-03", { token: giulia })
        expect((march.body as Overview).production_kwh).toBe(2972)
        const luca = yield* call("GET", "/api/overview?period=2025-02", { token: yield* token("participant-consumer") })
        expect((luca.body as Overview).production_kwh).toBe(2688)
        expect(cachedTwin.calls.length).toBe(asked + 8)
        // A failure is not remembered.
        cachedTwin.fail("meters_data", 500)
        expect((yield* call("GET", "/api/overview?period=2025-04", { token: giulia })).status).toBe(502)
        cachedTwin.heal()
        expect((yield* call("GET", "/api/overview?period=2025-04", { token: giulia })).status).toBe(200)
      }))
  }
)
