/**
 * What the digital twin's failures become (issue 14 point 2; the original answered most of them
 * with a bare 500): its 4xx kept, its 5xx 502, an answer off its contract 502, unreachable 502,
 * no answer in time 504, the gateway's own token refused 502; every body `{detail}` naming the
 * operation. A caller the policy refuses gets 403 without the twin being asked.
 */
import { afterAll, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { call, digitalTwinAt, gatewayLayer, tokenOf } from "./support/Gateway.js"

/** A digital twin that fails in a different way per route, and counts what it was asked. */
const asked: Array<string> = []
const twin = http.createServer((request, response) => {
  const path = request.url ?? ""
  asked.push(path)
  const json = (status: number, body: unknown) => {
    response.writeHead(status, { "content-type": "application/json" })
    response.end(JSON.stringify(body))
  }
  if (path.startsWith("/grid/dso-alto-garda/summary")) return json(500, { detail: "Internal Server Error" })
  if (path.startsWith("/grid/dso-alto-garda/wind/trend")) return json(404, { detail: "No network dso-alto-garda" })
  if (path.startsWith("/grid/dso-alto-garda/heat/trend")) return json(200, { unexpected: true })
  if (path.startsWith("/grid/dso-alto-garda/wind/map")) return json(401, { detail: "Invalid token" })
  if (path.startsWith("/grid/dso-alto-garda/values/filters")) return json(503, { detail: "busy" })
  if (path.startsWith("/grid/dso-alto-garda/values/risks")) return json(400, { detail: "Invalid request: payload.dates: bad" })
  if (path.startsWith("/grid/dso-alto-garda/heat/alert-distribution")) return json(501, { detail: "Domain does not implement it" })
  // substations/map and anything else: no answer (the timeout).
})
const listening = new Promise<string>((resolve) =>
  twin.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(twin.address() as AddressInfo).port}`)))

afterAll(() => {
  twin.closeAllConnections()
  twin.close()
})

const failing = digitalTwinAt(Effect.promise(() => listening), { timeout: "700 millis" })

layer(gatewayLayer({ digitalTwin: failing }), { excludeTestServices: true, timeout: "90 seconds" })("digital-twin failures", (it) => {
  it.effect("each failure becomes the platform's status and a detail naming the operation", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf("dso-operator")
      const get = (route: string) => call("GET", `/api/grid/dso-alto-garda/${route}`, { token })
      const expectations: ReadonlyArray<readonly [string, number, RegExp]> = [
        ["summary", 502, /^Digital twin failed summary \(status 500\)/],
        ["heat/alert-distribution", 502, /^Digital twin failed heat_alert_distribution \(status 501\)/],
        ["filters", 502, /^Digital twin failed filters \(status 503\)/],
        ["wind/trend", 404, /^Digital twin refused wind_trend/],
        ["risks?dates=2026-08-17", 400, /^Digital twin refused risks/],
        ["heat/trend", 502, /^Digital twin call heat_trend failed: The digital twin's answer does not match the contract/],
        ["wind/map", 502, /^Digital twin refused the gateway's credentials \(wind_map\)/],
        ["substations/map", 504, /^Digital twin did not answer substations_map in time/]
      ]
      for (const [route, status, detail] of expectations) {
        const reply = yield* get(route)
        expect(reply.status, route).toBe(status)
        expect(Object.keys(reply.body), route).toEqual(["detail"])
        expect(reply.body.detail, route).toMatch(detail)
      }
    }))

  it.effect("a refused caller never reaches the twin", () =>
    Effect.gen(function*() {
      const before = asked.length
      const reply = yield* call("GET", "/api/grid/dso-alto-garda/summary", { token: yield* tokenOf("dso-operator-valsugana") })
      expect(reply.status).toBe(403)
      expect(asked.length).toBe(before)
    }))
})

const unreachable = digitalTwinAt(Effect.succeed("http://127.0.0.1:9"))

layer(gatewayLayer({ digitalTwin: unreachable }), { excludeTestServices: true, timeout: "90 seconds" })("digital twin down", (it) => {
  it.effect("unreachable is 502 naming the operation", () =>
    Effect.gen(function*() {
      const reply = yield* call("GET", "/api/grid/dso-alto-garda/wind/trend", { token: yield* tokenOf("dso-operator") })
      expect(reply.status).toBe(502)
      expect(reply.body.detail).toMatch(/^Digital twin call wind_trend failed: The digital twin is unreachable/)
    }))
})

const noToken = digitalTwinAt(Effect.promise(() => listening), { secret: "wrong" })

layer(gatewayLayer({ digitalTwin: noToken }), { excludeTestServices: true, timeout: "90 seconds" })("no token for the twin", (it) => {
  it.effect("the identity provider refusing the gateway's client is 503 naming the operation", () =>
    Effect.gen(function*() {
      const reply = yield* call("GET", "/api/grid/dso-alto-garda/summary", { token: yield* tokenOf("dso-operator") })
      expect(reply.status).toBe(503)
      expect(reply.body.detail).toMatch(/^No credentials for the digital twin \(summary\)/)
    }))
})
