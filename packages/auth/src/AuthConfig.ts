/**
 * Environment of token verification and of outbound client credentials (design.md names):
 *
 * | variable | default | meaning |
 * |---|---|---|
 * | `PLATFORM_OIDC_BASE_URL` | required | issuer; discovery at `<issuer>/.well-known/openid-configuration` |
 * | `PLATFORM_OIDC_JWKS_URI` | discovered | explicit JWKS URL (skips discovery for keys) |
 * | `PLATFORM_OIDC_AUDIENCE` | unset (the verifier warns at start) | comma-separated; when set, `aud` must contain one of them |
 * | `PLATFORM_OIDC_ALGORITHMS` | `RS256,ES256` | allowed signature algorithms (asymmetric only) |
 * | `PLATFORM_OIDC_CLOCK_TOLERANCE` | `30 seconds` | leeway for `exp`/`nbf` |
 * | `JWT_HEADER_NAME` | `x-auth-request-access-token` | header set by an authenticating proxy |
 * | `PLATFORM_OIDC_TOKEN_CACHE_SIZE` | 10000 | verified tokens remembered (0: none) |
 * | `PLATFORM_OIDC_TOKEN_CACHE_TTL` | `60 seconds` | longest a verified token is remembered (never past its `exp`) |
 * | `PLATFORM_OIDC_CLIENT_ID` / `_CLIENT_SECRET` | required for outbound calls | the service's own client |
 * | `PLATFORM_OIDC_TOKEN_ENDPOINT` | discovered | explicit token endpoint |
 * | `PLATFORM_OIDC_SCOPE` | unset | default scope of outbound tokens |
 */
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import { defaults as cacheDefaults, type TokenCacheOptions } from "./TokenCache.js"

/** Asymmetric JWS algorithms. HMAC (`HS*`) is refused: with a JWKS of public keys it is the
 * classic key-confusion attack, and shared secrets have no place between services here. */
export const asymmetricAlgorithms = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519"
] as const

export const defaultAlgorithms: ReadonlyArray<string> = ["RS256", "ES256"]
export const defaultClockTolerance: Duration.Duration = Duration.seconds(30)
export const defaultJwtHeaderName = "x-auth-request-access-token"

export interface VerifierConfig {
  /** Expected `iss` (trailing slashes are ignored on both sides). */
  readonly issuer: string
  readonly jwksUri: Option.Option<string>
  /** Empty: `aud` is not checked (and `TokenVerifier.make` logs a warning). */
  readonly audience: ReadonlyArray<string>
  readonly algorithms: ReadonlyArray<string>
  readonly clockTolerance: Duration.Duration
  /** Lower-case header name of the authenticating proxy. */
  readonly jwtHeaderName: string
  /** Claims a token must carry (default `exp`, `sub`). */
  readonly requiredClaims?: ReadonlyArray<string> | undefined
  /** Keys are refetched after this age (default 10 minutes). */
  readonly jwksMaxAge?: Duration.DurationInput | undefined
  /** At most one refetch for unknown `kid`s within this window (default 30 seconds). */
  readonly jwksCooldown?: Duration.DurationInput | undefined
  /** Timeout of discovery and JWKS requests (default 5 seconds). */
  readonly fetchTimeout?: Duration.DurationInput | undefined
  /** Verified tokens remembered (default 10,000 for 60 seconds; `maxSize: 0` turns it off). */
  readonly cache?: TokenCacheOptions | undefined
}

const list = (name: string) =>
  Config.map(Config.string(name), (s) => s.split(",").map((x) => x.trim()).filter((x) => x !== ""))

export const algorithms: Config.Config<ReadonlyArray<string>> = Config.mapOrFail(
  list("PLATFORM_OIDC_ALGORITHMS"),
  (algs) => {
    const bad = algs.filter((alg) => !(asymmetricAlgorithms as ReadonlyArray<string>).includes(alg))
    if (bad.length > 0 || algs.length === 0) {
      return Either.left(ConfigError.InvalidData(
        ["PLATFORM_OIDC_ALGORITHMS"],
        `Only asymmetric algorithms are allowed (${asymmetricAlgorithms.join(", ")}); got ${bad.join(", ") || "none"}`
      ))
    }
    return Either.right(algs)
  }
).pipe(Config.withDefault(defaultAlgorithms))

/** `PLATFORM_OIDC_TOKEN_CACHE_SIZE` and `PLATFORM_OIDC_TOKEN_CACHE_TTL`. */
export const tokenCache: Config.Config<TokenCacheOptions> = Config.all({
  maxSize: Config.integer("PLATFORM_OIDC_TOKEN_CACHE_SIZE").pipe(
    Config.validate({ message: "PLATFORM_OIDC_TOKEN_CACHE_SIZE must be zero or a positive integer", validation: (n) => n >= 0 }),
    Config.withDefault(cacheDefaults.maxSize)
  ),
  ttl: Config.duration("PLATFORM_OIDC_TOKEN_CACHE_TTL").pipe(Config.withDefault(Duration.decode(cacheDefaults.ttl)))
})

export const verifier: Config.Config<VerifierConfig> = Config.all({
  issuer: Config.nonEmptyString("PLATFORM_OIDC_BASE_URL"),
  jwksUri: Config.option(Config.nonEmptyString("PLATFORM_OIDC_JWKS_URI")),
  audience: list("PLATFORM_OIDC_AUDIENCE").pipe(Config.withDefault([] as ReadonlyArray<string>)),
  algorithms,
  clockTolerance: Config.duration("PLATFORM_OIDC_CLOCK_TOLERANCE").pipe(Config.withDefault(defaultClockTolerance)),
  jwtHeaderName: Config.string("JWT_HEADER_NAME").pipe(
    Config.withDefault(defaultJwtHeaderName),
    Config.map((s) => s.trim().toLowerCase())
  ),
  cache: tokenCache
})

/** The settings `verifier` reads for `issuer` from an environment that sets nothing else. */
export const verifierFor = (issuer: string): VerifierConfig => ({
  issuer,
  jwksUri: Option.none(),
  audience: [],
  algorithms: defaultAlgorithms,
  clockTolerance: defaultClockTolerance,
  jwtHeaderName: defaultJwtHeaderName,
  cache: cacheDefaults
})

export type ClientAuthMethod = "client_secret_basic" | "client_secret_post"

export interface ClientCredentialsConfig {
  /** Issuer for discovering the token endpoint, unless `tokenEndpoint` is set. */
  readonly issuer: Option.Option<string>
  readonly tokenEndpoint: Option.Option<string>
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted
  /** Space-separated scopes to request; none: the client's default scopes. */
  readonly scope: Option.Option<string>
  readonly audience?: string | undefined
  readonly authMethod?: ClientAuthMethod | undefined
  /** Refresh this long before `expires_in` runs out (default 30 seconds). */
  readonly refreshBefore?: Duration.DurationInput | undefined
  /** Timeout of a token request (default 10 seconds). */
  readonly requestTimeout?: Duration.DurationInput | undefined
}

/**
 * The service's client from the environment. `scope` overrides `PLATFORM_OIDC_SCOPE`, for a
 * service that needs tokens with different scopes per upstream (`DT_CLIENT_SCOPE`, ...).
 */
export const clientCredentials = (options?: {
  readonly scope?: Config.Config<Option.Option<string>> | undefined
}): Config.Config<ClientCredentialsConfig> =>
  Config.all({
    issuer: Config.option(Config.nonEmptyString("PLATFORM_OIDC_BASE_URL")),
    tokenEndpoint: Config.option(Config.nonEmptyString("PLATFORM_OIDC_TOKEN_ENDPOINT")),
    clientId: Config.nonEmptyString("PLATFORM_OIDC_CLIENT_ID"),
    clientSecret: Config.redacted("PLATFORM_OIDC_CLIENT_SECRET"),
    scope: options?.scope ??
      Config.option(Config.string("PLATFORM_OIDC_SCOPE")).pipe(
        Config.map(Option.filter((s) => s.trim() !== ""))
      )
  }).pipe(
    Config.mapOrFail((config) =>
      Option.isNone(config.issuer) && Option.isNone(config.tokenEndpoint)
        ? Either.left(ConfigError.MissingData(
          ["PLATFORM_OIDC_BASE_URL"],
          "Set PLATFORM_OIDC_BASE_URL (or PLATFORM_OIDC_TOKEN_ENDPOINT) for client credentials"
        ))
        : Either.right(config)
    )
  )
