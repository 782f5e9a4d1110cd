/**
 * Organization sync: for each owner with `organization.create: true`, make sure the identity
 * provider has an organization with alias = owner id, name = owner name, description = owner
 * url (when set), attribute `type` = [organization.role] (default `org`) and each
 * `organization.attributes` entry as a one-value list.
 *
 * Idempotent: organizations are matched by alias; a missing one is created, one whose managed
 * fields differ is updated (attributes the registry does not manage are kept), the rest are
 * left alone. Nothing is ever deleted: an owner withdrawn with `create: false` keeps its
 * organization. Each owner is handled on its own, so one failure does not stop the others.
 */
import { Effect, Option } from "effect"
import {
  KeycloakOrganizations,
  type KeycloakError,
  type KeycloakOrganization,
  type NewOrganization
} from "./KeycloakOrganizations.js"
import type { Owner } from "./OwnerSchema.js"

/** The organization role when an owner's `organization.role` is not set. */
export const DEFAULT_ORGANIZATION_ROLE = "org"

export interface DesiredOrganization {
  readonly alias: string
  readonly name: string
  /** Managed only when the owner has a url. */
  readonly description: string | undefined
  readonly attributes: Readonly<Record<string, ReadonlyArray<string>>>
}

export const desiredOrganization = (owner: Owner): DesiredOrganization => ({
  alias: owner.id,
  name: owner.name,
  description: owner.url,
  attributes: {
    type: [owner.organization?.role ?? DEFAULT_ORGANIZATION_ROLE],
    ...Object.fromEntries(
      Object.entries(owner.organization?.attributes ?? {}).map(([key, value]) => [key, [value]])
    )
  }
})

/** One managed field whose value in the identity provider differs from the registry. */
export interface Change {
  readonly field: string
  readonly from: string
  readonly to: string
}

/** What an organization needs to match the registry. */
export const changesFor = (desired: DesiredOrganization, existing: KeycloakOrganization): Array<Change> => {
  const changes: Array<Change> = []
  if (existing.name !== desired.name) {
    changes.push({ field: "name", from: JSON.stringify(existing.name), to: JSON.stringify(desired.name) })
  }
  if (desired.description !== undefined && existing.description !== desired.description) {
    changes.push({
      field: "description",
      from: JSON.stringify(existing.description ?? null),
      to: JSON.stringify(desired.description)
    })
  }
  for (const [key, values] of Object.entries(desired.attributes)) {
    const current = existing.attributes?.[key]
    if (current === undefined || !sameValues(current, values)) {
      changes.push({
        field: `attributes.${key}`,
        from: current === undefined ? "(unset)" : JSON.stringify(current),
        to: JSON.stringify(values)
      })
    }
  }
  return changes
}

/** The existing organization with the registry's values for the managed fields. */
export const updatedOrganization = (
  desired: DesiredOrganization,
  existing: KeycloakOrganization
): KeycloakOrganization => ({
  ...existing,
  name: desired.name,
  ...(desired.description === undefined ? {} : { description: desired.description }),
  attributes: { ...existing.attributes, ...desired.attributes }
})

export const newOrganization = (desired: DesiredOrganization): NewOrganization => ({
  name: desired.name,
  alias: desired.alias,
  enabled: true,
  ...(desired.description === undefined ? {} : { description: desired.description }),
  attributes: desired.attributes
})

const sameValues = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((value, i) => value === b[i])

export type SyncOutcome = "created" | "updated" | "skipped" | "failed"

export interface SyncResult {
  readonly alias: string
  readonly outcome: SyncOutcome
  /** For updates (and failed updates): what differed. */
  readonly changes: ReadonlyArray<Change>
  /** For `created`: the organization created. */
  readonly created?: NewOrganization
  readonly error?: KeycloakError
}

export interface SyncReport {
  /** When true nothing was written: outcomes say what would have happened. */
  readonly dryRun: boolean
  readonly results: ReadonlyArray<SyncResult>
  /** Owners without `organization.create: true`, in registry order. */
  readonly notProvisioned: ReadonlyArray<string>
  readonly counts: Readonly<Record<SyncOutcome, number>>
}

/**
 * Brings the identity provider's organizations in line with the owners. Fails only when the
 * organizations cannot be listed at all (no token, no access); per-owner failures are
 * reported in the result.
 */
export const syncOrganizations = Effect.fn("OrganizationSync.run")(function*(
  owners: ReadonlyArray<Owner>,
  options: { readonly dryRun: boolean }
) {
  const admin = yield* KeycloakOrganizations
  const provisioned = owners.filter((owner) => owner.organization?.create === true)
  const notProvisioned = owners.filter((owner) => owner.organization?.create !== true).map((owner) => owner.id)
  yield* Effect.annotateCurrentSpan({ "owners.provisioned": provisioned.length, "sync.dry_run": options.dryRun })

  const byAlias = new Map<string, KeycloakOrganization>()
  if (provisioned.length > 0) {
    for (const organization of yield* admin.list) {
      if (organization.alias !== undefined) byAlias.set(organization.alias, organization)
    }
  }

  const syncOne = (owner: Owner): Effect.Effect<SyncResult> => {
    const desired = desiredOrganization(owner)
    const existing = Option.fromNullable(byAlias.get(desired.alias))
    if (Option.isNone(existing)) {
      const created = newOrganization(desired)
      const result: SyncResult = { alias: desired.alias, outcome: "created", changes: [], created }
      return options.dryRun ? Effect.succeed(result) : admin.create(created).pipe(
        Effect.as(result),
        Effect.catchAll((error) => Effect.succeed<SyncResult>({ ...result, outcome: "failed", error }))
      )
    }
    const changes = changesFor(desired, existing.value)
    if (changes.length === 0) return Effect.succeed({ alias: desired.alias, outcome: "skipped", changes })
    if (options.dryRun) return Effect.succeed({ alias: desired.alias, outcome: "updated", changes })
    // Keycloak's PUT replaces everything: start from the current full representation.
    return admin.get(existing.value.id).pipe(
      Effect.flatMap((current) => {
        const fresh = changesFor(desired, current)
        return fresh.length === 0
          ? Effect.succeed<SyncResult>({ alias: desired.alias, outcome: "skipped", changes: [] })
          : admin.update(updatedOrganization(desired, current)).pipe(
            Effect.as<SyncResult>({ alias: desired.alias, outcome: "updated", changes: fresh })
          )
      }),
      Effect.catchAll((error) => Effect.succeed<SyncResult>({ alias: desired.alias, outcome: "failed", changes, error }))
    )
  }

  const results = yield* Effect.forEach(provisioned, syncOne)
  const counts = { created: 0, updated: 0, skipped: 0, failed: 0 }
  for (const result of results) counts[result.outcome]++
  return { dryRun: options.dryRun, results, notProvisioned, counts } satisfies SyncReport
})
