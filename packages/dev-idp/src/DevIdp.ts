/**
 * The dev identity provider as an Effect service: `DevIdp.layer(options)` starts it inside a
 * scope (random port with `port: 0`) and closes it with the scope; the service mints tokens
 * for any identity of dev/identities.yaml, with overrides, so HTTP tests of other packages
 * run against real RS256 tokens verified through a real JWKS endpoint.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { NodeFileSystem } from "@effect/platform-node"
import type { ConfigError, Scope } from "effect"
import { Context, Duration, Effect, Layer, Schema } from "effect"
import { randomUUID } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import * as Jose from "jose"
import { OAuth2Issuer, OAuth2Service } from "oauth2-mock-server"
import type { Claims } from "./Claims.js"
import { serviceAccessClaims, userAccessClaims, userIdClaims } from "./Claims.js"
import { devIdpConfig } from "./Config.js"
import type { Identities, IdentitiesError } from "./Identities.js"
import { loadIdentities } from "./Identities.js"
import { endpoints, Provider } from "./Provider.js"
import { makeRequestHandler } from "./Server.js"

export interface DevIdpOptions {
  /** Port to listen on; 0 picks a free one. Default 8080. */
  readonly port?: number | undefined
  /** Bind address; default `127.0.0.1` (`0.0.0.0` or `::` for every interface). */
  readonly host?: string | undefined
  /** Issuer URL; default `http://localhost:<port>` (or the bound address when `host` is given and not a wildcard). */
  readonly issuer?: string | undefined
  /** Identities, or the path of a YAML file; default the repository's dev/identities.yaml. */
  readonly identities?: Identities | string | undefined
  readonly tokenTtlSeconds?: number | undefined
  readonly refreshTtlSeconds?: number | undefined
  /** JWK file that keeps the signing key across restarts (created when missing). */
  readonly keyFile?: string | undefined
}

export interface MintOptions {
  /** For users: the client the token is issued to (its `azp`); default the file's `default_client`. */
  readonly client?: string | undefined
  /** Replaces the granted platform scopes (not checked against the client, so tests can craft any). */
  readonly scopes?: ReadonlyArray<string> | undefined
  /** Replaces `aud`. */
  readonly audience?: string | ReadonlyArray<string> | undefined
  /** Lifetime; default the provider's token lifetime. */
  readonly expiresIn?: Duration.DurationInput | undefined
  /** Issue a token that expired a minute ago (iat two lifetimes back). */
  readonly expired?: boolean | undefined
  /** Claims merged last; an `undefined` value removes the claim. */
  readonly claims?: Claims | undefined
  /**
   * `access` (default) or `id`: an OpenID Connect ID token (`typ: "ID"`, `aud` the client, as the
   * token endpoint issues with `scope=openid`), for users only; for tests proving services refuse it.
   */
  readonly kind?: "access" | "id" | undefined
}

export class MintError extends Schema.TaggedError<MintError>()("MintError", {
  name: Schema.String,
  message: Schema.String
}) {}

export class DevIdpStartError extends Schema.TaggedError<DevIdpStartError>()("DevIdpStartError", {
  message: Schema.String
}) {}

export class InvalidToken extends Schema.TaggedError<InvalidToken>()("InvalidToken", {
  message: Schema.String
}) {}

export interface DevIdpService {
  /** The issuer URL (`iss` of every token; discovery lives below it). */
  readonly issuer: string
  /** The address it listens on (`127.0.0.1` unless `DevIdpOptions.host` said otherwise). */
  readonly host: string
  readonly port: number
  /** The audience every access token carries (the identities' `audience`): a service's `PLATFORM_OIDC_AUDIENCE`. */
  readonly audience: string
  readonly discoveryUrl: string
  readonly jwksUri: string
  readonly tokenEndpoint: string
  readonly tokenTtlSeconds: number
  readonly identities: Identities
  /** A signed access token for the user or client called `name`, as the token endpoint would issue it. */
  readonly mint: (name: string, options?: MintOptions) => Effect.Effect<string, MintError>
  /** Signs arbitrary claims (for malformed-token tests); `iss`, `iat`, `nbf`, `exp`, `jti` are set unless given. */
  readonly sign: (claims: Claims, options?: { readonly expiresIn?: Duration.DurationInput }) => Effect.Effect<string>
  /** Verifies a token issued by this provider and returns its claims. */
  readonly verify: (token: string) => Effect.Effect<Jose.JWTPayload, InvalidToken>
}

/** The bind address when none is given: the loopback interface. */
export const defaultHost = "127.0.0.1"

/**
 * The host of the default issuer: `localhost` for the default bind and for wildcards, else the
 * address bound (an explicit `127.0.0.1` stays `127.0.0.1`, as tests expect).
 */
const urlHost = (host: string | undefined, address: AddressInfo): string => {
  if (host === undefined || host === "0.0.0.0" || host === "::" || host === "localhost") return "localhost"
  return address.family === "IPv6" ? `[${address.address}]` : address.address
}

const loadKey = (issuer: OAuth2Issuer, keyFile: string | undefined) =>
  Effect.gen(function*() {
    if (keyFile === undefined) {
      yield* Effect.promise(() => issuer.keys.generate("RS256"))
      return
    }
    const fs = yield* FileSystem.FileSystem
    const startError = (error: { readonly message: string }) =>
      new DevIdpStartError({ message: `signing key file ${keyFile}: ${error.message}` })
    if (yield* fs.exists(keyFile).pipe(Effect.mapError(startError))) {
      const text = yield* fs.readFileString(keyFile).pipe(Effect.mapError(startError))
      yield* Effect.tryPromise({
        try: () => issuer.keys.add(JSON.parse(text) as Record<string, unknown>),
        catch: (error) => startError({ message: String(error) })
      })
      return
    }
    const key = yield* Effect.promise(() => issuer.keys.generate("RS256"))
    yield* fs.makeDirectory(path.dirname(keyFile), { recursive: true }).pipe(Effect.mapError(startError))
    yield* fs.writeFileString(keyFile, JSON.stringify(key, null, 2) + "\n", { mode: 0o600 }).pipe(
      Effect.mapError(startError)
    )
  })

const listen = (server: http.Server, port: number, host: string | undefined) =>
  Effect.acquireRelease(
    Effect.async<AddressInfo, DevIdpStartError>((resume) => {
      const onError = (error: Error) =>
        resume(Effect.fail(new DevIdpStartError({ message: `cannot listen on ${host ?? "*"}:${port}: ${error.message}` })))
      server.once("error", onError)
      server.listen(port, host, () => {
        server.off("error", onError)
        resume(Effect.succeed(server.address() as AddressInfo))
      })
    }),
    () =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

/** Starts the provider in the current scope. */
export const make = (
  options: DevIdpOptions = {}
): Effect.Effect<DevIdpService, DevIdpStartError | IdentitiesError, FileSystem.FileSystem | Scope.Scope> =>
  Effect.gen(function*() {
    const identities = typeof options.identities === "object"
      ? options.identities
      : yield* loadIdentities(options.identities)
    const issuer = new OAuth2Issuer(false)
    yield* loadKey(issuer, options.keyFile)
    const tokenTtlSeconds = options.tokenTtlSeconds ?? 3600
    const provider = new Provider({
      identities,
      issuer,
      tokenTtlSeconds,
      refreshTtlSeconds: options.refreshTtlSeconds ?? 28_800
    })
    const library = new OAuth2Service(issuer, {
      wellKnownDocument: endpoints.discovery,
      token: endpoints.token,
      jwks: endpoints.jwks,
      authorize: endpoints.authorize,
      userinfo: endpoints.userinfo,
      revoke: endpoints.revoke,
      endSession: endpoints.logout,
      introspect: endpoints.introspect
    })
    const server = http.createServer(makeRequestHandler(provider, library.requestHandler))
    const address = yield* listen(server, options.port ?? 8080, options.host ?? defaultHost)
    issuer.url = options.issuer ?? `http://${urlHost(options.host, address)}:${address.port}`
    const base = issuer.url.replace(/\/$/, "")

    const mint = (name: string, mintOptions: MintOptions = {}) =>
      Effect.gen(function*() {
        const found = identities.lookup(name)
        if (found === undefined) {
          return yield* new MintError({ name, message: `no user or client called '${name}' in the identities` })
        }
        let claims: Claims
        if (found._tag === "User") {
          const clientId = mintOptions.client ?? identities.defaultClient.clientId
          const client = identities.clients.get(clientId)
          if (client === undefined) return yield* new MintError({ name, message: `unknown client '${clientId}'` })
          if (mintOptions.kind === "id") {
            claims = userIdClaims(found.user, client, randomUUID(), undefined)
          } else {
            claims = userAccessClaims(
              identities,
              found.user,
              client,
              { scopes: mintOptions.scopes ?? client.scopes, openid: false },
              randomUUID()
            )
            if (mintOptions.scopes !== undefined) claims.scope = ["profile", "email", ...mintOptions.scopes].join(" ")
          }
        } else if (mintOptions.kind === "id") {
          return yield* new MintError({ name, message: `ID tokens are issued to users; '${name}' is a client` })
        } else {
          if (found.client.serviceAccountId === undefined) {
            return yield* new MintError({ name, message: `client '${name}' has no service account (no client_credentials grant)` })
          }
          claims = serviceAccessClaims(identities, found.client, mintOptions.scopes ?? found.client.scopes)
        }
        if (mintOptions.audience !== undefined) claims.aud = mintOptions.audience
        const ttl = mintOptions.expiresIn === undefined
          ? tokenTtlSeconds
          : Math.max(1, Math.round(Duration.toSeconds(mintOptions.expiresIn)))
        if (mintOptions.expired === true) {
          // Wall-clock time on purpose: the token is checked by real services against real time.
          const now = Math.floor(Date.now() / 1000)
          Object.assign(claims, { iat: now - 2 * ttl, nbf: now - 2 * ttl, exp: now - 60 })
        }
        Object.assign(claims, mintOptions.claims)
        return yield* Effect.promise(() => provider.sign(claims, ttl))
      }).pipe(Effect.withSpan("DevIdp.mint", { attributes: { name } }))

    const service: DevIdpService = {
      issuer: issuer.url,
      host: address.address,
      port: address.port,
      audience: identities.audience,
      discoveryUrl: base + endpoints.discovery,
      jwksUri: base + endpoints.jwks,
      tokenEndpoint: base + endpoints.token,
      tokenTtlSeconds,
      identities,
      mint,
      sign: (claims, signOptions) =>
        Effect.promise(() =>
          provider.sign(
            claims,
            signOptions?.expiresIn === undefined ? tokenTtlSeconds : Duration.toSeconds(signOptions.expiresIn)
          )
        ),
      verify: (token) =>
        Effect.promise(() => provider.verify(token)).pipe(
          Effect.flatMap((result) =>
            result._tag === "Valid"
              ? Effect.succeed(result.claims)
              : Effect.fail(new InvalidToken({ message: result.reason }))
          )
        )
    }
    return service
  })

/**
 * The running provider. `DevIdp.layerTest` for tests (a free port of 127.0.0.1, the
 * repository's identities), `DevIdp.layer(options)` for anything else, `DevIdp.layerConfig`
 * from the environment (see `Config.ts`).
 */
export class DevIdp extends Context.Tag("@rec/dev-idp/DevIdp")<DevIdp, DevIdpService>() {
  static readonly layer = (options: DevIdpOptions = {}): Layer.Layer<DevIdp, DevIdpStartError | IdentitiesError> =>
    Layer.scoped(DevIdp, make(options)).pipe(Layer.provide(NodeFileSystem.layer))

  static readonly layerTest: Layer.Layer<DevIdp, DevIdpStartError | IdentitiesError> = DevIdp.layer({
    port: 0,
    host: "127.0.0.1"
  })

  /** `standalone` for the IdP's own process, where the generic `PORT` and `HOST` apply. */
  static readonly layerConfig = (
    options: { readonly standalone: boolean } = { standalone: false }
  ): Layer.Layer<DevIdp, DevIdpStartError | IdentitiesError | ConfigError.ConfigError> =>
    Layer.unwrapEffect(Effect.map(devIdpConfig(options), DevIdp.layer))
}
