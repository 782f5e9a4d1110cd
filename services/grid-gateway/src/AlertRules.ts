/**
 * The caller's alert rules (`/api/alert-rules`): every operation asks the grid policy first
 * (`alerts.read` to list, `alerts.write` with the rule's network to change), works on the
 * caller's own rows only (someone else's rule is a 404, never a 403), and takes the owner and
 * the network from the token, never from the body.
 */
import { Authentication, type Subject } from "@rec/auth"
import { HttpErrors } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { AlertRulesRepo, type AlertRuleChanges, toApi } from "./AlertRulesRepo.js"
import type * as Domain from "./Domain.js"
import { dsoNetworks, GridAccess } from "./GridAccess.js"

const notFound = (id: string) => new HttpErrors.NotFound({ detail: `You have no alert rule ${id}` })

/** An empty recipient list means "no override": the owner's settings decide. */
const recipientsOf = (list: ReadonlyArray<string> | null | undefined) =>
  list === undefined ? undefined : list === null || list.length === 0 ? null : list

/** The network a new rule watches: the one named, else the caller's only DSO network. */
const networkFor = (subject: Subject.Subject, named: string | undefined) => {
  if (named !== undefined) return Effect.succeed(Option.some(named))
  const networks = dsoNetworks(subject)
  if (networks.length === 1) return Effect.succeed(Option.some(networks[0]!))
  if (networks.length > 1) {
    return Effect.fail(
      new HttpErrors.UnprocessableEntity({
        detail: `You belong to several DSO organizations (${networks.join(", ")}): name the network in network_id`,
        issues: [{ path: ["network_id"], message: `is required: one of ${networks.join(", ")}` }]
      })
    )
  }
  // Without a DSO the policy refuses with its reason (users); a service must name the network.
  return subject.isService
    ? Effect.fail(
      new HttpErrors.UnprocessableEntity({
        detail: "A service account operates no network: name the network in network_id",
        issues: [{ path: ["network_id"], message: "is required for service accounts" }]
      })
    )
    : Effect.succeed(Option.none<string>())
}

/** `null` for a field that cannot be empty is a 422 naming the fields (leave a field out to keep it). */
const refuseNulls = (update: Domain.AlertRuleUpdate) => {
  const nulls = (["risk_types", "threshold", "active"] as const).filter((field) => update[field] === null)
  return nulls.length === 0
    ? Effect.void
    : Effect.fail(
      new HttpErrors.UnprocessableEntity({
        detail: `${nulls.join(", ")} cannot be null: leave ${nulls.length === 1 ? "it" : "them"} out to keep the current value`,
        issues: nulls.map((field) => ({ path: [field], message: "cannot be null" }))
      })
    )
}

export class AlertRules extends Effect.Service<AlertRules>()("@rec/grid-gateway/AlertRules", {
  effect: Effect.gen(function*() {
    const repo = yield* AlertRulesRepo
    const access = yield* GridAccess

    const list = Effect.fn("AlertRules.list")(function*() {
      const subject = yield* access.check("alerts.read")
      return (yield* Effect.orDie(repo.list(subject.id))).map(toApi)
    })

    const create = Effect.fn("AlertRules.create")(function*(body: Domain.AlertRuleCreate) {
      const subject = yield* Authentication.CurrentSubject
      const network = yield* networkFor(subject, body.network_id)
      yield* access.check("alerts.write", Option.getOrUndefined(network))
      // The policy allows no write without a network (a user without a DSO was refused above).
      const networkId = yield* Option.match(network, {
        onNone: () => Effect.fail(new HttpErrors.Forbidden({ detail: "missing DSO organization membership" })),
        onSome: Effect.succeed
      })
      const row = yield* Effect.orDie(repo.insert({
        userId: subject.id,
        networkId,
        riskTypes: body.risk_types,
        threshold: body.threshold,
        recipients: recipientsOf(body.recipients) ?? null,
        active: body.active ?? true
      }))
      return toApi(row)
    })

    /** The caller's rule (404 otherwise), after the policy allowed writing rules of its network. */
    const ownedForWrite = (id: string) =>
      Effect.gen(function*() {
        const subject = yield* Authentication.CurrentSubject
        const rule = yield* Effect.flatMap(Effect.orDie(repo.findOwned(id, subject.id)), Option.match({
          onNone: () => Effect.fail(notFound(id)),
          onSome: Effect.succeed
        }))
        yield* access.check("alerts.write", rule.networkId)
        return { subject, rule }
      })

    const update = Effect.fn("AlertRules.update")(function*(id: string, body: Domain.AlertRuleUpdate) {
      yield* refuseNulls(body)
      const { subject } = yield* ownedForWrite(id)
      const changes: AlertRuleChanges = {
        riskTypes: body.risk_types ?? undefined,
        threshold: body.threshold ?? undefined,
        recipients: recipientsOf(body.recipients),
        active: body.active ?? undefined
      }
      const updated = yield* Effect.orDie(repo.update(id, subject.id, changes))
      // Deleted between the lookup and the update: gone, as for anyone else.
      return yield* Option.match(updated, { onNone: () => Effect.fail(notFound(id)), onSome: (row) => Effect.succeed(toApi(row)) })
    })

    const remove = Effect.fn("AlertRules.remove")(function*(id: string) {
      const { subject } = yield* ownedForWrite(id)
      const removed = yield* Effect.orDie(repo.remove(id, subject.id))
      if (Option.isNone(removed)) return yield* Effect.fail(notFound(id))
    })

    return { list, create, update, remove } as const
  })
}) {}
