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
    ServiceKit.serveTest(ExampleApi, { service, port: 0, maxBodySize: 1024 }).pipe(
      Layer.provide(ItemsLive),
      Layer.provide(CaptureLogs)
    ),
    { excludeTestServices: true }
  )("platform style", (it) => {
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

    it.effect("a typed error keeps its status and fields and gains the request id", () =>
      Effect.gen(function*() {
        const notFound = yield* get("/items/7")
        expect(notFound.status).toBe(404)
        expect(notFound.json).toEqual({
          _tag: "NotFound",
          message: "Item 7 not found",
          request_id: notFound.headers["x-request-id"]
        })
        const unprocessable = yield* postJson("/items", { name: "taken", quantity: 1 })
        expect(unprocessable.status).toBe(422)
        expect(unprocessable.json).toMatchObject({
          _tag: "UnprocessableEntity",
          message: "Name taken",
          details: { field: "name" }
        })
      }))

    it.effect("typed clients still decode the error class", () =>
      Effect.gen(function*() {
        const client = yield* HttpApiClient.make(ExampleApi)
        const error = yield* Effect.flip(client.items.get({ path: { id: 7 } }))
        expect(error._tag).toBe("NotFound")
        const item = yield* client.items.get({ path: { id: 1 } })
        expect(item.name).toBe("first")
      }))

    it.effect("a payload that does not match the contract is a 400 naming every invalid field", () =>
      Effect.gen(function*() {
        const answer = yield* postJson("/items", { name: "  ", quantity: -1 })
        expect(answer.status).toBe(400)
        const error = body(answer)
        expect(error._tag).toBe("HttpApiDecodeError")
        expect(error.request_id).toBe(answer.headers["x-request-id"])
        const issues = error.issues as Array<{ path: Array<string>; message: string }>
        expect(issues.map((i) => i.path.join(".")).sort()).toEqual(["name", "quantity"])
        expect(String(error.message)).toContain("name")
        const missing = yield* postJson("/items", {})
        expect(missing.status).toBe(400)
        expect((body(missing).issues as Array<{ path: Array<string> }>).map((i) => i.path[0]).sort())
          .toEqual(["name", "quantity"])
        const badPath = yield* get("/items/abc")
        expect(badPath.status).toBe(400)
        expect(body(badPath)._tag).toBe("HttpApiDecodeError")
      }))

    it.effect("a body that is not JSON is a 400, not a 500", () =>
      Effect.gen(function*() {
        const answer = yield* send(
          HttpClientRequest.post("/items").pipe(HttpClientRequest.bodyText("{not json", "application/json"))
        )
        expect(answer.status).toBe(400)
        expect(body(answer)).toMatchObject({ _tag: "BadRequest", request_id: answer.headers["x-request-id"] })
      }))

    it.effect("a body over the size limit is a 413", () =>
      Effect.gen(function*() {
        const big = JSON.stringify({ name: "x".repeat(2048), quantity: 1 })
        const answer = yield* send(HttpClientRequest.post("/items").pipe(HttpClientRequest.bodyText(big, "application/json")))
        expect(answer.status).toBe(413)
        expect(body(answer)).toMatchObject({
          _tag: "PayloadTooLarge",
          message: "The request body is larger than 1024 bytes",
          request_id: answer.headers["x-request-id"]
        })
        // Just under the limit is fine.
        const small = JSON.stringify({ name: "x".repeat(900), quantity: 1 })
        expect((yield* send(HttpClientRequest.post("/items").pipe(HttpClientRequest.bodyText(small, "application/json")))).status)
          .toBe(201)
      }))

    it.effect("a defect is a generic 500 with the request id; the cause is logged, never sent", () =>
      Effect.gen(function*() {
        logged.length = 0
        const answer = yield* get("/boom", { "x-request-id": "req-boom-1" })
        expect(answer.status).toBe(500)
        expect(answer.json).toEqual({
          _tag: "InternalServerError",
          message: "Internal server error",
          request_id: "req-boom-1"
        })
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
        expect(body(answer)).toMatchObject({ _tag: "NotFound", message: "No route for GET /nope" })
      }))
  })

  layer(
    ServiceKit.serveTest(ExampleApi, { service, port: 0, errorStyle: "detail" }).pipe(Layer.provide(ItemsLive)),
    { excludeTestServices: true }
  )("detail style (FastAPI-compatible bodies)", (it) => {
    it.effect("the kit's own bodies are {detail}", () =>
      Effect.gen(function*() {
        const decode = yield* postJson("/items", { name: "" })
        expect(decode.status).toBe(400)
        expect(Object.keys(body(decode))).toEqual(["detail"])
        expect(String(body(decode).detail)).toContain("quantity")
        const defect = yield* get("/boom")
        expect(defect.status).toBe(500)
        expect(defect.json).toEqual({ detail: "Internal server error" })
        expect((yield* get("/nope")).json).toEqual({ detail: "Not Found" })
        // The request id is still on the response header.
        expect(defect.headers["x-request-id"]).toMatch(uuid)
      }))
  })
})
