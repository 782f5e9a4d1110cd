/**
 * Who may see and change what, decided by the Rego policy `rec.registry.access`
 * (`policies/registry/access.rego`) through `@rec/policy`'s `PolicyEngine`, failing closed: no
 * policies, an evaluation error or a filter this service cannot apply refuse the request.
 *
 * A read decision comes with the rows the caller may see (`Scope`): everything (admins, services
 * with `registry.read`), or the communities the caller is a member of (the policy's filters
 * `member.user_id eq <sub>` and `member.status in [...]`, applied in SQL by the repository).
 */
import { Authentication } from "@rec/auth"
import { PolicyEngine, PolicyInput, type Decision } from "@rec/policy"
import { HttpErrors, RequestContext } from "@rec/platform"
import * as Effect from "effect/Effect"

export const policyPackage = "rec.registry.access"

export type Scope =
  | { readonly _tag: "All" }
  | { readonly _tag: "Member"; readonly userId: string; readonly statuses: ReadonlyArray<string> }

export const all: Scope = { _tag: "All" }

export type AdminAction = "export" | "validate" | "import"

/** The scope the policy's filters describe; `undefined` for a filter this service cannot apply. */
export const scopeOf = (filters: ReadonlyArray<Decision.Filter>): Scope | string => {
  if (filters.length === 0) return all
  let userId: string | undefined
  let statuses: ReadonlyArray<string> | undefined
  for (const filter of filters) {
    if (filter.field === "member.user_id" && filter.operator === "eq" && typeof filter.value === "string") {
      userId = filter.value
    } else if (filter.field === "member.status" && filter.operator === "in" && Array.isArray(filter.value)) {
      statuses = filter.value.filter((s): s is string => typeof s === "string")
    } else {
      return `${filter.field} ${filter.operator}`
    }
  }
  if (userId === undefined) return "a member filter without member.user_id"
  return { _tag: "Member", userId, statuses: statuses ?? [] }
}

const unavailable = (error: Decision.DecisionError) =>
  new HttpErrors.ServiceUnavailable({
    detail: error._tag === "PolicyUnavailable"
      ? `Access policies are unavailable, so nothing is allowed: ${error.message}`
      : `The access policy could not decide, so nothing is allowed: ${error.message}`
  })

export class Access extends Effect.Service<Access>()("@rec/registry-service/Access", {
  effect: Effect.gen(function*() {
    const engine = yield* PolicyEngine

    const decide = (action: string, route: string) =>
      Effect.gen(function*() {
        const subject = yield* Authentication.CurrentSubject
        const decision = yield* engine.decide(
          policyPackage,
          PolicyInput.make({
            subject: PolicyInput.subjectOf(subject),
            resource: { type: "registry", id: route, attributes: {} },
            action: { name: action },
            requestId: yield* RequestContext.requestId
          })
        ).pipe(Effect.mapError(unavailable))
        if (!decision.allowed) {
          return yield* Effect.fail(new HttpErrors.Forbidden({ detail: `Not allowed: ${decision.reason}` }))
        }
        return decision
      })

    return {
      /** May the caller use the user routes, and which communities does it see. */
      read: Effect.fn("Access.read")(function*(route: string) {
        const decision = yield* decide("read", route)
        const scope = scopeOf(decision.filters ?? [])
        if (typeof scope === "string") {
          return yield* Effect.fail(
            new HttpErrors.ServiceUnavailable({
              detail: `The access policy answered a filter the registry cannot apply (${scope}), so nothing is allowed`
            })
          )
        }
        yield* Effect.annotateCurrentSpan("registry.scope", scope._tag)
        return scope
      }),
      /** May the caller export, validate or import bundles. */
      admin: Effect.fn("Access.admin")(function*(action: AdminAction, route: string) {
        yield* decide(action, route)
      })
    }
  })
}) {}
