/**
 * Suggestions (reference A2, A3): the user's open flexibility windows from the digital twin,
 * read with the user's own token, and the user's answer to one.
 *
 * - Listing: the user's meter, its windows, minus the windows the user already answered
 *   (committed, settled or declined; a cancelled commitment frees its window again), mapped by
 *   `SuggestionMapping`. No meter, no windows, or a participant the twin does not know is an
 *   empty list; any other failure of the twin is a 502/504 with `{detail}`, never an empty list.
 * - Accepting: the user's community and meter from the twin and, unless the body gives one, the
 *   suggestion's window and estimate (404 when the twin has no such open window); the
 *   commitment is stored, announced and reminded (`Commitments.commit`).
 * - Declining: a `rejected` record with the body's window (or the next hour, as the original)
 *   and no call to the twin; declining again answers the same; declining a suggestion already
 *   committed to is a 409.
 */
import { HttpErrors } from "@rec/platform"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Access } from "./Access.js"
import { alreadyAnswered, type Caller, Commitments, settleable } from "./Commitments.js"
import { CommitmentsRepo } from "./CommitmentsRepo.js"
import * as Config from "./Config.js"
import * as Domain from "./Domain.js"
import { Participants } from "./Participants.js"
import * as SuggestionMapping from "./SuggestionMapping.js"

const hourMs = 3_600_000
const iso = (ms: number) => new Date(ms).toISOString()

export class Suggestions extends Effect.Service<Suggestions>()("flexibility/Suggestions", {
  effect: Effect.gen(function*() {
    const repo = yield* CommitmentsRepo
    const access = yield* Access
    const participants = yield* Participants
    const commitments = yield* Commitments
    const { defaultRewardPoints } = yield* Config.settings

    const list = Effect.fn("Suggestions.list")(function*(caller: Caller) {
      const sub = caller.subject.id
      yield* access.require(caller.subject, { resource: "flexibility.suggestion", action: "list", ownerId: sub })
      const meter = yield* participants.meter(sub, caller.token)
      if (Option.isNone(meter)) return []
      const windows = yield* participants.windows(sub, meter.value, caller.token)
      if (windows.length === 0) return []
      const answered = yield* Effect.orDie(repo.answeredIds(sub, windows.map((w) => w._id)))
      return SuggestionMapping.suggestionsOf(windows, answered, yield* Clock.currentTimeMillis)
    })

    const decline = (caller: Caller, suggestionId: string, body: Domain.RespondRequest) =>
      Effect.gen(function*() {
        const existing = yield* Effect.orDie(repo.findAnswer(caller.subject.id, suggestionId))
        if (Option.isSome(existing)) {
          if (existing.value.status === "rejected") return declined
          return yield* Effect.fail(
            new HttpErrors.Conflict({
              detail: `Suggestion ${suggestionId} has commitment ${existing.value.id} (${existing.value.status}); ` +
                "cancel the commitment instead of declining"
            })
          )
        }
        const now = yield* Clock.currentTimeMillis
        const inserted = yield* commitments.insert({
          user_id: caller.subject.id,
          suggestion_id: suggestionId,
          suggestion_type: Domain.defaultSuggestionType,
          community_id: null,
          device_id: null,
          period_start: iso(body.period_start?.epochMillis ?? now),
          period_end: iso(body.period_end?.epochMillis ?? now + hourMs),
          status: "rejected",
          reward_points_estimated: body.reward_points ?? defaultRewardPoints
        }).pipe(
          // Declined concurrently by another request: the same answer.
          Effect.catchTag("Conflict", (conflict) =>
            Effect.flatMap(Effect.orDie(repo.findAnswer(caller.subject.id, suggestionId)), (again) =>
              Option.isSome(again) && again.value.status === "rejected" ? Effect.succeed(again.value) : Effect.fail(conflict)))
        )
        yield* Effect.annotateCurrentSpan("commitment.id", inserted.id)
        return declined
      })

    const accept = (caller: Caller, suggestionId: string, body: Domain.RespondRequest) =>
      Effect.gen(function*() {
        const sub = caller.subject.id
        const existing = yield* Effect.orDie(repo.findAnswer(sub, suggestionId))
        if (Option.isSome(existing)) return yield* Effect.fail(alreadyAnswered(existing.value))
        const noWindow = () =>
          new HttpErrors.NotFound({
            detail: `No open flexibility window ${suggestionId} for you (it may have ended); list /api/suggestions again`
          })
        const { communityId, device } = yield* settleable(yield* participants.participant(sub, caller.token))
        let window: { start: number; end: number; points: number | undefined }
        if (body.period_start !== undefined && body.period_end !== undefined) {
          window = { start: body.period_start.epochMillis, end: body.period_end.epochMillis, points: undefined }
        } else {
          const offered = (yield* participants.windows(sub, device, caller.token)).find((w) => w._id === suggestionId)
          const suggestion = offered === undefined ? undefined : SuggestionMapping.toSuggestion(offered, 0)
          if (offered === undefined || suggestion === undefined) return yield* Effect.fail(noWindow())
          window = {
            start: Date.parse(suggestion.period_start),
            end: Date.parse(suggestion.period_end),
            points: suggestion.reward_points
          }
        }
        if (window.end <= (yield* Clock.currentTimeMillis)) {
          return yield* Effect.fail(
            new HttpErrors.UnprocessableEntity({ detail: `The window of suggestion ${suggestionId} has ended` })
          )
        }
        const points = body.reward_points ?? window.points ?? defaultRewardPoints
        const created = yield* commitments.commit({
          user_id: sub,
          suggestion_id: suggestionId,
          suggestion_type: Domain.defaultSuggestionType,
          community_id: communityId,
          device_id: device,
          period_start: iso(window.start),
          period_end: iso(window.end),
          reward_points_estimated: Math.min(Math.max(points, 0), 1_000_000)
        })
        return { commitment_id: created.id, status: "committed", reward_points_estimated: created.reward_points_estimated } as const
      })

    const respond = Effect.fn("Suggestions.respond")(
      function*(caller: Caller, suggestionId: string, body: Domain.RespondRequest) {
        yield* access.require(caller.subject, { resource: "flexibility.suggestion", action: "respond", ownerId: caller.subject.id })
        const answer: Domain.RespondResponse = body.response === "declined"
          ? yield* decline(caller, suggestionId, body)
          : yield* accept(caller, suggestionId, body)
        return answer
      }
    )

    return { list, respond } as const
  })
}) {}

const declined: Domain.RespondResponse = { commitment_id: null, status: "declined", reward_points_estimated: 0 }
