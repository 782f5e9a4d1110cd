/**
 * Access-token verification with `jose` against the identity provider's JWKS.
 *
 * Checks, in order: the token is a compact JWS of sane size; its `alg` is in the allow-list
 * (`none` and `HS*` never are, so unsigned tokens and HMAC-with-the-public-key forgeries fail
 * before any key is looked at); the signature verifies with a key of the JWKS; `iss` equals the
 * configured issuer; `aud` contains a configured audience (when configured); `exp` and `nbf`
 * hold within the clock tolerance; the required claims are present.
 *
 * Keys: the JWKS URL is `PLATFORM_OIDC_JWKS_URI` or discovered from the issuer. The key set is
 * fetched on first use, refreshed when older than `jwksMaxAge`, and refetched when a token names
 * a `kid` it does not contain (key rotation), at most once per `jwksCooldown` so a flood of
 * tokens with made-up `kid`s cannot hammer the identity provider. If a refresh fails, the
 * previous keys stay in use.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Jose from "jose"
import * as AuthConfig from "./AuthConfig.js"
import { AuthFailure } from "./AuthFailure.js"
import * as Discovery from "./Discovery.js"
import * as Subject from "./Subject.js"

export interface TokenVerifier {
  readonly config: AuthConfig.VerifierConfig
  /** The verified claims of a token. */
  readonly verifyClaims: (token: string) => Effect.Effect<Jose.JWTPayload, AuthFailure>
  /** The subject of a verified token. */
  readonly verify: (token: string) => Effect.Effect<Subject.Subject, AuthFailure>
}

export const TokenVerifier = Context.GenericTag<TokenVerifier>("@rec/auth/TokenVerifier")

/** Tokens above this size are refused unparsed (Keycloak tokens are a few KB). */
const maxTokenLength = 16 * 1024

const failure = AuthFailure.of

/** Maps a jose error to the reason a client is told. */
export const classify = (error: unknown): AuthFailure => {
  if (!(error instanceof Jose.errors.JOSEError)) return failure("malformed_token", { cause: error })
  switch (error.code) {
    case "ERR_JWT_EXPIRED":
      return failure("expired", { cause: error })
    case "ERR_JWT_CLAIM_VALIDATION_FAILED": {
      const { claim, reason } = error as Jose.errors.JWTClaimValidationFailed
      // An absent `iss`/`aud` is as wrong as a different one.
      if (claim === "iss") return failure("wrong_issuer", { cause: error })
      if (claim === "aud") return failure("wrong_audience", { cause: error })
      if (reason === "missing") {
        return failure("missing_claim", { message: `Token is missing the required claim "${claim}"`, cause: error })
      }
      if (claim === "nbf" || claim === "iat") return failure("not_yet_valid", { cause: error })
      return failure("invalid_claims", { cause: error })
    }
    case "ERR_JWS_SIGNATURE_VERIFICATION_FAILED":
      return failure("bad_signature", { cause: error })
    case "ERR_JOSE_ALG_NOT_ALLOWED":
      return failure("algorithm_not_allowed", { cause: error })
    case "ERR_JWKS_NO_MATCHING_KEY":
      return failure("unknown_key", { cause: error })
    default:
      return failure("malformed_token", { cause: error })
  }
}

/** Structural checks before any key is used. */
export const checkHeader = (
  token: string,
  algorithms: ReadonlyArray<string>
): Effect.Effect<Jose.ProtectedHeaderParameters, AuthFailure> =>
  Effect.suspend(() => {
    if (token.length > maxTokenLength || token.split(".").length !== 3) {
      return Effect.fail(failure("malformed_token"))
    }
    let header: Jose.ProtectedHeaderParameters
    try {
      header = Jose.decodeProtectedHeader(token)
    } catch (cause) {
      return Effect.fail(failure("malformed_token", { cause }))
    }
    if (typeof header.alg !== "string" || !algorithms.includes(header.alg)) {
      return Effect.fail(failure("algorithm_not_allowed", {
        message: `Token algorithm ${JSON.stringify(header.alg ?? null)} is not allowed`
      }))
    }
    return Effect.succeed(header)
  })

const stripSlash = (s: string) => s.replace(/\/+$/, "")

/** Builds a verifier; needs an `HttpClient` for discovery and the JWKS. */
export const make = (config: AuthConfig.VerifierConfig): Effect.Effect<TokenVerifier, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const fetchTimeout = config.fetchTimeout ?? Duration.seconds(5)
    const maxAge = Duration.toMillis(config.jwksMaxAge ?? Duration.minutes(10))
    const cooldown = Duration.toMillis(config.jwksCooldown ?? Duration.seconds(30))
    // After a failed fetch, wait this long before trying again (unless keys are missing).
    const failureBackoff = Math.min(cooldown, 5_000)
    const discovery = yield* Discovery.make(config.issuer, { timeout: fetchTimeout })
    const issuer = stripSlash(config.issuer)
    const options: Jose.JWTVerifyOptions = {
      issuer: [issuer, `${issuer}/`],
      audience: config.audience.length > 0 ? [...config.audience] : undefined,
      algorithms: [...config.algorithms],
      clockTolerance: Math.floor(Duration.toSeconds(config.clockTolerance)),
      requiredClaims: [...(config.requiredClaims ?? ["exp", "sub"])]
    }

    const jwksUri: Effect.Effect<string, AuthFailure> = Option.match(config.jwksUri, {
      onSome: Effect.succeed,
      onNone: () =>
        discovery.document.pipe(
          Effect.mapError((cause) => failure("key_set_unavailable", { cause })),
          Effect.flatMap((doc) =>
            doc.jwks_uri === undefined
              ? Effect.fail(failure("key_set_unavailable", {
                cause: new Error(`The discovery document of ${config.issuer} has no jwks_uri`)
              }))
              : Effect.succeed(doc.jwks_uri)
          )
        )
    })

    const fetchKeys = jwksUri.pipe(
      Effect.flatMap((uri) =>
        client.get(uri, { acceptJson: true }).pipe(
          Effect.flatMap(HttpClientResponse.filterStatusOk),
          Effect.flatMap((response) => response.json),
          Effect.scoped,
          Effect.timeout(fetchTimeout),
          Effect.flatMap((json) =>
            Effect.try(() => Jose.createLocalJWKSet(json as Jose.JSONWebKeySet))
          ),
          Effect.mapError((cause) => failure("key_set_unavailable", { cause })),
          Effect.withSpan("TokenVerifier.fetchKeys", { attributes: { "url.full": uri } })
        )
      )
    )

    const semaphore = yield* Effect.makeSemaphore(1)
    const state = {
      keys: undefined as ReturnType<typeof Jose.createLocalJWKSet> | undefined,
      fetchedAt: Number.NEGATIVE_INFINITY,
      attemptedAt: Number.NEGATIVE_INFINITY
    }

    /** One fetch at a time; a caller that waited while another fetched uses that result. */
    const refresh = (minInterval: number) =>
      Effect.gen(function*() {
        const requestedAt = yield* Clock.currentTimeMillis
        yield* semaphore.withPermits(1)(Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          if (state.attemptedAt >= requestedAt || now - state.attemptedAt < minInterval) return
          state.attemptedAt = now
          const result = yield* Effect.either(fetchKeys)
          if (result._tag === "Right") {
            state.keys = result.right
            state.fetchedAt = now
          } else {
            yield* Effect.logWarning("Fetching the JWKS failed", Cause.fail(result.left.cause))
          }
        }))
      })

    const currentKeys = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      if (state.keys === undefined) {
        yield* refresh(failureBackoff)
      } else if (now - state.fetchedAt > maxAge) {
        yield* refresh(failureBackoff)
      }
      if (state.keys === undefined) return yield* Effect.fail(failure("key_set_unavailable"))
      return state.keys
    })

    const jwtVerify = (token: string, keys: ReturnType<typeof Jose.createLocalJWKSet>) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.tryPromise({
          try: () => Jose.jwtVerify(token, keys, { ...options, currentDate: new Date(now) }),
          catch: classify
        }))

    const verifyClaims = (token: string) =>
      Effect.gen(function*() {
        yield* checkHeader(token, config.algorithms)
        const keys = yield* currentKeys
        const first = yield* Effect.either(jwtVerify(token, keys))
        if (first._tag === "Right") return first.right.payload
        if (first.left.reason !== "unknown_key") return yield* Effect.fail(first.left)
        // Unknown kid: the keys may have rotated. Rate-limited refetch, then one more try.
        const before = state.fetchedAt
        yield* refresh(cooldown)
        if (state.fetchedAt === before || state.keys === undefined) return yield* Effect.fail(first.left)
        return (yield* jwtVerify(token, state.keys)).payload
      }).pipe(Effect.withSpan("TokenVerifier.verify"))

    return {
      config,
      verifyClaims,
      verify: (token) => Effect.map(verifyClaims(token), (claims) => Subject.fromClaims(claims))
    }
  })

/** A verifier from the given configuration, fetching keys with its own HTTP client. */
export const layerWith = (config: AuthConfig.VerifierConfig): Layer.Layer<TokenVerifier> =>
  Layer.effect(TokenVerifier, make(config)).pipe(Layer.provide(NodeHttpClient.layerUndici))

/** A verifier configured from the environment (`AuthConfig`). */
export const layer: Layer.Layer<TokenVerifier, import("effect/ConfigError").ConfigError> = Layer.unwrapEffect(
  Effect.map(AuthConfig.verifier, layerWith)
)
