/**
 * Commitments (reference A1, A3): create, list, read, cancel, settle, the one-shot pending view
 * and the export, each asked of the policy first (`Access`).
 *
 * Lifecycle: a commitment is `committed` when made, `rejected` when the user declined the
 * suggestion (`Suggestions.respond`); `committed -> cancelled` (owner or a writing service) and
 * `committed -> settled` (admin, or the settlement run) are the only moves; any other is a 409.
 * A commitment of another user is a 404 to a user (its existence is not theirs to learn) and a
 * 403 to a service without the scope.
 */
import type { Subject } from "@rec/auth"
import { HttpErrors, Tracing } from "@rec/platform"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { Access } from "./Access.js"
import { CommitmentsRepo, type NewCommitment } from "./CommitmentsRepo.js"
import * as Domain from "./Domain.js"
import { Notices } from "./Notices.js"
import { type Participant, Participants } from "./Participants.js"
import * as Spans from "./Spans.js"

/** Who is asking: the verified subject and their token (forwarded to the digital twin for a user's own data). */
export interface Caller {
  readonly subject: Subject.Subject
  readonly token: Redacted.Redacted
}

const isUser = (caller: Caller) => caller.subject.type === "user"

const iso = (ms: number) => new Date(ms).toISOString()

const notFound = (id: string) => new HttpErrors.NotFound({ detail: `No commitment ${id}` })

/** The 409 of a second answer to a suggestion, saying what the first was. */
export const alreadyAnswered = (existing: Domain.Commitment) =>
  new HttpErrors.Conflict({
    detail: existing.status === "rejected"
      ? `Suggestion ${existing.suggestion_id} was declined (commitment ${existing.id}); it cannot be committed to`
      : `Suggestion ${existing.suggestion_id} already has commitment ${existing.id} (${existing.status}); cancel it first`
  })

/**
 * The community and meter a user's commitment is settled with, from what the digital twin knows
 * of them; a 422 when it could never be settled, or names a device or community not theirs.
 */
export const settleable = (
  participant: Option.Option<Participant>,
  requestedDevice?: string,
  requestedCommunity?: string
): Effect.Effect<{ readonly communityId: string | null; readonly device: string }, HttpErrors.UnprocessableEntity> => {
  const fail = (detail: string) => Effect.fail(new HttpErrors.UnprocessableEntity({ detail }))
  if (Option.isNone(participant)) {
    return fail("The digital twin knows no community membership of yours, so a commitment could never be settled")
  }
  const { communityId, devices } = participant.value
  const device = requestedDevice ?? devices[0]
  if (device === undefined) return fail("The digital twin lists no meter of yours, so a commitment could never be settled")
  if (!devices.includes(device)) return fail(`Device ${device} is not one of your meters (${devices.join(", ")})`)
  if (requestedCommunity !== undefined && requestedCommunity !== communityId) {
    return fail(`You are not a member of community ${requestedCommunity}${communityId === null ? "" : ` (yours: ${communityId})`}`)
  }
  return Effect.succeed({ communityId, device })
}

const notCommitted = (c: Domain.Commitment, move: string) =>
  new HttpErrors.Conflict({ detail: `Commitment ${c.id} is ${c.status}; only a committed commitment can be ${move}` })

export class Commitments extends Effect.Service<Commitments>()("flexibility/Commitments", {
  effect: Effect.gen(function*() {
    const repo = yield* CommitmentsRepo
    const access = yield* Access
    const participants = yield* Participants
    const notices = yield* Notices
    // Spans only when exported, without a call-site stack trace (`Spans.named`).
    const traced = Spans.named(yield* Tracing.TracingEnabled)

    const now = Effect.map(Clock.currentTimeMillis, iso)

    /**
     * The commitment `id` if the caller may `action` it: unknown ids, and other users' commitments
     * asked by a user, are 404; a service without the scope gets the policy's 403.
     */
    const authorized = (caller: Caller, id: string, action: "read" | "cancel") =>
      Effect.gen(function*() {
        const found = yield* Effect.orDie(repo.get(id))
        if (Option.isNone(found)) return yield* Effect.fail(notFound(id))
        const question = { resource: "flexibility.commitment", action, ownerId: found.value.user_id, commitmentId: id } as const
        const decision = yield* access.allowed(caller.subject, question)
        if (decision.allowed) return found.value
        return yield* Effect.fail(
          isUser(caller) ? notFound(id) : new HttpErrors.Forbidden({ detail: `Not allowed: ${decision.reason}` })
        )
      })

    /** Stores a new answer; a second answer of the user to the suggestion is a 409 naming the first. */
    const insert = (row: NewCommitment) =>
      Effect.gen(function*() {
        const inserted = yield* Effect.orDie(repo.insert(row))
        if (Option.isSome(inserted)) return inserted.value
        const existing = yield* Effect.orDie(repo.findAnswer(row.user_id, row.suggestion_id))
        return yield* Effect.fail(
          Option.match(existing, {
            onSome: alreadyAnswered,
            // The answer that collided was cancelled in between: the caller may simply retry.
            onNone: () => new HttpErrors.Conflict({ detail: `Suggestion ${row.suggestion_id} was answered concurrently; retry` })
          })
        )
      })

    /** A new committed commitment, announced and reminded in the background. */
    const commit = (row: Omit<NewCommitment, "status">) =>
      Effect.tap(insert({ ...row, status: "committed" }), notices.committed)

    const create = Effect.fnUntraced(function*(caller: Caller, body: Domain.CreateCommitment) {
      const userId = body.user_id ?? (isUser(caller) ? caller.subject.id : undefined)
      if (userId === undefined) {
        return yield* Effect.fail(
          new HttpErrors.BadRequest({
            detail: "Invalid request: user_id: a service account must name the user it commits",
            issues: [{ path: ["user_id"], message: "a service account must name the user it commits" }]
          })
        )
      }
      yield* access.require(caller.subject, { resource: "flexibility.commitment", action: "create", ownerId: userId })
      const window = { period_start: iso(body.period_start.epochMillis), period_end: iso(body.period_end.epochMillis) }
      const base = {
        user_id: userId,
        suggestion_id: body.suggestion_id,
        suggestion_type: body.suggestion_type ?? Domain.defaultSuggestionType,
        reward_points_estimated: body.reward_points_estimated ?? 0,
        ...window
      }
      if (!isUser(caller)) {
        return yield* commit({ ...base, community_id: body.community_id ?? null, device_id: body.device_id ?? null })
      }
      // A user commits their own meter, in their own community, for a window still to come.
      if (body.period_end.epochMillis <= (yield* Clock.currentTimeMillis)) {
        return yield* Effect.fail(new HttpErrors.UnprocessableEntity({ detail: "The window has ended; commit to a window still to come" }))
      }
      const participant = yield* participants.participant(userId, caller.token)
      const { communityId, device } = yield* settleable(participant, body.device_id ?? undefined, body.community_id ?? undefined)
      return yield* commit({ ...base, community_id: communityId, device_id: device })
    }, traced("Commitments.create"))

    const list = Effect.fnUntraced(function*(caller: Caller, params: Domain.ListParams) {
      const userId = params.user_id ?? (isUser(caller) ? caller.subject.id : undefined)
      yield* access.require(caller.subject, { resource: "flexibility.commitment", action: "list", ownerId: userId })
      const page = yield* Effect.orDie(repo.list({ userId, status: params.status, limit: params.limit, offset: params.offset }))
      return { items: page.items, total: page.total, limit: params.limit, offset: params.offset } satisfies Domain.CommitmentPage
    }, traced("Commitments.list"))

    const get = Effect.fnUntraced(function*(caller: Caller, id: string) {
      return yield* authorized(caller, id, "read")
    }, traced("Commitments.get"))

    const cancel = Effect.fnUntraced(function*(caller: Caller, id: string) {
      const found = yield* authorized(caller, id, "cancel")
      if (found.status !== "committed") return yield* Effect.fail(notCommitted(found, "cancelled"))
      const cancelled = yield* Effect.orDie(repo.cancel(id, yield* now))
      if (Option.isSome(cancelled)) {
        yield* notices.cancelled(cancelled.value)
        return cancelled.value
      }
      // Settled or cancelled in between.
      const current = yield* Effect.orDie(repo.get(id))
      return yield* Effect.fail(Option.match(current, { onNone: () => notFound(id), onSome: (c) => notCommitted(c, "cancelled") }))
    }, traced("Commitments.cancel"))

    const settle = Effect.fnUntraced(function*(caller: Caller, id: string, body: Domain.SettleRequest) {
      yield* access.require(caller.subject, { resource: "flexibility.commitment", action: "settle", commitmentId: id })
      const settled = yield* Effect.orDie(repo.settle(id, body.reward_points_actual, body.actual_kwh ?? null, yield* now))
      if (Option.isSome(settled)) {
        yield* notices.settled([settled.value])
        return settled.value
      }
      const current = yield* Effect.orDie(repo.get(id))
      return yield* Effect.fail(Option.match(current, { onNone: () => notFound(id), onSome: (c) => notCommitted(c, "settled") }))
    }, traced("Commitments.settle"))

    const pending = Effect.fnUntraced(function*(caller: Caller, limit: number) {
      yield* access.require(caller.subject, { resource: "flexibility.commitment", action: "pending" })
      return yield* Effect.orDie(repo.takeOpen(yield* now, limit))
    }, traced("Commitments.pending"))

    /** Authorizes, then gives the rows as a stream (the caller serializes it). */
    const exportAll = Effect.fnUntraced(function*(caller: Caller, params: Domain.ExportParams) {
      yield* access.require(caller.subject, { resource: "flexibility.commitment", action: "export" })
      const after = params.created_after === undefined ? undefined : iso(params.created_after.epochMillis)
      return repo.exportAll(after).pipe(Stream.orDie)
    }, traced("Commitments.export"))

    return { create, list, get, cancel, settle, pending, exportAll, insert, commit } as const
  })
}) {}
