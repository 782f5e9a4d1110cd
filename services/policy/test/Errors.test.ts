/**
 * What goes wrong gets a 4xx with `{detail}` saying what, never a 500: missing, malformed,
 * expired and forged tokens; wrong types, unknown enum values, missing fields, invalid JSON and
 * huge bodies on every decision endpoint.
 */
import { expect, layer } from "@effect/vitest"
import { DevIdp } from "@rec/dev-idp"
import * as Effect from "effect/Effect"
import { post, serviceLayer, tokens } from "./helpers.js"

const endpoints: ReadonlyArray<[string, Record<string, unknown>]> = [
  ["/authorize", { resource: { type: "dataset", id: "d", attributes: { access_level: "open" } }, action: { name: "read" } }],
  ["/dataset/access", { dataset_id: "d", access_level: "open", action: "read" }],
  ["/dataset/filters", { dataset_id: "d", access_level: "open" }],
  ["/pipeline/transition", { pipeline_id: "p", from_state: "pending", to_state: "started" }],
  ["/dt/access", { dt_id: "t", action: "read" }],
  ["/dt/event", { dt_id: "t", event_type: "state_changed", simulation_state: null }],
  ["/userdata/access", { resource_type: "dashboard", resource_id: "r", owner_id: "o", action: "read" }]
]

/** Bodies that are wrong in some way for the endpoint whose valid body is `valid`. */
const malformed = (valid: Record<string, unknown>): ReadonlyArray<[string, unknown]> => {
  const [firstKey] = Object.keys(valid)
  const { [firstKey!]: _, ...missing } = valid
  return [
    ["missing field", missing],
    ["wrong type", { ...valid, [firstKey!]: 42 }],
    ["null", null],
    ["array", [valid]],
    ["string", "read"],
    ["empty object", {}]
  ]
}

layer(serviceLayer({ env: { POLICY_MAX_BODY_BYTES: "65536" } }), { excludeTestServices: true, timeout: "60 seconds" })("errors", (it) => {
  it.effect("every authorization endpoint: 401 {detail} without a valid token, with a challenge", () =>
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const mint = yield* tokens
      const viewer = yield* mint("viewer")
      const expired = yield* mint("viewer", { expired: true })
      const tampered = viewer.slice(0, viewer.lastIndexOf(".") + 1) + "c2lnbmF0dXJl"
      const unsigned = [
        Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url"),
        Buffer.from(JSON.stringify({ sub: "x", iss: idp.issuer, exp: 9_999_999_999 })).toString("base64url"),
        ""
      ].join(".")
      const withoutSub = yield* idp.sign({ sub: undefined })
      const cases: ReadonlyArray<[string, Record<string, string>, string]> = [
        ["no token", {}, "Missing bearer token"],
        ["expired", { authorization: `Bearer ${expired}` }, "Token has expired"],
        ["bad signature", { authorization: `Bearer ${tampered}` }, "Token signature is invalid"],
        ["alg none", { authorization: `Bearer ${unsigned}` }, "Token algorithm \"none\" is not allowed"],
        ["not a JWT", { authorization: "Bearer hello" }, "Malformed token"],
        ["no sub", { authorization: `Bearer ${withoutSub}` }, "Token is missing the required claim \"sub\""],
        ["basic auth", { authorization: "Basic dXNlcjpwYXNz" }, "Invalid authorization header format"]
      ]
      for (const [path, body] of endpoints) {
        for (const [name, headers, detail] of cases) {
          const reply = yield* post(path, { headers, json: body })
          expect(reply.status, `${path} ${name}`).toBe(401)
          expect(reply.body, `${path} ${name}`).toEqual({ detail })
          expect(reply.headers["www-authenticate"], `${path} ${name}`).toMatch(/^Bearer/)
        }
      }
      // Authentication runs before the body is read: an unauthenticated bad body is still 401.
      expect((yield* post("/dataset/access", { text: { body: "{", contentType: "application/json" } })).status).toBe(401)
    }))

  it.effect("malformed bodies are 400 {detail} on every decision endpoint", () =>
    Effect.gen(function*() {
      const token = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
      for (const [path, valid] of endpoints) {
        expect((yield* post(path, { token, json: valid })).status, `${path} valid`).toBe(200)
        for (const [name, body] of malformed(valid)) {
          const reply = yield* post(path, { token, json: body })
          expect(reply.status, `${path} ${name}`).toBe(400)
          expect(reply.body, `${path} ${name}`).toEqual({ detail: expect.stringMatching(/^Invalid request/), issues: expect.any(Array) })
        }
        for (const text of ["{", "{\"dataset_id\": }", "nul", "\u0000"]) {
          const reply = yield* post(path, { token, text: { body: text, contentType: "application/json" } })
          expect(reply.status, `${path} ${JSON.stringify(text)}`).toBe(400)
          expect(reply.body).toEqual({ detail: expect.stringMatching(/^The request body is not valid JSON: .* at line 1, column \d+/) })
        }
      }
    }))

  it.effect("unknown enum values and wrong nested types name the field", () =>
    Effect.gen(function*() {
      const token = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
      const cases: ReadonlyArray<[string, unknown, string]> = [
        ["/dataset/access", { dataset_id: "d", access_level: "secret" }, "access_level"],
        ["/dataset/access", { dataset_id: "d", access_level: "open", action: "delete" }, "action"],
        ["/dt/access", { dt_id: "t", action: "fly" }, "action"],
        ["/userdata/access", { resource_type: "photo", resource_id: "r", owner_id: "o" }, "resource_type"],
        ["/userdata/access", { resource_type: "dashboard", resource_id: "r", owner_id: "o", shared_with: "bob" }, "shared_with"],
        ["/authorize", { resource: { type: "dataset", id: "d", attributes: [] }, action: { name: "read" } }, "attributes"],
        ["/authorize", { resource: { type: "dataset", id: "d" }, action: "read" }, "action"],
        ["/dt/event", { dt_id: "t", event_type: "x", simulation_state: 3 }, "simulation_state"]
      ]
      for (const [path, body, field] of cases) {
        const reply = yield* post(path, { token, json: body })
        expect(reply.status, `${path} ${field}`).toBe(400)
        expect((reply.body as { detail: string }).detail, `${path} ${field}`).toContain(field)
      }
      // Every invalid field is reported, not only the first.
      const both = yield* post("/dataset/access", { token, json: { dataset_id: 1, access_level: "secret" } })
      expect((both.body as { detail: string }).detail).toContain("dataset_id")
      expect((both.body as { detail: string }).detail).toContain("access_level")
      // Unknown fields are ignored.
      const extra = yield* post("/dataset/access", { token, json: { dataset_id: "d", access_level: "open", color: "red" } })
      expect(extra.status).toBe(200)
    }))

  it.effect("huge bodies are refused with 413 before they are parsed", () =>
    Effect.gen(function*() {
      const token = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
      const huge = { dataset_id: "d", access_level: "open", padding: "x".repeat(200_000) }
      for (const path of ["/dataset/access", "/authorize", "/mqtt/acl", "/mqtt/user"]) {
        const reply = yield* post(path, { token, json: huge })
        expect(reply.status, path).toBe(413)
        expect(reply.body, path).toEqual({ detail: expect.stringContaining("larger than 65536 bytes") })
      }
    }))

  it.effect("unknown routes and methods are 404 {detail}", () =>
    Effect.gen(function*() {
      const token = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
      expect(yield* post("/dataset/delete", { token, json: {} })).toMatchObject({
        status: 404,
        body: { detail: "No route for POST /dataset/delete" }
      })
    }))
})
