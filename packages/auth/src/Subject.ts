/**
 * Who is calling: the subject derived from a verified token's claims, exactly as the original
 * policy service derived it (reference policy-service.md §1.1), plus the Keycloak 26
 * `organization` claim parsed into organizations.
 *
 * - **Service or user.** A service account when the claims contain a `client_id` or `clientId`
 *   key (any value), or `preferred_username` starts with `service-account-`. `azp` alone does
 *   not make a service (user tokens carry it too).
 * - **id.** Services: the first non-empty string of `client_id`, `clientId`, `azp`,
 *   `preferred_username` without the `service-account-` prefix, `sub`, else `unknown-service`.
 *   Users: `sub`, else `preferred_username`, else `unknown-user`.
 * - **groups.** Users: `realm_access.roles` as they are plus the `groups` claim with leading `/`
 *   removed (`/org/admins` becomes `org/admins`), de-duplicated and sorted; a non-list `groups` is
 *   ignored. Services: always empty.
 * - **scopes.** A string `scope` is split on whitespace; a list keeps its truthy items,
 *   stringified; anything else gives none. De-duplicated and sorted (`["a",1,null]` gives
 *   `["1","a"]`). For users these are the scopes granted to the calling client.
 * - **organizations.** The `organization` claim as a list of aliases (`["acme"]`), a single
 *   alias string, or an object keyed by alias whose values may carry `id`, `name`, `type` (list or
 *   string), `attributes` (map of lists), `groups`, `roles`; other keys of a value are attributes
 *   (Keycloak's mapper can put attributes there directly). Attribute values that are not lists
 *   are wrapped. `types` joins `type` and `attributes.type`.
 * - **claims.** The whole verified claim set, for policies.
 */
import { HttpErrors } from "@rec/platform"
import * as Schema from "effect/Schema"

export class Organization extends Schema.Class<Organization>("Organization")({
  alias: Schema.String,
  id: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  types: Schema.Array(Schema.String),
  attributes: Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) }),
  groups: Schema.Array(Schema.String),
  roles: Schema.Array(Schema.String)
}) {}

export const SubjectType = Schema.Literal("user", "service")
export type SubjectType = typeof SubjectType.Type

export class Subject extends Schema.Class<Subject>("Subject")({
  type: SubjectType,
  /** Stable identifier: the user's `sub` or the service's client id. */
  id: Schema.String,
  sub: Schema.optional(Schema.String),
  groups: Schema.Array(Schema.String),
  scopes: Schema.Array(Schema.String),
  organizations: Schema.Array(Organization),
  email: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  username: Schema.optional(Schema.String),
  claims: Schema.Record({ key: Schema.String, value: HttpErrors.AnyJson })
}) {
  get isService(): boolean {
    return this.type === "service"
  }

  hasScope(scope: string): boolean {
    return this.scopes.includes(scope)
  }

  inGroup(group: string): boolean {
    return this.groups.includes(group)
  }

  /** Organizations whose `types` contain `type` (for example `dso`), in claim order. */
  organizationsOfType(type: string): ReadonlyArray<Organization> {
    return this.organizations.filter((org) => org.types.includes(type))
  }
}

/** The subject as policies see it: `{ id, type, groups, scopes, claims }` (reference §1.1). */
export interface PolicySubject {
  readonly id: string
  readonly type: SubjectType
  readonly groups: ReadonlyArray<string>
  readonly scopes: ReadonlyArray<string>
  readonly claims: Readonly<Record<string, unknown>>
}

export const toPolicyInput = (subject: Subject): PolicySubject => ({
  id: subject.id,
  type: subject.type,
  groups: subject.groups,
  scopes: subject.scopes,
  claims: subject.claims
})

const servicePrefix = "service-account-"

const nonEmptyString = (value: unknown): string | undefined =>
  typeof value === "string" && value !== "" ? value : undefined

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const sortedUnique = (values: Iterable<string>): Array<string> => [...new Set(values)].sort()

/** Python's truthiness for JSON values, as the original filtered scope lists. */
const truthy = (value: unknown): boolean =>
  !(value === null || value === undefined || value === false || value === 0 || value === "" ||
    (Array.isArray(value) && value.length === 0) || (isRecord(value) && Object.keys(value).length === 0))

export const isServiceAccount = (claims: Readonly<Record<string, unknown>>): boolean =>
  "client_id" in claims || "clientId" in claims ||
  (typeof claims.preferred_username === "string" && claims.preferred_username.startsWith(servicePrefix))

export const scopesOf = (claims: Readonly<Record<string, unknown>>): Array<string> => {
  const scope = claims.scope
  if (typeof scope === "string") return sortedUnique(scope.split(/\s+/).filter((s) => s !== ""))
  if (Array.isArray(scope)) return sortedUnique(scope.filter(truthy).map(String))
  return []
}

export const groupsOf = (claims: Readonly<Record<string, unknown>>): Array<string> => {
  const out: Array<string> = []
  const realmAccess = claims.realm_access
  if (isRecord(realmAccess) && Array.isArray(realmAccess.roles)) {
    for (const role of realmAccess.roles) out.push(String(role))
  }
  if (Array.isArray(claims.groups)) {
    for (const group of claims.groups) out.push(String(group).replace(/^\/+/, ""))
  }
  return sortedUnique(out)
}

const stringList = (value: unknown): Array<string> =>
  Array.isArray(value)
    ? value.filter((v) => v !== null && v !== undefined).map(String)
    : value === null || value === undefined
    ? []
    : [String(value)]

const knownOrganizationKeys = new Set(["id", "name", "type", "attributes", "groups", "roles", "alias"])

const organizationFrom = (alias: string, value: unknown): Organization => {
  if (!isRecord(value)) {
    return new Organization({ alias, types: [], attributes: {}, groups: [], roles: [] })
  }
  const attributes: Record<string, Array<string>> = {}
  if (isRecord(value.attributes)) {
    for (const [key, v] of Object.entries(value.attributes)) attributes[key] = stringList(v)
  }
  for (const [key, v] of Object.entries(value)) {
    if (!knownOrganizationKeys.has(key) && !(key in attributes)) attributes[key] = stringList(v)
  }
  const types = [...new Set([...stringList(value.type), ...(attributes.type ?? [])])]
  return new Organization({
    alias,
    id: nonEmptyString(value.id),
    name: nonEmptyString(value.name),
    types,
    attributes,
    groups: stringList(value.groups).map((g) => g.replace(/^\/+/, "")),
    roles: stringList(value.roles)
  })
}

export const organizationsOf = (claims: Readonly<Record<string, unknown>>): Array<Organization> => {
  const claim = claims.organization
  if (typeof claim === "string") return claim === "" ? [] : [organizationFrom(claim, undefined)]
  if (Array.isArray(claim)) {
    return claim.flatMap((entry) => {
      if (typeof entry === "string") return entry === "" ? [] : [organizationFrom(entry, undefined)]
      // A list of objects naming themselves (`{ alias | name, ... }`) also occurs in exports.
      if (isRecord(entry)) {
        const alias = nonEmptyString(entry.alias) ?? nonEmptyString(entry.name) ?? nonEmptyString(entry.id)
        return alias === undefined ? [] : [organizationFrom(alias, entry)]
      }
      return []
    })
  }
  if (isRecord(claim)) return Object.entries(claim).map(([alias, value]) => organizationFrom(alias, value))
  return []
}

/** The subject of a verified claim set. */
export const fromClaims = (claims: Readonly<Record<string, unknown>>): Subject => {
  const service = isServiceAccount(claims)
  const username = nonEmptyString(claims.preferred_username)
  const id = service
    ? nonEmptyString(claims.client_id) ?? nonEmptyString(claims.clientId) ?? nonEmptyString(claims.azp) ??
      (username !== undefined && username.startsWith(servicePrefix)
        ? nonEmptyString(username.slice(servicePrefix.length))
        : username) ??
      nonEmptyString(claims.sub) ?? "unknown-service"
    : nonEmptyString(claims.sub) ?? username ?? "unknown-user"
  return new Subject({
    type: service ? "service" : "user",
    id,
    sub: nonEmptyString(claims.sub),
    groups: service ? [] : groupsOf(claims),
    scopes: scopesOf(claims),
    organizations: organizationsOf(claims),
    email: nonEmptyString(claims.email),
    name: nonEmptyString(claims.name),
    username,
    claims: { ...claims }
  })
}
