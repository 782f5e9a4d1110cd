/**
 * The decision endpoints' fast routes (`Fast`) against the contract's handlers: the first call
 * with a new token goes through the contract's handler (the token is verified), the next one
 * through the fast route (the token is known); both answer the same, with the same audit record.
 * Whatever the fast routes decline (errors, unknown tokens) is the contract's handler's answer;
 * the other test files exercise the endpoints with fast routes on, as in production.
 */
import { afterAll, describe, expect, layer } from "@effect/vitest"
import { DevIdp } from "@rec/dev-idp"
import { Engines } from "@rec/policy"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { accessSince, auditSince, logs, post, serviceLayer } from "./helpers.js"

const bodies: ReadonlyArray<readonly [string, unknown]> = [
  ["/authorize", { resource: { type: "dataset", id: "d", attributes: { access_level: "internal" } }, action: { name: "write" } }],
  ["/authorize", { resource: { type: "pipeline", id: "p" }, action: { name: "transition", context: { from_state: "pending", to_state: "started" } } }],
  ["/authorize", { resource: { type: "dt", id: "t" }, action: { name: "simulate" }, context: { tenant: "it" } }],
  ["/authorize", { resource: { type: "topic", id: "rec/telemetry/a/b/readings" }, action: { name: "subscribe" } }],
  ["/authorize", { resource: { type: "userdata", id: "u", attributes: { owner_id: "o", resource_type: "profile" } }, action: { name: "read" } }],
  ["/dataset/access", { dataset_id: "d", access_level: "restricted", action: "admin" }],
  ["/dataset/filters", { dataset_id: "d", access_level: "internal" }],
  ["/pipeline/transition", { pipeline_id: "p", from_state: "running", to_state: "completed" }],
  ["/dt/access", { dt_id: "t" }],
  ["/dt/event", { dt_id: "t", event_type: "simulation", simulation_state: "running" }],
  ["/userdata/access", { resource_type: "dashboard", resource_id: "r", owner_id: "o", shared_with_groups: ["admins"] }]
]

/** The audit record without what differs between two calls of the same question. */
const stable = (record: { readonly fields: Readonly<Record<string, unknown>> }) => {
  const { cached: _cached, latency_ms: _latency, ...rest } = record.fields
  return rest
}

/** Calls twice with a fresh token; returns both replies, access log lines and audit records. */
const twice = (path: string, json: unknown, user = "admin") =>
  Effect.gen(function*() {
    const idp = yield* DevIdp
    const token = yield* Effect.orDie(idp.mint(user))
    const from = logs.length
    const headers = { "x-request-id": `fast-${path}`, "x-source-service": "fast-test" }
    const first = yield* post(path, { token, json, headers })
    const second = yield* post(path, { token, json, headers })
    return { first, second, access: accessSince(from), audit: logs.slice(from).filter((r) => String(r.message).startsWith("policy_")) }
  })

describe("fast routes", () => {
  layer(serviceLayer(), { excludeTestServices: true, timeout: "60 seconds" })("with the repository's policies", (it) => {
    it.effect("every decision endpoint: the same answer and audit record from the contract's handler and the fast route", () =>
      Effect.gen(function*() {
        for (const [path, json] of bodies) {
          const { access, audit, first, second } = yield* twice(path, json)
          expect(first.status, path).toBe(200)
          expect(second.status, path).toBe(first.status)
          expect(second.body, path).toEqual(first.body)
          expect(second.headers["content-type"], path).toBe(first.headers["content-type"])
          expect(second.headers["x-request-id"], path).toBe(first.headers["x-request-id"])
          expect(access.map((l) => l.fields["http.fast_route"]), path).toEqual([undefined, true])
          expect(audit.map((r) => r.message), path).toEqual(["policy_decision", "policy_decision"])
          expect(stable(audit[1]), path).toEqual(stable(audit[0]))
          expect(audit[1].fields.cached, path).toBe(true)
        }
      }))

    it.effect("declined: unknown resource types, invalid bodies and unknown tokens are the contract's answers", () =>
      Effect.gen(function*() {
        const unknownType = yield* twice("/authorize", { resource: { type: "printer", id: "p" }, action: { name: "print" } })
        expect([unknownType.first.status, unknownType.second.status]).toEqual([400, 400])
        expect(unknownType.second.body).toEqual({ detail: "Unknown resource type: printer" })
        const invalid = yield* twice("/dataset/access", { dataset_id: "d", access_level: "secret" })
        expect(invalid.second.status).toBe(400)
        expect(invalid.second.body).toEqual(invalid.first.body)
        const forged = yield* post("/dt/access", { headers: { authorization: "Bearer a.b.c" }, json: { dt_id: "t" } })
        expect(forged.status).toBe(401)
        expect([...unknownType.access, ...invalid.access].map((l) => l.fields["http.fast_route"]))
          .toEqual([undefined, undefined, undefined, undefined])
      }))
  })

  const empty = fs.mkdtempSync(path.join(os.tmpdir(), "rec-policy-fast-empty-"))
  afterAll(() => fs.rmSync(empty, { recursive: true, force: true }))
  layer(serviceLayer({ engine: Engines.embeddedWith({ directory: empty, watch: false }) }), {
    excludeTestServices: true,
    timeout: "60 seconds"
  })("without policies", (it) => {
    it.effect("a failed decision is the same 503 {detail} and policy_error record on both paths", () =>
      Effect.gen(function*() {
        const { access, audit, first, second } = yield* twice("/dt/access", { dt_id: "t" })
        expect(first.status).toBe(503)
        expect(second.status).toBe(503)
        expect(second.body).toEqual(first.body)
        expect(access.map((l) => l.fields["http.fast_route"])).toEqual([undefined, true])
        expect(audit.map((r) => r.message)).toEqual(["policy_error", "policy_error"])
        expect(stable(audit[1])).toEqual(stable(audit[0]))
      }))
  })

  layer(serviceLayer({ fastRoutes: false }), { excludeTestServices: true, timeout: "60 seconds" })("turned off", (it) => {
    it.effect("every request is the contract's handler's", () =>
      Effect.gen(function*() {
        const { access, second } = yield* twice("/dt/access", { dt_id: "t" })
        expect(second.status).toBe(200)
        expect(access.map((l) => l.fields["http.fast_route"])).toEqual([undefined, undefined])
        expect(auditSince(0).length).toBeGreaterThan(0)
      }))
  })
})
