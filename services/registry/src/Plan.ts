/**
 * A valid bundle as the rows the registry stores, one list per table (`migrations/0001`):
 *
 * | table | from the bundle |
 * |---|---|
 * | `community` | `community` (areas, topology, legal, links, contact, settings as given), the bundle's `version`, `schema_version`, `metadata`, `context` and unknown top-level keys |
 * | `participant` | each member's party: `user_id`, `name`, `type` (and its expanded IRI) |
 * | `membership` | each member's membership: `role`, `status`, `area`, `delivery_points`; the API's member |
 * | `site` | `sites` |
 * | `asset` | every typed asset of every member; the type's fields in `properties` |
 * | `meter` | the meter assets' `sensor_id`, `meter_type`, `pod`, `protocol` |
 *
 * Fields the registry does not interpret are kept (`extra`, `properties`) and exported again.
 */
import type * as BundleSchema from "./BundleSchema.js"
import { Properties } from "./BundleSchema.js"
import type * as Domain from "./Domain.js"
import { entityId, expandValid } from "./Iris.js"

type Json = unknown
type JsonObject = Record<string, Json>

export interface CommunityRow {
  readonly key: string
  readonly name: string
  readonly description: string | null
  readonly type: string | null
  readonly type_iri: string | null
  readonly owner: string | null
  readonly areas: JsonObject
  readonly topology: ReadonlyArray<Json>
  readonly legal: JsonObject | null
  readonly links: JsonObject | null
  readonly contact: JsonObject | null
  readonly settings: JsonObject | null
  readonly extra: JsonObject
  /** `{version, schema_version, metadata?, context?, extra}`: the bundle around the community. */
  readonly bundle: JsonObject
}

export interface ParticipantRow {
  readonly id: string
  readonly community_key: string
  readonly key: string
  readonly user_id: string
  readonly name: string
  readonly type: string | null
  readonly type_iri: string | null
}

export interface MembershipRow {
  readonly id: string
  readonly community_key: string
  readonly key: string
  readonly participant_id: string
  readonly role: Domain.Role
  readonly status: Domain.MemberStatus
  readonly area: string
  readonly delivery_points: ReadonlyArray<Json>
  readonly extra: JsonObject
}

export interface SiteRow {
  readonly id: string
  readonly community_key: string
  readonly key: string
  readonly member_id: string | null
  readonly name: string
  readonly area: string
  readonly address: string | null
  readonly location: Json | null
  readonly delivery_point: string | null
  readonly extra: JsonObject
}

export interface AssetRow {
  readonly id: string
  readonly community_key: string
  readonly key: string
  readonly member_id: string
  readonly asset_type: Domain.AssetType
  readonly name: string
  readonly site_id: string | null
  readonly owner: string | null
  readonly properties: JsonObject
  readonly device: JsonObject | null
  readonly relationships: JsonObject | null
}

export interface MeterRow {
  readonly asset_id: string
  readonly community_key: string
  readonly sensor_id: string
  readonly meter_type: string
  readonly pod: string | null
  readonly protocol: string | null
}

export interface Plan {
  readonly community: CommunityRow
  readonly participants: ReadonlyArray<ParticipantRow>
  readonly memberships: ReadonlyArray<MembershipRow>
  readonly sites: ReadonlyArray<SiteRow>
  readonly assets: ReadonlyArray<AssetRow>
  readonly meters: ReadonlyArray<MeterRow>
}

export const counts = (plan: Plan): Domain.Counts => ({
  members: plan.memberships.length,
  participants: plan.participants.length,
  memberships: plan.memberships.length,
  sites: plan.sites.length,
  assets: plan.assets.length,
  meters: plan.meters.length
})

/** The meter fields stored in their own table. */
export const meterColumns = ["sensor_id", "meter_type", "pod", "protocol"] as const

const assetShared = ["name", "site", "owner", "device", "relationships"] as const

/** The keys of `value` not in `known`, with their values. */
export const extras = (value: object, known: ReadonlyArray<string>): JsonObject => {
  const out: JsonObject = {}
  for (const [key, inner] of Object.entries(value)) {
    // `__proto__` never gets here (refused by the value check), so plain assignment is safe.
    if (!known.includes(key)) out[key] = inner
  }
  return out
}

const orNull = <A>(value: A | undefined): A | null => (value === undefined ? null : value)

/** The rows of a bundle that validated (schema and `BundleCheck`). */
export const fromBundle = (bundle: BundleSchema.Bundle): Plan => {
  const community = bundle.community
  const key = community.id
  const prefixes = bundle.context?.prefixes ?? {}
  const base = bundle.context?.base_iri
  const iri = (value: string | undefined) => (value === undefined ? null : expandValid(value, prefixes, base))

  const communityRow: CommunityRow = {
    key,
    name: community.name,
    description: orNull(community.description),
    type: orNull(community.type),
    type_iri: iri(community.type),
    owner: orNull(community.owner),
    areas: community.areas as JsonObject,
    topology: community.topology ?? [],
    legal: orNull(community.legal) as JsonObject | null,
    links: orNull(community.links) as JsonObject | null,
    contact: orNull(community.contact) as JsonObject | null,
    settings: orNull(community.settings) as JsonObject | null,
    extra: extras(community, Properties.community),
    bundle: {
      version: bundle.version,
      schema_version: bundle.schema_version,
      ...(bundle.metadata === undefined ? {} : { metadata: bundle.metadata }),
      ...(bundle.context === undefined ? {} : { context: bundle.context }),
      extra: extras(bundle, Properties.bundle)
    }
  }

  const participants: Array<ParticipantRow> = []
  const memberships: Array<MembershipRow> = []
  const assets: Array<AssetRow> = []
  const meters: Array<MeterRow> = []
  for (const [memberKey, member] of Object.entries(bundle.members)) {
    const id = entityId(key, memberKey)
    participants.push({
      id,
      community_key: key,
      key: memberKey,
      user_id: member.user_id,
      name: member.name,
      type: orNull(member.type),
      type_iri: iri(member.type)
    })
    memberships.push({
      id,
      community_key: key,
      key: memberKey,
      participant_id: id,
      role: member.role,
      status: member.status,
      area: member.area,
      delivery_points: member.delivery_points ?? [],
      extra: extras(member, Properties.member)
    })
    for (const [type, map] of Object.entries(member.assets ?? {}) as Array<[Domain.AssetType, Record<string, BundleSchema.AnyAsset> | undefined]>) {
      for (const [assetKey, asset] of Object.entries(map ?? {})) {
        const assetId = entityId(key, assetKey)
        const isMeter = type === "meter"
        assets.push({
          id: assetId,
          community_key: key,
          key: assetKey,
          member_id: id,
          asset_type: type,
          name: asset.name,
          site_id: asset.site === undefined ? null : entityId(key, asset.site),
          owner: orNull(asset.owner),
          properties: extras(asset, isMeter ? [...assetShared, ...meterColumns] : assetShared),
          device: orNull(asset.device) as JsonObject | null,
          relationships: orNull(asset.relationships) as JsonObject | null
        })
        if (isMeter) {
          const meter = asset as typeof BundleSchema.Meter.Type
          meters.push({
            asset_id: assetId,
            community_key: key,
            sensor_id: meter.sensor_id,
            meter_type: meter.meter_type,
            pod: orNull(meter.pod),
            protocol: orNull(meter.protocol)
          })
        }
      }
    }
  }

  const sites: Array<SiteRow> = Object.entries(bundle.sites ?? {}).map(([siteKey, site]) => ({
    id: entityId(key, siteKey),
    community_key: key,
    key: siteKey,
    member_id: site.member === undefined ? null : entityId(key, site.member),
    name: site.name,
    area: site.area,
    address: orNull(site.address),
    location: orNull(site.location),
    delivery_point: orNull(site.delivery_point),
    extra: extras(site, Properties.site)
  }))

  return { community: communityRow, participants, memberships, sites, assets, meters }
}
