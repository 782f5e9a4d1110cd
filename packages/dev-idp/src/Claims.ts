/**
 * The claims of the tokens the dev identity provider issues, shaped like Keycloak 26 tokens
 * so the platform reads them exactly as it reads production tokens (see dev/identities.yaml).
 * Pure functions: the token endpoint, the programmatic mint API and the tests share them.
 */
import type { Client, Identities, User } from "./Identities.js"

/** OpenID Connect scopes: accepted from any client, never counted as platform scopes. */
export const oidcScopes: ReadonlySet<string> = new Set(["openid", "profile", "email", "offline_access"])

export type Claims = Record<string, unknown>

/** The result of matching a requested `scope` parameter against what a client may receive. */
export type ScopeGrant =
  | { readonly _tag: "Granted"; readonly scopes: ReadonlyArray<string>; readonly openid: boolean }
  | { readonly _tag: "Refused"; readonly refused: ReadonlyArray<string> }

/**
 * Without platform scopes in the `scope` parameter a client gets all its platform scopes
 * (Keycloak's default client scopes); naming some gives exactly those, and asking for one it does
 * not hold is refused (`invalid_scope`) instead of silently dropped, so a misconfigured
 * service fails loudly in development.
 */
export const grantScopes = (client: Client, requested: string | undefined): ScopeGrant => {
  const asked = (requested ?? "").split(/\s+/).filter((s) => s.length > 0)
  const platform = asked.filter((s) => !oidcScopes.has(s))
  const refused = platform.filter((s) => !client.scopes.includes(s))
  if (refused.length > 0) return { _tag: "Refused", refused }
  const scopes = platform.length === 0 ? client.scopes : client.scopes.filter((s) => platform.includes(s))
  return { _tag: "Granted", scopes, openid: asked.includes("openid") }
}

/** `aud`: the realm audience plus the client's own; a single value stays a string (as Keycloak does). */
export const audienceOf = (identities: Identities, client: Client): string | ReadonlyArray<string> => {
  const all = [identities.audience, ...client.audience.filter((a) => a !== identities.audience)]
  return all.length === 1 ? all[0]! : all
}

/**
 * Keycloak 26 organization claim with ids and attributes mapped: an object keyed by alias,
 * each value carrying `id`, `name`, `type` as a list and the other attributes as lists.
 * Undefined when the user belongs to no organization (Keycloak omits the claim then).
 */
export const organizationClaim = (identities: Identities, user: User): Claims | undefined => {
  if (user.organizations.length === 0) return undefined
  const claim: Claims = {}
  for (const alias of user.organizations) {
    const org = identities.organizations.get(alias)
    if (org === undefined) continue
    claim[alias] = { ...org.attributes, id: org.id, name: org.name, type: [org.type] }
  }
  return claim
}

const scopeClaim = (scopes: ReadonlyArray<string>, extra: ReadonlyArray<string>) =>
  [...extra, ...scopes].join(" ")

/** The claims of Keycloak's `profile` and `email` scopes, in every user token and in userinfo. */
const profileClaims = (user: User): Claims => ({
  preferred_username: user.username,
  email: user.email,
  email_verified: true,
  name: user.fullName,
  given_name: user.firstName,
  family_name: user.lastName
})

/** Claims of a user's access token issued to `client`. */
export const userAccessClaims = (
  identities: Identities,
  user: User,
  client: Client,
  grant: { readonly scopes: ReadonlyArray<string>; readonly openid: boolean },
  sessionId: string
): Claims => {
  const organization = organizationClaim(identities, user)
  return {
    typ: "Bearer",
    aud: audienceOf(identities, client),
    sub: user.id,
    azp: client.clientId,
    sid: sessionId,
    scope: scopeClaim(grant.scopes, grant.openid ? ["openid", "profile", "email"] : ["profile", "email"]),
    ...profileClaims(user),
    groups: user.groups.map((g) => `/${g}`),
    realm_access: { roles: [...identities.defaultRealmRoles, ...user.realmRoles] },
    ...(organization === undefined ? {} : { organization })
  }
}

/** Claims of a user's OpenID Connect id token for `client`. */
export const userIdClaims = (
  user: User,
  client: Client,
  sessionId: string,
  nonce: string | undefined
): Claims => ({
  typ: "ID",
  aud: client.clientId,
  sub: user.id,
  azp: client.clientId,
  sid: sessionId,
  ...profileClaims(user),
  ...(nonce === undefined ? {} : { nonce })
})

/** The userinfo document of a user (the standard profile claims plus groups and organization). */
export const userInfoClaims = (identities: Identities, user: User): Claims => {
  const organization = organizationClaim(identities, user)
  return {
    sub: user.id,
    ...profileClaims(user),
    groups: user.groups.map((g) => `/${g}`),
    ...(organization === undefined ? {} : { organization })
  }
}

/**
 * Claims of a service account's access token (client_credentials). Keycloak marks these with
 * `client_id` and a `service-account-` username, the two markers the platform uses to tell a
 * service from a user.
 */
export const serviceAccessClaims = (
  identities: Identities,
  client: Client,
  scopes: ReadonlyArray<string>
): Claims => ({
  typ: "Bearer",
  aud: audienceOf(identities, client),
  sub: client.serviceAccountId,
  azp: client.clientId,
  client_id: client.clientId,
  preferred_username: `service-account-${client.clientId}`,
  scope: scopes.join(" "),
  realm_access: { roles: [...identities.defaultRealmRoles] }
})
