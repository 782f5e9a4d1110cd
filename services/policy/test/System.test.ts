/**
 * Health, readiness, the admin-only reload (a broken policy file keeps the last good set and is
 * reported), the decision cache seen from `/ready`, request ids, and the API docs. The service
 * runs on a copy of the repository's policies so the test can break them.
 */
import { Validator } from "@seriousme/openapi-schema-validator"
import { afterAll, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { call, post, repoPolicies, serviceLayer, tokens } from "./helpers.js"

const directory = fs.mkdtempSync(path.join(os.tmpdir(), "rec-policy-service-"))
fs.cpSync(repoPolicies, directory, { recursive: true })
afterAll(() => fs.rmSync(directory, { recursive: true, force: true }))

const moduleCount = (dir: string): number =>
  fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".rego") && !f.endsWith("_test.rego")).length

layer(serviceLayer({ directory }), { excludeTestServices: true, timeout: "60 seconds" })("system", (it) => {
  it.effect("health and readiness report the loaded policies and the cache", () =>
    Effect.gen(function*() {
      const health = yield* call("GET", "/health")
      expect(health.status).toBe(200)
      expect(health.body).toMatchObject({
        status: "healthy",
        version: "0.1.0",
        policies_loaded: true,
        details: { policy_count: moduleCount(directory) }
      })
      expect((health.body as { details: { packages: Array<string> } }).details.packages).toContain("rec.dataset.access")
      const ready = yield* call("GET", "/ready")
      expect(ready.status).toBe(200)
      expect(ready.body).toMatchObject({
        status: "healthy",
        policies_loaded: true,
        details: { policy_count: moduleCount(directory), cache: { hits: expect.any(Number), misses: expect.any(Number) } }
      })
    }))

  it.effect("the cache key ignores request ids: repeated questions are hits", () =>
    Effect.gen(function*() {
      const token = yield* Effect.flatMap(tokens, (mint) => mint("viewer"))
      const cacheOf = Effect.map(call("GET", "/ready"), (r) => (r.body as { details: { cache: { hits: number; misses: number } } }).details.cache)
      const before = yield* cacheOf
      for (const id of ["req-a", "req-b", "req-c"]) {
        const reply = yield* post("/dt/access", {
          token,
          headers: { "x-request-id": id },
          json: { dt_id: "cache-test", action: "read" }
        })
        // The request id is echoed in the body and the header.
        expect(reply.body).toMatchObject({ allowed: true, request_id: id })
        expect(reply.headers["x-request-id"]).toBe(id)
      }
      const after = yield* cacheOf
      expect(after.misses - before.misses).toBe(1)
      expect(after.hits - before.hits).toBe(2)
      // A fresh token of the same user (other jti, iat, exp) hits the same entry.
      const fresh = yield* Effect.flatMap(tokens, (mint) => mint("viewer", { expiresIn: "2 hours" }))
      yield* post("/dt/access", { token: fresh, json: { dt_id: "cache-test", action: "read" } })
      expect((yield* cacheOf).hits - after.hits).toBe(1)
    }))

  it.effect("reload is for admins only (group admins or scope policy.admin)", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      expect((yield* post("/reload")).status).toBe(401)
      const viewer = yield* post("/reload", { token: yield* mint("viewer") })
      expect(viewer).toMatchObject({
        status: 403,
        body: { detail: "Reloading policies needs the admins group or the policy.admin scope" }
      })
      // A client holding every scope does not make a viewer an admin... unless it holds policy.admin.
      const admin = yield* post("/reload", { token: yield* mint("admin") })
      expect(admin).toMatchObject({
        status: 200,
        body: { status: "success", policy_count: moduleCount(directory) }
      })
      const service = yield* post("/reload", { token: yield* mint("svc-policy", { scopes: ["policy.admin"] }) })
      expect(service.status).toBe(200)
      expect((yield* post("/reload", { token: yield* mint("svc-policy") })).status).toBe(403)
    }))

  it.effect("a broken policy file keeps the last good set and is reported until fixed", () =>
    Effect.gen(function*() {
      const mint = yield* tokens
      const admin = yield* mint("admin")
      const viewer = yield* mint("viewer", { scopes: ["dataset.query"] })
      const file = path.join(directory, "dataset", "access.rego")
      const good = fs.readFileSync(file, "utf8")
      const ask = post("/dataset/access", { token: viewer, json: { dataset_id: "d", access_level: "internal" } })
      expect((yield* ask).body).toMatchObject({ allowed: true })

      fs.writeFileSync(file, good.replace("default allow := false", "default allow := false\n\nallow if {"))
      const failed = yield* post("/reload", { token: admin })
      expect(failed.status).toBe(422)
      expect(failed.body).toMatchObject({
        status: "error",
        policy_count: moduleCount(directory),
        errors: [{ file: "dataset/access.rego", row: expect.any(Number) }]
      })
      expect((failed.body as { detail: string }).detail).toContain("dataset/access.rego")

      // Still answering with the last good policies; never allowing everything.
      expect((yield* ask).body).toMatchObject({ allowed: true })
      const denied = yield* post("/dataset/access", { token: viewer, json: { dataset_id: "d", access_level: "restricted" } })
      expect(denied.body).toMatchObject({ allowed: false })
      const ready = yield* call("GET", "/ready")
      expect(ready.status).toBe(200)
      expect(ready.body).toMatchObject({
        status: "degraded",
        policies_loaded: true,
        details: { last_load_error: { problems: [{ file: "dataset/access.rego" }] } }
      })
      expect((yield* call("GET", "/health")).body).toMatchObject({ status: "degraded" })

      fs.writeFileSync(file, good)
      expect((yield* post("/reload", { token: admin })).status).toBe(200)
      const healthy = yield* call("GET", "/ready")
      expect(healthy.body).toMatchObject({ status: "healthy" })
      expect((healthy.body as { details: Record<string, unknown> }).details.last_load_error).toBeUndefined()
    }))

  it.effect("OpenAPI, Swagger UI and ReDoc are served", () =>
    Effect.gen(function*() {
      const spec = yield* call("GET", "/openapi.json")
      expect(spec.status).toBe(200)
      const validation = yield* Effect.promise(() => new Validator().validate(spec.body as Parameters<Validator["validate"]>[0]))
      expect(validation.errors ?? []).toEqual([])
      expect(validation.valid).toBe(true)
      const paths = Object.keys((spec.body as { paths: Record<string, unknown> }).paths)
      for (const p of ["/authorize", "/dataset/access", "/dataset/filters", "/pipeline/transition", "/dt/access", "/dt/event", "/userdata/access", "/mqtt/user", "/mqtt/acl", "/mqtt/superuser", "/health", "/ready", "/reload"]) {
        expect(paths).toContain(p)
      }
      const docs = yield* call("GET", "/docs")
      expect(docs.status).toBe(200)
      expect(String(docs.body)).toContain("swagger")
      const redoc = yield* call("GET", "/redoc")
      expect(redoc.status).toBe(200)
      expect(String(redoc.body).toLowerCase()).toContain("redoc")
    }))
})
