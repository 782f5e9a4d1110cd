import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import { describe, expect, it } from "@effect/vitest"
import { AuthConfig, ClientCredentials } from "@rec/auth"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as TestIdp from "./fixtures/TestIdp.js"

const config = (idp: TestIdp.TestIdp, overrides?: Partial<AuthConfig.ClientCredentialsConfig>) => ({
  issuer: Option.some(idp.issuer),
  tokenEndpoint: Option.none(),
  clientId: TestIdp.clientId,
  clientSecret: Redacted.make(TestIdp.clientSecret),
  scope: Option.some("dt.read dt.write"),
  ...overrides
})

const run = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))

/** An upstream API that refuses the first token it sees (as after a revocation), then accepts. */
const upstream = Effect.gen(function*() {
  const seen: Array<string | undefined> = []
  const server = Http.createServer((req, res) => {
    seen.push(req.headers.authorization)
    const refused = req.headers.authorization === "Bearer token-1"
    res.writeHead(refused ? 401 : 200, { "content-type": "application/json" })
    res.end(JSON.stringify({ ok: !refused }))
  })
  yield* Effect.acquireRelease(
    Effect.async<void>((resume) => {
      server.listen(0, "127.0.0.1", () => resume(Effect.void))
    }),
    () => Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
  )
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
})

describe("client credentials", () => {
  it.effect("requests a token with the client's credentials and scope, discovering the endpoint", () =>
    run(Effect.gen(function*() {
      const idp = yield* TestIdp.make
      const provider = yield* ClientCredentials.make(config(idp))
      const token = yield* provider.token
      expect(Redacted.value(token)).toBe("token-1")
      expect(idp.counters).toMatchObject({ discovery: 1, token: 1 })
      const [request] = idp.tokenRequests
      // client_secret_basic with the id and secret form-encoded first (RFC 6749 §2.3.1).
      expect(request.basic).toBe(`grid-gateway:${encodeURIComponent(TestIdp.clientSecret).replace(/%20/g, "+")}`)
      expect(request.form.get("grant_type")).toBe("client_credentials")
      expect(request.form.get("scope")).toBe("dt.read dt.write")
      expect(request.form.get("client_secret")).toBeNull()
    })))

  it.effect("client_secret_post sends the credentials in the form instead", () =>
    run(Effect.gen(function*() {
      const idp = yield* TestIdp.make
      const provider = yield* ClientCredentials.make(config(idp, { authMethod: "client_secret_post" }))
      expect(Redacted.value(yield* provider.token)).toBe("token-1")
      expect(idp.tokenRequests[0].basic).toBeUndefined()
      expect(idp.tokenRequests[0].form.get("client_secret")).toBe(TestIdp.clientSecret)
    })))

  it.effect("caches the token until shortly before it expires", () =>
    run(Effect.gen(function*() {
      const idp = yield* TestIdp.make
      idp.tokenEndpoint.expiresIn = 300
      const provider = yield* ClientCredentials.make(config(idp))
      expect(Redacted.value(yield* provider.token)).toBe("token-1")
      yield* TestClock.adjust("4 minutes")
      expect(Redacted.value(yield* provider.token)).toBe("token-1")
      expect(idp.counters.token).toBe(1)
      // 30 seconds before expiry it is refreshed.
      yield* TestClock.adjust("31 seconds")
      expect(Redacted.value(yield* provider.token)).toBe("token-2")
      expect(idp.counters.token).toBe(2)
    })))

  it.effect("short-lived tokens are refreshed at half their life; without expires_in after a minute", () =>
    run(Effect.gen(function*() {
      const idp = yield* TestIdp.make
      idp.tokenEndpoint.expiresIn = 20
      const provider = yield* ClientCredentials.make(config(idp))
      yield* provider.token
      yield* TestClock.adjust("9 seconds")
      expect(Redacted.value(yield* provider.token)).toBe("token-1")
      yield* TestClock.adjust("2 seconds")
      expect(Redacted.value(yield* provider.token)).toBe("token-2")
      idp.tokenEndpoint.expiresIn = undefined
      yield* TestClock.adjust("11 seconds")
      expect(Redacted.value(yield* provider.token)).toBe("token-3")
      yield* TestClock.adjust("29 seconds")
      expect(Redacted.value(yield* provider.token)).toBe("token-3")
      yield* TestClock.adjust("2 seconds")
      expect(Redacted.value(yield* provider.token)).toBe("token-4")
    })))

  it.live("one refresh at a time: concurrent callers share a single token request", () =>
    run(Effect.gen(function*() {
      const idp = yield* TestIdp.make
      idp.tokenEndpoint.delayMs = 150
      const provider = yield* ClientCredentials.make(config(idp))
      const tokens = yield* Effect.all(Array.from({ length: 25 }, () => provider.token), { concurrency: "unbounded" })
      expect(new Set(tokens.map(Redacted.value))).toEqual(new Set(["token-1"]))
      expect(idp.counters.token).toBe(1)
      // After invalidation, again exactly one request for the whole crowd.
      yield* provider.invalidate
      const again = yield* Effect.all(Array.from({ length: 25 }, () => provider.token), { concurrency: "unbounded" })
      expect(new Set(again.map(Redacted.value))).toEqual(new Set(["token-2"]))
      expect(idp.counters.token).toBe(2)
    })))

  it.effect("a refused client is a TokenRequestError with the OAuth error code, and is not cached", () =>
    run(Effect.gen(function*() {
      const idp = yield* TestIdp.make
      const provider = yield* ClientCredentials.make(config(idp, { clientSecret: Redacted.make("wrong") }))
      const error = yield* Effect.flip(provider.token)
      expect(error).toMatchObject({ _tag: "TokenRequestError", reason: "rejected", status: 401, error: "invalid_client" })
      expect(error.message).not.toContain("wrong")
      yield* Effect.flip(provider.token)
      expect(idp.counters.token).toBe(2)
    })))

  it.effect("an unreachable token endpoint is reported as unreachable", () =>
    run(Effect.gen(function*() {
      const provider = yield* ClientCredentials.make({
        issuer: Option.none(),
        tokenEndpoint: Option.some("http://127.0.0.1:9/token"),
        clientId: "x",
        clientSecret: Redacted.make("y"),
        scope: Option.none()
      })
      expect((yield* Effect.flip(provider.token)).reason).toBe("unreachable")
    })))

  it.effect("withToken sends the bearer token and retries once with a new token after a 401", () =>
    run(Effect.gen(function*() {
      const idp = yield* TestIdp.make
      const api = yield* upstream
      const provider = yield* ClientCredentials.make(config(idp))
      const client = (yield* HttpClient.HttpClient).pipe(ClientCredentials.withToken(provider))
      const response = yield* client.get(`${api.url}/twins`)
      expect(response.status).toBe(200)
      expect(api.seen).toEqual(["Bearer token-1", "Bearer token-2"])
      // The fresh token is kept.
      yield* client.get(`${api.url}/twins`)
      expect(api.seen[2]).toBe("Bearer token-2")
      expect(idp.counters.token).toBe(2)
    })))

  it.live("requests refused together with the same token cause one refresh", () =>
    run(Effect.gen(function*() {
      const idp = yield* TestIdp.make
      const api = yield* upstream
      const provider = yield* ClientCredentials.make(config(idp))
      yield* provider.token
      idp.tokenEndpoint.delayMs = 50
      const client = (yield* HttpClient.HttpClient).pipe(ClientCredentials.withToken(provider))
      const statuses = yield* Effect.all(
        Array.from({ length: 10 }, () => Effect.map(client.get(`${api.url}/twins`), (r) => r.status)),
        { concurrency: "unbounded" }
      )
      expect(statuses).toEqual(Array.from({ length: 10 }, () => 200))
      expect(idp.counters.token).toBe(2)
      expect(api.seen.filter((a) => a === "Bearer token-2")).toHaveLength(10)
    })))

  it.effect("fromConfig reads PLATFORM_OIDC_* and lets a service choose the scope per upstream", () =>
    run(Effect.gen(function*() {
      const idp = yield* TestIdp.make
      const env = ConfigProvider.fromMap(new Map([
        ["PLATFORM_OIDC_BASE_URL", idp.issuer],
        ["PLATFORM_OIDC_CLIENT_ID", TestIdp.clientId],
        ["PLATFORM_OIDC_CLIENT_SECRET", TestIdp.clientSecret],
        ["PLATFORM_OIDC_SCOPE", "default.scope"],
        ["DT_CLIENT_SCOPE", "dt.read"]
      ]))
      const byDefault = yield* ClientCredentials.fromConfig().pipe(Effect.withConfigProvider(env))
      yield* byDefault.token
      expect(idp.tokenRequests[0].form.get("scope")).toBe("default.scope")
      const digitalTwin = yield* ClientCredentials.fromConfig({
        scope: Config.option(Config.string("DT_CLIENT_SCOPE"))
      }).pipe(Effect.withConfigProvider(env))
      yield* digitalTwin.token
      expect(idp.tokenRequests[1].form.get("scope")).toBe("dt.read")
      const missing = yield* Effect.flip(
        ClientCredentials.fromConfig().pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map())))
      )
      expect(String(missing)).toContain("PLATFORM_OIDC")
    })))
})
