/**
 * The flexibility routes of the app, which the spec says reach the flexibility service through
 * this gateway: each is the flexibility service's own user route, called with the caller's token
 * (so its policy sees the user, and another user's commitment is its 404). The points total has
 * no route of its own there: it is summed here from the caller's commitments, page by page.
 */
import { Domain as FlexibilityDomain } from "@rec/flexibility-service"
import { Upstream } from "@rec/platform"
import * as Effect from "effect/Effect"
import type { Caller } from "./Access.js"
import { FlexibilityClient } from "./Clients.js"
import type * as Domain from "./Domain.js"

/** Commitments per page when totalling (the flexibility service's largest page). */
const pageSize = FlexibilityDomain.maxPageSize

/** Most pages read for one total (a million commitments): beyond that the upstream is misbehaving. */
const maxPages = 5_000

export class Flexibility extends Effect.Service<Flexibility>()("participant-gateway/Flexibility", {
  effect: Effect.gen(function*() {
    const flexibility = yield* FlexibilityClient

    /** Every commitment of the caller in `status`, folded page by page. */
    const fold = (caller: Caller, status: FlexibilityDomain.CommitmentStatus, add: (c: FlexibilityDomain.Commitment) => number) =>
      Effect.gen(function*() {
        let offset = 0
        let sum = 0
        let count = 0
        for (let page = 0; page < maxPages; page++) {
          const result = yield* flexibility.commitments(caller.token, { status, limit: pageSize, offset })
          for (const c of result.items) {
            sum += add(c)
            count++
          }
          offset += result.items.length
          if (result.items.length === 0 || offset >= result.total) return { sum, count }
        }
        return yield* Effect.fail(
          new Upstream.UpstreamFailure({
            upstream: "flexibility service",
            operation: "list_commitments",
            status: 502,
            detail: `Flexibility service listed more than ${maxPages * pageSize} ${status} commitments; the total was not computed`
          })
        )
      })

    const points = Effect.fn("Flexibility.points")(function*(caller: Caller) {
      const [settled, open] = yield* Effect.all([
        fold(caller, "settled", (c) => c.reward_points_actual ?? 0),
        fold(caller, "committed", (c) => c.reward_points_estimated)
      ], { concurrency: 2 })
      return {
        total_points: settled.sum,
        settled_commitments: settled.count,
        pending_points_estimated: open.sum,
        open_commitments: open.count
      } satisfies Domain.Points
    })

    return {
      points,
      suggestions: (caller: Caller) => flexibility.suggestions(caller.token),
      respond: (caller: Caller, id: string, payload: FlexibilityDomain.RespondRequest) =>
        flexibility.respond(caller.token, id, payload),
      commitments: (caller: Caller, params: FlexibilityDomain.ListParams) => flexibility.commitments(caller.token, params),
      commit: (caller: Caller, payload: FlexibilityDomain.CreateCommitment) => flexibility.commit(caller.token, payload),
      commitment: (caller: Caller, id: string) => flexibility.commitment(caller.token, id),
      cancel: (caller: Caller, id: string) => flexibility.cancel(caller.token, id)
    }
  })
}) {}
