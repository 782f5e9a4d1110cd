/**
 * The running service does what its OpenAPI document says (`ContractCheck`: every status
 * documented with its body, secured operations answer 401 without a token, no 5xx for empty,
 * invalid or deeply nested bodies), survives generated and mutated requests (`ContractFuzz`), and
 * serves its docs under `/api`.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { expect, layer } from "@effect/vitest"
import { ContractCheck, ContractFuzz } from "@rec/platform"
import * as Effect from "effect/Effect"
import { Api } from "../src/Api.js"
import { call, serviceLayer, token, userToken } from "./support/Harness.js"

const baseUrl = HttpServer.addressFormattedWith((address) => Effect.succeed(address.replace("0.0.0.0", "127.0.0.1")))

layer(serviceLayer(), { excludeTestServices: true, timeout: "90 seconds" })("contract", (it) => {
  it.effect("answers only what /api/openapi.json documents, with an admin's, a user's or no token", () =>
    Effect.gen(function*() {
      const url = yield* baseUrl
      for (const bearer of [yield* token("svc-flexibility"), yield* userToken("participant")]) {
        const report = yield* Effect.promise(() => ContractCheck.check({ baseUrl: url, token: bearer, openapiPath: "/api/openapi.json" }))
        expect(report.findings).toEqual([])
        expect(report.requests).toBeGreaterThanOrEqual(20)
      }
    }))

  it.effect("generated and mutated requests never get a 5xx or an answer without a detail (ContractFuzz)", () =>
    Effect.gen(function*() {
      const url = yield* baseUrl
      for (const bearer of [yield* token("svc-flexibility"), yield* userToken("participant")]) {
        const report = yield* Effect.promise(() => ContractFuzz.run(Api, { baseUrl: url, token: bearer, runs: 5, seed: 15 }))
        expect(report.findings).toEqual([])
        expect(report.endpoints).toBe(9)
        expect(report.statuses["4xx"]).toBeGreaterThan(50)
      }
    }), { timeout: 120_000 })

  it.effect("serves the docs under /api and the kit's health and readiness", () =>
    Effect.gen(function*() {
      const spec = (yield* call("GET", "/api/openapi.json")).body as { info: { version: string }; paths: Record<string, unknown> }
      expect(Object.keys(spec.paths).sort()).toEqual([
        "/api/commitments",
        "/api/commitments/export",
        "/api/commitments/pending",
        "/api/commitments/{id}",
        "/api/commitments/{id}/settle",
        "/api/suggestions",
        "/api/suggestions/{id}/respond"
      ])
      expect((yield* call("GET", "/api/docs")).status).toBe(200)
      expect((yield* call("GET", "/health")).body).toEqual({ status: "ok", service: "flexibility", version: spec.info.version })
      expect((yield* call("GET", "/ready")).body).toMatchObject({ status: "ready", checks: { database: "ok", policies: "ok" } })
    }))
})
