/**
 * Round trips through the typed client against the simulator, with real tokens from the dev
 * identity provider, for every route of the contract, and the failure statuses the gateways
 * rely on.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpServer from "@effect/platform/HttpServer"
import { ClientCredentials } from "@rec/auth"
import { DevIdp } from "@rec/dev-idp"
import type { Duration } from "effect"
import { ConfigProvider, DateTime, Effect, Layer, Option, Redacted } from "effect"
import * as http from "node:http"
import * as net from "node:net"
import type { AddressInfo } from "node:net"
import { DigitalTwinClient, type DigitalTwinError, make as makeClient } from "../src/Client.js"
import * as SimulatorServer from "../src/simulator/Server.js"
import * as World from "../src/simulator/World.js"

const SimulatorLive = Layer.unwrapEffect(
  Effect.map(DevIdp, (idp) => SimulatorServer.layerTest().pipe(Layer.provide(SimulatorServer.verifierFor(idp.issuer))))
).pipe(Layer.provideMerge(DevIdp.layerTest))

const giulia = World.community.participants[0]!
const luca = World.community.participants[1]!
const giuliaMeter = World.meterSensorId(giulia)
const hoursAgo = (h: number) => DateTime.unsafeMake(Date.now() - h * 3_600_000)

const baseUrl = HttpServer.addressFormattedWith((address) => Effect.succeed(address.replace("0.0.0.0", "127.0.0.1")))

/** A client authenticating as `clientId` with client credentials from the dev identity provider. */
const serviceClient = (clientId: string, options: { readonly secret?: string; readonly scope?: string } = {}) =>
  Effect.gen(function*() {
    const idp = yield* DevIdp
    const tokens = yield* ClientCredentials.make({
      issuer: Option.some(idp.issuer),
      tokenEndpoint: Option.none(),
      clientId,
      clientSecret: Redacted.make(options.secret ?? `dev-only-secret-${clientId}`),
      scope: Option.fromNullable(options.scope)
    })
    return yield* makeClient({ baseUrl: yield* baseUrl, tokens })
  }).pipe(Effect.provide(FetchHttpClient.layer))

const anonymousClient = (
  url: Effect.Effect<string, never, HttpServer.HttpServer> = baseUrl,
  timeout: Duration.DurationInput = "10 seconds"
) =>
  Effect.flatMap(url, (u) => makeClient({ baseUrl: u, timeout })).pipe(Effect.provide(FetchHttpClient.layer))

const raw = (path: string, init: RequestInit = {}) =>
  Effect.gen(function*() {
    const url = `${yield* baseUrl}${path}`
    return yield* Effect.promise(async () => {
      const response = await fetch(url, init)
      const text = await response.text()
      return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) as Record<string, unknown> }
    })
  })

const post = (path: string, token: string, body: unknown) =>
  raw(path, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })

/** A local server for failure modes; its connections are destroyed and it is closed with the scope. */
const localServer = (handler: http.RequestListener | "silent") =>
  Effect.acquireRelease(
    Effect.async<{ server: net.Server; sockets: Set<net.Socket>; url: string }>((resume) => {
      const server = handler === "silent" ? net.createServer(() => undefined) : http.createServer(handler)
      const sockets = new Set<net.Socket>()
      server.on("connection", (socket: net.Socket) => {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({ server, sockets, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })))
    }),
    ({ server, sockets }) =>
      Effect.async<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  )

layer(SimulatorLive, { excludeTestServices: true, timeout: "60 seconds" })("digital-twin contract", (it) => {
  describe("grid, with a client-credentials token (svc-grid, dt.read)", () => {
    it.effect("serves every map, distribution, trend and the summary", () =>
      Effect.gen(function*() {
        const dt = yield* serviceClient("svc-grid", { scope: "dt.read" })
        const id = "dso-alto-garda"
        const wind = yield* dt.grid.windMap(id)
        expect(wind.type).toBe("FeatureCollection")
        expect(wind.features.length).toBeGreaterThan(500)
        expect(wind.features[0]!.geometry.type).toBe("LineString")
        const filtered = yield* dt.grid.windMap(id, { risk_level: ["LOW"], operational_unit: ["Zona Alto Garda"] })
        expect(filtered.features.every((f) => f.properties.risk_level === "LOW" && f.properties.operational_unit === "Zona Alto Garda"))
          .toBe(true)
        const bosco = yield* dt.grid.windBosco(id, { substation_name: ["CP Ledro"] })
        expect(bosco.features.every((f) => f.properties.is_vegetated_zone && f.properties.parent_substation_name === "CP Ledro"))
          .toBe(true)
        const windDistribution = yield* dt.grid.windAlertDistribution(id)
        expect(windDistribution.reduce((s, d) => s + d.events, 0)).toBe(wind.features.length)
        const today = new Date().toISOString().slice(0, 10)
        const heat = yield* dt.grid.heatMap(id, { dates: [today] })
        expect(heat.features.every((f) => f.properties.date === today && f.properties.temp_max_c !== null)).toBe(true)
        const heatDistribution = yield* dt.grid.heatAlertDistribution(id, { dates: [today] })
        expect(heatDistribution.reduce((s, d) => s + d.events, 0)).toBe(heat.features.length)
        expect((yield* dt.grid.windTrend(id)).length).toBe(4)
        expect((yield* dt.grid.heatTrend(id)).length).toBe(6)
        const substations = yield* dt.grid.substationsMap(id)
        expect(substations.features[0]!.geometry.type).toBe("Point")
        expect(substations.features[0]!.properties.asset_id).toMatch(/^AG-CS-\d{4}$/)
        const summary = yield* dt.grid.summary(id)
        expect(summary.payload).toMatchObject({ network_id: id, date: today, primary_substations: 3 })
      }))

    it.effect("serves every values fetcher with paging", () =>
      Effect.gen(function*() {
        const dt = yield* serviceClient("svc-grid")
        const id = "dso-valsugana"
        const filters = yield* dt.grid.filters(id, { limit: 1 })
        expect(filters).toMatchObject({ limit: 1, offset: 0, count: 1 })
        expect(filters.items[0]!.operational_units).toEqual(["Zona Bassa Valsugana", "Zona Pergine-Levico"])
        const tiles = yield* dt.grid.tileIndex(id)
        expect(tiles.count).toBeGreaterThan(3)
        const shapes = yield* dt.grid.shapes(id, { tile_ids: [tiles.items[0]!.tile_id], limit: 10_000 })
        expect(shapes.count).toBe(tiles.items[0]!.segment_count)
        const page2 = yield* dt.grid.shapes(id, { limit: 10, offset: 10 })
        expect(page2).toMatchObject({ limit: 10, offset: 10, count: 10 })
        const today = new Date().toISOString().slice(0, 10)
        const risks = yield* dt.grid.risks(id, { dates: [today], risk_vector: ["wind"], limit: 10_000 })
        expect(risks.items.every((r) => r.date === today && r.risk_vector === "wind")).toBe(true)
        const now = yield* dt.grid.risksNow(id, { risk_vector: "heat" })
        expect(now.items.every((r) => r.risk_vector === "heat")).toBe(true)
        const trendline = yield* dt.grid.trendline(id, { date_from: today, date_to: today })
        expect(trendline.items.map((t) => t.risk_vector)).toEqual(["wind", "heat"])
      }))

    it.effect("lets a DSO operator read only the own network", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const dt = yield* anonymousClient()
        const operator = dt.withToken(yield* idp.mint("dso-operator"))
        expect((yield* operator.grid.windTrend("dso-alto-garda")).length).toBe(4)
        const other = yield* Effect.flip(operator.grid.windTrend("dso-valsugana"))
        expect(other).toMatchObject({ _tag: "DigitalTwinError", operation: "wind_trend", status: 403 })
        expect(other.detail).toBe("DT error: wind_trend")
        const viewer = yield* Effect.flip(dt.withToken(yield* idp.mint("admin")).grid.summary("dso-alto-garda"))
        expect(viewer.status).toBe(403)
      }))

    it.effect("refuses services without a dt scope and answers 404 for unknown networks", () =>
      Effect.gen(function*() {
        const noScopes = yield* serviceClient("svc-no-scopes")
        expect((yield* Effect.flip(noScopes.grid.summary("dso-alto-garda"))).status).toBe(403)
        const grid = yield* serviceClient("svc-grid")
        const unknown = yield* Effect.flip(grid.grid.substationsMap("dso-nowhere"))
        expect(unknown).toMatchObject({ status: 404, operation: "substations_map" })
        expect(unknown.message).toContain("Unknown network 'dso-nowhere'")
      }))
  })

  describe("participants, with the participant's own token", () => {
    it.effect("serves profile, assets, meter data, shared energy and flexibility windows", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const dt = (yield* anonymousClient()).withToken(yield* idp.mint("participant", { client: "rec-frontend" }))
        const profile = yield* dt.participants.profile(giulia.sub)
        expect(profile.membership?.community.key).toBe("it-energy-community")
        const assets = yield* dt.participants.assets(giulia.sub)
        const meter = assets.items.find((a) => a.sensor_id !== null)!
        expect(meter.sensor_id).toBe(giuliaMeter)
        const readings = yield* dt.participants.metersData(giulia.sub, { device_id: giuliaMeter, start: hoursAgo(12), end: hoursAgo(0) })
        expect(readings.count).toBeGreaterThanOrEqual(47)
        expect(readings.count).toBeLessThanOrEqual(48)
        const shared = yield* dt.participants.virtualConsumption(giulia.sub, { start: hoursAgo(6), end: hoursAgo(0) })
        expect(shared.items.every((s) => s.device_id === giuliaMeter)).toBe(true)
        // The totals variants sum the same answers while checking them.
        const window = { device_id: giuliaMeter, start: hoursAgo(12), end: hoursAgo(0) }
        const [rows, totals] = yield* Effect.all([
          dt.participants.metersData(giulia.sub, window),
          dt.participants.metersDataTotals(giulia.sub, window)
        ])
        expect(totals).toEqual({
          rows: rows.items.length,
          limit: rows.limit,
          production_kwh: rows.items.reduce((sum, r) => sum + r.production_kwh, 0),
          consumption_kwh: rows.items.reduce((sum, r) => sum + r.consumption_kwh, 0)
        })
        const sharedRows = yield* dt.participants.virtualConsumption(giulia.sub, window)
        const sharedTotals = yield* dt.participants.virtualConsumptionTotals(giulia.sub, window)
        expect(sharedTotals.virtual_consumption_kwh).toBe(sharedRows.items.reduce((sum, r) => sum + r.virtual_consumption_kwh, 0))
        expect(sharedTotals.rows).toBe(sharedRows.items.length)
        const windows = yield* dt.participants.flexibilityWindows(giulia.sub, { device_id: giuliaMeter })
        expect(windows.limit).toBe(20)
      }))

    it.effect("keeps participants to their own data and non-participants out", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const dt = yield* anonymousClient()
        const giuliaToken = dt.withToken(yield* idp.mint("participant"))
        expect((yield* Effect.flip(giuliaToken.participants.profile(luca.sub))).status).toBe(403)
        const viewer = yield* idp.mint("viewer")
        const viewerSub = idp.identities.users.get("viewer")!.id
        expect((yield* Effect.flip(dt.withToken(viewer).participants.profile(viewerSub))).status).toBe(404)
        const otherDevice = yield* Effect.flip(
          giuliaToken.participants.metersData(giulia.sub, { device_id: World.meterSensorId(luca), start: hoursAgo(2), end: hoursAgo(0) })
        )
        expect(otherDevice).toMatchObject({ status: 404, operation: "meters_data" })
        const nudging = yield* serviceClient("svc-nudging")
        expect((yield* nudging.participants.profile(luca.sub)).participant_id).toBe(luca.sub)
      }))
  })

  describe("communities", () => {
    it.effect("serves self-consumption, daily totals, settlement and forecast", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const flexibility = yield* serviceClient("svc-flexibility")
        const id = World.community.id
        const hourly = yield* flexibility.communities.selfConsumption(id, { start: hoursAgo(48), end: hoursAgo(24) })
        expect(hourly.count).toBeGreaterThanOrEqual(23)
        const daily = yield* flexibility.communities.selfConsumptionDaily(id, { start: hoursAgo(24 * 7), end: hoursAgo(0) })
        expect(daily.count).toBeGreaterThanOrEqual(7)
        const settlement = yield* flexibility.communities.settlement(id, {
          device_id: giuliaMeter,
          window_start: hoursAgo(5),
          window_end: hoursAgo(1)
        })
        expect(settlement.count).toBeGreaterThanOrEqual(3)
        const forecast = yield* flexibility.communities.forecast(id, { start: hoursAgo(0), end: hoursAgo(-24) })
        expect(forecast.count).toBe(24)
        const member = (yield* anonymousClient()).withToken(yield* idp.mint("participant-consumer"))
        expect((yield* member.communities.selfConsumptionDaily(id, { start: hoursAgo(48), end: hoursAgo(0) })).count)
          .toBeGreaterThan(0)
        const outsider = (yield* anonymousClient()).withToken(yield* idp.mint("dso-operator"))
        expect((yield* Effect.flip(outsider.communities.forecast(id, { start: hoursAgo(0), end: hoursAgo(-1) }))).status)
          .toBe(403)
        expect((yield* Effect.flip(flexibility.communities.forecast("it-nowhere", { start: hoursAgo(0), end: hoursAgo(-1) })))
          .status).toBe(404)
      }))
  })

  describe("failures", () => {
    it.effect("401 without a token or with an expired one", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const none = yield* raw("/grid/dso-alto-garda/wind/trend")
        expect(none.status).toBe(401)
        expect(none.json()).toEqual({ detail: "Missing bearer token" })
        expect(none.headers.get("www-authenticate")).toBe("Bearer")
        const expired = yield* Effect.flip((yield* anonymousClient()).withToken(yield* idp.mint("svc-grid", { expired: true })).grid.windTrend("dso-alto-garda"))
        expect(expired).toMatchObject({ status: 401, operation: "wind_trend" })
      }))

    it.effect("400 with the offending field for a bad fetcher payload", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const token = yield* idp.mint("svc-grid")
        const extra = yield* post("/grid/dso-alto-garda/values/risks", token, { payload: { dates: ["2026-07-15"], colour: "red" } })
        expect(extra.status).toBe(400)
        const body = extra.json()
        expect(body).toEqual({
          detail: "Invalid request: payload.colour: is unexpected, expected: \"dates\" | \"risk_vector\" | \"limit\" | \"offset\"",
          issues: [{ path: ["payload", "colour"], message: "is unexpected, expected: \"dates\" | \"risk_vector\" | \"limit\" | \"offset\"" }]
        })
        const badDate = yield* post("/grid/dso-alto-garda/values/trendline", token, { payload: { date_from: "15/07/2026", date_to: "2026-07-16" } })
        expect(badDate.status).toBe(400)
        expect(badDate.text).toContain("date_from")
        const missing = yield* post(`/participants/${giulia.sub}/values/meters_data`, yield* idp.mint("participant"), { payload: { device_id: giuliaMeter } })
        expect(missing.status).toBe(400)
        expect(missing.text).toContain("start")
        const inverted = yield* Effect.flip(
          (yield* serviceClient("svc-grid")).grid.trendline("dso-alto-garda", { date_from: "2026-07-16", date_to: "2026-07-15" })
        )
        expect(inverted).toMatchObject({ status: 400, operation: "trendline" })
      }))

    it.effect("404 naming the known fetchers for an unknown one", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const grid = yield* post("/grid/dso-alto-garda/values/risk_km", yield* idp.mint("svc-grid"), { payload: {} })
        expect(grid.status).toBe(404)
        expect(grid.json()).toMatchObject({
          detail: "Unknown values fetcher 'risk_km' for network 'dso-alto-garda'; available: filters, tile_index, shapes, risks, risks_now, trendline",
          fetcher: "risk_km",
          available: ["filters", "tile_index", "shapes", "risks", "risks_now", "trendline"]
        })
        const participant = yield* post(`/participants/${giulia.sub}/values/weather`, yield* idp.mint("participant"), { payload: {} })
        expect(participant.json()).toMatchObject({ detail: expect.stringContaining("'weather'"), available: expect.arrayContaining(["meters_data"]) })
        const community = yield* post(`/communities/it/${World.community.id}/values/nope`, yield* idp.mint("svc-flexibility"), {})
        expect(community.status).toBe(404)
        // Access is checked first: a stranger learns nothing about fetchers of others' networks.
        const stranger = yield* post("/grid/dso-valsugana/values/risk_km", yield* idp.mint("dso-operator"), { payload: {} })
        expect(stranger.status).toBe(403)
      }))

    it.effect("502 when unreachable or answering off-contract, 503 without a token, 504 on timeout", () =>
      Effect.gen(function*() {
        const down = yield* anonymousClient(Effect.succeed("http://127.0.0.1:9"))
        expect(yield* Effect.flip(down.withToken("t").grid.windTrend("x"))).toMatchObject({ status: 502, operation: "wind_trend" })
        const odd = yield* localServer((_req, res) => {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify({ unexpected: true }))
        })
        const offContract = yield* Effect.flip((yield* anonymousClient(Effect.succeed(odd.url))).withToken("t").grid.windTrend("x"))
        expect(offContract.status).toBe(502)
        expect(offContract.message).toContain("does not match the contract")
        // A malformed reading is caught by the compiled check's fallback, totals included.
        const malformed = yield* localServer((_req, res) => {
          res.writeHead(200, { "content-type": "application/json" })
          const row = { ts: "2026-08-17T10:15:00Z", device_id: "m", production_kwh: 1, consumption_kwh: 2, production_kw: 4, consumption_kw: 8 }
          res.end(JSON.stringify({ items: [row, { ...row, production_kwh: "7" }], limit: 40000, offset: 0, count: 2 }))
        })
        const readings = (yield* anonymousClient(Effect.succeed(malformed.url))).withToken("t").participants
        const window = { device_id: "m", start: hoursAgo(2), end: hoursAgo(0) }
        const calls: ReadonlyArray<Effect.Effect<unknown, DigitalTwinError>> = [
          readings.metersData("p", window),
          readings.metersDataTotals("p", window)
        ]
        for (const call of calls) {
          const bad = yield* Effect.flip(call)
          expect(bad).toMatchObject({ status: 502, operation: "meters_data" })
          expect(bad.message).toContain("does not match the contract")
          expect(bad.message).toContain("production_kwh")
        }
        const failing = yield* localServer((_req, res) => {
          res.writeHead(500, { "content-type": "application/json" })
          res.end(JSON.stringify({ detail: "Internal Server Error" }))
        })
        const failed = yield* Effect.flip((yield* anonymousClient(Effect.succeed(failing.url))).withToken("t").grid.summary("x"))
        expect(failed).toMatchObject({ status: 500, upstreamStatus: 500 })
        // Only an answer carries the twin's own status.
        expect(offContract.upstreamStatus).toBeUndefined()
        const noCredentials = yield* anonymousClient()
        const noToken = yield* Effect.flip(noCredentials.grid.windTrend("dso-alto-garda"))
        expect(noToken).toMatchObject({ status: 503 })
        expect(noToken.upstreamStatus).toBeUndefined()
        const wrongSecret = yield* serviceClient("svc-grid", { secret: "wrong" })
        expect((yield* Effect.flip(wrongSecret.grid.windTrend("dso-alto-garda"))).status).toBe(503)
        const silent = yield* localServer("silent")
        const slow = yield* anonymousClient(Effect.succeed(silent.url), "300 millis")
        expect(yield* Effect.flip(slow.withToken("t").grid.windTrend("x"))).toMatchObject({ status: 504, operation: "wind_trend" })
      }).pipe(Effect.scoped))
  })

  describe("client configuration", () => {
    it.effect("reads DIGITAL_TWIN_API_URL, the client credentials and DT_CLIENT_SCOPE from the environment", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const env = (scope: string) =>
          ConfigProvider.fromMap(new Map([
            ["DIGITAL_TWIN_API_URL", url],
            ["PLATFORM_OIDC_BASE_URL", idp.issuer],
            ["PLATFORM_OIDC_CLIENT_ID", "svc-grid"],
            ["PLATFORM_OIDC_CLIENT_SECRET", "dev-only-secret-svc-grid"],
            ["DT_CLIENT_SCOPE", scope]
          ]))
        const url = yield* baseUrl
        const trend = (scope: string) =>
          Effect.flatMap(DigitalTwinClient, (dt) => dt.grid.windTrend("dso-alto-garda")).pipe(
            Effect.provide(Layer.orDie(DigitalTwinClient.layerConfig)),
            Effect.withConfigProvider(env(scope))
          )
        expect((yield* trend("dt.read")).length).toBe(4)
        // svc-grid holds grid.admin but a token with only that scope may not read the twin.
        expect((yield* Effect.flip(trend("grid.admin"))).status).toBe(403)
      }))
  })

  describe("service surface", () => {
    it.effect("serves /health, /docs and an OpenAPI document listing every route", () =>
      Effect.gen(function*() {
        expect((yield* raw("/health")).json()).toMatchObject({ status: "ok", service: "digital-twin-simulator" })
        const docs = yield* raw("/docs")
        expect(docs.status).toBe(200)
        expect(docs.headers.get("content-type")).toContain("text/html")
        const openapi = (yield* raw("/openapi.json")).json() as { paths: Record<string, unknown> }
        expect(Object.keys(openapi.paths)).toEqual(expect.arrayContaining([
          "/grid/{network_id}/wind/map",
          "/grid/{network_id}/wind/bosco",
          "/grid/{network_id}/wind/alert-distribution",
          "/grid/{network_id}/wind/trend",
          "/grid/{network_id}/heat/map",
          "/grid/{network_id}/heat/alert-distribution",
          "/grid/{network_id}/heat/trend",
          "/grid/{network_id}/substations/map",
          "/grid/{network_id}/summary",
          "/grid/{network_id}/values/shapes",
          "/grid/{network_id}/values/{fetcher}",
          "/participants/{sub}/profile",
          "/participants/{sub}/values/meters_data",
          "/communities/it/{community_id}/values/rec_self_consumption"
        ]))
      }))
  })
})
