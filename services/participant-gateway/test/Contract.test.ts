/**
 * The gateway does what `/api/openapi.json` documents (`ContractCheck` of `@rec/platform`): every
 * operation, the assistant proxy included, probed without credentials, with an empty body,
 * invalid JSON and a nesting bomb, and every answer checked against the documented statuses and
 * schemas. Run twice: with the token as a bearer token, and behind a stand-in for the
 * authenticating reverse proxy, which passes the token only in `X-Auth-Request-Access-Token`
 * (clients of the real deployment send no credentials themselves).
 */
import { expect, layer } from "@effect/vitest"
import { SimulatorServer } from "@rec/digital-twin"
import { Api } from "@rec/participant-gateway-service"
import { ContractCheck, ContractFuzz } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { AssistantStub } from "./support/FakeAssistant.js"
import { servedUrl } from "./support/Fakes.js"
import { FlexibilityState } from "./support/FakeFlexibility.js"
import * as FakeFlexibility from "./support/FakeFlexibility.js"
import { NudgingState } from "./support/FakeNudging.js"
import * as FakeNudging from "./support/FakeNudging.js"
import { baseUrl, call, gatewayLayer, token, verifierFor } from "./support/Harness.js"

const gateway = gatewayLayer((idp) =>
  Effect.gen(function*() {
    const verifier = verifierFor(idp.issuer)
    return {
      env: {
        DIGITAL_TWIN_API_URL: yield* servedUrl(SimulatorServer.layerTest().pipe(Layer.provide(verifier))),
        NUDGING_API_URL: yield* FakeNudging.serve(new NudgingState(), verifier),
        FLEXIBILITY_API_URL: yield* FakeFlexibility.serve(new FlexibilityState(), verifier),
        ASSISTANT_URL: yield* new AssistantStub().start,
        // The fuzz sends hundreds of writes in a second: the limit (tested in RateLimits.test.ts)
        // would answer most of them 429 before the handlers under test see them.
        RATE_LIMIT_WRITES: "off"
      }
    }
  })
)

/**
 * What oauth2-proxy does in front of the gateway, reduced to the headers: the caller's credential
 * (here its bearer token, standing for the proxy's session) leaves as `X-Auth-Request-Access-Token`
 * only. Requests without one pass without any token.
 */
const authenticatingProxy = (target: string) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly server: http.Server }>((resume) => {
      const upstream = new URL(target)
      const server = http.createServer((request, response) => {
        const headers = { ...request.headers }
        const bearer = /^Bearer (\S+)$/i.exec(headers.authorization ?? "")
        delete headers.authorization
        delete headers["x-auth-request-access-token"]
        if (bearer !== null) headers["x-auth-request-access-token"] = bearer[1]!
        const forwarded = http.request(
          { host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers },
          (answer) => {
            response.writeHead(answer.statusCode ?? 502, answer.headers)
            answer.pipe(response)
          }
        )
        forwarded.on("error", () => response.destroy())
        request.pipe(forwarded)
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })))
    }),
    ({ server }) => Effect.async<void>((resume) => {
      server.close(() => resume(Effect.void))
      server.closeAllConnections()
    })
  )

const options = { openapiPath: "/api/openapi.json" }

layer(gateway, { excludeTestServices: true, timeout: "120 seconds" })("contract", (it) => {
  it.effect("answers only what /api/openapi.json documents, with the token as a bearer token", () =>
    Effect.gen(function*() {
      const url = yield* baseUrl
      const t = yield* token("participant")
      const report = yield* Effect.promise(() => ContractCheck.check({ baseUrl: url, token: t, ...options }))
      expect(report.findings).toEqual([])
      expect(report.requests).toBeGreaterThan(50)
    }))

  it.scoped("and behind the authenticating reverse proxy, the token only in X-Auth-Request-Access-Token", () =>
    Effect.gen(function*() {
      const proxy = yield* authenticatingProxy(yield* baseUrl)
      const t = yield* token("participant")
      const report = yield* Effect.promise(() => ContractCheck.check({ baseUrl: proxy.url, token: t, ...options }))
      expect(report.findings).toEqual([])
      expect(report.requests).toBeGreaterThan(50)
    }))

  it.effect("documents the assistant proxy with the contract's security, and 413 only where there is a body", () =>
    Effect.gen(function*() {
      const spec = (yield* call("GET", "/api/openapi.json")).body as {
        paths: Record<string, Record<string, { security?: unknown; requestBody?: unknown; responses: Record<string, unknown> }>>
      }
      const proxy = spec.paths["/api/assistant/{path}"]!
      expect(Object.keys(proxy).sort()).toEqual(["delete", "get", "post"])
      expect(proxy.get!.security).toEqual([{ bearer: [] }])
      for (const [path, item] of Object.entries(spec.paths)) {
        for (const [method, operation] of Object.entries(item)) {
          expect(operation.responses["413"] !== undefined, `${method} ${path} 413`).toBe(operation.requestBody !== undefined)
          expect(operation.responses["401"], `${method} ${path} 401`).toBeDefined()
        }
      }
    }))

  it.effect("valid and mutated requests from the contract: no 5xx, every 4xx says what is wrong, still healthy", () =>
    Effect.gen(function*() {
      const url = yield* baseUrl
      const t = yield* token("participant")
      const report = yield* Effect.promise(() =>
        ContractFuzz.run(Api, { baseUrl: url, token: t, tokenHeader: "x-auth-request-access-token", runs: 4, seed: 16 })
      )
      expect(report.findings).toEqual([])
      expect(report.endpoints).toBe(18)
      expect(report.requests).toBeGreaterThan(250)
      // Valid samples are answered, mutations refused.
      expect(report.statuses["2xx"]).toBeGreaterThan(40)
      expect(report.statuses["4xx"]).toBeGreaterThan(150)
    }))
})
