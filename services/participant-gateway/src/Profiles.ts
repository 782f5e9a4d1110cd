/**
 * The profile (spec 001 part C): who the caller is, from their verified token, and whether they
 * accepted the current terms of use (`TERMS_VERSION`), from the gateway's table. A new version of
 * the terms makes `terms_accepted` false again until the user accepts it.
 */
import type { Subject } from "@rec/auth"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Config from "./Config.js"
import type * as Domain from "./Domain.js"
import * as Store from "./Store.js"
import { TermsRepo } from "./TermsRepo.js"

/** The token's `groups` claim (Keycloak group paths) as names: `/admins` -> `admins`. */
export const groupsOf = (claims: Readonly<Record<string, unknown>>): ReadonlyArray<string> => {
  const raw = claims["groups"]
  const list = Array.isArray(raw) ? raw : typeof raw === "string" ? [raw] : []
  const names = list
    .filter((g): g is string => typeof g === "string")
    .map((g) => g.replace(/^\/+/, ""))
    .filter((g) => g !== "")
  return [...new Set(names)].sort()
}

export const profileOf = (
  subject: Subject.Subject,
  version: string,
  acceptedAt: Option.Option<string>
): Domain.Profile => ({
  sub: subject.sub ?? subject.id,
  email: subject.email ?? "",
  name: subject.name ?? subject.username ?? "",
  groups: groupsOf(subject.claims),
  terms_accepted: Option.isSome(acceptedAt),
  terms_version: version,
  terms_accepted_at: Option.getOrNull(acceptedAt)
})

export class Profiles extends Effect.Service<Profiles>()("participant-gateway/Profiles", {
  effect: Effect.gen(function*() {
    const terms = yield* TermsRepo
    const version = yield* Config.termsVersion

    const get = Effect.fn("Profiles.get")(function*(subject: Subject.Subject) {
      const acceptedAt = yield* Store.guarded("reading the terms acceptance", terms.acceptedAt(subject.id, version))
      return profileOf(subject, version, acceptedAt)
    })

    const acceptTerms = Effect.fn("Profiles.acceptTerms")(function*(subject: Subject.Subject) {
      const now = DateTime.formatIso(yield* DateTime.now)
      const acceptedAt = yield* Store.guarded("recording the terms acceptance", terms.accept(subject.id, version, now))
      return profileOf(subject, version, Option.some(acceptedAt))
    })

    return { get, acceptTerms }
  })
}) {}
