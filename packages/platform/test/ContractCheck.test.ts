/**
 * `ContractCheck` walks a served document and reports what the service does differently; the
 * example service tells the truth except for its deliberate defect, and a contract that hides a
 * status or a security requirement is caught.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { describe, expect, layer } from "@effect/vitest"
import { ContractCheck, HttpErrors, ServiceKit } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { ExampleApi, ItemsLive } from "./fixtures/ExampleApi.js"

const service = { name: "example", version: "1.2.3" }

const baseUrl = Effect.map(HttpServer.HttpServer, (server) =>
  server.address._tag === "TcpAddress" ? `http://127.0.0.1:${server.address.port}` : "")

describe("ContractCheck", () => {
  layer(ServiceKit.serveTest(ExampleApi, { service, port: 0 }).pipe(Layer.provide(ItemsLive)), {
    excludeTestServices: true
  })("a truthful contract", (it) => {
    it.effect("only the deliberate defect disagrees with the document", () =>
      Effect.gen(function*() {
        const url = yield* baseUrl
        const { findings, requests } = yield* Effect.promise(() =>
          ContractCheck.check({ baseUrl: url, pathValue: () => "1", skip: ["GET /slow"] })
        )
        expect(requests).toBeGreaterThanOrEqual(6)
        expect(findings).toEqual([
          expect.objectContaining({ operation: "GET /boom", status: 500, problem: expect.stringContaining("answered 500") }),
          expect.objectContaining({ operation: "GET /boom", status: 500, problem: expect.stringContaining("not documented") })
        ])
      }))
  })

  // A contract that lies: `/hidden` answers 409, which it does not declare, and `/guarded`
  // asks for credentials while declaring no security.
  class LyingGroup extends HttpApiGroup.make("lying")
    .add(HttpApiEndpoint.get("hidden", "/hidden").addSuccess(Schema.String))
    .add(HttpApiEndpoint.get("guarded", "/guarded").addSuccess(Schema.String).addError(HttpErrors.Unauthorized))
  {}
  class LyingApi extends HttpApi.make("lying").add(LyingGroup) {}
  const LyingLive = HttpApiBuilder.group(LyingApi, "lying", (handlers) =>
    handlers
      .handle("hidden", () => Effect.succeed(HttpServerResponse.unsafeJson({ detail: "taken" }, { status: 409 })))
      .handle("guarded", () => Effect.fail(new HttpErrors.Unauthorized({ detail: "Missing bearer token" }))))

  layer(ServiceKit.serveTest(LyingApi, { service, port: 0 }).pipe(Layer.provide(LyingLive)), {
    excludeTestServices: true
  })("a contract that lies", (it) => {
    it.effect("undocumented statuses and undeclared security are reported", () =>
      Effect.gen(function*() {
        const url = yield* baseUrl
        const { findings } = yield* Effect.promise(() => ContractCheck.check({ baseUrl: url }))
        expect(findings.map((f) => [f.operation, f.status, f.problem.split(" (")[0].split(":")[0]])).toEqual([
          ["GET /hidden", 409, "status 409 is not documented"],
          ["GET /guarded", 401, "declares no security but asked for credentials"]
        ])
      }))
  })
})
