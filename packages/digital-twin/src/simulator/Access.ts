/**
 * Who may read what from the simulator. Service accounts need a digital-twin read scope
 * (`dt.read`, `dt.write` or `dt.admin`, as the reference's `celine.dt.access` read rule); users
 * may read what is theirs:
 * - a network: members of the DSO organization whose alias is the network id;
 * - a participant: the participant (token `sub` = path `sub`);
 * - a community: its members (by `sub`), or members of the organization named like it.
 * Access is checked before existence, so a user learns nothing about other networks.
 */
import { Authentication } from "@rec/auth"
import { HttpErrors } from "@rec/platform"
import { Effect } from "effect"
import * as World from "./World.js"

const readScopes = ["dt.read", "dt.write", "dt.admin"]

const serviceCheck = (scopes: ReadonlyArray<string>) =>
  readScopes.some((s) => scopes.includes(s))
    ? Effect.void
    : Effect.fail(new HttpErrors.Forbidden({ message: "A service account needs the dt.read scope" }))

export const network = (networkId: string) =>
  Effect.flatMap(Authentication.CurrentSubject, (subject) => {
    if (subject.isService) return serviceCheck(subject.scopes)
    return subject.organizationsOfType("dso").some((org) => org.alias === networkId)
      ? Effect.void
      : Effect.fail(new HttpErrors.Forbidden({ message: `Not a member of the DSO organization '${networkId}'` }))
  })

export const participant = (sub: string) =>
  Effect.flatMap(Authentication.CurrentSubject, (subject) => {
    if (subject.isService) return serviceCheck(subject.scopes)
    return subject.sub === sub
      ? Effect.void
      : Effect.fail(new HttpErrors.Forbidden({ message: "A participant may read only their own data" }))
  })

export const community = (communityId: string) =>
  Effect.flatMap(Authentication.CurrentSubject, (subject) => {
    if (subject.isService) return serviceCheck(subject.scopes)
    const member = subject.organizations.some((org) => org.alias === communityId) ||
      (World.findCommunity(communityId)?.participants.some((p) => p.sub === subject.sub) ?? false)
    return member
      ? Effect.void
      : Effect.fail(new HttpErrors.Forbidden({ message: `Not a member of the community '${communityId}'` }))
  })
