/**
 * The simulator does what its OpenAPI document says (issue 11 point 8): operations declare the
 * bearer security they enforce (Swagger sends the token), every answered status is documented
 * with its body, and nesting bombs are a 400 (point 1).
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { expect, layer } from "@effect/vitest"
import { DevIdp } from "@rec/dev-idp"
import { ContractCheck, ContractFuzz } from "@rec/platform"
import { DigitalTwinApi } from "../src/Api.js"
import { Effect, Layer } from "effect"
import * as SimulatorServer from "../src/simulator/Server.js"

const SimulatorLive = Layer.unwrapEffect(
  Effect.map(DevIdp, (idp) => SimulatorServer.layerTest().pipe(Layer.provide(SimulatorServer.verifierFor(idp.issuer))))
).pipe(Layer.provideMerge(DevIdp.layerTest))

const baseUrl = HttpServer.addressFormattedWith((address) => Effect.succeed(address.replace("0.0.0.0", "127.0.0.1")))

layer(SimulatorLive, { excludeTestServices: true, timeout: "60 seconds" })("simulator OpenAPI document", (it) => {
  it.effect("every operation requires the bearer token it enforces", () =>
    Effect.gen(function*() {
      const url = yield* baseUrl
      const spec = yield* Effect.promise(async () => (await fetch(`${url}/openapi.json`)).json() as Promise<{
        security: Array<Record<string, unknown>>
        paths: Record<string, Record<string, { security?: Array<unknown> }>>
      }>)
      expect(spec.security).toEqual([{ bearer: [] }])
      const operations = Object.values(spec.paths).flatMap((item) => Object.values(item))
      expect(operations.length).toBe(27)
      // No operation opts out of the contract-wide requirement with `security: []`.
      expect(operations.filter((o) => o.security !== undefined)).toEqual([])
    }))

  it.effect("answers only what it documents, for a service token and without one", () =>
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const token = yield* idp.mint("svc-grid")
      const url = yield* baseUrl
      const report = yield* Effect.promise(() => ContractCheck.check({ baseUrl: url, token }))
      expect(report.findings).toEqual([])
      expect(report.requests).toBeGreaterThan(80)
      const participant = yield* Effect.promise(() =>
        ContractCheck.check({ baseUrl: url, token, pathValue: (name) => (name === "network_id" ? "dso-alto-garda" : "x") })
      )
      expect(participant.findings).toEqual([])
    }))

  it.effect("a nesting bomb is a 400, not a 500", () =>
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const token = yield* idp.mint("svc-grid")
      const url = yield* baseUrl
      const status = yield* Effect.promise(async () => {
        const response = await fetch(`${url}/grid/dso-alto-garda/values/risks`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: `{"payload": ${"[".repeat(10_000)}${"]".repeat(10_000)}}`
        })
        return [response.status, await response.json()] as const
      })
      expect(status).toEqual([400, { detail: "The request body nests arrays and objects deeper than 64 levels, the most this service accepts" }])
    }))

  it.effect("contract fuzzing: no 5xx, every 4xx says what is wrong, still healthy", () =>
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const token = yield* idp.mint("svc-grid")
      const url = yield* baseUrl
      const report = yield* Effect.promise(() => ContractFuzz.run(DigitalTwinApi, { baseUrl: url, token, runs: 3, seed: 11 }))
      expect(report.findings).toEqual([])
      expect(report.endpoints).toBe(27)
      expect(report.requests).toBeGreaterThan(500)
    }), 120_000)
})
