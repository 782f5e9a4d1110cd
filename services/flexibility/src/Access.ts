/**
 * Every route asks `policies/flexibility` (`rec.flexibility.access`) through the platform's
 * `PolicyEngine` before it touches data, and fails closed: a denial is a 403 with the policy's
 * reason, policies that are not loaded (or a remote policy service that cannot be reached) a 503,
 * a policy that cannot be evaluated a 500. Never an allow.
 */
import type { Subject } from "@rec/auth"
import { PolicyEngine, PolicyInput } from "@rec/policy"
import { HttpErrors, RequestContext, Tracing } from "@rec/platform"
import * as Effect from "effect/Effect"
import { policyPackage } from "./Config.js"
import * as Spans from "./Spans.js"

export type SuggestionAction = "list" | "respond"
export type CommitmentAction = "create" | "list" | "read" | "cancel" | "pending" | "settle" | "export"

export type Question =
  | { readonly resource: "flexibility.suggestion"; readonly action: SuggestionAction; readonly ownerId: string }
  | {
    readonly resource: "flexibility.commitment"
    readonly action: CommitmentAction
    /** The user whose commitments are acted on; absent: every user's. */
    readonly ownerId?: string | undefined
    readonly commitmentId?: string | undefined
  }

export type AccessError = HttpErrors.Forbidden | HttpErrors.ServiceUnavailable | HttpErrors.InternalServerError

export class Access extends Effect.Service<Access>()("flexibility/Access", {
  effect: Effect.gen(function*() {
    const engine = yield* PolicyEngine
    // Spans (and their annotations) only when exported (`Spans`).
    const tracing = yield* Tracing.TracingEnabled

    /** Whether `subject` may; fails only when no decision can be had. (Every request asks: its span without a call-site stack trace, and without the `Error` `Effect.fn` makes per call for one.) */
    const allowed = Effect.fnUntraced(function*(subject: Subject.Subject, question: Question) {
      const requestId = yield* RequestContext.requestId
      const input = PolicyInput.make({
        subject: PolicyInput.subjectOf(subject),
        resource: {
          type: question.resource,
          id: ("commitmentId" in question ? question.commitmentId : undefined) ?? "*",
          attributes: question.ownerId === undefined ? {} : { owner_id: question.ownerId }
        },
        action: { name: question.action },
        requestId
      })
      const decision = yield* engine.decide(policyPackage, input).pipe(
        Effect.catchTags({
          PolicyUnavailable: (e) =>
            Effect.zipRight(
              Effect.logError("authorization policies unavailable", e),
              Effect.fail(
                new HttpErrors.ServiceUnavailable({ detail: "Authorization policies are not available; try again shortly" })
              )
            ),
          PolicyEvaluationError: (e) =>
            Effect.zipRight(
              Effect.logError("authorization policy failed", e),
              Effect.fail(new HttpErrors.InternalServerError({ detail: "The authorization policy could not be evaluated" }))
            )
        })
      )
      if (tracing) yield* Effect.annotateCurrentSpan({ "policy.allowed": decision.allowed, "policy.reason": decision.reason })
      return decision
    }, Spans.named(tracing)("Access.allowed"))

    /** Succeeds when allowed; a denial is a 403 with the policy's reason. */
    const require = (subject: Subject.Subject, question: Question): Effect.Effect<void, AccessError> =>
      Effect.flatMap(allowed(subject, question), (decision) =>
        decision.allowed
          ? Effect.void
          : Effect.fail(new HttpErrors.Forbidden({ detail: `Not allowed: ${decision.reason}` })))

    return { allowed, require } as const
  })
}) {}
