/**
 * Who is calling, and may they: every route starts with `Access.enter(area, action)`, which asks
 * `policies/participant_gateway/access.rego` (package `rec.participant_gateway.access`) through
 * `@rec/policy`'s `PolicyEngine` and answers the caller: the verified subject and the access
 * token to forward to the services behind the gateway. Fail closed: no decision (policies not
 * loaded, policy service unreachable) is a 503, an evaluation error a 500, never an allow.
 *
 * The contract's routes are authenticated by `@rec/auth`'s middleware before `enter`; the raw
 * assistant proxy authenticates with `authenticate` (the same token rules and 401 bodies).
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { AuthFailure, Authentication, type Subject, TokenVerifier } from "@rec/auth"
import { PolicyEngine, PolicyInput } from "@rec/policy"
import { HttpErrors, RequestContext } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

export const policyPackage = "rec.participant_gateway.access"

export type Area = "profile" | "overview" | "notifications" | "settings" | "flexibility" | "assistant"

export type Action = "read" | "write"

/** The authenticated caller: whom the gateway acts for, and the token it acts with. */
export interface Caller {
  readonly subject: Subject.Subject
  readonly token: Redacted.Redacted
}

export type Denied = HttpErrors.Forbidden | HttpErrors.ServiceUnavailable | HttpErrors.InternalServerError

/** A failed authentication of the raw route, with the challenge its 401 carries. */
export class Unauthenticated {
  readonly _tag = "Unauthenticated"
  constructor(readonly failure: AuthFailure.AuthFailure) {}
}

export class Access extends Effect.Service<Access>()("participant-gateway/Access", {
  effect: Effect.gen(function*() {
    const engine = yield* PolicyEngine
    const verifier = yield* TokenVerifier.TokenVerifier
    const jwtHeader = verifier.config.jwtHeaderName

    const decide = (subject: Subject.Subject, area: Area, action: Action) =>
      Effect.gen(function*() {
        const input = PolicyInput.make({
          subject: PolicyInput.subjectOf(subject),
          resource: { type: `participant_gateway.${area}`, id: subject.id, attributes: { owner_id: subject.id } },
          action: { name: action },
          requestId: yield* RequestContext.requestId
        })
        const decision = yield* engine.decide(policyPackage, input).pipe(
          Effect.catchTags({
            PolicyUnavailable: (e) =>
              Effect.fail(
                new HttpErrors.ServiceUnavailable({ detail: `Authorization is unavailable (${e.message}); try again shortly` })
              ),
            PolicyEvaluationError: (e) =>
              Effect.logError("participant gateway policy evaluation failed", e).pipe(
                Effect.zipRight(
                  Effect.fail(new HttpErrors.InternalServerError({ detail: "The authorization policy could not be evaluated" }))
                )
              )
          })
        )
        if (!decision.allowed) return yield* Effect.fail(new HttpErrors.Forbidden({ detail: `Not allowed: ${decision.reason}` }))
      })

    /** The request's token; the middleware (or `authenticate`) has checked it is there. */
    const tokenOf = (request: HttpServerRequest.HttpServerRequest): Option.Option<string> =>
      Either.getOrElse(Authentication.extractToken(request.headers, jwtHeader), () => Option.none())

    /** After the contract's authentication: the policy's decision, then the caller. */
    const enter = (area: Area, action: Action) =>
      Effect.gen(function*() {
        const subject = yield* Authentication.CurrentSubject
        const request = yield* HttpServerRequest.HttpServerRequest
        yield* decide(subject, area, action)
        const token = tokenOf(request)
        // The middleware authenticated this very request from its token.
        if (Option.isNone(token)) return yield* Effect.dieMessage("authenticated request without a token")
        return { subject, token: Redacted.make(token.value) } satisfies Caller
      }).pipe(Effect.withSpan("Access.enter", { attributes: { area, action } }))

    /** For raw routes: the token verified as the middleware would, then the policy's decision. */
    const authenticate = (request: HttpServerRequest.HttpServerRequest, area: Area, action: Action) =>
      Effect.gen(function*() {
        const extracted = Authentication.extractToken(request.headers, jwtHeader)
        if (Either.isLeft(extracted)) return yield* Effect.fail(new Unauthenticated(extracted.left))
        if (Option.isNone(extracted.right)) {
          return yield* Effect.fail(new Unauthenticated(AuthFailure.AuthFailure.of("missing_token")))
        }
        const token = extracted.right.value
        const subject = verifier.cached(token) ??
          (yield* Effect.mapError(verifier.verify(token), (failure) => new Unauthenticated(failure)))
        yield* RequestContext.annotateUser(subject.id)
        yield* decide(subject, area, action)
        return { subject, token: Redacted.make(token) } satisfies Caller
      })

    return { enter, authenticate, decide }
  })
}) {}
