import { describe, expect, layer } from "@effect/vitest"
import { ServiceKit } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as HttpClient from "@effect/platform/HttpClient"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import { ExampleApi, ItemsLive } from "./fixtures/ExampleApi.js"
import { body, get } from "./fixtures/http.js"

const service = { name: "example", version: "1.2.3" }

/** A dependency whose state the test flips. */
const database = { up: true }

describe("health and readiness", () => {
  layer(
    ServiceKit.serveTest(ExampleApi, {
      service,
      port: 0,
      readiness: {
        checks: {
          database: Effect.suspend(() => database.up ? Effect.void : Effect.fail(new Error("connection refused"))),
          broker: Effect.void,
          slow: Effect.suspend(() => database.up ? Effect.void : Effect.never)
        },
        timeout: "200 millis"
      }
    }).pipe(Layer.provide(ItemsLive)),
    { excludeTestServices: true }
  )("with readiness checks", (it) => {
    it.effect("/health reports liveness with the service's name and version", () =>
      Effect.gen(function*() {
        const answer = yield* get("/health")
        expect(answer.status).toBe(200)
        expect(answer.json).toEqual({ status: "ok", service: "example", version: "1.2.3" })
      }))

    it.effect("/ready is 200 when every check passes and 503 naming the failed ones otherwise", () =>
      Effect.gen(function*() {
        database.up = true
        const ready = yield* get("/ready")
        expect(ready.status).toBe(200)
        expect(ready.json).toEqual({ status: "ready", checks: { database: "ok", broker: "ok", slow: "ok" } })
        database.up = false
        const notReady = yield* get("/ready")
        expect(notReady.status).toBe(503)
        expect(body(notReady)).toMatchObject({
          status: "not_ready",
          checks: { database: "failed", broker: "ok", slow: "timeout" }
        })
        // The cause stays in the logs.
        expect(notReady.text).not.toContain("connection refused")
        database.up = true
        // /health does not depend on the checks.
        expect((yield* get("/health")).status).toBe(200)
      }))
  })

  const broker = { up: false }
  layer(
    ServiceKit.serveTest(ExampleApi, {
      service,
      port: 0,
      readiness: {
        checks: { database: Effect.suspend(() => database.up ? Effect.void : Effect.fail(new Error("down"))) },
        optional: { broker: Effect.suspend(() => broker.up ? Effect.void : Effect.fail(new Error("unreachable"))) }
      }
    }).pipe(Layer.provide(ItemsLive)),
    { excludeTestServices: true }
  )("with optional checks", (it) => {
    it.effect("a failed optional check is 200 degraded; a failed required one still 503", () =>
      Effect.gen(function*() {
        database.up = true
        broker.up = false
        const degraded = yield* get("/ready")
        expect(degraded.status).toBe(200)
        expect(degraded.json).toEqual({ status: "degraded", checks: { database: "ok", broker: "failed" } })
        broker.up = true
        expect((yield* get("/ready")).json).toEqual({ status: "ready", checks: { database: "ok", broker: "ok" } })
        database.up = false
        broker.up = false
        const down = yield* get("/ready")
        expect(down.status).toBe(503)
        expect(down.json).toEqual({ status: "not_ready", checks: { database: "failed", broker: "failed" } })
        database.up = true
      }))
  })

  layer(
    ServiceKit.serveTest(ExampleApi, { service, port: 0, health: false, readiness: false }).pipe(
      Layer.provide(ItemsLive)
    ),
    { excludeTestServices: true }
  )("turned off", (it) => {
    it.effect("neither route exists", () =>
      Effect.gen(function*() {
        expect((yield* get("/health")).status).toBe(404)
        expect((yield* get("/ready")).status).toBe(404)
      }))
  })

  layer(
    ServiceKit.serveTest(ExampleApi, { service, port: 0, health: { path: "/healthz" }, readiness: { checks: {}, path: "/readyz" } })
      .pipe(Layer.provide(ItemsLive)),
    { excludeTestServices: true }
  )("moved", (it) => {
    it.effect("answers on the given paths", () =>
      Effect.gen(function*() {
        expect((yield* get("/healthz")).status).toBe(200)
        expect((yield* get("/readyz")).json).toEqual({ status: "ready", checks: {} })
      }))
  })
})

describe("two test servers in one layer graph", () => {
  class Other extends Context.Tag("test/OtherServer")<Other, HttpClient.HttpClient>() {}
  // A service whose tests start another service next to it (the grid gateway and the digital
  // twin): each test client must reach its own server.
  const other = Layer.effect(Other, HttpClient.HttpClient).pipe(
    Layer.provide(ServiceKit.serveTest(ExampleApi, { service: { name: "other", version: "9.9.9" }, port: 0 }).pipe(Layer.provide(ItemsLive)))
  )
  layer(
    ServiceKit.serveTest(ExampleApi, { service, port: 0 }).pipe(Layer.provide(ItemsLive), Layer.provideMerge(other)),
    { excludeTestServices: true }
  )("each client its own server", (it) => {
    it.effect("the served layer's client reaches it, the other one the other", () =>
      Effect.gen(function*() {
        expect((yield* get("/health")).json).toMatchObject({ service: "example" })
        const otherClient = yield* Other
        const answer = yield* Effect.flatMap(otherClient.get("/health"), (r) => r.json).pipe(Effect.scoped)
        expect(answer).toMatchObject({ service: "other" })
      }))
  })
})
