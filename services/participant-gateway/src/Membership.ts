/**
 * The caller's community: the digital twin's participant profile (`membership.community`), read
 * with the caller's token. The twin answers 404 for someone who is not a participant at all, and
 * a profile without membership for a participant outside any community: both are "no community".
 */
import type { Upstream } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Caller } from "./Access.js"
import { TwinClient } from "./Clients.js"

export interface Community {
  readonly key: string
  readonly name: string
}

export class Membership extends Effect.Service<Membership>()("participant-gateway/Membership", {
  effect: Effect.gen(function*() {
    const twin = yield* TwinClient

    const communityOf = Effect.fn("Membership.communityOf")(function*(caller: Caller) {
      const profile = yield* twin.profile(caller.token, caller.subject.id).pipe(
        Effect.map(Option.some),
        Effect.catchIf((failure: Upstream.UpstreamFailure) => failure.status === 404, () => Effect.succeed(Option.none()))
      )
      return Option.flatMap(profile, (p) =>
        p.membership === null
          ? Option.none()
          : Option.some<Community>({ key: p.membership.community.key, name: p.membership.community.name }))
    })

    /** The community key the nudging service files the caller's data under: `""` for none. */
    const nudgingCommunity = (caller: Caller) =>
      Effect.map(communityOf(caller), Option.match({ onNone: () => "", onSome: (c) => c.key }))

    return { communityOf, nudgingCommunity }
  })
}) {}
