/**
 * Stored rows as the records the API answers (`Domain`), and the cursors of its pages.
 */
import { Owners } from "@rec/owners"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Config from "./Config.js"
import type * as Domain from "./Domain.js"
import { entityId, mint, type Mint } from "./Iris.js"
import type { AssetRecord, CommunityRecord, MemberRecord, SiteRecord } from "./RegistryRepo.js"

const absoluteIri = /^(https?:\/\/[^\s]+|did:[a-z0-9]+:[^\s]+|urn:[^\s]+)$/i

/** `v1.<base64url of the last key>`: opaque to clients, checked when it comes back. */
export const encodeCursor = (lastKey: string): string => `v1.${Buffer.from(lastKey, "utf8").toString("base64url")}`

export const decodeCursor = (cursor: string): string | undefined => {
  if (!cursor.startsWith("v1.")) return undefined
  const body = cursor.slice(3)
  if (!/^[A-Za-z0-9_-]+$/.test(body)) return undefined
  const key = Buffer.from(body, "base64url").toString("utf8")
  return encodeCursor(key) === cursor ? key : undefined
}

export class Records extends Effect.Service<Records>()("@rec/registry-service/Records", {
  effect: Effect.gen(function*() {
    const owners = yield* Owners
    const { baseUrl } = yield* Config.settings
    const iris: Mint = mint(baseUrl)

    const ownerRef = (reference: string): Domain.OwnerRef =>
      Option.match(owners.lookup(reference), {
        onSome: (owner) => ({ reference, iri: owners.iri(owner), name: owner.name, registered: true }),
        onNone: () => ({
          reference,
          iri: absoluteIri.test(reference) ? reference : `${owners.baseUrl.replace(/\/+$/, "")}/owners/${encodeURIComponent(reference)}`,
          name: null,
          registered: false
        })
      })

    const community = (row: CommunityRecord): Domain.Community => ({
      key: row.key,
      iri: iris.community(row.key),
      name: row.name,
      description: row.description,
      type: row.type_iri,
      owner: row.owner === null ? null : ownerRef(row.owner),
      areas: row.areas as Domain.Community["areas"],
      topology: row.topology,
      legal: row.legal,
      links: row.links,
      contact: row.contact,
      settings: row.settings,
      member_count: row.member_count,
      imported_at: row.imported_at
    })

    const member = (row: MemberRecord): Domain.Member => ({
      id: row.id,
      key: row.key,
      iri: iris.member(row.community_key, row.key),
      community: row.community_key,
      user_id: row.user_id,
      name: row.name,
      type: row.type_iri,
      role: row.role,
      status: row.status,
      area: row.area,
      delivery_points: row.delivery_points.map((point) => ({
        ...point,
        id: String(point["id"]),
        type: String(point["type"]),
        active: point["active"] !== false
      })),
      asset_count: row.asset_count,
      extra: row.extra
    })

    const asset = (row: AssetRecord): Domain.Asset => {
      const meter = row.asset_type === "meter"
        ? Object.fromEntries(
          ([["sensor_id", row.sensor_id], ["meter_type", row.meter_type], ["pod", row.pod], ["protocol", row.protocol]] as const)
            .filter(([, value]) => value !== null)
        )
        : {}
      const relationships = row.relationships === null ? null : {
        measures: (Array.isArray(row.relationships["measures"]) ? row.relationships["measures"] : [])
          .map((key) => entityId(row.community_key, String(key))),
        paired_with: typeof row.relationships["paired_with"] === "string"
          ? entityId(row.community_key, row.relationships["paired_with"])
          : null
      }
      return {
        id: row.id,
        key: row.key,
        iri: iris.asset(row.community_key, row.key),
        community: row.community_key,
        member: row.member_id,
        asset_type: row.asset_type,
        name: row.name,
        site: row.site_id,
        owner: row.owner === null ? null : ownerRef(row.owner),
        properties: { ...meter, ...row.properties },
        device: row.device,
        relationships
      }
    }

    const site = (row: SiteRecord): Domain.Site => ({
      id: row.id,
      key: row.key,
      iri: iris.site(row.community_key, row.key),
      community: row.community_key,
      member: row.member_id,
      name: row.name,
      area: row.area,
      address: row.address,
      location: row.location === null ? null : { lat: Number(row.location["lat"]), lon: Number(row.location["lon"]) },
      delivery_point: row.delivery_point,
      extra: row.extra
    })

    return { iris, baseUrl, ownerRef, community, member, asset, site }
  })
}) {}
