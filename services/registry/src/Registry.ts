/**
 * The read side: communities, members, assets and sites as records (`Domain`), limited to what
 * the caller may see (`Access.Scope`). Something the caller may not see is answered exactly like
 * something that does not exist (404, or absent from a list).
 */
import type { SqlError } from "@effect/sql/SqlError"
import { HttpErrors } from "@rec/platform"
import * as Effect from "effect/Effect"
import type { Scope } from "./Access.js"
import type * as Domain from "./Domain.js"
import { decodeCursor, encodeCursor, Records } from "./Records.js"
import { type Page, RegistryRepo } from "./RegistryRepo.js"

export interface PageParams {
  readonly limit: number
  readonly cursor?: string | undefined
}

export interface Listed<A> {
  readonly items: ReadonlyArray<A>
  readonly next_cursor: string | null
}

const databaseDown = (error: SqlError) =>
  Effect.zipRight(
    Effect.logError("registry query failed", error),
    Effect.fail(new HttpErrors.ServiceUnavailable({ detail: "The registry database is unavailable; try again shortly" }))
  )

const afterOf = (params: PageParams) => {
  if (params.cursor === undefined) return Effect.succeed(undefined)
  const key = decodeCursor(params.cursor)
  return key === undefined
    ? Effect.fail(
      new HttpErrors.BadRequest({
        detail: "The cursor is not one this service issued; pass the next_cursor of the previous page",
        issues: [{ path: ["cursor"], message: "is not a cursor of this service" }]
      })
    )
    : Effect.succeed(key)
}

const listed = <Row, A>(page: Page<Row>, keyOf: (row: Row) => string, toRecord: (row: Row) => A): Listed<A> => ({
  items: page.rows.map(toRecord),
  next_cursor: page.more && page.rows.length > 0 ? encodeCursor(keyOf(page.rows[page.rows.length - 1]!)) : null
})

export class Registry extends Effect.Service<Registry>()("@rec/registry-service/Registry", {
  effect: Effect.gen(function*() {
    const repo = yield* RegistryRepo
    const records = yield* Records

    const notFound = (what: string) => new HttpErrors.NotFound({ detail: `No ${what} visible to this caller` })

    const community = (scope: Scope, key: string) =>
      Effect.flatMap(repo.findCommunity(scope, key).pipe(Effect.catchTag("SqlError", databaseDown)), (row) =>
        row === undefined ? Effect.fail(notFound(`community ${JSON.stringify(key)}`)) : Effect.succeed(row))

    const member = (scope: Scope, id: string) =>
      Effect.flatMap(repo.findMember(scope, id).pipe(Effect.catchTag("SqlError", databaseDown)), (row) =>
        row === undefined ? Effect.fail(notFound(`member ${JSON.stringify(id)}`)) : Effect.succeed(row))

    return {
      records,
      listCommunities: Effect.fn("Registry.listCommunities")(function*(scope: Scope, params: PageParams) {
        const after = yield* afterOf(params)
        const page = yield* repo.listCommunities(scope, { after, limit: params.limit }).pipe(Effect.catchTag("SqlError", databaseDown))
        return listed(page, (row) => row.key, records.community)
      }),
      getCommunity: Effect.fn("Registry.getCommunity")(function*(scope: Scope, key: string) {
        return records.community(yield* community(scope, key))
      }),
      listMembers: Effect.fn("Registry.listMembers")(function*(
        scope: Scope,
        key: string,
        role: Domain.Role | undefined,
        params: PageParams
      ) {
        const after = yield* afterOf(params)
        yield* community(scope, key)
        const page = yield* repo.listMembers(scope, { community: key, role }, { after, limit: params.limit }).pipe(
          Effect.catchTag("SqlError", databaseDown)
        )
        return listed(page, (row) => row.id, records.member)
      }),
      getMember: Effect.fn("Registry.getMember")(function*(scope: Scope, id: string) {
        return records.member(yield* member(scope, id))
      }),
      listMemberAssets: Effect.fn("Registry.listMemberAssets")(function*(
        scope: Scope,
        id: string,
        type: Domain.AssetType | undefined,
        params: PageParams
      ) {
        const after = yield* afterOf(params)
        yield* member(scope, id)
        const page = yield* repo.listAssets(scope, { member: id, type }, { after, limit: params.limit }).pipe(
          Effect.catchTag("SqlError", databaseDown)
        )
        return listed(page, (row) => row.id, records.asset)
      }),
      listAssets: Effect.fn("Registry.listAssets")(function*(
        scope: Scope,
        filter: { readonly community?: string | undefined; readonly member?: string | undefined; readonly type?: Domain.AssetType | undefined },
        params: PageParams
      ) {
        const after = yield* afterOf(params)
        const page = yield* repo.listAssets(scope, filter, { after, limit: params.limit }).pipe(Effect.catchTag("SqlError", databaseDown))
        return listed(page, (row) => row.id, records.asset)
      }),
      listSites: Effect.fn("Registry.listSites")(function*(
        scope: Scope,
        filter: { readonly community?: string | undefined; readonly member?: string | undefined },
        params: PageParams
      ) {
        const after = yield* afterOf(params)
        const page = yield* repo.listSites(scope, filter, { after, limit: params.limit }).pipe(Effect.catchTag("SqlError", databaseDown))
        return listed(page, (row) => row.id, records.site)
      })
    }
  })
}) {}
