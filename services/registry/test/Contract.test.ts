/**
 * The service does what its OpenAPI document says: `ContractCheck` probes every operation with
 * and without a token (empty, invalid and deeply nested bodies) and reports any status, body or
 * security requirement the document does not state.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { expect, layer } from "@effect/vitest"
import { ContractCheck } from "@rec/platform"
import * as Effect from "effect/Effect"
import { communityKey, get, importExample, serviceLayer, tokens } from "./helpers.js"

const baseUrl = HttpServer.addressFormattedWith((address) => Effect.succeed(address.replace("0.0.0.0", "127.0.0.1")))

interface Operation {
  readonly requestBody?: { readonly content: Record<string, unknown> }
  readonly responses: Record<string, { readonly content?: Record<string, unknown> }>
  readonly security?: ReadonlyArray<unknown>
}

layer(serviceLayer(), { excludeTestServices: true, timeout: "120 seconds" })("contract", (it) => {
  it.effect("answers only what /openapi.json documents, with and without a token", () =>
    Effect.gen(function*() {
      yield* importExample()
      const token = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
      const url = yield* baseUrl
      const report = yield* Effect.promise(() =>
        ContractCheck.check({
          baseUrl: url,
          token,
          pathValue: (name) => (name === "key" ? communityKey : `${communityKey}.member-luca-greco`),
          // Its 302 points at ONTOLOGY_CONTEXT_URL, which fetch would follow away from this server.
          skip: ["GET /.well-known/jsonld-context"]
        })
      )
      expect(report.findings).toEqual([])
      expect(report.requests).toBeGreaterThan(20)
    }))

  it.effect("documents both formats, the uploads, the YAML export and the redirect", () =>
    Effect.gen(function*() {
      const spec = (yield* get("/openapi.json")).body as {
        info: { version: string }
        paths: Record<string, Record<string, Operation>>
      }
      expect((yield* get("/health")).body).toMatchObject({ status: "ok", version: spec.info.version })
      for (const path of ["/user/communities", "/user/communities/{key}", "/user/communities/{key}/members", "/user/members/{id}", "/user/members/{id}/assets", "/user/assets", "/user/sites"]) {
        const operation = spec.paths[path]!.get!
        expect(Object.keys(operation.responses["200"]?.content ?? {}), path).toEqual(["application/json", "application/ld+json"])
        expect(operation.security, path).toEqual([{ bearer: [] }])
        expect(Object.keys(operation.responses).sort(), path).toContain("401")
      }
      for (const method of ["get", "post"]) {
        const operation = spec.paths["/admin/import"]![method]!
        expect(Object.keys(operation.requestBody?.content ?? {}), method).toEqual(["multipart/form-data"])
        expect(operation.responses["413"], method).toBeDefined()
      }
      expect(Object.keys(spec.paths["/admin/import"]!.post!.responses).sort()).toEqual(["201", "400", "401", "403", "409", "413", "422", "429", "503"])
      expect(Object.keys(spec.paths["/admin/export"]!.get!.responses["200"]?.content ?? {})).toEqual(["application/yaml"])
      expect(Object.keys(spec.paths["/.well-known/jsonld-context"]!.get!.responses)).toEqual(["302"])
      expect(spec.paths["/ready"]!.get!.responses["400"]).toBeUndefined()
    }))
})
