/**
 * Who administers the assistant, decided by the `rec.assistant.admin` policy
 * (`policies/assistant/admin.rego`: group `admin` or `admins`, or scope `assistant.admin`)
 * through `@rec/policy`'s `PolicyEngine`. Fails closed: no policies loaded, an unreachable
 * policy service or a policy error refuse with 503, never allow.
 */
import type { Subject } from "@rec/auth"
import { PolicyEngine, PolicyInput } from "@rec/policy"
import { HttpErrors, RequestContext } from "@rec/platform"
import * as Effect from "effect/Effect"

export const adminPackage = "rec.assistant.admin"

export type AdminOperation = "uploads" | "ingest" | "reload" | "training_sync"

export class Access extends Effect.Service<Access>()("@rec/assistant-service/Access", {
  effect: Effect.gen(function*() {
    const engine = yield* PolicyEngine

    const decide = (subject: Subject.Subject, operation: AdminOperation) =>
      Effect.flatMap(RequestContext.requestId, (requestId) =>
        engine.decide(adminPackage, PolicyInput.make({
          subject: PolicyInput.subjectOf(subject),
          resource: { type: "assistant", id: operation },
          action: { name: operation },
          requestId
        })))

    /** Whether `subject` administers the assistant (`false` when the policy cannot decide). */
    const isAdmin = (subject: Subject.Subject) =>
      decide(subject, "uploads").pipe(
        Effect.map((d) => d.allowed),
        Effect.catchAll((error) => Effect.as(Effect.logWarning("assistant admin decision failed; treated as not admin", error), false))
      )

    /** Succeeds for admins; 403 with the policy's reason otherwise, 503 when it cannot decide. */
    const requireAdmin = (subject: Subject.Subject, operation: AdminOperation) =>
      decide(subject, operation).pipe(
        Effect.catchAll((error) =>
          Effect.zipRight(
            Effect.logError("assistant admin decision failed", error),
            Effect.fail(new HttpErrors.ServiceUnavailable({ detail: `Access cannot be decided now (${error.message}); try again shortly` }))
          )),
        Effect.flatMap((decision) =>
          decision.allowed
            ? Effect.void
            : Effect.fail(new HttpErrors.Forbidden({ detail: `Administrators only: ${decision.reason}` }))),
        Effect.withSpan("Access.requireAdmin", { attributes: { operation } })
      )

    return { isAdmin, requireAdmin } as const
  })
}) {}
