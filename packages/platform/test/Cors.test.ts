import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { describe, expect, layer } from "@effect/vitest"
import { ServiceKit } from "@rec/platform"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ExampleApi, ItemsLive } from "./fixtures/ExampleApi.js"
import { get, send } from "./fixtures/http.js"

const service = { name: "example", version: "1.2.3" }

const withEnv = (env: Record<string, string>) =>
  ServiceKit.serveTest(ExampleApi, { service, port: 0 }).pipe(
    Layer.provide(ItemsLive),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
  )

const preflight = (origin: string, requestHeaders = "authorization,content-type") =>
  send(
    HttpClientRequest.make("OPTIONS")("/items").pipe(
      HttpClientRequest.setHeaders({
        origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": requestHeaders
      })
    )
  )

describe("CORS", () => {
  layer(withEnv({ CORS_ORIGINS: "https://dashboard.example, https://admin.example" }), {
    excludeTestServices: true
  })("with CORS_ORIGINS listing two origins", (it) => {
    it.effect("preflight from an allowed origin: that origin, credentials, an explicit header list", () =>
      Effect.gen(function*() {
        const answer = yield* preflight("https://admin.example", "authorization,x-evil-header")
        expect(answer.status).toBe(204)
        expect(answer.headers["access-control-allow-origin"]).toBe("https://admin.example")
        expect(answer.headers["access-control-allow-credentials"]).toBe("true")
        expect(answer.headers["access-control-allow-methods"]).toContain("POST")
        const allowed = answer.headers["access-control-allow-headers"].split(",")
        // Listed, never reflected from the request.
        expect(allowed).not.toContain("x-evil-header")
        expect(allowed).toEqual(expect.arrayContaining([
          "authorization",
          "content-type",
          "x-request-id",
          "traceparent",
          "x-auth-request-access-token"
        ]))
        expect(answer.headers["access-control-max-age"]).toBe("600")
      }))

    it.effect("preflight from another origin gets no allow-origin", () =>
      Effect.gen(function*() {
        const answer = yield* preflight("https://evil.example")
        expect(answer.headers["access-control-allow-origin"]).toBeUndefined()
      }))

    it.effect("actual requests carry allow-origin and expose X-Request-Id", () =>
      Effect.gen(function*() {
        const answer = yield* get("/items/1", { origin: "https://dashboard.example" })
        expect(answer.status).toBe(200)
        expect(answer.headers["access-control-allow-origin"]).toBe("https://dashboard.example")
        expect(answer.headers["access-control-expose-headers"]).toBe("x-request-id")
        expect(answer.headers["vary"]).toContain("Origin")
        // Also on error responses, so the browser can read the error body.
        const notFound = yield* get("/items/9", { origin: "https://dashboard.example" })
        expect(notFound.status).toBe(404)
        expect(notFound.headers["access-control-allow-origin"]).toBe("https://dashboard.example")
      }))
  })

  layer(withEnv({ CORS_ORIGINS: "*", CORS_ALLOW_CREDENTIALS: "true" }), { excludeTestServices: true })(
    "with CORS_ORIGINS=*",
    (it) => {
      it.effect("any origin, never with credentials", () =>
        Effect.gen(function*() {
          const answer = yield* preflight("https://anywhere.example")
          expect(answer.headers["access-control-allow-origin"]).toBe("*")
          expect(answer.headers["access-control-allow-credentials"]).toBeUndefined()
        }))
    }
  )

  layer(withEnv({}), { excludeTestServices: true })("without CORS_ORIGINS", (it) => {
    it.effect("no CORS headers at all (same origin only)", () =>
      Effect.gen(function*() {
        const answer = yield* get("/items/1", { origin: "https://dashboard.example" })
        expect(answer.status).toBe(200)
        expect(Object.keys(answer.headers).filter((h) => h.startsWith("access-control-"))).toEqual([])
        // A preflight is just an unknown route then.
        expect((yield* preflight("https://dashboard.example")).status).toBe(404)
      }))
  })
})
