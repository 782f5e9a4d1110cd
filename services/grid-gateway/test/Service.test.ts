/**
 * The served service (issue 14 points 1, 3, 6): docs under /api, the contract check of the kit
 * with no findings, /health and /ready, `/api/me`, the proxy header named by `JWT_HEADER_NAME`
 * (the original's middleware ignored it), CORS for the local dashboard by default.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as HttpServer from "@effect/platform/HttpServer"
import { Api } from "@rec/grid-gateway-service"
import { ContractCheck, ContractFuzz } from "@rec/platform"
import * as Effect from "effect/Effect"
import { call, gatewayLayer, tokenOf } from "./support/Gateway.js"

const baseUrl = HttpServer.addressFormattedWith((address) => Effect.succeed(address.replace("0.0.0.0", "127.0.0.1")))

layer(gatewayLayer(), { excludeTestServices: true, timeout: "120 seconds" })("the served gateway", (it) => {
  it.effect("answers only what /api/openapi.json documents, with and without a token", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf("dso-operator")
      const url = yield* baseUrl
      // Path parameters: a network the operator owns, a rule id that exists nowhere.
      const pathValue = (name: string) => (name === "network_id" ? "dso-alto-garda" : "00000000-0000-4000-8000-000000000000")
      const report = yield* Effect.promise(() =>
        ContractCheck.check({ baseUrl: url, token, openapiPath: "/api/openapi.json", pathValue })
      )
      expect(report.findings).toEqual([])
      expect(report.requests).toBeGreaterThan(40)
    }))

  it.effect("contract fuzzing: no 5xx, every 4xx says what is wrong, still healthy", () =>
    Effect.gen(function*() {
      const url = yield* baseUrl
      // A DSO operator (grid routes of their network, their rules) and a service (grid.admin).
      for (const name of ["dso-operator", "svc-grid"]) {
        const token = yield* tokenOf(name)
        const report = yield* Effect.promise(() => ContractFuzz.run(Api, { baseUrl: url, token, runs: 3, seed: 14 }))
        expect(report.findings, name).toEqual([])
        expect(report.endpoints).toBe(22)
      }
    }), 180_000)

  it.effect("docs at /api/docs, /api/redoc, /api/openapi.json; /health and /ready", () =>
    Effect.gen(function*() {
      const spec = yield* call("GET", "/api/openapi.json")
      expect(spec.status).toBe(200)
      expect(spec.body.info).toMatchObject({ title: "Grid operator gateway", version: "0.1.0" })
      const paths = Object.keys(spec.body.paths).sort()
      expect(paths).toEqual([
        "/api/alert-rules",
        "/api/alert-rules/{id}",
        "/api/grid/{network_id}/filters",
        "/api/grid/{network_id}/heat/alert-distribution",
        "/api/grid/{network_id}/heat/map",
        "/api/grid/{network_id}/heat/trend",
        "/api/grid/{network_id}/risks",
        "/api/grid/{network_id}/risks-now",
        "/api/grid/{network_id}/shapes",
        "/api/grid/{network_id}/substations/map",
        "/api/grid/{network_id}/summary",
        "/api/grid/{network_id}/tile-index",
        "/api/grid/{network_id}/trendline",
        "/api/grid/{network_id}/wind/alert-distribution",
        "/api/grid/{network_id}/wind/bosco",
        "/api/grid/{network_id}/wind/map",
        "/api/grid/{network_id}/wind/trend",
        "/api/me",
        "/api/notification-settings"
      ])
      expect(Object.keys(spec.body.paths["/api/alert-rules"]).sort()).toEqual(["get", "post"])
      expect(Object.keys(spec.body.paths["/api/alert-rules/{id}"]).sort()).toEqual(["delete", "patch"])
      expect(Object.keys(spec.body.paths["/api/notification-settings"]).sort()).toEqual(["get", "put"])
      const docs = yield* call("GET", "/api/docs")
      expect(docs.status).toBe(200)
      expect(String(docs.body)).toContain("swagger")
      expect((yield* call("GET", "/api/redoc")).status).toBe(200)
      expect((yield* call("GET", "/health")).body).toEqual({ status: "ok", service: "grid-gateway", version: "0.1.0" })
      expect((yield* call("GET", "/ready")).body).toEqual({ status: "ready", checks: { database: "ok", policies: "ok", mqtt: "ok" } })
      // An unknown path is a 404, not the original's 401.
      expect((yield* call("GET", "/api/nothing")).status).toBe(404)
    }))

  describe("/api/me", () => {
    it.effect("identity, locale and network of a DSO operator", () =>
      Effect.gen(function*() {
        const me = yield* call("GET", "/api/me", { token: yield* tokenOf("dso-operator"), headers: { "accept-language": "it-IT,it;q=0.9,en;q=0.5" } })
        expect(me.status).toBe(200)
        expect(me.body).toEqual({
          user: {
            sub: "29f9d00f-a686-482e-b4bd-7b84e56869c1",
            email: "davide.moretti@alto-garda-distribuzione.example",
            name: "Davide Moretti",
            preferred_username: "dso-operator",
            locale: "it",
            network_id: "dso-alto-garda",
            organization: "dso-alto-garda",
            network_ids: ["dso-alto-garda"]
          }
        })
        const noHeader = yield* call("GET", "/api/me", { token: yield* tokenOf("dso-operator") })
        expect(noHeader.body.user.locale).toBeNull()
      }))

    it.effect("the locale claim wins over Accept-Language; a token without e-mail is fine", () =>
      Effect.gen(function*() {
        const token = yield* tokenOf("dso-operator-valsugana", { claims: { locale: "en-GB", email: null } })
        const me = yield* call("GET", "/api/me", { token, headers: { "accept-language": "it" } })
        expect(me.status).toBe(200)
        expect(me.body.user).toMatchObject({ locale: "en", email: null, network_id: "dso-valsugana" })
      }))

    it.effect("a member of two DSOs: the first network in token order, and both", () =>
      Effect.gen(function*() {
        const me = yield* call("GET", "/api/me", { token: yield* tokenOf("dso-multi") })
        expect(me.body.user).toMatchObject({ network_id: "dso-alto-garda", network_ids: ["dso-alto-garda", "dso-valsugana"] })
      }))

    it.effect("403 with a clear body without a DSO organization; 401 without a token", () =>
      Effect.gen(function*() {
        for (const name of ["participant", "nogroup", "admin"]) {
          const reply = yield* call("GET", "/api/me", { token: yield* tokenOf(name) })
          expect(reply.status, name).toBe(403)
          expect(reply.body, name).toEqual({ detail: "DSO organization membership required: your account belongs to no DSO organization" })
        }
        const service = yield* call("GET", "/api/me", { token: yield* tokenOf("svc-grid") })
        expect(service.body).toEqual({ detail: "DSO organization membership required: service accounts operate no network" })
        expect((yield* call("GET", "/api/me")).status).toBe(401)
      }))
  })

  it.effect("CORS: the local dashboard (port 3006) by default", () =>
    Effect.gen(function*() {
      const preflight = yield* call("OPTIONS" as "GET", "/api/me", {
        headers: { origin: "http://localhost:3006", "access-control-request-method": "GET", "access-control-request-headers": "authorization" }
      })
      expect(preflight.headers["access-control-allow-origin"]).toBe("http://localhost:3006")
      const other = yield* call("OPTIONS" as "GET", "/api/me", {
        headers: { origin: "https://elsewhere.example", "access-control-request-method": "GET" }
      })
      // Never the foreign origin (the browser then refuses the answer).
      expect(other.headers["access-control-allow-origin"]).not.toBe("https://elsewhere.example")
    }))

  it.effect("tokens of another audience or an ID token are refused", () =>
    Effect.gen(function*() {
      const foreign = yield* call("GET", "/api/me", { token: yield* tokenOf("dso-operator", { audience: "another-service" }) })
      expect(foreign.status).toBe(401)
      expect(foreign.body).toEqual({ detail: "Invalid audience" })
      const id = yield* call("GET", "/api/me", { token: yield* tokenOf("dso-operator", { kind: "id" }) })
      expect(id.status).toBe(401)
    }))
})

layer(
  gatewayLayer({ env: { JWT_HEADER_NAME: "X-Forwarded-Access-Token", CORS_ORIGINS: "https://grid.dso.example" } }),
  { excludeTestServices: true, timeout: "120 seconds" }
)("JWT_HEADER_NAME and CORS_ORIGINS set", (it) => {
  it.effect("the named header carries the token, the default one no longer does; Authorization always does", () =>
    Effect.gen(function*() {
      const token = yield* tokenOf("dso-operator")
      expect((yield* call("GET", "/api/me", { headers: { "x-forwarded-access-token": token } })).status).toBe(200)
      expect((yield* call("GET", "/api/me", { headers: { "x-forwarded-access-token": `Bearer ${token}` } })).status).toBe(200)
      expect((yield* call("GET", "/api/me", { headers: { "x-auth-request-access-token": token } })).status).toBe(401)
      expect((yield* call("GET", "/api/me", { token })).status).toBe(200)
      const preflight = yield* call("OPTIONS" as "GET", "/api/me", {
        headers: {
          origin: "https://grid.dso.example",
          "access-control-request-method": "GET",
          "access-control-request-headers": "x-forwarded-access-token"
        }
      })
      expect(preflight.headers["access-control-allow-origin"]).toBe("https://grid.dso.example")
      expect(preflight.headers["access-control-allow-headers"]).toContain("x-forwarded-access-token")
    }))
})
