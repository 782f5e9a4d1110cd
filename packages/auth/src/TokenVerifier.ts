/**
 * Access-token verification with `jose` against the identity provider's JWKS.
 *
 * Checks, in order: the token is a compact JWS of sane size; its `alg` is in the allow-list
 * (`none` and `HS*` never are, so unsigned tokens and HMAC-with-the-public-key forgeries fail
 * before any key is looked at); the signature verifies with a key of the JWKS; `iss` equals the
 * configured issuer; `aud` contains a configured audience (when configured); `exp` and `nbf`
 * hold within the clock tolerance; the required claims are present; it is an access token
 * (`notAccessToken`: Keycloak signs ID, refresh and logout tokens with the same key and issuer).
 *
 * A verifier without an audience logs a warning when it is built: it accepts tokens the identity
 * provider issued for any other client.
 *
 * Keys: the JWKS URL is `PLATFORM_OIDC_JWKS_URI` or discovered from the issuer. The key set is
 * fetched on first use, refreshed when older than `jwksMaxAge`, and refetched when a token names
 * a `kid` it does not contain (key rotation), at most once per `jwksCooldown` so a flood of
 * tokens with made-up `kid`s cannot hammer the identity provider. If a refresh fails, the
 * previous keys stay in use.
 *
 * Verified tokens are remembered (`TokenCache`: by their SHA-256, until `exp`, at most
 * `cache.ttl`, bounded, dropped when their key leaves the key set), so a token seen again costs a
 * hash and a map lookup instead of a signature check.
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
import * as TokenCache from "./TokenCache.js"

export interface TokenVerifier {
  readonly config: AuthConfig.VerifierConfig
  /** The verified claims of a token (always checked, never from the cache). */
  readonly verifyClaims: (token: string) => Effect.Effect<Jose.JWTPayload, AuthFailure>
  /** The subject of a verified token (a token verified before comes from the cache). */
  readonly verify: (token: string) => Effect.Effect<Subject.Subject, AuthFailure>
  /**
   * The subject of a token `verify` accepted before and would accept now without checking it
   * again (in the cache, not expired, its key still published, no key refresh due); `undefined`
   * otherwise, and then only `verify` can tell. Synchronous, for hot paths.
   */
  readonly cached: (token: string) => Subject.Subject | undefined
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

/**
 * The `typ` claim values of access tokens: Keycloak writes `Bearer` (its other signed tokens say
 * `ID`, `Refresh`, `Offline`, `Logout`, `Serialized-ID`; a DPoP-bound token says `DPoP`, and is
 * refused because its proof of possession is not checked here); other identity providers write no
 * `typ` claim. Compared case-insensitively, as RFC 6750 compares the scheme.
 */
export const accessTokenTypes: ReadonlyArray<string> = ["bearer"]

/**
 * JOSE header `typ` values of access tokens (compared case-insensitively, `application/` optional,
 * RFC 7515 §4.1.9): `at+jwt` (RFC 9068) and the generic `JWT`, or none.
 */
export const accessTokenHeaderTypes: ReadonlyArray<string> = ["jwt", "at+jwt"]

const mediaType = (typ: string) => typ.toLowerCase().replace(/^application\//, "")

/** Refuses a verified token that is not an access token, naming the `typ` it carries. */
export const notAccessToken = (
  payload: Jose.JWTPayload,
  header: Jose.ProtectedHeaderParameters
): AuthFailure | undefined => {
  if ("typ" in payload && !(typeof payload.typ === "string" && accessTokenTypes.includes(payload.typ.toLowerCase()))) {
    return failure("wrong_token_type", { message: `Token is not an access token (typ ${JSON.stringify(payload.typ)})` })
  }
  if (header.typ !== undefined && !accessTokenHeaderTypes.includes(mediaType(String(header.typ)))) {
    return failure("wrong_token_type", {
      message: `Token is not an access token (header typ ${JSON.stringify(header.typ)})`
    })
  }
  return undefined
}

const stripSlash = (s: string) => s.replace(/\/+$/, "")

/** The `kid`s of a JWKS document. */
const kidsOf = (json: unknown): ReadonlySet<string> => {
  const keys = typeof json === "object" && json !== null && "keys" in json && Array.isArray(json.keys) ? json.keys : []
  return new Set(keys.flatMap((key: unknown) =>
    typeof key === "object" && key !== null && "kid" in key && typeof key.kid === "string" ? [key.kid] : []
  ))
}

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
            Effect.try(() => ({
              keys: Jose.createLocalJWKSet(json as Jose.JSONWebKeySet),
              kids: kidsOf(json)
            }))
          ),
          Effect.mapError((cause) => failure("key_set_unavailable", { cause })),
          Effect.withSpan("TokenVerifier.fetchKeys", { attributes: { "url.full": uri } })
        )
      )
    )

    const semaphore = yield* Effect.makeSemaphore(1)
    const state = {
      keys: undefined as ReturnType<typeof Jose.createLocalJWKSet> | undefined,
      /** The `kid`s of the key set in use. */
      kids: new Set<string>() as ReadonlySet<string>,
      /** Counts the key sets fetched (cache entries remember theirs). */
      generation: 0,
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
            state.keys = result.right.keys
            state.kids = result.right.kids
            state.generation++
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
        })).pipe(Effect.flatMap((result) => {
          const wrongType = notAccessToken(result.payload, result.protectedHeader)
          return wrongType === undefined ? Effect.succeed(result) : Effect.fail(wrongType)
        }))

    /** The verified payload and the `kid` of the key that verified it. */
    const verifyToken = (token: string) =>
      Effect.gen(function*() {
        yield* checkHeader(token, config.algorithms)
        const keys = yield* currentKeys
        const first = yield* Effect.either(jwtVerify(token, keys))
        if (first._tag === "Right") return first.right
        if (first.left.reason !== "unknown_key") return yield* Effect.fail(first.left)
        // Unknown kid: the keys may have rotated. Rate-limited refetch, then one more try.
        const before = state.fetchedAt
        yield* refresh(cooldown)
        if (state.fetchedAt === before || state.keys === undefined) return yield* Effect.fail(first.left)
        return yield* jwtVerify(token, state.keys)
      }).pipe(Effect.withSpan("TokenVerifier.verify"))

    if (config.audience.length === 0) {
      yield* Effect.logWarning(
        "No audience configured (PLATFORM_OIDC_AUDIENCE is not set): tokens the identity provider issued for any " +
          "audience, other clients and services included, are accepted. Set PLATFORM_OIDC_AUDIENCE to the audience " +
          "of this platform's access tokens."
      ).pipe(Effect.annotateLogs({ issuer: config.issuer }))
    }

    const clock = yield* Effect.clock
    const cache = new TokenCache.TokenCache<Subject.Subject>(
      config.cache ?? TokenCache.defaults,
      () => clock.unsafeCurrentTimeMillis()
    )
    const hasKid = (kid: string) => state.kids.has(kid)
    /** A refresh of the key set is due: cached tokens wait for it (their key may be gone). */
    const refreshDue = () => {
      const now = clock.unsafeCurrentTimeMillis()
      return state.keys === undefined || (now - state.fetchedAt > maxAge && now - state.attemptedAt >= failureBackoff)
    }
    const lookup = (key: string): Subject.Subject | undefined =>
      !cache.enabled || refreshDue() ? undefined : cache.get(key, state.generation, hasKid)

    const verify = (token: string): Effect.Effect<Subject.Subject, AuthFailure> =>
      Effect.suspend(() => {
        const key = cache.enabled ? TokenCache.keyOf(token) : ""
        const hit = lookup(key)
        if (hit !== undefined) return Effect.succeed(hit)
        return Effect.map(verifyToken(token), ({ payload, protectedHeader }) => {
          const subject = Subject.fromClaims(payload)
          cache.set(key, subject, payload.exp, protectedHeader.kid, state.generation)
          return subject
        })
      })

    return {
      config,
      verifyClaims: (token) => Effect.map(verifyToken(token), (result) => result.payload),
      verify,
      cached: (token) => cache.enabled ? lookup(TokenCache.keyOf(token)) : undefined
    }
  })

/** A verifier from the given configuration, fetching keys with its own HTTP client. */
export const layerWith = (config: AuthConfig.VerifierConfig): Layer.Layer<TokenVerifier> =>
  Layer.effect(TokenVerifier, make(config)).pipe(Layer.provide(NodeHttpClient.layerUndici))

/**
 * A verifier trusting tokens of `issuer` (keys from its discovery document) with the defaults of
 * `AuthConfig.verifier`, changed by `overrides`: for tests and launchers that know the issuer.
 */
export const layerFor = (
  issuer: string,
  overrides: Partial<Omit<AuthConfig.VerifierConfig, "issuer">> = {}
): Layer.Layer<TokenVerifier> => layerWith({ ...AuthConfig.verifierFor(issuer), ...overrides })

/** A verifier configured from the environment (`AuthConfig`). */
export const layer: Layer.Layer<TokenVerifier, import("effect/ConfigError").ConfigError> = Layer.unwrapEffect(
  Effect.map(AuthConfig.verifier, layerWith)
)
