import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { describe, expect, it, layer } from "@effect/vitest"
import { FastRoutes, ServiceKit, Tracing } from "@rec/platform"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { ExampleApi, ItemsLive } from "./fixtures/ExampleApi.js"
import { body, send } from "./fixtures/http.js"
import { eventually } from "./fixtures/Recorder.js"

const service = { name: "example", version: "1.2.3" }

/** How often the fast route ran and what it did. */
const calls = { answered: 0, declined: 0 }

/** `POST /items`: answers names starting with "fast", declines the rest, dies on "boom". */
const Fast = FastRoutes.layer(Effect.succeed([
  FastRoutes.endpoint(ExampleApi, "items", "create", (request, info) =>
    Effect.suspend(() => {
      const raw = request.bodyIfRead
      const payload = raw === undefined ? undefined : JSON.parse(raw.toString("utf8")) as { name?: unknown }
      if (payload?.name === "boom") return Effect.die(new Error("fast route bug"))
      if (typeof payload?.name !== "string" || !payload.name.startsWith("fast")) {
        calls.declined++
        return Effect.succeed(undefined)
      }
      calls.answered++
      return Effect.succeed(HttpServerResponse.unsafeJson({ id: 99, name: payload.name, request_id: info.requestId }, { status: 201 }))
    }))
]))

const postJson = (payload: unknown, headers: Record<string, string> = {}) =>
  send(HttpClientRequest.post("/items").pipe(HttpClientRequest.bodyUnsafeJson(payload), HttpClientRequest.setHeaders(headers)))

/** The access log lines' fields. */
const logged: Array<Record<string, unknown>> = []
const CaptureLogs = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ annotations }) => {
    logged.push(Object.fromEntries(HashMap.toEntries(annotations)))
  })
)

const served = ServiceKit.serveTest(ExampleApi, { service, port: 0 }).pipe(
  Layer.provide(ItemsLive),
  Layer.provide(Fast),
  Layer.provide(CaptureLogs),
  Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["CORS_ORIGINS", "https://app.example"]]))))
)

describe("fast routes", () => {
  layer(served, { excludeTestServices: true })("without tracing", (it) => {
    it.effect("a fast route answers with the kit's headers; when it declines, the contract's handler does", () =>
      Effect.gen(function*() {
        calls.answered = calls.declined = 0
        const fast = yield* postJson({ name: "fast one", quantity: 1 }, { "x-request-id": "fast-1", origin: "https://app.example" })
        expect(fast.status).toBe(201)
        expect(fast.json).toEqual({ id: 99, name: "fast one", request_id: "fast-1" })
        expect(fast.headers["x-request-id"]).toBe("fast-1")
        expect(fast.headers["access-control-allow-origin"]).toBe("https://app.example")
        const declined = yield* postJson({ name: "slow", quantity: 1 })
        expect(declined).toMatchObject({ status: 201, json: { id: 2, name: "slow" } })
        // Declined requests get the contract's answers, errors included.
        const invalid = yield* postJson({ name: "", quantity: -1 })
        expect(invalid.status).toBe(400)
        expect(String(body(invalid).detail)).toMatch(/^Invalid request \(2 problems\)/)
        expect(calls).toEqual({ answered: 1, declined: 2 })
        // The access log says which path answered.
        const lines = logged.filter((l) => l["http.path"] === "/items")
        expect(lines.map((l) => [l["http.status"], l["http.fast_route"]])).toEqual([[201, true], [201, undefined], [400, undefined]])
      }))

    it.effect("a defect in a fast route is the kit's 500", () =>
      Effect.gen(function*() {
        const answer = yield* postJson({ name: "boom", quantity: 1 })
        expect(answer.status).toBe(500)
        expect(String(body(answer).detail)).toMatch(/^Internal server error; quote request id \S+ when reporting it$/)
      }))

    it.effect("a body over the limit never reaches the fast route", () =>
      Effect.gen(function*() {
        calls.answered = calls.declined = 0
        const big = yield* postJson({ name: `fast${"x".repeat(11 * 1024 * 1024)}`, quantity: 1 })
        expect(big.status).toBe(413)
        expect(calls).toEqual({ answered: 0, declined: 0 })
      }))
  })

  const exporter = new InMemorySpanExporter()
  layer(served.pipe(Layer.provide(Tracing.layerSpanProcessor(service, new SimpleSpanProcessor(exporter)))), {
    excludeTestServices: true
  })("with tracing", (it) => {
    it.effect("requests take the generic path, which gives them their server span", () =>
      Effect.gen(function*() {
        calls.answered = calls.declined = 0
        const answer = yield* postJson({ name: "fast two", quantity: 1 })
        expect(answer).toMatchObject({ status: 201, json: { id: 2, name: "fast two" } })
        expect(calls).toEqual({ answered: 0, declined: 0 })
        const span = yield* eventually(() => exporter.getFinishedSpans().find((s) => s.attributes["http.route"] === "/items"))
        expect(span.attributes["http.response.status_code"]).toBe(201)
      }))
  })

  it("only endpoints with a static path can have one", () => {
    expect(() => FastRoutes.endpoint(ExampleApi, "items", "get", () => Effect.succeed(undefined))).toThrow(/path parameters/)
    expect(() => FastRoutes.endpoint(ExampleApi, "items", "nope", () => Effect.succeed(undefined))).toThrow(/No endpoint/)
  })
})
