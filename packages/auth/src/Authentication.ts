/**
 * Bearer-token authentication for `HttpApi` contracts.
 *
 * The token is read from the header named by `JWT_HEADER_NAME` (default
 * `x-auth-request-access-token`, set by an authenticating proxy such as oauth2-proxy), else from
 * `Authorization: Bearer <token>` (scheme case-insensitive). An `Authorization` header that is
 * not exactly `Bearer <token>` is refused as malformed rather than ignored.
 *
 * Two middleware tags:
 * - `Authentication` provides `CurrentSubject`; no token or an invalid one gives 401.
 * - `OptionalAuthentication` provides `MaybeSubject` (`Option<Subject>`); no token at all gives
 *   `None` (anonymous), an invalid token still gives 401. The policy service uses it for its
 *   anonymous-subject mode.
 *
 * 401 bodies use the platform error model, `HttpErrors.Unauthorized` whose `detail` is the
 * failure's message (`Token has expired`, `Invalid audience`, ... see `AuthFailure`), with a
 * `WWW-Authenticate: Bearer` header (RFC 6750) carrying the same text. When the identity
 * provider's keys cannot be fetched the answer is 503 `HttpErrors.ServiceUnavailable` naming it.
 *
 * A service whose contract needs other bodies (the policy service's `{detail}`) declares its own
 * tag and builds the implementation with `bearer({ onFailure })`.
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as HttpApp from "@effect/platform/HttpApp"
import type * as Headers from "@effect/platform/Headers"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import { HttpErrors, RequestContext } from "@rec/platform"
import * as Context from "effect/Context"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { AuthFailure } from "./AuthFailure.js"
import type { Subject } from "./Subject.js"
import { TokenVerifier } from "./TokenVerifier.js"

/** The authenticated subject of the request. */
export class CurrentSubject extends Context.Tag("@rec/auth/CurrentSubject")<CurrentSubject, Subject>() {}

/** The subject, or `None` for an anonymous request (no token sent). */
export class MaybeSubject extends Context.Tag("@rec/auth/MaybeSubject")<MaybeSubject, Option.Option<Subject>>() {}

const security = {
  bearer: HttpApiSecurity.bearer.pipe(
    HttpApiSecurity.annotate(
      OpenApi.Description,
      "An OpenID Connect access token, as `Authorization: Bearer <token>` or in the header an " +
        "authenticating proxy sets (`JWT_HEADER_NAME`, default `x-auth-request-access-token`)."
    )
  )
}

export const AuthenticationErrors = Schema.Union(HttpErrors.Unauthorized, HttpErrors.ServiceUnavailable)

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@rec/auth/Authentication", {
  failure: AuthenticationErrors,
  provides: CurrentSubject,
  security
}) {}

export class OptionalAuthentication extends HttpApiMiddleware.Tag<OptionalAuthentication>()(
  "@rec/auth/OptionalAuthentication",
  { failure: AuthenticationErrors, provides: MaybeSubject, security }
) {}

const whitespace = /\s/

const stripBearer = (value: string): string => value.replace(/^bearer\s+/i, "").trim()

/**
 * The token of a request: `None` when neither header is present, a failure when the
 * `Authorization` header is not `Bearer <token>`.
 */
export const extractToken = (
  headers: Headers.Headers,
  jwtHeaderName: string
): Either.Either<Option.Option<string>, AuthFailure> => {
  const proxied = headers[jwtHeaderName]
  if (proxied !== undefined && proxied.trim() !== "") {
    const token = stripBearer(proxied.trim())
    return token === "" ? Either.left(AuthFailure.of("malformed_token")) : Either.right(Option.some(token))
  }
  const authorization = headers["authorization"]
  if (authorization === undefined) return Either.right(Option.none())
  // The usual form, `Bearer <token>` with one space, without splitting the header.
  if (authorization.length > 7 && authorization.charCodeAt(6) === 32 && /^bearer$/i.test(authorization.slice(0, 6))) {
    const token = authorization.slice(7)
    if (!whitespace.test(token)) return Either.right(Option.some(token))
  }
  if (authorization.trim() === "") return Either.right(Option.none())
  const parts = authorization.trim().split(/\s+/)
  if (parts.length !== 2 || parts[0].toLowerCase() !== "bearer") {
    return Either.left(AuthFailure.of("invalid_authorization_header"))
  }
  return Either.right(Option.some(parts[1]))
}

/**
 * The caller of a request whose token `verifier` has verified before and still trusts
 * (`TokenVerifier.cached`), without any effect, for hot paths (the policy service's fast
 * routes): `None` when the request carries no token at all, `undefined` when only the
 * middleware can tell (a token not in the cache, a malformed header: it answers those).
 */
export const knownSubject = (
  headers: Headers.Headers,
  verifier: TokenVerifier
): Option.Option<Subject> | undefined => {
  const token = extractToken(headers, verifier.config.jwtHeaderName)
  if (Either.isLeft(token)) return undefined
  if (Option.isNone(token.right)) return Option.none()
  const subject = verifier.cached(token.right.value)
  return subject === undefined ? undefined : Option.some(subject)
}

const quote = (s: string) => s.replace(/["\\]/g, "")

/** RFC 6750 challenge; no error code when no credentials were sent. */
export const challenge = (failure: AuthFailure): string =>
  failure.reason === "missing_token"
    ? "Bearer"
    : `Bearer error="invalid_token", error_description="${quote(failure.message)}"`

const addChallenge = (failure: AuthFailure): Effect.Effect<void> =>
  failure.isCredentialProblem
    ? HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(
        response.status === 401
          ? HttpServerResponse.setHeader(response, "www-authenticate", challenge(failure))
          : response
      )
    )
    : Effect.void

/** The platform's mapping: 401 `Unauthorized` saying why, or 503 for key outages. */
export const toPlatformError = (
  failure: AuthFailure
): HttpErrors.Unauthorized | HttpErrors.ServiceUnavailable =>
  failure.isCredentialProblem
    ? new HttpErrors.Unauthorized({ detail: failure.message })
    : new HttpErrors.ServiceUnavailable({
      detail: `${failure.message}: the identity provider cannot be reached, try again shortly`
    })

export interface BearerOptions<E> {
  /** The error the contract declares for failed authentication. */
  readonly onFailure: (failure: AuthFailure) => E
}

const logFailure = (failure: AuthFailure) =>
  failure.isCredentialProblem
    ? Effect.logDebug(`Authentication failed: ${failure.reason}`)
    : Effect.logWarning(`Authentication impossible: ${failure.reason}`, Cause.fail(failure.cause))

const noSubject = Effect.succeed(Option.none<Subject>())

const authenticate = <E>(
  verifier: TokenVerifier,
  options: BearerOptions<E>
): Effect.Effect<Option.Option<Subject>, E, HttpServerRequest.HttpServerRequest> => {
  const failed = (failure: AuthFailure) =>
    Effect.zipRight(
      Effect.zipRight(logFailure(failure), addChallenge(failure)),
      Effect.fail(options.onFailure(failure))
    )
  const authenticated = (subject: Subject) => Effect.as(RequestContext.annotateUser(subject.id), Option.some(subject))
  return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const token = extractToken(request.headers, verifier.config.jwtHeaderName)
    if (Either.isLeft(token)) return failed(token.left)
    if (Option.isNone(token.right)) return noSubject
    // A token verified before: no effect needed to verify it again.
    const known = verifier.cached(token.right.value)
    if (known !== undefined) return authenticated(known)
    return Effect.matchEffect(verifier.verify(token.right.value), { onFailure: failed, onSuccess: authenticated })
  })
}

/**
 * The implementation of a bearer middleware tag (one with `security: { bearer }` providing a
 * `Subject`), with the contract's own failure type. For tags providing `Option<Subject>`, use
 * `bearerOptional`.
 */
export const bearer = <E>(
  options: BearerOptions<E>
): Effect.Effect<
  { readonly bearer: (token: Redacted.Redacted) => Effect.Effect<Subject, E, HttpServerRequest.HttpServerRequest> },
  never,
  TokenVerifier
> =>
  Effect.map(TokenVerifier, (verifier) => ({
    bearer: () =>
      authenticate(verifier, options).pipe(
        Effect.flatMap(Option.match({
          onSome: Effect.succeed,
          onNone: () => {
            const failure = AuthFailure.of("missing_token")
            return Effect.zipRight(addChallenge(failure), Effect.fail(options.onFailure(failure)))
          }
        }))
      )
  }))

/** Like `bearer`, but a request without any token is anonymous (`None`). */
export const bearerOptional = <E>(
  options: BearerOptions<E>
): Effect.Effect<
  {
    readonly bearer: (
      token: Redacted.Redacted
    ) => Effect.Effect<Option.Option<Subject>, E, HttpServerRequest.HttpServerRequest>
  },
  never,
  TokenVerifier
> => Effect.map(TokenVerifier, (verifier) => ({ bearer: () => authenticate(verifier, options) }))

/** `Authentication` with the platform error bodies; needs a `TokenVerifier`. */
export const layer: Layer.Layer<Authentication, never, TokenVerifier> = Layer.effect(
  Authentication,
  bearer({ onFailure: toPlatformError })
)

/** `OptionalAuthentication` with the platform error bodies; needs a `TokenVerifier`. */
export const layerOptional: Layer.Layer<OptionalAuthentication, never, TokenVerifier> = Layer.effect(
  OptionalAuthentication,
  bearerOptional({ onFailure: toPlatformError })
)
