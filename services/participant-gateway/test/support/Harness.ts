/**
 * The gateway under test: the dev identity provider (real RS256 tokens, real JWKS), the
 * repository's policies, an in-memory PGlite database with the gateway's migrations, and the
 * gateway on a random port, configured through a map instead of the process environment.
 *
 * `gatewayLayer(setup)` lets a test file choose the upstreams: fake client layers (`clients`), or
 * servers it starts in the layer's scope (fakes served from the upstream contracts, the digital
 * twin simulator, an SSE server) whose URLs go into `env`.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpServer from "@effect/platform/HttpServer"
import type { TokenVerifier } from "@rec/auth"
import { TokenVerifier as Verifiers } from "@rec/auth"
import { Testing } from "@rec/db"
import { DevIdp, type DevIdpService, type MintOptions } from "@rec/dev-idp"
import { type Clients, Http, migrations } from "@rec/participant-gateway-service"
import { Engines } from "@rec/policy"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as Scope from "effect/Scope"
import * as http from "node:http"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const repoPolicies = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../policies")

/** The dev identity provider signs with RS256 only. */
export const verifierFor = (issuer: string): Layer.Layer<TokenVerifier.TokenVerifier> =>
  Verifiers.layerFor(issuer, { algorithms: ["RS256"], clockTolerance: Duration.seconds(5) })

export const users = {
  participant: "52409e36-6d23-45ed-bb1e-d6c564a2f454",
  consumer: "cc28f729-6d12-46a8-bdfe-c8b6952a99e0",
  nogroup: "dedbf987-a2a9-45ec-8cd1-a6f1179b7e2e"
} as const

export interface GatewaySetup {
  /** Environment of the gateway (a map; the process environment is not read). */
  readonly env?: Record<string, string> | undefined
  /** Replaces the digital twin, nudging and flexibility clients (otherwise built from `env`). */
  readonly clients?: Layer.Layer<Clients.NudgingClient | Clients.FlexibilityClient | Clients.TwinClient> | undefined
  /** The token verifier as production builds it, from `env` (`PLATFORM_OIDC_*`, `JWT_HEADER_NAME`). */
  readonly verifierFromEnv?: boolean | undefined
}

/** Log lines are kept out of the test output (the access log of every request). */
const quiet = Logger.replace(Logger.defaultLogger, Logger.none)

/**
 * Dev IdP + gateway; provides `DevIdp`, an `HttpClient` aimed at the gateway and the gateway's
 * `SqlClient` (the same database: layers are shared by reference within one build).
 */
export const gatewayLayer = <E = never, R = never>(
  setup: (idp: DevIdpService) => Effect.Effect<GatewaySetup, E, R | Scope.Scope> = () => Effect.succeed({})
) => {
  const database = Testing.layerPglite({ service: "participant-gateway", migrations })
  return Layer.unwrapScoped(
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const { clients, env, verifierFromEnv } = yield* setup(idp)
      return Http.makeTest({
        verifier: verifierFromEnv === true ? undefined : verifierFor(idp.issuer),
        engine: Engines.embeddedWith({ directory: repoPolicies, watch: false }),
        database,
        clients
      }).pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env ?? {}))))))
    })
  ).pipe(Layer.provideMerge(database), Layer.provideMerge(DevIdp.layerTest), Layer.provide(quiet))
}

/** Mints once per (name, options) within a test file. */
export const tokens = Effect.map(DevIdp, (idp) => {
  const minted = new Map<string, string>()
  return (name: string, options: MintOptions = {}) =>
    Effect.gen(function*() {
      const key = `${name} ${JSON.stringify(options)}`
      const hit = minted.get(key)
      if (hit !== undefined) return hit
      const token = yield* Effect.orDie(idp.mint(name, options))
      minted.set(key, token)
      return token
    })
})

/** A token of the dev identity provider for `name`. */
export const token = (name: string, options: MintOptions = {}) => Effect.flatMap(tokens, (mint) => mint(name, options))

export interface Reply {
  readonly status: number
  readonly body: unknown
  readonly headers: Readonly<Record<string, string>>
}

export interface Call {
  /** Sent in `X-Auth-Request-Access-Token`, as the authenticating reverse proxy does. */
  readonly token?: string | undefined
  readonly headers?: Record<string, string> | undefined
  readonly json?: unknown
  readonly text?: { readonly body: string; readonly contentType: string } | undefined
}

/** A raw HTTP call to the gateway, so tests see exact statuses and bodies. */
export const call = (method: "GET" | "POST" | "PUT" | "DELETE", url: string, options: Call = {}) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(url)
    if (options.token !== undefined) request = HttpClientRequest.setHeader(request, "x-auth-request-access-token", options.token)
    if (options.headers !== undefined) request = HttpClientRequest.setHeaders(request, options.headers)
    if (options.text !== undefined) request = HttpClientRequest.bodyText(request, options.text.body, options.text.contentType)
    else if (options.json !== undefined) request = yield* HttpClientRequest.bodyJson(request, options.json)
    const response = yield* client.execute(request)
    const text = yield* response.text
    let body: unknown = text
    try {
      body = text === "" ? null : JSON.parse(text)
    } catch {
      // Not JSON (docs pages, event streams): the text itself.
    }
    return { status: response.status, body, headers: response.headers } satisfies Reply
  }).pipe(Effect.scoped, Effect.orDie)

/** The gateway's `http://127.0.0.1:<port>`. */
export const baseUrl = HttpServer.addressFormattedWith((address) => Effect.succeed(address.replace("0.0.0.0", "127.0.0.1")))

/**
 * A request with the path exactly as given (clients built on WHATWG URLs remove `..` and
 * `%2e%2e` segments before sending, which would hide what the gateway does with them).
 */
export const rawRequest = (
  base: string,
  method: string,
  rawPath: string,
  headers: Record<string, string> = {},
  body?: string
) =>
  Effect.async<Reply>((resume) => {
    const url = new URL(base)
    const request = http.request({ host: url.hostname, port: url.port, method, path: rawPath, headers }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (c: Buffer) => chunks.push(c))
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        let parsed: unknown = text
        try {
          parsed = text === "" ? null : JSON.parse(text)
        } catch {
          // kept as text
        }
        resume(Effect.succeed({
          status: response.statusCode ?? 0,
          body: parsed,
          headers: Object.fromEntries(
            Object.entries(response.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : v ?? ""])
          )
        }))
      })
    })
    request.on("error", (error) => resume(Effect.die(error)))
    request.end(body)
  })
