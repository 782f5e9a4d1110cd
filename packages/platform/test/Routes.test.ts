import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Rpc from "@effect/rpc/Rpc"
import * as RpcClient from "@effect/rpc/RpcClient"
import * as RpcGroup from "@effect/rpc/RpcGroup"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as RpcServer from "@effect/rpc/RpcServer"
import { describe, expect, layer } from "@effect/vitest"
import { RequestContext, ServiceKit } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { ExampleApi, ItemsLive } from "./fixtures/ExampleApi.js"
import { body, get, send } from "./fixtures/http.js"

const service = { name: "example", version: "1.2.3" }

class Decide extends Rpc.make("Decide", {
  payload: { subject: Schema.String },
  success: Schema.Struct({ allowed: Schema.Boolean, request_id: Schema.String })
}) {}
class Decisions extends RpcGroup.make(Decide) {}

const DecisionsLive = Decisions.toLayer({
  Decide: ({ subject }) => Effect.map(RequestContext.requestId, (request_id) => ({ allowed: subject === "alice", request_id }))
})

/** A form-encoded endpoint with its own status codes, as the MQTT auth routes need. */
const MqttUser = HttpLayerRouter.add("POST", "/mqtt/user", (request) =>
  Effect.gen(function*() {
    const form = yield* request.urlParamsBody
    const username = form.find(([k]) => k === "username")?.[1]
    return username === "alice"
      ? HttpServerResponse.unsafeJson({ ok: true })
      : HttpServerResponse.unsafeJson({ ok: false, reason: "invalid credentials" }, { status: 403 })
  }))

const OwnHealth = HttpLayerRouter.add(
  "GET",
  "/health",
  Effect.map(HttpServerRequest.HttpServerRequest, () => HttpServerResponse.unsafeJson({ status: "healthy", policies: 3 }))
)

const RpcRoutes = RpcServer.layerHttpRouter({ group: Decisions, path: "/rpc", protocol: "http" }).pipe(
  Layer.provide([DecisionsLive, RpcSerialization.layerNdjson])
)

describe("routes beside the contract", () => {
  layer(
    ServiceKit.serveTest(ExampleApi, {
      service,
      port: 0,
      health: false,
      routes: Layer.mergeAll(MqttUser, OwnHealth, RpcRoutes)
    }).pipe(Layer.provide(ItemsLive)),
    { excludeTestServices: true }
  )("raw routes, an own /health and an RPC server on one port", (it) => {
    it.effect("the contract is served as usual", () =>
      Effect.gen(function*() {
        const client = yield* HttpApiClient.make(ExampleApi)
        expect((yield* client.items.get({ path: { id: 1 } })).name).toBe("first")
      }))

    it.effect("a raw form-encoded route with its own statuses gets the kit's request id", () =>
      Effect.gen(function*() {
        const ok = yield* send(HttpClientRequest.post("/mqtt/user").pipe(HttpClientRequest.bodyUrlParams({ username: "alice" })))
        expect(ok).toMatchObject({ status: 200, json: { ok: true } })
        const denied = yield* send(HttpClientRequest.post("/mqtt/user").pipe(HttpClientRequest.bodyUrlParams({ username: "bob" })))
        expect(denied.status).toBe(403)
        // Not an error body of the kit: untouched (the request id is on the header).
        expect(denied.json).toEqual({ ok: false, reason: "invalid credentials" })
        expect(denied.headers["x-request-id"]).toBeDefined()
      }))

    it.effect("the service's own /health replaces the kit's", () =>
      Effect.gen(function*() {
        expect(body(yield* get("/health"))).toEqual({ status: "healthy", policies: 3 })
      }))

    it.effect("an @effect/rpc server answers on /rpc with the request context", () =>
      Effect.gen(function*() {
        const client = yield* RpcClient.make(Decisions)
        const decision = yield* client.Decide({ subject: "alice" })
        expect(decision.allowed).toBe(true)
        expect(decision.request_id).not.toBe("")
        expect((yield* client.Decide({ subject: "bob" })).allowed).toBe(false)
      }).pipe(
        Effect.scoped,
        Effect.provide(Layer.unwrapEffect(Effect.map(
          HttpServer.addressFormattedWith(Effect.succeed),
          (address) => RpcClient.layerProtocolHttp({ url: `${address}/rpc` })
        )).pipe(Layer.provide([RpcSerialization.layerNdjson, NodeHttpClient.layerUndici])))
      ))
  })
})
