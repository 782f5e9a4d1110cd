/**
 * The service does what its OpenAPI document says (`ContractCheck`: every status documented with
 * its body, secured operations answer 401 without a token, no 5xx), for a user and for an admin;
 * every operation is served under `/api` too; malformed input is a 4xx that names the problem.
 *
 * No operation is skipped: `POST /chat` streams only for a valid request, and every probe of the
 * check (no token, `{}`, invalid JSON, deep JSON) is refused with a documented JSON error before
 * anything streams.
 */
import { expect, layer } from "@effect/vitest"
import { ContractCheck } from "@rec/platform"
import * as Effect from "effect/Effect"
import { baseUrl, call, serviceLayer, tokens } from "./helpers.js"

const jsonEndpoints = ["/chat", "/admin/uploads", "/admin/ingest", "/admin/training-materials/sync"]

layer(serviceLayer(), { excludeTestServices: true, timeout: "120 seconds" })("contract", (it) => {
  it.effect("answers only what /openapi.json documents, for a user and for an admin", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      const url = yield* baseUrl
      for (const name of ["participant", "admin"]) {
        const token = yield* mint(name)
        const report = yield* Effect.promise(() => ContractCheck.check({ baseUrl: url, token }))
        expect(report.findings, name).toEqual([])
        expect(report.requests).toBeGreaterThanOrEqual(35)
      }
    }), { timeout: 120_000 })

  it.effect("serves every operation under /api as at the root", () =>
    Effect.gen(function*() {
      const token = yield* Effect.flatMap(tokens, (mint) => mint("participant"))
      const spec = (yield* call("GET", "/openapi.json")).body as { paths: Record<string, Record<string, unknown>> }
      for (const [template, item] of Object.entries(spec.paths)) {
        for (const method of Object.keys(item)) {
          const upper = method.toUpperCase() as "GET" | "POST" | "DELETE"
          const path = template.replace("{id}", "0b8e3c1a-7f6d-4e2b-9a5c-3d1f0e9b8a7c")
          const root = yield* call(upper, path, { token, json: upper === "POST" ? {} : undefined })
          const api = yield* call(upper, `/api${path}`, { token, json: upper === "POST" ? {} : undefined })
          expect(api.status, `${upper} /api${path}`).toBe(root.status)
          expect(api.body, `${upper} /api${path}`).toEqual(root.body)
        }
      }
      const unknown = yield* call("GET", "/api/nothing-here", { token })
      expect(unknown.status).toBe(404)
      expect(unknown.body).toEqual({ detail: "No route for GET /api/nothing-here" })
      expect((yield* call("GET", "/api/health")).body).toEqual({ status: "ok", service: "assistant", version: "0.1.0" })
      expect((yield* call("GET", "/ready")).body).toEqual({ status: "ready", checks: { database: "ok" } })
    }))

  it.effect("a body nesting 10,000 levels is a 400 on every JSON endpoint, and the service keeps answering", () =>
    Effect.gen(function*() {
      const token = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
      for (const path of jsonEndpoints) {
        for (const body of ["[".repeat(10_000) + "]".repeat(10_000), "{\"message\":".repeat(10_000) + "1" + "}".repeat(10_000)]) {
          const reply = yield* call("POST", path, { token, text: { body, contentType: "application/json" } })
          expect(reply.status, path).toBe(400)
          expect(reply.body, path).toEqual({
            detail: "The request body nests arrays and objects deeper than 64 levels, the most this service accepts"
          })
        }
      }
      expect((yield* call("GET", "/health")).status).toBe(200)
    }))

  it.effect("names what is wrong in malformed requests", () =>
    Effect.gen(function*() {
      const token = yield* Effect.flatMap(tokens, (mint) => mint("participant"))
      const notJson = yield* call("POST", "/chat", { token, text: { body: "{\"message\": ", contentType: "application/json" } })
      expect(notJson.status).toBe(400)
      expect((notJson.body as { detail: string }).detail).toMatch(/^The request body is not valid JSON/)

      const badId = yield* call("GET", "/conversations/not-a-uuid/messages", { token })
      expect(badId.status).toBe(400)
      expect((badId.body as { issues: ReadonlyArray<{ path: ReadonlyArray<string> }> }).issues[0].path).toEqual(["id"])

      const badPage = yield* call("GET", "/conversations?limit=5000&offset=-1", { token })
      expect(badPage.status).toBe(400)
      expect((badPage.body as { issues: ReadonlyArray<unknown> }).issues).toHaveLength(2)

      const badScope = yield* call("GET", "/attachments?scope=everyone", { token })
      expect(badScope.status).toBe(400)

      const badContext = yield* call("POST", "/chat", { token, json: { message: "hi", context: { page: 3, data: "x" } } })
      expect(badContext.status).toBe(400)

      const expired = yield* call("GET", "/user", { token: yield* Effect.flatMap(tokens, (mint) => mint("participant", { expired: true })) })
      expect(expired.status).toBe(401)
      expect(expired.body).toEqual({ detail: "Token has expired" })
    }))
})
