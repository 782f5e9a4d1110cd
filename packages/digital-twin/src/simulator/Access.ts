/**
 * Who may read what from the simulator. Service accounts need a digital-twin read scope
 * (`dt.read`, `dt.write` or `dt.admin`, as the reference's `celine.dt.access` read rule); users
 * may read what is theirs:
 * - a network: members of the DSO organization whose alias is the network id;
 * - a participant: the participant (token `sub` = path `sub`);
 * - a community: its members (by `sub`), or members of the organization named like it.
 * Access is checked before existence, so a user learns nothing about other networks.
 */
import { Authentication, type Subject } from "@rec/auth"
import { HttpErrors } from "@rec/platform"
import { Effect } from "effect"
import * as World from "./World.js"

const readScopes = ["dt.read", "dt.write", "dt.admin"]

const serviceCheck = (scopes: ReadonlyArray<string>) =>
  readScopes.some((s) => scopes.includes(s))
    ? Effect.void
    : Effect.fail(new HttpErrors.Forbidden({ detail: "A service account needs the dt.read scope" }))

/** A service account needs a read scope; a user passes when `userMay` says so, else 403 `denied`. */
const allow = (userMay: (subject: Subject.Subject) => boolean, denied: string) =>
  Effect.flatMap(Authentication.CurrentSubject, (subject) => {
    if (subject.isService) return serviceCheck(subject.scopes)
    return userMay(subject) ? Effect.void : Effect.fail(new HttpErrors.Forbidden({ detail: denied }))
  })

export const network = (networkId: string) =>
  allow(
    (subject) => subject.organizationsOfType("dso").some((org) => org.alias === networkId),
    `Not a member of the DSO organization '${networkId}'`
  )

export const participant = (sub: string) =>
  allow((subject) => subject.sub === sub, "A participant may read only their own data")

export const community = (communityId: string) =>
  allow(
    (subject) =>
      subject.organizations.some((org) => org.alias === communityId) ||
      (World.findCommunity(communityId)?.participants.some((p) => p.sub === subject.sub) ?? false),
    `Not a member of the community '${communityId}'`
  )
