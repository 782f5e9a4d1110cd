/**
 * What the registry answers (`format=json`; JSON-LD renders the same records, see `JsonLd.ts`),
 * the validation and import reports, and the errors that carry more than `{detail, issues}`.
 *
 * Identifiers: a community is addressed by its `key` (the bundle's `community.id`); members,
 * assets and sites by an `id` that is `<community key>.<key in the bundle>` (community keys
 * have no `.`), stable across re-imports. Every record also carries its `iri`, the `@id` of its
 * JSON-LD node. IRIs are expanded: a CURIE written in a bundle (`schema:Person`) is answered
 * as `https://schema.org/Person`.
 */
import { Contract, HttpErrors } from "@rec/platform"
import * as Schema from "effect/Schema"

// ---------------------------------------------------------------------------------------------
// Vocabulary

export const Roles = ["producer", "consumer", "prosumer"] as const
export const Role = Schema.Literal(...Roles).annotations({ description: "The member's role in the community" })
export type Role = typeof Role.Type

export const MemberStatuses = ["pending", "active", "suspended", "inactive"] as const
export const MemberStatus = Schema.Literal(...MemberStatuses)
export type MemberStatus = typeof MemberStatus.Type

export const AssetTypes = ["pv", "storage", "meter", "ev_charger", "heat_pump", "load"] as const
export const AssetType = Schema.Literal(...AssetTypes).annotations({ description: "The kind of asset" })
export type AssetType = typeof AssetType.Type

export const Formats = ["json", "jsonld"] as const
export const Format = Schema.Literal(...Formats).annotations({
  description: "`json` (default, `application/json`) or `jsonld` (`application/ld+json`, expanded IRIs)"
})
export type Format = typeof Format.Type

/** Largest page of any list; the default page is 50. */
export const maxPageSize = 500
export const defaultPageSize = 50

/** Open-ended data kept as the bundle gave it. */
const Json = HttpErrors.AnyJson
const JsonObject = Schema.Record({ key: Schema.String, value: Json })

// ---------------------------------------------------------------------------------------------
// Records

/** An organization or agent named as an owner; `name` when the owner registry knows it. */
export const OwnerRef = Schema.Struct({
  reference: Schema.String.annotations({ description: "As written in the bundle: an owner id or alias, a DID or a URL" }),
  iri: Schema.String.annotations({ description: "The owner's IRI (its DID, URL, or the registry's owner IRI)" }),
  name: Schema.NullOr(Schema.String),
  registered: Schema.Boolean.annotations({ description: "Whether the owner registry (`OWNERS_FILE`) knows the owner" })
}).annotations({ identifier: "OwnerRef" })
export type OwnerRef = typeof OwnerRef.Type

export const Location = Schema.Struct({ lat: Schema.Number, lon: Schema.Number })

export const Community = Schema.Struct({
  key: Schema.String,
  iri: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  type: Schema.NullOr(Schema.String).annotations({ description: "The community's type IRI, if the bundle gives one" }),
  owner: Schema.NullOr(OwnerRef),
  areas: Schema.Record({ key: Schema.String, value: JsonObject }).annotations({
    description: "Areas by key: `name`, `location {lat, lon}`, `topology` (node ids), `geometry`, ..."
  }),
  topology: Schema.Array(JsonObject),
  legal: Schema.NullOr(JsonObject),
  links: Schema.NullOr(JsonObject),
  contact: Schema.NullOr(JsonObject),
  settings: Schema.NullOr(JsonObject),
  member_count: Schema.Number,
  imported_at: Schema.String.annotations({ description: "When the community's bundle was imported (ISO 8601)" })
}).annotations({ identifier: "Community" })
export type Community = typeof Community.Type

export const DeliveryPoint = Schema.Struct(
  {
    id: Schema.String,
    type: Schema.String,
    active: Schema.Boolean
  },
  Schema.Record({ key: Schema.String, value: Json })
).annotations({ identifier: "DeliveryPoint" })

export const Member = Schema.Struct({
  id: Schema.String,
  key: Schema.String,
  iri: Schema.String,
  community: Schema.String.annotations({ description: "Community key" }),
  user_id: Schema.String.annotations({ description: "The identity provider's subject (`sub`) of the participant" }),
  name: Schema.String,
  type: Schema.NullOr(Schema.String).annotations({ description: "The participant's type IRI (e.g. https://schema.org/Person)" }),
  role: Role,
  status: MemberStatus,
  area: Schema.String,
  delivery_points: Schema.Array(DeliveryPoint),
  asset_count: Schema.Number,
  extra: JsonObject.annotations({ description: "Fields of the bundle's member this registry does not interpret" })
}).annotations({ identifier: "Member" })
export type Member = typeof Member.Type

export const Asset = Schema.Struct({
  id: Schema.String,
  key: Schema.String,
  iri: Schema.String,
  community: Schema.String,
  member: Schema.String.annotations({ description: "Id of the member the asset belongs to" }),
  asset_type: AssetType,
  name: Schema.String,
  site: Schema.NullOr(Schema.String).annotations({ description: "Id of the site the asset is located at" }),
  owner: Schema.NullOr(OwnerRef),
  properties: JsonObject.annotations({ description: "The type's fields (rated_power, capacity, sensor_id, ...)" }),
  device: Schema.NullOr(JsonObject),
  relationships: Schema.NullOr(
    Schema.Struct({
      measures: Schema.Array(Schema.String).annotations({ description: "Ids of the assets this one measures" }),
      paired_with: Schema.NullOr(Schema.String)
    })
  )
}).annotations({ identifier: "Asset" })
export type Asset = typeof Asset.Type

export const Site = Schema.Struct({
  id: Schema.String,
  key: Schema.String,
  iri: Schema.String,
  community: Schema.String,
  member: Schema.NullOr(Schema.String).annotations({ description: "Id of the member the site belongs to, if any" }),
  name: Schema.String,
  area: Schema.String,
  address: Schema.NullOr(Schema.String),
  location: Schema.NullOr(Location),
  delivery_point: Schema.NullOr(Schema.String),
  extra: JsonObject
}).annotations({ identifier: "Site" })
export type Site = typeof Site.Type

const page = <A, I>(item: Schema.Schema<A, I>, identifier: string) =>
  Schema.Struct({
    items: Schema.Array(item),
    next_cursor: Schema.NullOr(Schema.String).annotations({
      description: "Pass as `cursor` for the next page; null on the last page"
    })
  }).annotations({ identifier })

export const CommunityList = page(Community, "CommunityList")
export const MemberList = page(Member, "MemberList")
export const AssetList = page(Asset, "AssetList")
export const SiteList = page(Site, "SiteList")

// ---------------------------------------------------------------------------------------------
// Query parameters

const limit = Schema.optionalWith(
  Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, maxPageSize)).annotations({
    description: `Page size, 1 to ${maxPageSize} (default ${defaultPageSize})`
  }),
  { default: () => defaultPageSize }
)
const cursor = Schema.optional(Schema.String.annotations({ description: "The `next_cursor` of the previous page" }))
const format = Schema.optionalWith(Format, { default: () => "json" as const })

export const FormatParams = Contract.allErrors(Schema.Struct({ format }))
export const CommunityListParams = Contract.allErrors(Schema.Struct({ format, limit, cursor }))
export const MemberListParams = Contract.allErrors(Schema.Struct({ role: Schema.optional(Role), format, limit, cursor }))
export const MemberAssetParams = Contract.allErrors(
  Schema.Struct({ asset_type: Schema.optional(AssetType), format, limit, cursor })
)
export const AssetListParams = Contract.allErrors(
  Schema.Struct({
    community: Schema.optional(Schema.String.annotations({ description: "Community key" })),
    member: Schema.optional(Schema.String.annotations({ description: "Member id" })),
    asset_type: Schema.optional(AssetType),
    format,
    limit,
    cursor
  })
)
export const SiteListParams = Contract.allErrors(
  Schema.Struct({
    community: Schema.optional(Schema.String.annotations({ description: "Community key" })),
    member: Schema.optional(Schema.String.annotations({ description: "Member id" })),
    format,
    limit,
    cursor
  })
)
export const ExportParams = Contract.allErrors(
  Schema.Struct({ community: Schema.String.annotations({ description: "Community key" }) })
)

// ---------------------------------------------------------------------------------------------
// Validation and import

export const ProblemCodes = [
  "yaml",
  "schema",
  "dangling-reference",
  "duplicate-key",
  "unknown-prefix",
  "unknown-owner",
  "invalid-value",
  "unknown-property"
] as const
export const ProblemCode = Schema.Literal(...ProblemCodes)
export type ProblemCode = typeof ProblemCode.Type

export const Problem = Schema.Struct({
  path: Schema.Array(Schema.Union(Schema.String, Schema.Number)).annotations({
    description: "Where in the bundle: property names and list indexes from the top"
  }),
  code: ProblemCode,
  keyword: Schema.optional(Schema.String.annotations({
    description: "For `schema` problems: the JSON Schema keyword of schemas/community-bundle.v0.4.schema.json that fails"
  })),
  message: Schema.String,
  line: Schema.optional(Schema.Number),
  column: Schema.optional(Schema.Number)
}).annotations({ identifier: "BundleProblem" })
export type Problem = typeof Problem.Type

export const Counts = Schema.Struct({
  members: Schema.Number,
  participants: Schema.Number,
  memberships: Schema.Number,
  sites: Schema.Number,
  assets: Schema.Number,
  meters: Schema.Number
}).annotations({ identifier: "BundleCounts" })
export type Counts = typeof Counts.Type

export const ValidationResult = Schema.Struct({
  valid: Schema.Boolean.annotations({ description: "True when `POST /admin/import` would import this bundle" }),
  community: Schema.NullOr(Schema.String).annotations({ description: "The bundle's community key, when readable" }),
  counts: Schema.NullOr(Counts).annotations({ description: "What an import would write (valid bundles)" }),
  existing: Schema.NullOr(Counts).annotations({
    description: "What the registry holds for this community now, which an import would replace (null: nothing)"
  }),
  problems: Schema.Array(Problem).annotations({ description: "Every problem found; any one refuses the import" }),
  warnings: Schema.Array(Problem).annotations({ description: "Things worth a look that do not refuse the import" })
}).annotations({ identifier: "ValidationResult" })
export type ValidationResult = typeof ValidationResult.Type

export const ImportResult = Schema.Struct({
  community: Schema.String,
  imported: Counts,
  replaced: Schema.NullOr(Counts).annotations({ description: "What was deleted (null: the community is new)" }),
  warnings: Schema.Array(Problem),
  notified: Schema.Boolean.annotations({
    description: "Whether rec/registry/updates/<community> was published (false without a broker)"
  })
}).annotations({ identifier: "ImportResult" })
export type ImportResult = typeof ImportResult.Type

/** A bundle `POST /admin/import` refuses: nothing was written. */
export class BundleInvalid extends Contract.UntaggedError<BundleInvalid>()(
  "BundleInvalid",
  { ...HttpErrors.fields, problems: Schema.Array(Problem), warnings: Schema.Array(Problem) },
  { status: 422, description: "The bundle has problems (all of them are listed); nothing was imported" }
) {}

// ---------------------------------------------------------------------------------------------
// Readiness

export const CheckState = Schema.Literal("ok", "failed", "timeout", "disabled", "connected", "reconnecting", "starting", "stopped")

export const Readiness = Schema.Struct({
  status: Schema.Literal("ready", "degraded", "not_ready"),
  checks: Schema.Struct({
    db: CheckState,
    policies: CheckState,
    mqtt: CheckState.annotations({
      description: "Only degrades readiness: imports still succeed without a broker (no update is published)"
    })
  })
}).annotations({ identifier: "Readiness" })
export type Readiness = typeof Readiness.Type

export class NotReady extends Contract.UntaggedError<NotReady>()("NotReady", Readiness.fields, {
  status: 503,
  description: "The database or the policies are unavailable"
}) {}
