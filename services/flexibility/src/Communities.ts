/**
 * The communities of the registry and their members: who the opportunity broadcast reaches
 * (reference A6.2, without the original's hard-coded community). Production reads the community
 * registry through its typed client (client credentials, `REC_REGISTRY_SCOPE`); tests swap in
 * a fixed list.
 */
import type { Upstream } from "@rec/platform"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

export interface Community {
  /** The community's key (`it-energy-community`). */
  readonly id: string
}

export interface Member {
  /** The member's platform user (identity-provider subject); members without one are not nudged. */
  readonly userId: string
  readonly communityId: string
}

export interface CommunitiesService {
  /** Every community of the registry (every page). */
  readonly list: Effect.Effect<ReadonlyArray<Community>, Upstream.UpstreamFailure>
  /** Every member of a community with a platform user (every page). */
  readonly members: (communityId: string) => Effect.Effect<ReadonlyArray<Member>, Upstream.UpstreamFailure>
}

export class Communities extends Context.Tag("flexibility/Communities")<Communities, CommunitiesService>() {}
