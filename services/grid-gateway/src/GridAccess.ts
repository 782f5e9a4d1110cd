/**
 * Access decisions of the gateway: `policies/grid/grid.rego` (package `rec.grid.access`) asked
 * through `@rec/policy`'s `PolicyEngine` with the caller, the network (when the request is about
 * one) and the action. Fail closed: a denial is 403 with the policy's reason, no policies loaded
 * is 503 (unless `POLICY_FAIL_OPEN=true`, which the engine logs at start), a broken policy 500.
 *
 * Also the caller's networks: the aliases of their DSO organizations (`organization` claim,
 * type or attribute type `dso`), in the token's order.
 */
import { Authentication, type Subject } from "@rec/auth"
import { PolicyEngine, PolicyInput } from "@rec/policy"
import { HttpErrors, RequestContext } from "@rec/platform"
import * as Effect from "effect/Effect"

export const policyPackage = "rec.grid.access"

/** `read`: grid data of a network; `alerts.read`/`alerts.write`: the caller's rules and settings. */
export type GridAction = "read" | "alerts.read" | "alerts.write"

export type AccessError = HttpErrors.Forbidden | HttpErrors.ServiceUnavailable | HttpErrors.InternalServerError

/** The networks a subject operates: its DSO organizations' aliases, in claim order. */
export const dsoNetworks = (subject: Subject.Subject): ReadonlyArray<string> =>
  subject.isService ? [] : subject.organizationsOfType("dso").map((org) => org.alias)

export class GridAccess extends Effect.Service<GridAccess>()("@rec/grid-gateway/GridAccess", {
  effect: Effect.gen(function*() {
    const engine = yield* PolicyEngine

    /**
     * Allowed (the caller), or the error to answer with. No span of its own: the policy engine
     * records the decision's span when spans are exported, and this runs on every request.
     */
    const check = (action: GridAction, networkId?: string | undefined) =>
      Effect.gen(function*() {
        const subject = yield* Authentication.CurrentSubject
        const decision = yield* engine.decide(
          policyPackage,
          PolicyInput.make({
            subject: PolicyInput.subjectOf(subject),
            resource: {
              type: "grid",
              id: networkId ?? "alerts",
              attributes: networkId === undefined ? {} : { network_id: networkId }
            },
            action: { name: action },
            requestId: yield* RequestContext.requestId
          })
        ).pipe(
          Effect.catchTags({
            PolicyUnavailable: (e) =>
              Effect.fail(new HttpErrors.ServiceUnavailable({ detail: `Access cannot be decided: ${e.message}` })),
            PolicyEvaluationError: (e) =>
              Effect.zipRight(
                Effect.logError("grid policy evaluation failed", e),
                Effect.fail(new HttpErrors.InternalServerError({ detail: "Access cannot be decided: the grid policy failed" }))
              )
          })
        )
        if (!decision.allowed) return yield* Effect.fail(new HttpErrors.Forbidden({ detail: decision.reason }))
        return subject
      })

    return { check } as const
  })
}) {}
