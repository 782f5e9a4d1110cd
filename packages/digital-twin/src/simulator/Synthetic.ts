/**
 * Synthetic communities: generated members beside the hand-written community of `World.ts`,
 * for load tests and for services that need more than one community (the flexibility
 * service's broadcast, its settlement benchmark of 10,000 commitments). Every member is a
 * household prosumer whose PV size (6-14 kWp: a midday surplus even in December), consumption
 * and flexibility derive from the seed and its index, so two processes with the same options
 * see the same members and the same readings.
 *
 * Ids: member `n` (from 1) of community `c` is participant `sim-<c>-<n>` (`sub`), member key
 * `member-<c>-<n>`, meter `member-<c>-<n>-meter`; `n` is zero-padded to the width of the count.
 */
import * as Random from "./Random.js"
import type { CommunitySpec, ParticipantSpec } from "./World.js"

export interface SyntheticCommunity {
  /** Community key (`[A-Za-z0-9][A-Za-z0-9._-]*`). */
  readonly id: string
  /** How many members to generate (at least 1). */
  readonly members: number
  readonly name?: string | undefined
  /** Default `dso-alto-garda` (its members share the lake Garda sky of `World.community`). */
  readonly networkId?: string | undefined
}

export const participantSub = (communityId: string, n: number, members: number): string =>
  `sim-${communityId}-${String(n).padStart(String(members).length, "0")}`

/** The community with its generated members. */
export const build = (seed: string, spec: SyntheticCommunity): CommunitySpec => {
  if (!Number.isInteger(spec.members) || spec.members < 1) {
    throw new RangeError(`synthetic community ${spec.id}: members must be a positive integer`)
  }
  const participants: Array<ParticipantSpec> = []
  for (let n = 1; n <= spec.members; n++) {
    const sub = participantSub(spec.id, n, spec.members)
    const r = Random.sequence(seed, "synthetic", spec.id, n)
    participants.push({
      sub,
      name: `Simulated member ${n} of ${spec.id}`,
      memberKey: `member-${sub.slice("sim-".length)}`,
      role: "prosumer",
      since: "2025-01-01",
      pvKwp: Random.round(r.between(6, 14), 1),
      annualConsumptionKwh: Math.round(r.between(2000, 6000)),
      loadProfile: "household",
      flexibleShare: Random.round(r.between(0.2, 0.35), 2),
      pod: `IT900S${String(Random.hash32(seed, spec.id, n)).padStart(10, "0")}`
    })
  }
  return {
    id: spec.id,
    name: spec.name ?? `Synthetic community ${spec.id}`,
    country: "it",
    networkId: spec.networkId ?? "dso-alto-garda",
    participants
  }
}
