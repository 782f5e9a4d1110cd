/**
 * Authorization: every question goes to `policies/nudging/access.rego` (package
 * `rec.nudging.access`) through `@rec/policy`'s `PolicyEngine`, with the caller as `@rec/auth`
 * verified it. Fail closed: no decision (policies not loaded, policy service unreachable) is a
 * 503, an evaluation error a 500, never an allow.
 */
import { Authentication } from "@rec/auth"
import { PolicyEngine, PolicyInput } from "@rec/policy"
import { HttpErrors, RequestContext } from "@rec/platform"
import * as Effect from "effect/Effect"

export const policyPackage = "rec.nudging.access"

export type Resource = "event" | "scheduled_event" | "notification" | "preferences" | "subscription"

export type Action = "ingest" | "read" | "write" | "send_test"

export type Denied = HttpErrors.Forbidden | HttpErrors.ServiceUnavailable | HttpErrors.InternalServerError

export class Access extends Effect.Service<Access>()("nudging/Access", {
  effect: Effect.gen(function*() {
    const engine = yield* PolicyEngine

    /** The decision for the current caller; failures of the engine are already HTTP errors. */
    const decide = (action: Action, resource: Resource, ownerId: string) =>
      Effect.gen(function*() {
        const subject = PolicyInput.subjectOf(yield* Authentication.CurrentSubject)
        const input = PolicyInput.make({
          subject,
          resource: { type: `nudging.${resource}`, id: ownerId, attributes: { owner_id: ownerId } },
          action: { name: action },
          requestId: yield* RequestContext.requestId
        })
        return yield* engine.decide(policyPackage, input).pipe(
          Effect.catchTags({
            PolicyUnavailable: (e) =>
              Effect.fail(new HttpErrors.ServiceUnavailable({ detail: `Authorization is unavailable (${e.message}); try again shortly` })),
            PolicyEvaluationError: (e) =>
              Effect.logError("nudging policy evaluation failed", e).pipe(
                Effect.zipRight(Effect.fail(new HttpErrors.InternalServerError({ detail: "The authorization policy could not be evaluated" })))
              )
          })
        )
      })

    /** Fails with 403 (the policy's reason) unless allowed. */
    const require = (action: Action, resource: Resource, ownerId: string) =>
      Effect.flatMap(decide(action, resource, ownerId), (decision) =>
        decision.allowed
          ? Effect.void
          : Effect.fail(new HttpErrors.Forbidden({ detail: `Not allowed: ${decision.reason}` })))

    /** Whether allowed (for records whose existence must not leak: a 404 instead of a 403). */
    const allowed = (action: Action, resource: Resource, ownerId: string) =>
      Effect.map(decide(action, resource, ownerId), (decision) => decision.allowed)

    return { require, allowed }
  })
}) {}
