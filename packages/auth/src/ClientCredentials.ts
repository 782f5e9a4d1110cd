/**
 * OAuth 2.0 client-credentials tokens for outbound calls (RFC 6749 §4.4).
 *
 * A `TokenProvider` asks the token endpoint (`PLATFORM_OIDC_TOKEN_ENDPOINT`, or discovered from
 * the issuer) for a token with the service's client id and secret, keeps it until `refreshBefore`
 * ahead of its expiry, and lets one request at a time refresh it: concurrent callers wait for that
 * one request instead of each asking the identity provider.
 *
 * `withToken(provider)` turns any `HttpClient` into one that sends `Authorization: Bearer`; on a
 * 401 answer it drops the cached token and retries once with a fresh one (the identity provider
 * may have revoked it or rotated keys).
 *
 * ```ts
 * const dt = yield* ClientCredentials.fromConfig({ scope: Config.option(Config.string("DT_CLIENT_SCOPE")) })
 * const client = (yield* HttpClient.HttpClient).pipe(ClientCredentials.withToken(dt))
 * ```
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Clock from "effect/Clock"
import type * as ConfigError from "effect/ConfigError"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as AuthConfig from "./AuthConfig.js"
import * as Discovery from "./Discovery.js"

export class TokenRequestError extends Data.TaggedError("TokenRequestError")<{
  /** `unreachable`: no answer; `rejected`: the endpoint refused (see `error`); `invalid_response`. */
  readonly reason: "unreachable" | "rejected" | "invalid_response"
  readonly message: string
  readonly status?: number | undefined
  /** The OAuth error code (`invalid_client`, `invalid_scope`, ...). */
  readonly error?: string | undefined
  readonly cause?: unknown
}> {}

export interface AccessToken {
  readonly token: Redacted.Redacted
  /** Epoch milliseconds after which the token is no longer used. */
  readonly refreshAt: number
}

export interface TokenProvider {
  /** A valid token, from the cache or freshly requested. */
  readonly token: Effect.Effect<Redacted.Redacted, TokenRequestError>
  /** Drops the cached token. */
  readonly invalidate: Effect.Effect<void>
  /**
   * Drops the cached token if it is this one (an upstream refused it). Concurrent requests
   * refused with the same token thus cause one refresh, not one each.
   */
  readonly reject: (token: string) => Effect.Effect<void>
}

const TokenResponse = Schema.Struct({
  access_token: Schema.NonEmptyString,
  token_type: Schema.optional(Schema.String),
  expires_in: Schema.optional(Schema.Number)
})

const ErrorResponse = Schema.Struct({
  error: Schema.String,
  error_description: Schema.optional(Schema.String)
})

/** Without `expires_in` the token is kept this long. */
const defaultLifetime = Duration.minutes(1)

const formEncode = (s: string) => encodeURIComponent(s).replace(/%20/g, "+")

export const make = (config: AuthConfig.ClientCredentialsConfig): Effect.Effect<TokenProvider, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const refreshBefore = Duration.toMillis(config.refreshBefore ?? Duration.seconds(30))
    const timeout = config.requestTimeout ?? Duration.seconds(10)
    const discovery = Option.isSome(config.issuer) ? yield* Discovery.make(config.issuer.value) : undefined

    const endpoint: Effect.Effect<string, TokenRequestError> = Option.isSome(config.tokenEndpoint)
      ? Effect.succeed(config.tokenEndpoint.value)
      : discovery === undefined
      ? Effect.fail(new TokenRequestError({ reason: "unreachable", message: "No token endpoint configured" }))
      : discovery.document.pipe(
        Effect.mapError((cause) =>
          new TokenRequestError({ reason: "unreachable", message: "OpenID discovery failed", cause })
        ),
        Effect.flatMap((doc) =>
          doc.token_endpoint === undefined
            ? Effect.fail(new TokenRequestError({
              reason: "invalid_response",
              message: "The discovery document has no token_endpoint"
            }))
            : Effect.succeed(doc.token_endpoint)
        )
      )

    const requestToken = Effect.gen(function*() {
      const url = yield* endpoint
      const params: Record<string, string> = { grant_type: "client_credentials" }
      if (Option.isSome(config.scope)) params.scope = config.scope.value
      if (config.audience !== undefined) params.audience = config.audience
      let request = HttpClientRequest.post(url).pipe(HttpClientRequest.acceptJson)
      if ((config.authMethod ?? "client_secret_basic") === "client_secret_basic") {
        // RFC 6749 §2.3.1: id and secret are form-encoded before base64.
        const basic = Buffer.from(
          `${formEncode(config.clientId)}:${formEncode(Redacted.value(config.clientSecret))}`
        ).toString("base64")
        request = HttpClientRequest.setHeader(request, "authorization", `Basic ${basic}`)
      } else {
        params.client_id = config.clientId
        params.client_secret = Redacted.value(config.clientSecret)
      }
      request = HttpClientRequest.bodyUrlParams(request, params)
      const startedAt = yield* Clock.currentTimeMillis
      const response = yield* client.execute(request).pipe(
        Effect.timeout(timeout),
        Effect.mapError((cause) =>
          new TokenRequestError({ reason: "unreachable", message: `Token endpoint ${url} unreachable`, cause })
        )
      )
      if (response.status < 200 || response.status >= 300) {
        const body = yield* Effect.option(HttpClientResponse.schemaBodyJson(ErrorResponse)(response))
        return yield* Effect.fail(
          new TokenRequestError({
            reason: "rejected",
            status: response.status,
            error: Option.getOrUndefined(Option.map(body, (b) => b.error)),
            message: `Token endpoint refused the client credentials (${response.status}${
              Option.match(body, { onNone: () => "", onSome: (b) => `, ${b.error}` })
            })`
          })
        )
      }
      const body = yield* HttpClientResponse.schemaBodyJson(TokenResponse)(response).pipe(
        Effect.mapError((cause) =>
          new TokenRequestError({ reason: "invalid_response", message: "Malformed token response", cause })
        )
      )
      if (body.token_type !== undefined && body.token_type.toLowerCase() !== "bearer") {
        return yield* Effect.fail(new TokenRequestError({
          reason: "invalid_response",
          message: `Unsupported token type ${body.token_type}`
        }))
      }
      const lifetime = body.expires_in !== undefined ? body.expires_in * 1000 : Duration.toMillis(defaultLifetime)
      // Short-lived tokens are refreshed at half their life rather than never being reusable.
      const margin = Math.min(refreshBefore, lifetime / 2)
      return { token: Redacted.make(body.access_token), refreshAt: startedAt + lifetime - margin } satisfies AccessToken
    }).pipe(
      Effect.scoped,
      Effect.withSpan("ClientCredentials.requestToken", { attributes: { "oauth.client_id": config.clientId } })
    )

    const semaphore = yield* Effect.makeSemaphore(1)
    let cached: AccessToken | undefined

    const fresh = (now: number) => cached !== undefined && now < cached.refreshAt

    const token = Effect.gen(function*() {
      if (fresh(yield* Clock.currentTimeMillis)) return cached!.token
      return yield* semaphore.withPermits(1)(Effect.gen(function*() {
        // Whoever held the permit before us may have refreshed already.
        if (fresh(yield* Clock.currentTimeMillis)) return cached!.token
        const next = yield* requestToken
        cached = next
        return next.token
      }))
    })

    return {
      token,
      invalidate: Effect.sync(() => {
        cached = undefined
      }),
      reject: (rejected) =>
        Effect.sync(() => {
          if (cached !== undefined && Redacted.value(cached.token) === rejected) cached = undefined
        })
    }
  })

/** A provider for the service's own client from the environment (`AuthConfig.clientCredentials`). */
export const fromConfig = (
  options?: Parameters<typeof AuthConfig.clientCredentials>[0]
): Effect.Effect<TokenProvider, ConfigError.ConfigError, HttpClient.HttpClient> =>
  Effect.flatMap(AuthConfig.clientCredentials(options), make)

/**
 * Sends every request with the provider's token; a 401 answer drops the token and the request
 * is retried once with a new one.
 */
export const withToken = (provider: TokenProvider) =>
<E, R>(
  client: HttpClient.HttpClient.With<E, R>
): HttpClient.HttpClient.With<E | TokenRequestError | HttpClientError.HttpClientError, R> => {
  const authorized = HttpClient.mapRequestEffect(client, (request) =>
    Effect.map(provider.token, (token) => HttpClientRequest.bearerToken(request, Redacted.value(token))))
  return HttpClient.transform(authorized, (response, request) =>
    Effect.flatMap(response, (res) => {
      if (res.status !== 401) return Effect.succeed(res)
      const sent = res.request.headers["authorization"]?.replace(/^Bearer /, "") ?? ""
      return Effect.zipRight(provider.reject(sent), authorized.execute(request))
    }))
}
