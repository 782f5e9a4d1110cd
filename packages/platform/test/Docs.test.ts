import { Validator } from "@seriousme/openapi-schema-validator"
import { describe, expect, layer } from "@effect/vitest"
import { Docs, ServiceKit } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ExampleApi, ItemsLive } from "./fixtures/ExampleApi.js"
import { body, get } from "./fixtures/http.js"

const service = { name: "example", version: "1.2.3" }

describe("API documentation", () => {
  layer(ServiceKit.serveTest(ExampleApi, { service, port: 0 }).pipe(Layer.provide(ItemsLive)), {
    excludeTestServices: true
  })("at the root", (it) => {
    it.effect("/openapi.json is a valid OpenAPI 3.1 document of the contract", () =>
      Effect.gen(function*() {
        const answer = yield* get("/openapi.json")
        expect(answer.status).toBe(200)
        expect(answer.headers["content-type"]).toContain("application/json")
        const spec = body(answer)
        const validator = new Validator()
        const result = yield* Effect.promise(() => validator.validate(spec))
        expect(result.errors).toBeUndefined()
        expect(result.valid).toBe(true)
        expect(validator.version).toBe("3.1")
        expect(spec.info).toEqual({ title: "Example API", version: "1.2.3" })
        const paths = spec.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>
        expect(Object.keys(paths).sort()).toEqual(["/boom", "/context", "/items", "/items/{id}", "/slow"])
        // Declared errors carry their status: 404 NotFound, 422 UnprocessableEntity, 400 decode.
        expect(Object.keys(paths["/items/{id}"].get.responses)).toEqual(expect.arrayContaining(["200", "400", "404"]))
        expect(Object.keys(paths["/items"].post.responses)).toEqual(expect.arrayContaining(["201", "400", "422"]))
      }))

    it.effect("/docs is the Swagger UI page with the spec inlined, no external scripts", () =>
      Effect.gen(function*() {
        const answer = yield* get("/docs")
        expect(answer.status).toBe(200)
        expect(answer.headers["content-type"]).toContain("text/html")
        expect(answer.text).toContain("SwaggerUIBundle")
        expect(answer.text).toContain("Example API")
        expect(answer.text).not.toMatch(/<script[^>]+src="https?:/)
      }))

    it.effect("/redoc is a ReDoc page whose bundle is served locally", () =>
      Effect.gen(function*() {
        const page = yield* get("/redoc")
        expect(page.status).toBe(200)
        expect(page.headers["content-type"]).toContain("text/html")
        expect(page.text).toContain("Redoc.init(")
        expect(page.text).toContain('<script src="./redoc.standalone.js"></script>')
        expect(page.text).not.toMatch(/https?:\/\/(cdn|unpkg)/)
        // The inlined spec cannot close its <script> element.
        expect(page.text.match(/<\/script>/g)?.length).toBe(3)
        const bundle = yield* get("/redoc.standalone.js")
        expect(bundle.status).toBe(200)
        expect(bundle.headers["content-type"]).toContain("javascript")
        expect(bundle.text.length).toBeGreaterThan(500_000)
        expect(bundle.text).toContain("Redoc")
        // Its one asset from another host (the sidebar's logo) is drawn inline instead.
        expect(bundle.text).not.toContain("cdn.redoc.ly")
        expect(bundle.text).toContain(Docs.redocLocalLogo)
      }))

    it.effect("/favicon.ico is an empty answer, not a 404 a browser would log on the docs pages", () =>
      Effect.gen(function*() {
        const icon = yield* get("/favicon.ico")
        expect(icon.status).toBe(204)
        expect(icon.text).toBe("")
      }))
  })

  layer(
    ServiceKit.serveTest(ExampleApi, { service, port: 0, docsPrefix: "/api/" }).pipe(Layer.provide(ItemsLive)),
    { excludeTestServices: true }
  )("under a prefix (grid gateway: /api)", (it) => {
    it.effect("serves docs under the prefix only", () =>
      Effect.gen(function*() {
        for (const path of ["/api/openapi.json", "/api/docs", "/api/redoc", "/api/redoc.standalone.js"]) {
          expect((yield* get(path)).status, path).toBe(200)
        }
        for (const path of ["/openapi.json", "/docs", "/redoc"]) {
          expect((yield* get(path)).status, path).toBe(404)
        }
        // Health stays at the root, where probes expect it, and so does the icon browsers ask for.
        expect((yield* get("/health")).status).toBe(200)
        expect((yield* get("/favicon.ico")).status).toBe(204)
      }))
  })
})

describe("the kit's corrections to the generated document", () => {
  layer(
    ServiceKit.serveTest(ExampleApi, { service: { name: "example", version: "9.9.9" }, port: 0 }).pipe(Layer.provide(ItemsLive)),
    { excludeTestServices: true }
  )("served", (it) => {
    it.effect("version, error bodies, 400 only where input is decoded, 413 where there is a body", () =>
      Effect.gen(function*() {
        const spec = body(yield* get("/openapi.json")) as {
          info: { version: string }
          components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: Array<string> }> }
          paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
        }
        // The contract says 1.2.3; /health and the document say the service's version.
        expect(spec.info.version).toBe("9.9.9")
        expect(body(yield* get("/health")).version).toBe("9.9.9")
        expect(spec.components.schemas.HttpApiDecodeError).toBeUndefined()
        expect(Object.keys(spec.components.schemas.InvalidRequest.properties ?? {})).toEqual(["detail", "issues"])
        expect(spec.components.schemas.InvalidRequest.required).toEqual(["detail"])
        expect(spec.paths["/context"].get.responses["400"]).toBeUndefined()
        expect(spec.paths["/boom"].get.responses["400"]).toBeUndefined()
        expect(spec.paths["/items/{id}"].get.responses["400"]).toBeDefined()
        expect(spec.paths["/items"].post.responses["413"]).toBeDefined()
        expect(spec.paths["/items/{id}"].get.responses["413"]).toBeUndefined()
        // The Swagger page shows the same document.
        const page = yield* get("/docs")
        expect(page.text).toContain("9.9.9")
        expect(page.text).not.toContain("HttpApiDecodeError")
        const validation = yield* Effect.promise(() => new Validator().validate(spec as never))
        expect(validation.errors).toBeUndefined()
      }))
  })
})
