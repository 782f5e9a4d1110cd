/**
 * `ServiceClient`: a typed client from another service's contract, with this service's token or a
 * caller's, and the one mapping of upstream failures (`Upstream`) every gateway answers with.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { describe, expect, it } from "@effect/vitest"
import { ClientCredentials, ServiceClient } from "@rec/auth"
import { Contract, HttpErrors, Upstream } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

class ItemsGroup extends HttpApiGroup.make("items")
  .add(
    HttpApiEndpoint.get("get", "/items/:id")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(Schema.Struct({ id: Schema.String, name: Schema.String }))
      .addError(HttpErrors.NotFound)
  )
  .add(HttpApiEndpoint.get("whoami", "/whoami").addSuccess(Schema.Struct({ authorization: Schema.String })))
{}
class ItemsApi extends Contract.make("items").add(ItemsGroup) {}

/** The upstream: answers by path, echoes the credentials it was sent. */
const upstream = Effect.acquireRelease(
  Effect.async<{ url: string; server: Http.Server }>((resume) => {
    const server = Http.createServer((req, res) => {
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" })
        res.end(JSON.stringify(body))
      }
      switch (req.url) {
        case "/items/1":
          return json(200, { id: "1", name: "first" })
        case "/items/7":
          return json(404, { detail: "No item 7" })
        case "/items/500":
          return json(500, { detail: "database down" })
        case "/items/odd":
          return json(200, { unexpected: true })
        case "/items/slow":
          return setTimeout(() => json(200, { id: "slow", name: "late" }), 2_000)
        case "/whoami":
          return json(200, { authorization: req.headers.authorization ?? "" })
        default:
          return json(404, { detail: "No route" })
      }
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })))
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)

const tokens: ClientCredentials.TokenProvider = {
  token: Effect.succeed(Redacted.make("service-token")),
  invalidate: Effect.void,
  reject: () => Effect.void
}

const run = <A, E, R>(effect: Effect.Effect<A, E, R>) => effect.pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))

describe("ServiceClient", () => {
  it.effect("calls with the service's token, or with a caller's", () =>
    run(Effect.gen(function*() {
      const { url } = yield* upstream
      const items = yield* ServiceClient.make(ItemsApi, { name: "items service", baseUrl: url, tokens })
      expect(yield* items.call("whoami", items.client.items.whoami())).toEqual({ authorization: "Bearer service-token" })
      const asUser = yield* items.call("whoami", items.asUser("user-token", (c) => c.items.whoami()))
      expect(asUser).toEqual({ authorization: "Bearer user-token" })
      // The forwarded token does not leak into the next service call.
      expect(yield* items.call("whoami", items.client.items.whoami())).toEqual({ authorization: "Bearer service-token" })
      expect(yield* items.call("get_item", items.client.items.get({ path: { id: "1" } }))).toEqual({ id: "1", name: "first" })
    })))

  it.live("4xx kept with the upstream's detail; 5xx, unreadable and unreachable 502; timeout 504; no token 503", () =>
    run(Effect.gen(function*() {
      const { url } = yield* upstream
      const items = yield* ServiceClient.make(ItemsApi, { name: "items service", baseUrl: url, tokens, timeout: "500 millis" })
      const get = (id: string) => Effect.flip(items.call("get_item", items.client.items.get({ path: { id } })))
      // Compared as plain fields: the failure is a Data class, whose structural equality vitest defers to.
      const fields = ({ detail, status, upstreamStatus }: Upstream.UpstreamFailure) => ({ detail, status, upstreamStatus })

      const notFound = yield* get("7")
      expect(fields(notFound)).toEqual({ status: 404, upstreamStatus: 404, detail: "Items service refused get_item: No item 7" })
      expect(Upstream.toHttpError(notFound)).toBeInstanceOf(HttpErrors.NotFound)
      const failed = yield* get("500")
      expect(fields(failed)).toEqual({ status: 502, upstreamStatus: 500, detail: "Items service failed get_item (status 500): database down" })
      expect(Upstream.toHttpError(failed)).toBeInstanceOf(HttpErrors.BadGateway)

      expect(fields(yield* get("odd"))).toEqual({
        status: 502,
        upstreamStatus: undefined,
        detail: "Items service answered get_item with a body that does not match its contract"
      })
      const slow = yield* get("slow")
      expect(fields(slow)).toEqual({ status: 504, upstreamStatus: undefined, detail: "Items service did not answer get_item within 500ms" })
      expect(Upstream.toHttpError(slow)).toBeInstanceOf(HttpErrors.GatewayTimeout)

      const down = yield* ServiceClient.make(ItemsApi, { name: "items service", baseUrl: "http://127.0.0.1:9", tokens })
      const unreachable = yield* Effect.flip(down.call("get_item", down.client.items.get({ path: { id: "1" } })))
      expect(unreachable.status).toBe(502)
      expect(unreachable.detail).toMatch(/^Items service is unreachable \(get_item\)/)

      const anonymous = yield* ServiceClient.make(ItemsApi, { name: "items service", baseUrl: url })
      const noToken = yield* Effect.flip(anonymous.call("whoami", anonymous.client.items.whoami()))
      expect(noToken.status).toBe(503)
      expect(noToken.detail).toContain("No credentials for items service")
      expect(Upstream.toHttpError(noToken)).toBeInstanceOf(HttpErrors.ServiceUnavailable)
      // asUser still works without service credentials.
      expect(yield* anonymous.call("whoami", anonymous.asUser("u", (c) => c.items.whoami()))).toEqual({ authorization: "Bearer u" })
    })))
})
