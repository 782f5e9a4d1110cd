/**
 * The gateway's flexibility routes against the flexibility service itself (`@rec/flexibility-
 * service`'s `Http.makeTest`: its policies, its database, the digital twin simulator), both
 * verifying the user's token the gateway forwards: the user's suggestions as the service computes
 * them, a suggestion accepted, a commitment made, read and cancelled, another user's commitment a
 * 404, and the points total after a settlement.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as HttpServer from "@effect/platform/HttpServer"
import { expect, layer } from "@effect/vitest"
import { ClientCredentials } from "@rec/auth"
import { Testing } from "@rec/db"
import { DevIdp } from "@rec/dev-idp"
import { defaultSimulatorOptions, DigitalTwinClient, SimulatorServer, SimulatorSynthetic, SimulatorWorld } from "@rec/digital-twin"
import { Http as FlexibilityHttp } from "@rec/flexibility-service"
import { Communities } from "@rec/flexibility-service/Communities"
import { migrations as flexibilityMigrations } from "@rec/flexibility-service/migrations/index"
import { Nudges } from "@rec/flexibility-service/Nudges"
import { Engines } from "@rec/policy"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { servedUrl } from "./support/Fakes.js"
import { call, gatewayLayer, repoPolicies, token, users, verifierFor } from "./support/Harness.js"

let flexibilityUrl = ""

/**
 * A synthetic community of the simulator large enough that it has surplus hours on any day of the
 * year, and its member who can move the most consumption: they are offered windows whatever the
 * date (the dev users' community may offer none on a dark winter day).
 */
const synthetic = { id: "it-gateway-community", members: 30 }
const member = (() => {
  const built = SimulatorSynthetic.build(defaultSimulatorOptions.seed, synthetic)
  const best = [...built.participants].sort((a, b) =>
    b.annualConsumptionKwh * b.flexibleShare - a.annualConsumptionKwh * a.flexibleShare
  )[0]!
  return { sub: best.sub, meter: SimulatorWorld.meterSensorId(best) }
})()

/** A login of the synthetic member through the web app, signed by the dev identity provider. */
const memberToken = Effect.flatMap(DevIdp, (idp) =>
  idp.sign({ sub: member.sub, preferred_username: member.sub, typ: "Bearer", azp: "rec-frontend", aud: idp.audience, scope: "profile email" }))

const gateway = gatewayLayer((idp) =>
  Effect.gen(function*() {
    const verifier = verifierFor(idp.issuer)
    const twinUrl = yield* servedUrl(
      SimulatorServer.layerTest({ simulator: { syntheticCommunities: [synthetic] } }).pipe(Layer.provide(verifier))
    )
    // The flexibility service's own client of the twin, with its client credentials (settlement).
    const tokens = yield* ClientCredentials.make({
      issuer: Option.some(idp.issuer),
      tokenEndpoint: Option.none(),
      clientId: "svc-flexibility",
      clientSecret: Redacted.make("dev-only-secret-svc-flexibility"),
      scope: Option.none()
    }).pipe(Effect.provide(FetchHttpClient.layer))
    const flexibility = FlexibilityHttp.makeTest({
      verifier,
      engine: Engines.embeddedWith({ directory: repoPolicies, watch: false }),
      database: Testing.layerPglite({ service: "flexibility", migrations: flexibilityMigrations, transformNames: false }),
      digitalTwin: DigitalTwinClient.layer({ baseUrl: twinUrl, tokens }).pipe(Layer.provide(FetchHttpClient.layer)),
      // Nudges and the registry are not what this test is about: nothing is sent, no community listed.
      nudges: Layer.succeed(Nudges, {
        send: () => Effect.succeed("delivered" as const),
        schedule: () => Effect.void,
        unschedule: () => Effect.void
      }),
      communities: Layer.succeed(Communities, { list: Effect.succeed([]), members: () => Effect.succeed([]) }),
      mqtt: false
    }).pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["LOG_LEVEL", "warn"]])))))
    flexibilityUrl = yield* servedUrl(flexibility as Layer.Layer<HttpServer.HttpServer, unknown>)
    return { env: { FLEXIBILITY_API_URL: flexibilityUrl, DIGITAL_TWIN_API_URL: twinUrl } }
  })
)

/** The flexibility service asked directly, with `t`. */
const direct = (method: string, path: string, t: string, body?: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(`${flexibilityUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${t}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    return { status: response.status, body: text === "" ? null : JSON.parse(text) as unknown }
  })

const hour = 3_600_000

layer(gateway, { excludeTestServices: true, timeout: "120 seconds" })("with the flexibility service", (it) => {
  it.effect("the user's suggestions are the service's, asked with the user's token", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      const through = yield* call("GET", "/api/suggestions", { token: t })
      expect(through.status).toBe(200)
      expect(through.body).toEqual((yield* direct("GET", "/api/suggestions", t)).body)
    }))

  it.effect("a member's suggestion accepted through the gateway becomes their commitment", () =>
    Effect.gen(function*() {
      const t = yield* memberToken
      const offered = yield* call("GET", "/api/suggestions", { token: t })
      expect(offered.status).toBe(200)
      const suggestions = offered.body as Array<{ id: string; period_start: string; period_end: string; reward_points: number }>
      expect(suggestions.length).toBeGreaterThan(0)
      expect(offered.body).toEqual((yield* direct("GET", "/api/suggestions", t)).body)
      const chosen = suggestions[0]!
      const accepted = yield* call("POST", `/api/suggestions/${encodeURIComponent(chosen.id)}/respond`, {
        token: t,
        json: { response: "accepted" }
      })
      expect(accepted.status).toBe(200)
      const answer = accepted.body as { commitment_id: string; status: string }
      expect(answer.status).toBe("committed")
      const commitment = yield* call("GET", `/api/commitments/${answer.commitment_id}`, { token: t })
      expect(commitment.body).toMatchObject({
        user_id: member.sub,
        suggestion_id: chosen.id,
        community_id: synthetic.id,
        device_id: member.meter,
        period_start: chosen.period_start,
        period_end: chosen.period_end,
        status: "committed"
      })
      // The window committed to is no longer offered, and a second acceptance is the service's 409.
      const after = (yield* call("GET", "/api/suggestions", { token: t })).body as Array<{ id: string }>
      expect(after.map((s) => s.id)).not.toContain(chosen.id)
      const twice = yield* call("POST", `/api/suggestions/${encodeURIComponent(chosen.id)}/respond`, {
        token: t,
        json: { response: "accepted" }
      })
      expect(twice.status).toBe(409)
      // The member's community overview, from the same simulator.
      const overview = yield* call("GET", "/api/overview", { token: t })
      expect(overview.body).toMatchObject({ community_id: synthetic.id, device_id: member.meter })
    }))

  it.effect("a commitment made through the gateway is the user's: read, listed, cancelled; not another user's", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      const start = Math.ceil(Date.now() / hour) * hour + 2 * hour
      const created = yield* call("POST", "/api/commitments", {
        token: t,
        json: {
          suggestion_id: "gateway-test-window",
          period_start: new Date(start).toISOString(),
          period_end: new Date(start + 2 * hour).toISOString(),
          reward_points_estimated: 15
        }
      })
      expect(created.status).toBe(201)
      const commitment = created.body as { id: string; user_id: string; community_id: string; device_id: string }
      // Community and meter come from the digital twin, for the user the token names.
      expect(commitment).toMatchObject({
        user_id: users.participant,
        community_id: "it-energy-community",
        device_id: "member-giulia-romano-meter"
      })
      expect((yield* call("GET", `/api/commitments/${commitment.id}`, { token: t })).body).toEqual(created.body)
      const page = (yield* call("GET", "/api/commitments?status=committed", { token: t })).body as {
        items: Array<{ id: string }>
      }
      expect(page.items.map((c) => c.id)).toContain(commitment.id)

      const luca = yield* token("participant-consumer")
      expect((yield* call("GET", `/api/commitments/${commitment.id}`, { token: luca })).status).toBe(404)
      expect((yield* call("DELETE", `/api/commitments/${commitment.id}`, { token: luca })).status).toBe(404)
      const lucas = (yield* call("GET", "/api/commitments", { token: luca })).body as { items: Array<unknown> }
      expect(lucas.items).toEqual([])

      expect((yield* call("GET", "/api/points", { token: t })).body).toEqual({
        total_points: 0,
        settled_commitments: 0,
        pending_points_estimated: 15,
        open_commitments: 1
      })
      expect((yield* call("DELETE", `/api/commitments/${commitment.id}`, { token: t })).status).toBe(204)
      const again = yield* call("DELETE", `/api/commitments/${commitment.id}`, { token: t })
      expect(again.status).toBe(409)
    }))

  it.effect("points count what settlement gave", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      const start = Math.ceil(Date.now() / hour) * hour + 5 * hour
      const created = yield* call("POST", "/api/commitments", {
        token: t,
        json: {
          suggestion_id: "gateway-test-settled",
          period_start: new Date(start).toISOString(),
          period_end: new Date(start + hour).toISOString(),
          reward_points_estimated: 8
        }
      })
      const id = (created.body as { id: string }).id
      // Settlement is the platform's (flexibility.admin), not the user's.
      const idp = yield* DevIdp
      const service = yield* Effect.orDie(idp.mint("svc-flexibility"))
      const settled = yield* direct("PATCH", `/api/commitments/${id}/settle`, service, { reward_points_actual: 23, actual_kwh: 2.3 })
      expect(settled.status).toBe(200)
      expect((yield* call("GET", "/api/points", { token: t })).body).toEqual({
        total_points: 23,
        settled_commitments: 1,
        pending_points_estimated: 0,
        open_commitments: 0
      })
      // A user cannot settle, through the service or otherwise.
      expect((yield* direct("PATCH", `/api/commitments/${id}/settle`, t, { reward_points_actual: 1000 })).status).toBe(403)
    }))
})
