/**
 * Configurations other than the default: anonymous callers on `/authorize`
 * (`POLICY_ALLOW_ANONYMOUS=true`), a start without loadable policies (fail closed, not ready),
 * and the explicit fail-open opt-in.
 */
import { afterAll, expect, layer } from "@effect/vitest"
import { Engines } from "@rec/policy"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { call, post, serviceLayer, tokens } from "./helpers.js"

const dataset = (level: string, action = "read") => ({
  resource: { type: "dataset", id: "d", attributes: { access_level: level } },
  action: { name: action }
})

layer(serviceLayer({ env: { POLICY_ALLOW_ANONYMOUS: "true" } }), { excludeTestServices: true, timeout: "60 seconds" })(
  "POLICY_ALLOW_ANONYMOUS=true",
  (it) => {
    it.effect("/authorize decides for the anonymous subject: the anonymous column of the matrix", () =>
      Effect.gen(function*() {
        const authorize = (body: unknown) => Effect.map(post("/authorize", { json: body }), (r) => [r.status, r.body])
        expect(yield* authorize(dataset("open"))).toEqual([200, expect.objectContaining({
          allowed: true,
          reason: "open datasets are publicly readable"
        })])
        expect(yield* authorize(dataset("internal"))).toEqual([200, expect.objectContaining({
          allowed: false,
          reason: "anonymous access denied for non-open datasets"
        })])
        expect(yield* authorize(dataset("restricted", "write"))).toEqual([200, expect.objectContaining({ allowed: false })])
        expect(yield* authorize(dataset("open", "write"))).toEqual([200, expect.objectContaining({
          allowed: false,
          reason: "anonymous access is limited to reading open datasets"
        })])
        expect(yield* authorize({ resource: { type: "topic", id: "rec/telemetry/a/b/readings" }, action: { name: "subscribe" } }))
          .toEqual([200, expect.objectContaining({ allowed: false, reason: "anonymous subject not allowed" })])
        expect(yield* authorize({ resource: { type: "pipeline", id: "p" }, action: { name: "read" } }))
          .toEqual([200, expect.objectContaining({ allowed: false, reason: "anonymous access denied" })])
      }))

    it.effect("an invalid token is still 401, and every other endpoint still needs a token", () =>
      Effect.gen(function*() {
        expect((yield* post("/authorize", { headers: { authorization: "Bearer x.y.z" }, json: dataset("open") })).status).toBe(401)
        expect((yield* post("/dataset/access", { json: { dataset_id: "d", access_level: "open" } })).status).toBe(401)
        // A token still makes the caller who they are.
        const viewer = yield* Effect.flatMap(tokens, (mint) => mint("viewer", { scopes: ["dataset.query"] }))
        const reply = yield* post("/authorize", { token: viewer, json: dataset("internal") })
        expect(reply.body).toMatchObject({ allowed: true })
      }))
  }
)

layer(serviceLayer(), { excludeTestServices: true, timeout: "60 seconds" })("POLICY_ALLOW_ANONYMOUS unset", (it) => {
  it.effect("/authorize without a token is 401", () =>
    Effect.gen(function*() {
      const reply = yield* post("/authorize", { json: dataset("open") })
      expect(reply).toMatchObject({ status: 401, body: { detail: "Missing bearer token" } })
    }))
})

const empty = fs.mkdtempSync(path.join(os.tmpdir(), "rec-policy-empty-"))
fs.writeFileSync(path.join(empty, "broken.rego"), "package rec.dataset.access\n\nallow if {\n")
afterAll(() => fs.rmSync(empty, { recursive: true, force: true }))

layer(
  serviceLayer({ engine: Engines.embeddedWith({ directory: empty, watch: false }) }),
  { excludeTestServices: true, timeout: "60 seconds" }
)("no loadable policies", (it) => {
  it.effect("the service starts but is not ready, and decisions fail closed with 503", () =>
    Effect.gen(function*() {
      const health = yield* call("GET", "/health")
      expect(health).toMatchObject({
        status: 200,
        body: { status: "unhealthy", policies_loaded: false, details: { policy_count: 0 } }
      })
      const ready = yield* call("GET", "/ready")
      expect(ready.status).toBe(503)
      expect(ready.body).toMatchObject({
        status: "unhealthy",
        policies_loaded: false,
        details: { last_load_error: { problems: [{ file: "broken.rego" }] } }
      })
      const token = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
      const reply = yield* post("/dataset/access", { token, json: { dataset_id: "d", access_level: "open" } })
      expect(reply).toMatchObject({ status: 503, body: { detail: "Policies unavailable: no policies are loaded" } })
      const mqtt = yield* post("/mqtt/acl", { token, json: { topic: "a", acc: 1 } })
      expect(mqtt).toMatchObject({ status: 503, body: { ok: false } })
    }))
})

layer(
  serviceLayer({ engine: Engines.embeddedWith({ directory: empty, watch: false, failOpen: true }) }),
  { excludeTestServices: true, timeout: "60 seconds" }
)("POLICY_FAIL_OPEN=true", (it) => {
  it.effect("allows while nothing is loaded, and says why", () =>
    Effect.gen(function*() {
      const token = yield* Effect.flatMap(tokens, (mint) => mint("viewer", { scopes: [] }))
      const reply = yield* post("/dataset/access", { token, json: { dataset_id: "d", access_level: "restricted", action: "write" } })
      expect(reply.body).toMatchObject({
        allowed: true,
        reason: "no policies are loaded; allowed because POLICY_FAIL_OPEN=true"
      })
      // Readiness does not pretend the policies are there.
      expect((yield* call("GET", "/ready")).status).toBe(503)
    }))
})
