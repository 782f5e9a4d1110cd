/**
 * SQL of the read side: pages of communities, members, assets and sites, restricted to what the
 * caller may see (`Access.Scope`), and whole communities for the export.
 *
 * Pages are keyset pages: ordered by the primary key (`C` collation, the same order everywhere),
 * `after` the last key of the previous page, one row more than the page size fetched to know
 * whether another page follows.
 */
import { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import * as Effect from "effect/Effect"
import type { Scope } from "./Access.js"
import type * as Domain from "./Domain.js"

type Json = unknown
type JsonObject = Record<string, Json>

export interface CommunityRecord {
  readonly key: string
  readonly name: string
  readonly description: string | null
  readonly type: string | null
  readonly type_iri: string | null
  readonly owner: string | null
  readonly areas: JsonObject
  readonly topology: ReadonlyArray<JsonObject>
  readonly legal: JsonObject | null
  readonly links: JsonObject | null
  readonly contact: JsonObject | null
  readonly settings: JsonObject | null
  readonly extra: JsonObject
  readonly bundle: JsonObject
  readonly imported_at: string
  readonly member_count: number
}

export interface MemberRecord {
  readonly id: string
  readonly community_key: string
  readonly key: string
  readonly participant_id: string
  readonly user_id: string
  readonly name: string
  readonly type: string | null
  readonly type_iri: string | null
  readonly role: Domain.Role
  readonly status: Domain.MemberStatus
  readonly area: string
  readonly delivery_points: ReadonlyArray<JsonObject>
  readonly extra: JsonObject
  readonly asset_count: number
}

export interface AssetRecord {
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
  readonly sensor_id: string | null
  readonly meter_type: string | null
  readonly pod: string | null
  readonly protocol: string | null
}

export interface SiteRecord {
  readonly id: string
  readonly community_key: string
  readonly key: string
  readonly member_id: string | null
  readonly member_key: string | null
  readonly name: string
  readonly area: string
  readonly address: string | null
  readonly location: JsonObject | null
  readonly delivery_point: string | null
  readonly extra: JsonObject
}

export interface PageRequest {
  readonly after: string | undefined
  readonly limit: number
}

export interface Page<A> {
  readonly rows: ReadonlyArray<A>
  /** More rows follow the last one. */
  readonly more: boolean
}

const toNumber = (value: unknown): number => (typeof value === "number" ? value : Number(value))

const paged = <A>(rows: ReadonlyArray<A>, limit: number): Page<A> =>
  rows.length > limit ? { rows: rows.slice(0, limit), more: true } : { rows, more: false }

export class RegistryRepo extends Effect.Service<RegistryRepo>()("@rec/registry-service/RegistryRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient

    /** `<column> IN (communities the scope sees)`; always true for `All`. */
    const visible = (scope: Scope, column: Fragment): Fragment => {
      if (scope._tag === "All") return sql`TRUE`
      if (scope.statuses.length === 0) return sql`FALSE`
      return sql`${column} IN (
        SELECT m.community_key FROM membership m JOIN participant p ON p.id = m.participant_id
        WHERE p.user_id = ${scope.userId} AND m.status IN ${sql.in(scope.statuses)})`
    }
    const after = (column: Fragment, key: string | undefined): Fragment =>
      key === undefined ? sql`TRUE` : sql`${column} > ${key}`
    const eqOpt = (column: Fragment, value: string | undefined): Fragment =>
      value === undefined ? sql`TRUE` : sql`${column} = ${value}`

    const communityColumns = sql`c.key, c.name, c.description, c.type, c.type_iri, c.owner, c.areas, c.topology,
      c.legal, c.links, c.contact, c.settings, c.extra, c.bundle, c.imported_at,
      (SELECT count(*) FROM membership x WHERE x.community_key = c.key) AS member_count`
    const memberColumns = sql`mb.id, mb.community_key, mb.key, mb.participant_id, mb.user_id, mb.name, mb.type, mb.type_iri,
      mb.role, mb.status, mb.area, mb.delivery_points, mb.extra,
      (SELECT count(*) FROM asset x WHERE x.member_id = mb.id) AS asset_count`
    const assetColumns = sql`a.id, a.community_key, a.key, a.member_id, a.asset_type, a.name,
      a.site_id, a.owner, a.properties, a.device, a.relationships, mt.sensor_id, mt.meter_type, mt.pod, mt.protocol`
    const assetFrom = sql`asset a LEFT JOIN meter mt ON mt.asset_id = a.id`
    const siteColumns = sql`s.id, s.community_key, s.key, s.member_id, ms.key AS member_key, s.name, s.area, s.address,
      s.location, s.delivery_point, s.extra`
    const siteFrom = sql`site s LEFT JOIN membership ms ON ms.id = s.member_id`

    const communities = (rows: ReadonlyArray<Record<string, unknown>>) =>
      rows.map((row) => ({ ...row, member_count: toNumber(row["member_count"]) }) as unknown as CommunityRecord)
    const members = (rows: ReadonlyArray<Record<string, unknown>>) =>
      rows.map((row) => ({ ...row, asset_count: toNumber(row["asset_count"]) }) as unknown as MemberRecord)

    return {
      listCommunities: (scope: Scope, page: PageRequest): Effect.Effect<Page<CommunityRecord>, SqlError> =>
        sql<Record<string, unknown>>`SELECT ${communityColumns} FROM community c
          WHERE ${visible(scope, sql`c.key`)} AND ${after(sql`c.key`, page.after)}
          ORDER BY c.key LIMIT ${page.limit + 1}`.pipe(Effect.map((rows) => paged(communities(rows), page.limit))),

      findCommunity: (scope: Scope, key: string): Effect.Effect<CommunityRecord | undefined, SqlError> =>
        sql<Record<string, unknown>>`SELECT ${communityColumns} FROM community c
          WHERE c.key = ${key} AND ${visible(scope, sql`c.key`)}`.pipe(Effect.map((rows) => communities(rows)[0])),

      listMembers: (
        scope: Scope,
        filter: { readonly community: string; readonly role: Domain.Role | undefined },
        page: PageRequest
      ): Effect.Effect<Page<MemberRecord>, SqlError> =>
        sql<Record<string, unknown>>`SELECT ${memberColumns} FROM member mb
          WHERE mb.community_key = ${filter.community} AND ${eqOpt(sql`mb.role`, filter.role)}
            AND ${visible(scope, sql`mb.community_key`)} AND ${after(sql`mb.id`, page.after)}
          ORDER BY mb.id LIMIT ${page.limit + 1}`.pipe(Effect.map((rows) => paged(members(rows), page.limit))),

      findMember: (scope: Scope, id: string): Effect.Effect<MemberRecord | undefined, SqlError> =>
        sql<Record<string, unknown>>`SELECT ${memberColumns} FROM member mb
          WHERE mb.id = ${id} AND ${visible(scope, sql`mb.community_key`)}`.pipe(Effect.map((rows) => members(rows)[0])),

      listAssets: (
        scope: Scope,
        filter: { readonly community?: string | undefined; readonly member?: string | undefined; readonly type?: Domain.AssetType | undefined },
        page: PageRequest
      ): Effect.Effect<Page<AssetRecord>, SqlError> =>
        sql<AssetRecord>`SELECT ${assetColumns} FROM ${assetFrom}
          WHERE ${eqOpt(sql`a.community_key`, filter.community)} AND ${eqOpt(sql`a.member_id`, filter.member)}
            AND ${eqOpt(sql`a.asset_type`, filter.type)}
            AND ${visible(scope, sql`a.community_key`)} AND ${after(sql`a.id`, page.after)}
          ORDER BY a.id LIMIT ${page.limit + 1}`.pipe(Effect.map((rows) => paged(rows, page.limit))),

      listSites: (
        scope: Scope,
        filter: { readonly community?: string | undefined; readonly member?: string | undefined },
        page: PageRequest
      ): Effect.Effect<Page<SiteRecord>, SqlError> =>
        sql<SiteRecord>`SELECT ${siteColumns} FROM ${siteFrom}
          WHERE ${eqOpt(sql`s.community_key`, filter.community)} AND ${eqOpt(sql`s.member_id`, filter.member)}
            AND ${visible(scope, sql`s.community_key`)} AND ${after(sql`s.id`, page.after)}
          ORDER BY s.id LIMIT ${page.limit + 1}`.pipe(Effect.map((rows) => paged(rows, page.limit))),

      /** The keys of a community's members and sites: the paged export's table of contents. */
      exportKeys: (key: string) =>
        Effect.all([
          sql<{ readonly key: string }>`SELECT key FROM membership WHERE community_key = ${key}`,
          sql<{ readonly key: string }>`SELECT key FROM site WHERE community_key = ${key}`
        ]).pipe(Effect.map(([members, sites]) => ({ members: members.map((r) => r.key), sites: sites.map((r) => r.key) }))),

      /** Some members of a community (by key) with all their assets: one page of the export. */
      membersByKey: (key: string, keys: ReadonlyArray<string>) =>
        Effect.all([
          sql<Record<string, unknown>>`SELECT mb.id, mb.community_key, mb.key, mb.participant_id, mb.user_id, mb.name, mb.type,
            mb.type_iri, mb.role, mb.status, mb.area, mb.delivery_points, mb.extra, 0 AS asset_count
            FROM member mb WHERE mb.community_key = ${key} AND mb.key IN ${sql.in(keys)}`,
          sql<AssetRecord>`SELECT ${assetColumns} FROM ${assetFrom} WHERE a.member_id IN (
            SELECT x.id FROM membership x WHERE x.community_key = ${key} AND x.key IN ${sql.in(keys)})`
        ]).pipe(Effect.map(([memberRows, assets]) => ({ members: members(memberRows), assets }))),

      /** Some sites of a community, by key: one page of the export. */
      sitesByKey: (key: string, keys: ReadonlyArray<string>) =>
        sql<SiteRecord>`SELECT ${siteColumns} FROM ${siteFrom} WHERE s.community_key = ${key} AND s.key IN ${sql.in(keys)}`,

      /** Everything of one community, for the export (`undefined` when there is no such community). */
      wholeCommunity: (key: string) =>
        Effect.gen(function*() {
          const community = communities(
            yield* sql<Record<string, unknown>>`SELECT ${communityColumns} FROM community c WHERE c.key = ${key}`
          )[0]
          if (community === undefined) return undefined
          const [memberRows, assetRows, siteRows] = yield* Effect.all([
            // The export does not need each member's asset count.
            sql<Record<string, unknown>>`SELECT mb.id, mb.community_key, mb.key, mb.participant_id, mb.user_id, mb.name, mb.type,
              mb.type_iri, mb.role, mb.status, mb.area, mb.delivery_points, mb.extra, 0 AS asset_count
              FROM member mb WHERE mb.community_key = ${key} ORDER BY mb.id`,
            sql<AssetRecord>`SELECT ${assetColumns} FROM ${assetFrom} WHERE a.community_key = ${key} ORDER BY a.id`,
            sql<SiteRecord>`SELECT ${siteColumns} FROM ${siteFrom} WHERE s.community_key = ${key} ORDER BY s.id`
          ])
          return { community, members: members(memberRows), assets: assetRows, sites: siteRows }
        }).pipe(Effect.withSpan("RegistryRepo.wholeCommunity", { attributes: { "registry.community": key } }))
    }
  })
}) {}
