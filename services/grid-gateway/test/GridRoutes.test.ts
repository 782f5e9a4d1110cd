/**
 * Every grid route against the digital-twin simulator, through the gateway with real tokens
 * (issue 14 points 1, 2, 7): the operator of the network gets the twin's data (transformed where
 * the reference says so), the operator of another DSO and callers without grid scopes get 403,
 * no token 401, and query parameters reach the twin as the reference documents.
 */
import { describe, expect, layer } from "@effect/vitest"
import { DevIdp } from "@rec/dev-idp"
import * as Effect from "effect/Effect"
import { call, gatewayLayer, SimulatorUrl, tokenOf } from "./support/Gateway.js"

const today = new Date().toISOString().slice(0, 10)
const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)

/** Every route of the spec's table with a query the route accepts. */
const routes: ReadonlyArray<readonly [string, string]> = [
  ["wind/map", `?dates=${today}&risk_level=ALERT&risk_level=WARNING`],
  ["wind/bosco", `?dates=${today}`],
  ["wind/alert-distribution", `?dates=${today}`],
  ["wind/trend", ""],
  ["heat/map", `?dates=${today}`],
  ["heat/alert-distribution", ""],
  ["heat/trend", ""],
  ["substations/map", ""],
  ["filters", ""],
  ["summary", ""],
  ["tile-index", ""],
  ["shapes", "?asset_type=overhead_bare"],
  ["risks", `?dates=${today}`],
  ["risks-now", "?risk_vector=wind"],
  ["trendline", `?date_from=${yesterday}&date_to=${today}`]
]

/** The simulator's own answer for a route, with svc-grid's token. */
const direct = (path: string) =>
  Effect.gen(function*() {
    const url = yield* SimulatorUrl
    const idp = yield* DevIdp
    const token = yield* Effect.orDie(idp.mint("svc-grid"))
    return yield* Effect.promise(async () => {
      const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } })
      return await response.json() as any // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON compared as is
    })
  })

layer(gatewayLayer(), { excludeTestServices: true, timeout: "120 seconds" })("grid routes", (it) => {
  it.effect("the operator of the network reads every route; another DSO's operator is refused", () =>
    Effect.gen(function*() {
      const alto = yield* tokenOf("dso-operator")
      const valsugana = yield* tokenOf("dso-operator-valsugana")
      for (const [route, query] of routes) {
        const own = yield* call("GET", `/api/grid/dso-alto-garda/${route}${query}`, { token: alto })
        expect(own.status, route).toBe(200)
        const other = yield* call("GET", `/api/grid/dso-alto-garda/${route}${query}`, { token: valsugana })
        expect(other.status, route).toBe(403)
        expect(other.body, route).toEqual({ detail: "network_id mismatch: user does not belong to the requested DSO" })
        const mine = yield* call("GET", `/api/grid/dso-valsugana/${route}${query}`, { token: valsugana })
        expect(mine.status, route).toBe(200)
        const anonymous = yield* call("GET", `/api/grid/dso-alto-garda/${route}${query}`)
        expect(anonymous.status, route).toBe(401)
        expect(anonymous.body, route).toEqual({ detail: "Missing bearer token" })
      }
    }))

  it.effect("the twin's data is forwarded as it is, for the path's network and with the query's filters", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf("dso-operator")
      const get = (path: string) => Effect.map(call("GET", `/api/grid/dso-alto-garda/${path}`, { token }), (r) => r.body)
      // Repeated keys are lists, forwarded as lists.
      const map = yield* get(`wind/map?dates=${today}&dates=${yesterday}&risk_level=LOW`)
      expect(map).toEqual(yield* direct(`/grid/dso-alto-garda/wind/map?dates=${today}&dates=${yesterday}&risk_level=LOW`))
      expect(new Set(map.features.map((f: { properties: { date: string } }) => f.properties.date))).toEqual(new Set([today, yesterday]))
      expect(map.features.every((f: { properties: { risk_level: string } }) => f.properties.risk_level === "LOW")).toBe(true)
      // A single value is a list of one; absent filters are not sent.
      expect(yield* get(`heat/alert-distribution?dates=${today}`))
        .toEqual(yield* direct(`/grid/dso-alto-garda/heat/alert-distribution?dates=${today}`))
      expect(yield* get("heat/alert-distribution")).toEqual(yield* direct("/grid/dso-alto-garda/heat/alert-distribution"))
      expect(yield* get("wind/trend")).toEqual(yield* direct("/grid/dso-alto-garda/wind/trend"))
      expect(yield* get("summary")).toMatchObject({ payload: { network_id: "dso-alto-garda" } })
      const valsugana = yield* call("GET", "/api/grid/dso-valsugana/summary", { token: yield* tokenOf("dso-operator-valsugana") })
      expect(valsugana.body.payload.network_id).toBe("dso-valsugana")
    }))

  it.effect("filters is one object; risks sends the days, risks-now none; trendline its range", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf("dso-operator")
      const filters = (yield* call("GET", "/api/grid/dso-alto-garda/filters", { token })).body
      expect(filters.operational_units.length).toBeGreaterThan(0)
      expect(filters.extent_min_lng).toBeLessThan(filters.extent_max_lng)
      const risks = (yield* call("GET", `/api/grid/dso-alto-garda/risks?dates=${today}&risk_vector=heat`, { token })).body
      expect(risks.count).toBeGreaterThan(0)
      expect(risks.items.every((i: { date: string; risk_vector: string }) => i.date === today && i.risk_vector === "heat")).toBe(true)
      const now = (yield* call("GET", "/api/grid/dso-alto-garda/risks-now", { token })).body
      expect(new Set(now.items.map((i: { risk_vector: string }) => i.risk_vector))).toEqual(new Set(["wind", "heat"]))
      const trend = (yield* call("GET", `/api/grid/dso-alto-garda/trendline?date_from=${yesterday}&date_to=${today}`, { token })).body
      expect(trend.items.map((i: { date: string }) => i.date).sort()).toEqual([yesterday, yesterday, today, today])
    }))

  it.effect("tile-index and shapes are cacheable for an hour, the other routes are not", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf("dso-operator")
      for (const [route, query] of routes) {
        const reply = yield* call("GET", `/api/grid/dso-alto-garda/${route}${query}`, { token })
        expect(reply.headers["cache-control"], route).toBe(
          route === "tile-index" || route === "shapes" ? "public, max-age=3600" : undefined
        )
      }
      // Not on a refusal.
      const refused = yield* call("GET", "/api/grid/dso-valsugana/tile-index", { token })
      expect(refused.status).toBe(403)
      expect(refused.headers["cache-control"]).toBeUndefined()
    }))

  it.effect("shapes is a GeoJSON FeatureCollection assembled from the twin's rows, by asset type and tile", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf("dso-operator")
      const tiles = (yield* call("GET", "/api/grid/dso-alto-garda/tile-index", { token })).body
      const [first, second] = tiles.items as Array<{ tile_id: string; segment_count: number }>
      const shapes = (yield* call("GET", `/api/grid/dso-alto-garda/shapes?tile_id=${first!.tile_id}&tile_id=${second!.tile_id}`, { token }))
        .body
      expect(shapes.type).toBe("FeatureCollection")
      expect(shapes.features.length).toBeGreaterThan(0)
      for (const feature of shapes.features) {
        expect(feature.type).toBe("Feature")
        expect(feature.geometry.type).toBe("LineString")
        expect(feature.properties.feature_geojson).toBeUndefined()
        expect(typeof feature.properties.segment_id).toBe("string")
      }
      const cables = (yield* call("GET", "/api/grid/dso-alto-garda/shapes?asset_type=underground_cable", { token })).body
      expect(cables.features.length).toBeGreaterThan(0)
      expect(cables.features.every((f: { properties: { asset_type: string } }) => f.properties.asset_type === "underground_cable"))
        .toBe(true)
      const none = (yield* call("GET", "/api/grid/dso-alto-garda/shapes?asset_type=nothing_like_this", { token })).body
      expect(none).toEqual({ type: "FeatureCollection", features: [] })
    }))

  it.effect("bad query parameters are a 400 naming them, before the twin is asked", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf("dso-operator")
      const noDates = yield* call("GET", "/api/grid/dso-alto-garda/risks", { token })
      expect(noDates.status).toBe(400)
      expect(noDates.body.issues[0].path).toEqual(["dates"])
      const badDate = yield* call("GET", "/api/grid/dso-alto-garda/wind/map?dates=17/08/2026", { token })
      expect(badDate.status).toBe(400)
      expect(badDate.body.issues[0].path).toEqual(["dates", 0])
      const noRange = yield* call("GET", "/api/grid/dso-alto-garda/trendline", { token })
      expect(noRange.status).toBe(400)
      expect(noRange.body.issues.map((i: { path: Array<string> }) => i.path[0]).sort()).toEqual(["date_from", "date_to"])
      const inverted = yield* call("GET", `/api/grid/dso-alto-garda/trendline?date_from=${today}&date_to=${yesterday}`, { token })
      expect(inverted.status).toBe(400)
      expect(inverted.body.detail).toContain("date_from must not be after date_to")
      const vector = yield* call("GET", "/api/grid/dso-alto-garda/risks-now?risk_vector=snow", { token })
      expect(vector.status).toBe(400)
      const tile = yield* call("GET", "/api/grid/dso-alto-garda/shapes?tile_id=../../etc", { token })
      expect(tile.status).toBe(400)
      const network = yield* call("GET", "/api/grid/..%2Fother/summary", { token })
      expect(network.status).toBe(400)
    }))

  describe("who may read", () => {
    it.effect("users of two DSOs, a member of both, users without a DSO, services by scope", () =>
      Effect.gen(function*() {
        const status = (name: string, network: string) =>
          Effect.flatMap(tokenOf(name), (token) =>
            Effect.map(call("GET", `/api/grid/${network}/wind/trend`, { token }), (r) => r.status))
        expect(yield* status("dso-operator", "dso-alto-garda")).toBe(200)
        expect(yield* status("dso-operator", "dso-valsugana")).toBe(403)
        expect(yield* status("dso-operator", "dso-val-di-non")).toBe(403)
        expect(yield* status("dso-operator-valsugana", "dso-valsugana")).toBe(200)
        expect(yield* status("dso-operator-valsugana", "dso-alto-garda")).toBe(403)
        expect(yield* status("dso-multi", "dso-alto-garda")).toBe(200)
        expect(yield* status("dso-multi", "dso-valsugana")).toBe(200)
        // rec-cli grants every scope to user tokens, grid.admin included: membership still decides.
        expect(yield* status("admin", "dso-alto-garda")).toBe(403)
        expect(yield* status("participant", "dso-alto-garda")).toBe(403)
        expect(yield* status("nogroup", "dso-alto-garda")).toBe(403)
        // Services: grid.read or grid.admin, any network.
        expect(yield* status("svc-grid", "dso-val-di-non")).toBe(200)
        expect(yield* status("svc-no-scopes", "dso-alto-garda")).toBe(403)
        const noScope = yield* call("GET", "/api/grid/dso-alto-garda/wind/trend", { token: yield* tokenOf("svc-flexibility") })
        expect(noScope.body).toEqual({ detail: "service missing grid.read scope" })
      }))

    it.effect("the token in the proxy header (JWT_HEADER_NAME) counts like Authorization", () =>
      Effect.gen(function*() {
        const token = yield* tokenOf("dso-operator")
        const proxied = yield* call("GET", "/api/grid/dso-alto-garda/wind/trend", { headers: { "x-auth-request-access-token": token } })
        expect(proxied.status).toBe(200)
        const expired = yield* call("GET", "/api/grid/dso-alto-garda/wind/trend", {
          token: yield* tokenOf("dso-operator", { expired: true })
        })
        expect(expired.status).toBe(401)
        expect(expired.body).toEqual({ detail: "Token has expired" })
      }))
  })
})
