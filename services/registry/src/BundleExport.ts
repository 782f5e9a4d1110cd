/**
 * A stored community as a bundle v0.4, in one canonical form: known keys in the order of the
 * format (`BundleSchema.Properties`), then the unknown ones a bundle brought, sorted; members,
 * sites, areas and assets sorted by key; empty optional lists and maps left out. Importing an
 * export stores exactly what was exported, so import -> export -> import -> export gives the same
 * bytes. Nothing that changes by itself (an export date) is written.
 */
import * as Effect from "effect/Effect"
import { Properties, assetProperties } from "./BundleSchema.js"
import { AssetTypes } from "./Domain.js"
import type { AssetRecord, CommunityRecord, MemberRecord, SiteRecord } from "./RegistryRepo.js"
import { emit, emitAt } from "./YamlEmit.js"

type JsonObject = Record<string, unknown>

const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)

/** Assigns a key of stored data (the key `__proto__` is refused on import, so never here). */
const put = (target: JsonObject, key: string, value: unknown) => {
  target[key] = value
}

const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** Keys sorted at every level (parts the format does not describe). */
export const sortedDeep = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortedDeep)
  if (!isObject(value)) return value
  const out: JsonObject = {}
  for (const key of Object.keys(value).sort(byKey)) put(out, key, sortedDeep(value[key]))
  return out
}

type Shape = { readonly [key: string]: (value: unknown) => unknown }

/** Known keys first, in order (each through its shape when it has one), then the rest sorted. */
export const ordered = (value: JsonObject, known: ReadonlyArray<string>, shapes: Shape = {}): JsonObject => {
  const out: JsonObject = {}
  let others: Array<string> | undefined
  for (const key in value) {
    if (!known.includes(key)) (others ??= []).push(key)
  }
  for (const key of known) {
    const inner = value[key]
    if (inner === undefined || inner === null && !(key === "paired_with")) continue
    const shape = shapes[key]
    put(out, key, shape !== undefined ? shape(inner) : typeof inner === "object" ? sortedDeep(inner) : inner)
  }
  if (others !== undefined) for (const key of others.sort(byKey)) put(out, key, sortedDeep(value[key]))
  return out
}

const orderedIf = (known: ReadonlyArray<string>, shapes?: Shape) => (value: unknown) =>
  isObject(value) ? ordered(value, known, shapes) : sortedDeep(value)

const mapSorted = (value: unknown, each: (inner: unknown) => unknown): JsonObject => {
  const out: JsonObject = {}
  if (!isObject(value)) return out
  for (const key of Object.keys(value).sort(byKey)) put(out, key, each(value[key]))
  return out
}

const location = orderedIf(Properties.location)
const area = orderedIf(Properties.area, { location })
const topologyNode = orderedIf(Properties.topologyNode)
const deliveryPoint = orderedIf(Properties.deliveryPoint)
const device = orderedIf(Properties.device)
const relationships = orderedIf(Properties.relationships)

const nonEmptyList = (value: ReadonlyArray<unknown>) => (value.length === 0 ? undefined : value)

export interface StoredCommunity {
  readonly community: CommunityRecord
  readonly members: ReadonlyArray<MemberRecord>
  readonly assets: ReadonlyArray<AssetRecord>
  readonly sites: ReadonlyArray<SiteRecord>
}

/** The `community` part of the bundle. */
const communityPart = (community: CommunityRecord): JsonObject =>
  ordered(
    {
      ...community.extra,
      id: community.key,
      name: community.name,
      description: community.description,
      type: community.type,
      owner: community.owner,
      areas: community.areas,
      legal: community.legal,
      links: community.links,
      contact: community.contact,
      settings: community.settings,
      topology: nonEmptyList(community.topology)
    },
    Properties.community,
    {
      areas: (areas) => mapSorted(areas, area),
      legal: orderedIf(Properties.legal),
      links: orderedIf(Properties.links),
      contact: orderedIf(Properties.contact),
      settings: orderedIf(Properties.settings),
      topology: (nodes) => (nodes as ReadonlyArray<unknown>).map(topologyNode)
    }
  )

/** One member of the bundle, with its own assets (in any order). */
export const memberEntry = (member: MemberRecord, own: ReadonlyArray<AssetRecord>): JsonObject => {
  const assets: JsonObject = {}
  for (const type of AssetTypes) {
    const ofType = own.filter((a) => a.asset_type === type).sort((a, b) => byKey(a.key, b.key))
    if (ofType.length === 0) continue
    const map: JsonObject = {}
    for (const asset of ofType) {
      const fields: JsonObject = {
        ...asset.properties,
        name: asset.name,
        site: siteKey(asset.site_id),
        owner: asset.owner,
        device: asset.device,
        relationships: asset.relationships,
        ...(type === "meter"
          ? { sensor_id: asset.sensor_id, meter_type: asset.meter_type, pod: asset.pod, protocol: asset.protocol }
          : {})
      }
      put(map, asset.key, ordered(fields, assetProperties(type), { device, relationships }))
    }
    put(assets, type, map)
  }
  return ordered(
    {
      ...member.extra,
      user_id: member.user_id,
      name: member.name,
      type: member.type,
      role: member.role,
      area: member.area,
      status: member.status,
      delivery_points: nonEmptyList(member.delivery_points),
      assets: Object.keys(assets).length === 0 ? undefined : assets
    },
    Properties.member,
    { delivery_points: (points) => (points as ReadonlyArray<unknown>).map(deliveryPoint), assets: (a) => a }
  )
}

const siteKey = (siteId: string | null) => (siteId === null ? undefined : siteId.slice(siteId.indexOf(".") + 1))

/** One site of the bundle. */
export const siteEntry = (site: SiteRecord): JsonObject =>
  ordered(
    {
      ...site.extra,
      name: site.name,
      member: site.member_key,
      area: site.area,
      address: site.address,
      location: site.location,
      delivery_point: site.delivery_point
    },
    Properties.site,
    { location }
  )

/**
 * The bundle around its members and sites: every top-level key in the order written, with
 * `members` and `sites` as given (`toBundle` passes the maps, the paged export placeholders).
 */
const bundleAround = (community: CommunityRecord, members: unknown, sites: unknown): JsonObject => {
  const bundle = community.bundle
  const metadata = isObject(bundle["metadata"]) ? ordered(bundle["metadata"], Properties.metadata) : undefined
  const context = isObject(bundle["context"])
    ? ordered(bundle["context"], Properties.context, { prefixes: (p) => mapSorted(p, (v) => v) })
    : undefined
  const extra = isObject(bundle["extra"]) ? bundle["extra"] : {}
  return ordered(
    {
      ...extra,
      version: bundle["version"],
      schema_version: bundle["schema_version"],
      metadata,
      context,
      community: communityPart(community),
      members,
      sites
    },
    Properties.bundle,
    { metadata: (m) => m, context: (c) => c, community: (c) => c, members: (m) => m, sites: (s) => s }
  )
}

/**
 * Keys in the order a JavaScript object built from them, sorted, enumerates them: integer-like
 * keys first, ascending, then the others sorted (what `toBundle`'s maps do, so the paged
 * export writes the same bytes).
 */
export const entryOrder = (keys: ReadonlyArray<string>): Array<string> => {
  const index: JsonObject = {}
  for (const key of [...keys].sort(byKey)) put(index, key, true)
  return Object.keys(index)
}

/** The bundle of a stored community, as a value. */
export const toBundle = (stored: StoredCommunity): JsonObject => {
  const assetsByMember = new Map<string, Array<AssetRecord>>()
  for (const asset of stored.assets) {
    const list = assetsByMember.get(asset.member_id) ?? []
    list.push(asset)
    assetsByMember.set(asset.member_id, list)
  }
  const members: JsonObject = {}
  for (const member of [...stored.members].sort((a, b) => byKey(a.key, b.key))) {
    put(members, member.key, memberEntry(member, assetsByMember.get(member.id) ?? []))
  }
  const sites: JsonObject = {}
  for (const site of [...stored.sites].sort((a, b) => byKey(a.key, b.key))) put(sites, site.key, siteEntry(site))
  return bundleAround(stored.community, members, Object.keys(sites).length === 0 ? undefined : sites)
}

/** Reads the entries of one page of keys (in any order). */
export type PageReader<E, R> = (keys: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, JsonObject>, E, R>

/**
 * The YAML of a stored community written page by page: only one page of members (with their
 * assets) or sites is in memory as rows and values at a time, and the text grows by one string
 * per page, so a 10,000-member export no longer holds every row, the whole bundle as a value
 * and every line of it at once. The bytes are those of `toYaml(toBundle(...))`.
 */
export const pagedYaml = <E, R>(
  community: CommunityRecord,
  sections: {
    readonly memberKeys: ReadonlyArray<string>
    readonly siteKeys: ReadonlyArray<string>
    readonly members: PageReader<E, R>
    readonly sites: PageReader<E, R>
  },
  pageSize: number
): Effect.Effect<string, E, R> =>
  Effect.gen(function*() {
    const members = entryOrder(sections.memberKeys)
    const sites = entryOrder(sections.siteKeys)
    const out: Array<string> = [header]
    const section = (name: string, keys: ReadonlyArray<string>, read: PageReader<E, R>) =>
      Effect.gen(function*() {
        if (keys.length === 0) {
          out.push(emit({ [name]: {} }))
          return
        }
        out.push(`${name}:\n`)
        for (let i = 0; i < keys.length; i += pageSize) {
          const page = keys.slice(i, i + pageSize)
          const entries = yield* read(page)
          const lines: Array<string> = []
          for (const key of page) {
            const entry = entries.get(key)
            if (entry === undefined) return yield* Effect.dieMessage(`the ${name} entry ${key} vanished from the snapshot`)
            lines.push(emitAt({ [key]: entry }, 2))
          }
          out.push(lines.join(""))
        }
      })
    const around = bundleAround(community, membersMark, sites.length === 0 ? undefined : sitesMark)
    for (const key of Object.keys(around)) {
      const value = around[key]
      if (value === membersMark) yield* section("members", members, sections.members)
      else if (value === sitesMark) yield* section("sites", sites, sections.sites)
      else out.push(emit({ [key]: value }))
    }
    return out.join("")
  })

// Stand-ins for the paged sections: non-empty objects, so `ordered` keeps them where they belong.
const membersMark = { members: true }
const sitesMark = { sites: true }

export const header = "# REC community bundle, format v0.4 (schemas/community-bundle.v0.4.schema.json)\n"

/** The bundle as YAML (block style, double quotes where a string needs quoting, no anchors). */
export const toYaml = (bundle: JsonObject): string => header + emit(bundle)
