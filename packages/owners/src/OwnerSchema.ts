/**
 * The owner registry file format (`owners.yaml`, `owners.local.yaml`) as an Effect Schema.
 *
 * `schemas/owners.schema.json` states the same rules as a draft-07 JSON Schema for editors and
 * other tools; `test/schema-parity.test.ts` runs every fixture through both (the JSON file with
 * ajv, this module through the loader) and requires the same verdict for the same reason, so the
 * two cannot drift. Every filter carries the JSON Schema keyword it stands for in its
 * `jsonSchema` annotation: `SchemaIssues.ts` reports violations under that keyword.
 */
import { fullFormats } from "ajv-formats/dist/formats.js"
import { Schema } from "effect"

/**
 * Owner ids and aliases: lowercase kebab-case, starting and ending with a letter or digit, or
 * a single letter or digit. (The spec's `^[a-z0-9][a-z0-9-]*[a-z0-9]$` plus the one-character
 * case, as one expression.)
 */
export const OWNER_KEY_PATTERN = "^(?:[a-z0-9][a-z0-9-]*[a-z0-9]|[a-z0-9])$"

/** A DID of the `did:web` method, for owners that operate a dataspace connector. */
export const DID_PATTERN = "^did:web:.+"

/** The schema.org types an owner may have; each is emitted as a JSON-LD `@type`. */
export const OWNER_TYPES = [
  "schema:Corporation",
  "schema:GovernmentOrganization",
  "schema:ResearchOrganization",
  "schema:EducationalOrganization",
  "schema:NGO",
  "schema:Organization",
  "schema:Project"
] as const

export type OwnerType = (typeof OWNER_TYPES)[number]

/** Property names of an owner entry and of its `organization` block, in the order of the spec. */
export const OWNER_PROPERTIES = ["id", "type", "name", "did", "url", "organization", "aliases"] as const
export const ORGANIZATION_PROPERTIES = ["create", "role", "attributes"] as const

const uriFormat = fullFormats.uri

/**
 * `format: uri` exactly as ajv-formats checks it (an absolute URI per RFC 3986), so a URL the
 * JSON Schema accepts is never rejected by the loader or the other way round.
 */
export const isUri = (value: string): boolean => typeof uriFormat === "function" && uriFormat(value)

export const OwnerKey = Schema.String.pipe(
  Schema.pattern(new RegExp(OWNER_KEY_PATTERN), {
    description: "lowercase kebab-case (a-z, 0-9 and '-', starting and ending with a letter or digit)"
  })
)

export const Did = Schema.String.pipe(
  Schema.pattern(new RegExp(DID_PATTERN), { description: "a did:web DID (starting with \"did:web:\")" })
)

export const Uri = Schema.String.pipe(
  Schema.filter(isUri, {
    description: "an absolute URI such as https://example.org",
    jsonSchema: { format: "uri" }
  })
)

const NonEmptyString = Schema.String.pipe(Schema.minLength(1, { description: "a non-empty string" }))

export const OwnerTypeSchema = Schema.Literal(...OWNER_TYPES)

/** Identity-provider organization provisioning block of an owner. */
export const Organization = Schema.Struct({
  /** When true, `owners sync-orgs` ensures an identity-provider organization for the owner. */
  create: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /** Emitted as the organization attribute `type` (`rec`, `dso`, `org`, ...). */
  role: Schema.optional(NonEmptyString),
  /** Set on the organization next to the role, each value as a one-element list. */
  attributes: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
})

export type Organization = typeof Organization.Type

export const Owner = Schema.Struct({
  id: OwnerKey,
  type: OwnerTypeSchema,
  name: NonEmptyString,
  did: Schema.optional(Did),
  url: Schema.optional(Uri),
  organization: Schema.optional(Organization),
  aliases: Schema.optionalWith(Schema.Array(OwnerKey), { default: () => [] })
})

/** A validated owner entry, defaults applied (`aliases` is `[]`, `organization.create` false). */
export type Owner = typeof Owner.Type

/** One owner registry file. */
export const OwnersFile = Schema.Struct({
  owners: Schema.Array(Owner).pipe(Schema.minItems(1, { description: "a list of at least one owner" }))
})

export type OwnersFile = typeof OwnersFile.Type
