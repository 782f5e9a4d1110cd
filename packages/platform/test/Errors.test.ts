import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { describe, expect, layer } from "@effect/vitest"
import { ServiceKit } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { ExampleApi, ItemsLive } from "./fixtures/ExampleApi.js"
import { body, get, send } from "./fixtures/http.js"

const service = { name: "example", version: "1.2.3" }

/** Log lines written while serving, to check what the kit logs about failures. */
const logged: Array<string> = []
const CaptureLogs = Logger.replace(
  Logger.defaultLogger,
  Logger.map(Logger.logfmtLogger, (line) => {
    logged.push(line)
  })
)

const postJson = (path: string, payload: unknown) =>
  send(HttpClientRequest.post(path).pipe(HttpClientRequest.bodyUnsafeJson(payload)))

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

describe("request ids and error bodies", () => {
  layer(
    ServiceKit.serveTest(ExampleApi, { service, port: 0, maxBodySize: 64 * 1024 }).pipe(
      Layer.provide(ItemsLive),
      Layer.provide(CaptureLogs)
    ),
    { excludeTestServices: true }
  )("one error body", (it) => {
    it.effect("generates a request id, echoes it and gives it to handlers", () =>
      Effect.gen(function*() {
        const answer = yield* get("/context")
        expect(answer.headers["x-request-id"]).toMatch(uuid)
        expect(body(answer).request_id).toBe(answer.headers["x-request-id"])
      }))

    it.effect("keeps a well-formed incoming X-Request-Id, replaces a dangerous one", () =>
      Effect.gen(function*() {
        const kept = yield* get("/context", { "x-request-id": "gw-42.abc:7" })
        expect(kept.headers["x-request-id"]).toBe("gw-42.abc:7")
        expect(body(kept).request_id).toBe("gw-42.abc:7")
        for (const bad of ["a b", "x".repeat(129), "{\"json\":1}"]) {
          const replaced = yield* get("/context", { "x-request-id": bad })
          expect(replaced.headers["x-request-id"]).toMatch(uuid)
        }
      }))

    it.effect("a typed error keeps its status and its body is {detail, issues?}", () =>
      Effect.gen(function*() {
        const notFound = yield* get("/items/7")
        expect(notFound.status).toBe(404)
        expect(notFound.json).toEqual({ detail: "Item 7 not found" })
        const unprocessable = yield* postJson("/items", { name: "taken", quantity: 1 })
        expect(unprocessable.status).toBe(422)
        expect(unprocessable.json).toEqual({ detail: "Name taken", issues: [{ path: ["name"], message: "is taken" }] })
      }))

    it.effect("typed clients still decode the error class", () =>
      Effect.gen(function*() {
        const client = yield* HttpApiClient.make(ExampleApi)
        const error = yield* Effect.flip(client.items.get({ path: { id: 7 } }))
        expect(error._tag).toBe("NotFound")
        expect(error).toMatchObject({ detail: "Item 7 not found" })
        const item = yield* client.items.get({ path: { id: 1 } })
        expect(item.name).toBe("first")
      }))

    it.effect("a payload that does not match the contract is a 400 naming every invalid field", () =>
      Effect.gen(function*() {
        const answer = yield* postJson("/items", { name: "  ", quantity: -1 })
        expect(answer.status).toBe(400)
        const error = body(answer)
        expect(Object.keys(error).sort()).toEqual(["detail", "issues"])
        const issues = error.issues as Array<{ path: Array<string>; message: string }>
        expect(issues.map((i) => i.path.join(".")).sort()).toEqual(["name", "quantity"])
        expect(String(error.detail)).toMatch(/^Invalid request \(2 problems\): /)
        expect(String(error.detail)).toContain("quantity: Expected a positive number")
        const missing = yield* postJson("/items", {})
        expect(missing.status).toBe(400)
        expect(missing.json).toEqual({
          detail: "Invalid request (2 problems): name: is missing; quantity: is missing",
          issues: [{ path: ["name"], message: "is missing" }, { path: ["quantity"], message: "is missing" }]
        })
        const badPath = yield* get("/items/abc")
        expect(badPath.status).toBe(400)
        expect(String(body(badPath).detail)).toContain("id: ")
      }))

    it.effect("a null or wrongly typed body is named plainly, not as a dump of the type", () =>
      Effect.gen(function*() {
        const nullBody = yield* send(HttpClientRequest.post("/items").pipe(HttpClientRequest.bodyText("null", "application/json")))
        expect(nullBody.status).toBe(400)
        expect(nullBody.json).toEqual({
          detail: "Invalid request: Expected an object, actual null",
          issues: [{ path: [], message: "Expected an object, actual null" }]
        })
        const huge = yield* postJson("/items", { name: ["x".repeat(5000)], quantity: 1 })
        expect(huge.status).toBe(400)
        const message = (body(huge).issues as Array<{ message: string }>)[0].message
        expect(message.length).toBeLessThanOrEqual(240)
        expect(message).toMatch(/^Expected .*, actual \["x+…$/)
      }))

    it.effect("a body that is not JSON is a 400 that says where it breaks", () =>
      Effect.gen(function*() {
        const answer = yield* send(
          HttpClientRequest.post("/items").pipe(HttpClientRequest.bodyText("{\n  \"name\": \"a\",\n  quantity: 1\n}", "application/json"))
        )
        expect(answer.status).toBe(400)
        expect(answer.json).toEqual({
          detail: "The request body is not valid JSON: unexpected \"q\" (expected a property name in double quotes) at line 3, column 3 (offset 19)"
        })
        const cut = yield* send(HttpClientRequest.post("/items").pipe(HttpClientRequest.bodyText("{\"name\": \"a", "application/json")))
        expect(String(body(cut).detail)).toContain("unterminated string (it starts here) at line 1, column 10")
      }))

    it.effect("a body nesting deeper than the limit is a 400 before decoding, as the body or inside a field", () =>
      Effect.gen(function*() {
        const limit = "The request body nests arrays and objects deeper than 64 levels, the most this service accepts"
        for (const depth of [5_000, 10_000]) {
          const arrays = yield* send(
            HttpClientRequest.post("/items").pipe(HttpClientRequest.bodyText("[".repeat(depth) + "]".repeat(depth), "application/json"))
          )
          expect(arrays.status).toBe(400)
          expect(arrays.json).toEqual({ detail: limit })
          const objects = yield* send(
            HttpClientRequest.post("/items").pipe(
              HttpClientRequest.bodyText("{\"a\":".repeat(depth) + "1" + "}".repeat(depth), "application/json")
            )
          )
          expect(objects.status).toBe(400)
          const inField = yield* send(
            HttpClientRequest.post("/items").pipe(
              HttpClientRequest.bodyText(`{"name": ${"[".repeat(depth)}${"]".repeat(depth)}, "quantity": 1}`, "application/json")
            )
          )
          expect(inField).toMatchObject({ status: 400, json: { detail: limit } })
        }
        // Brackets inside strings do not count; 64 levels are accepted (and then decoded).
        const inString = yield* postJson("/items", { name: "[".repeat(10_000), quantity: 1 })
        expect(inString.status).toBe(201)
        const atLimit = yield* send(
          HttpClientRequest.post("/items").pipe(HttpClientRequest.bodyText("[".repeat(64) + "]".repeat(64), "application/json"))
        )
        expect(atLimit.status).toBe(400)
        expect(String(body(atLimit).detail)).toBe("Invalid request: Expected an object, actual [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]".slice(0, 600))
      }))

    it.effect("a body over the size limit is a 413", () =>
      Effect.gen(function*() {
        const big = JSON.stringify({ name: "x".repeat(70_000), quantity: 1 })
        const answer = yield* send(HttpClientRequest.post("/items").pipe(HttpClientRequest.bodyText(big, "application/json")))
        expect(answer.status).toBe(413)
        expect(answer.json).toEqual({ detail: "The request body is larger than 65536 bytes, the most this service accepts" })
        // Just under the limit is fine.
        const small = JSON.stringify({ name: "x".repeat(65_000), quantity: 1 })
        expect((yield* send(HttpClientRequest.post("/items").pipe(HttpClientRequest.bodyText(small, "application/json")))).status)
          .toBe(201)
      }))

    it.effect("a defect is a generic 500 naming the request id; the cause is logged, never sent", () =>
      Effect.gen(function*() {
        logged.length = 0
        const answer = yield* get("/boom", { "x-request-id": "req-boom-1" })
        expect(answer.status).toBe(500)
        expect(answer.json).toEqual({ detail: "Internal server error; quote request id req-boom-1 when reporting it" })
        expect(answer.text).not.toContain("hunter2")
        expect(answer.text).not.toContain("ExampleApi.ts")
        const line = logged.find((l) => l.includes("Unhandled failure"))
        expect(line).toBeDefined()
        expect(line).toContain("hunter2")
      }))

    it.effect("an unknown route is a JSON 404", () =>
      Effect.gen(function*() {
        const answer = yield* get("/nope")
        expect(answer.status).toBe(404)
        expect(answer.json).toEqual({ detail: "No route for GET /nope" })
      }))
  })
})
