/**
 * `GET /api/me`: who the caller is (reference grid-gateway.md §3.1, with later upstream's fixes:
 * `email` may be absent, `locale` is read). Not a policy question: any authenticated user with a
 * DSO organization gets an answer, others a 403 saying why.
 */
import type { Subject } from "@rec/auth"
import { HttpErrors } from "@rec/platform"
import * as Either from "effect/Either"
import type * as Domain from "./Domain.js"
import { dsoNetworks } from "./GridAccess.js"

/** The primary subtag of a language tag, lower-cased (`it-IT` and `it_IT` give `it`). */
export const primaryLanguage = (tag: string): string | undefined => {
  const primary = tag.trim().split(/[-_]/)[0]?.toLowerCase()
  return primary !== undefined && /^[a-z]{2,8}$/.test(primary) ? primary : undefined
}

/**
 * The most preferred language of an `Accept-Language` header (highest `q`, first on ties;
 * `*` and `q=0` ignored).
 */
export const preferredLanguage = (header: string | undefined): string | undefined => {
  if (header === undefined) return undefined
  let best: { language: string; q: number } | undefined
  for (const part of header.split(",")) {
    const [range, ...params] = part.trim().split(";")
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith("q="))
    const q = qParam === undefined ? 1 : Number(qParam.slice(2))
    if (range === undefined || range === "*" || !(q > 0)) continue
    const language = primaryLanguage(range)
    if (language !== undefined && (best === undefined || q > best.q)) best = { language, q }
  }
  return best?.language
}

/** The caller's `locale` claim, else `Accept-Language`. */
export const localeOf = (subject: Subject.Subject, acceptLanguage: string | undefined): string | null => {
  const claim = subject.claims["locale"]
  const fromClaim = typeof claim === "string" ? primaryLanguage(claim) : undefined
  return fromClaim ?? preferredLanguage(acceptLanguage) ?? null
}

export const me = (
  subject: Subject.Subject,
  acceptLanguage: string | undefined
): Either.Either<Domain.MeResponse, HttpErrors.Forbidden> => {
  const networks = dsoNetworks(subject)
  const network = networks[0]
  if (network === undefined) {
    return Either.left(
      new HttpErrors.Forbidden({
        detail: subject.isService
          ? "DSO organization membership required: service accounts operate no network"
          : "DSO organization membership required: your account belongs to no DSO organization"
      })
    )
  }
  return Either.right({
    user: {
      sub: subject.sub ?? subject.id,
      email: subject.email ?? null,
      name: subject.name ?? null,
      preferred_username: subject.username ?? null,
      locale: localeOf(subject, acceptLanguage),
      network_id: network,
      organization: network,
      network_ids: networks
    }
  })
}
