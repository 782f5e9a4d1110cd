/**
 * The service does what its OpenAPI document says (issue 11 point 8), and no JSON endpoint can be
 * made to fail by nesting (point 1): every status it answers is documented with its body, the
 * operations that need a token declare it, and 10,000 nested arrays or objects are a 400.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { expect, layer } from "@effect/vitest"
import { Api } from "@rec/policy-service"
import { ContractCheck, ContractFuzz } from "@rec/platform"
import * as Effect from "effect/Effect"
import { call, post, serviceLayer, tokens } from "./helpers.js"

const jsonEndpoints = [
  "/authorize",
  "/dataset/access",
  "/dataset/filters",
  "/pipeline/transition",
  "/dt/access",
  "/dt/event",
  "/userdata/access",
  "/mqtt/user",
  "/mqtt/acl",
  "/mqtt/superuser"
]

const baseUrl = HttpServer.addressFormattedWith((address) => Effect.succeed(address.replace("0.0.0.0", "127.0.0.1")))

layer(serviceLayer(), { excludeTestServices: true, timeout: "60 seconds" })("contract", (it) => {
  it.effect("answers only what /openapi.json documents, with and without a token", () =>
    Effect.gen(function*() {
      const token = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
      const url = yield* baseUrl
      const report = yield* Effect.promise(() => ContractCheck.check({ baseUrl: url, token }))
      expect(report.findings).toEqual([])
      expect(report.requests).toBeGreaterThan(40)
    }))

  it.effect("documents the MQTT bodies in both encodings, 413 where there is a body, no 400 without input", () =>
    Effect.gen(function*() {
      const spec = (yield* call("GET", "/openapi.json")).body as {
        info: { version: string }
        paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> }; responses: Record<string, unknown> }>>
      }
      expect((yield* call("GET", "/health")).body).toMatchObject({ version: spec.info.version })
      for (const path of ["/mqtt/user", "/mqtt/acl", "/mqtt/superuser"]) {
        expect(Object.keys(spec.paths[path].post.requestBody?.content ?? {}).sort(), path)
          .toEqual(["application/json", "application/x-www-form-urlencoded"])
      }
      for (const [path, item] of Object.entries(spec.paths)) {
        for (const [method, operation] of Object.entries(item)) {
          expect(operation.responses["413"] !== undefined, `${method} ${path} 413`).toBe(operation.requestBody !== undefined)
        }
      }
      expect(spec.paths["/health"].get.responses["400"]).toBeUndefined()
      expect(spec.paths["/ready"].get.responses["400"]).toBeUndefined()
    }))

  it.effect("a body nesting 5,000 or 10,000 levels is a 400 saying so on every JSON endpoint", () =>
    Effect.gen(function*() {
      const token = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
      for (const depth of [5_000, 10_000]) {
        const bodies = [
          "[".repeat(depth) + "]".repeat(depth),
          "{\"a\":".repeat(depth) + "1" + "}".repeat(depth),
          `{"dataset_id": ${"[".repeat(depth)}${"]".repeat(depth)}, "access_level": "open"}`
        ]
        for (const path of jsonEndpoints) {
          for (const body of bodies) {
            const reply = yield* post(path, { token, text: { body, contentType: "application/json" } })
            expect(reply.status, `${path} ${depth}`).toBe(400)
            expect(reply.body, path).toEqual({
              detail: "The request body nests arrays and objects deeper than 64 levels, the most this service accepts"
            })
          }
        }
      }
      // The service is still answering.
      expect((yield* call("GET", "/health")).status).toBe(200)
    }))
})

layer(serviceLayer({ env: { RATE_LIMIT_RELOAD: "1/1m", RATE_LIMIT_AUTHORIZE: "3/1m" } }), { excludeTestServices: true, timeout: "60 seconds" })(
  "rate limits (spec section 8, recommended)",
  (it) => {
    it.effect("/authorize and /reload answer 429 with Retry-After past their limits, per client, and document it", () =>
      Effect.gen(function*() {
        const admin = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
        const viewer = yield* Effect.flatMap(tokens, (mint) => mint("viewer"))
        const question = { resource: { type: "dataset", id: "d", attributes: { access_level: "open" } }, action: { name: "read" } }
        const statuses: Array<number> = []
        for (let i = 0; i < 4; i++) statuses.push((yield* post("/authorize", { token: admin, json: question })).status)
        expect(statuses).toEqual([200, 200, 200, 429])
        const refused = yield* post("/authorize", { token: admin, json: question })
        expect(refused.status).toBe(429)
        expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1)
        expect((refused.body as { detail: string }).detail).toMatch(/^Too many requests/)
        // Another client is not affected.
        expect((yield* post("/authorize", { token: viewer, json: question })).status).toBe(200)
        expect((yield* post("/reload", { token: admin })).status).toBe(200)
        expect((yield* post("/reload", { token: admin })).status).toBe(429)
        const spec = (yield* call("GET", "/openapi.json")).body as {
          paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
        }
        expect(spec.paths["/authorize"].post.responses["429"]).toBeDefined()
        expect(spec.paths["/reload"].post.responses["429"]).toBeDefined()
        expect(spec.paths["/health"].get.responses["429"]).toBeDefined()
        expect(spec.paths["/dataset/access"].post.responses["429"]).toBeUndefined()
      }))
  }
)

layer(serviceLayer({ env: { RATE_LIMIT_AUTHORIZE: "off", RATE_LIMIT_HEALTH: "off" } }), { excludeTestServices: true, timeout: "120 seconds" })(
  "contract fuzzing",
  (it) => {
    it.effect("valid and mutated requests from the contract: no 5xx, every 4xx says what is wrong, still healthy", () =>
      Effect.gen(function*() {
        const token = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
        const url = yield* baseUrl
        const report = yield* Effect.promise(() => ContractFuzz.run(Api, { baseUrl: url, token, runs: 5, seed: 7 }))
        expect(report.findings).toEqual([])
        expect(report.endpoints).toBe(13)
        expect(report.requests).toBeGreaterThan(250)
        // Valid samples are answered (most are allowed or denied with 200), mutations refused.
        expect(report.statuses["2xx"]).toBeGreaterThan(40)
        expect(report.statuses["4xx"]).toBeGreaterThan(200)
      }))
  }
)
