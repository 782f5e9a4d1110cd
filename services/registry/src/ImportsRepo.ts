/**
 * SQL of imports: replace a community and everything in it, in one transaction.
 *
 * The transaction first takes a transaction-scoped advisory lock on the community key, so two
 * imports of the same community (from two replicas too) run one after the other and the last one
 * wins whole; then deletes the community's rows, children first; then writes each table with
 * `INSERT ... SELECT ... FROM jsonb_to_recordset($1)` (one parameter however many rows: a multi-row
 * `VALUES` list would run into PostgreSQL's 65,535 parameters), `insertChunkRows` rows per
 * statement: the JSON of a whole table at once (6 MB for 22,000 assets) is a transient of several
 * times its size in the registry and, on PGlite, in a WebAssembly heap that never shrinks. Any
 * failure rolls everything back: the previous community stays as it was.
 */
import { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type * as Domain from "./Domain.js"
import type { Plan } from "./Plan.js"

/**
 * Rows per `INSERT` statement of an import: small enough that the JSON parameter stays around
 * 0.5 MB, large enough that the round trips do not count (62 statements for 62,001 rows).
 */
export const insertChunkRows = 1000

/** Column lists of `jsonb_to_recordset`, per table (names and types as in the migration). */
export const Columns = {
  community:
    "key text, name text, description text, type text, type_iri text, owner text, areas jsonb, topology jsonb, legal jsonb, links jsonb, contact jsonb, settings jsonb, extra jsonb, bundle jsonb",
  participant: "id text, community_key text, key text, user_id text, name text, type text, type_iri text",
  membership:
    "id text, community_key text, key text, participant_id text, role text, status text, area text, delivery_points jsonb, extra jsonb",
  site:
    "id text, community_key text, key text, member_id text, name text, area text, address text, location jsonb, delivery_point text, extra jsonb",
  asset:
    "id text, community_key text, key text, member_id text, asset_type text, name text, site_id text, owner text, properties jsonb, device jsonb, relationships jsonb",
  meter: "asset_id text, community_key text, sensor_id text, meter_type text, pod text, protocol text"
} as const

export type Table = keyof typeof Columns

const names = (table: Table) => Columns[table].split(", ").map((column) => column.split(" ")[0]!).join(", ")

/** The rows of a plan per table, in the order they are written (parents first). */
export const tables = (plan: Plan): ReadonlyArray<readonly [Table, ReadonlyArray<object>]> => [
  ["community", [plan.community]],
  ["participant", plan.participants],
  ["membership", plan.memberships],
  ["site", plan.sites],
  ["asset", plan.assets],
  ["meter", plan.meters]
]

/** `rows` in consecutive slices of at most `size`. */
export const chunks = <A>(rows: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size))
  return out
}

/** `INSERT INTO <table> (...) SELECT ... FROM jsonb_to_recordset($1)`: one statement per table. */
export const insertStatement = (table: Table) =>
  `INSERT INTO ${table} (${names(table)}) SELECT ${names(table)} FROM jsonb_to_recordset($1::jsonb) AS r(${Columns[table]})`

/** The PostgreSQL error code of a failed statement (`23505` unique violation, ...). */
export const sqlState = (error: SqlError): string | undefined => {
  const cause = error.cause as { readonly code?: unknown } | undefined
  return typeof cause?.code === "string" ? cause.code : undefined
}

export class ImportsRepo extends Effect.Service<ImportsRepo>()("@rec/registry-service/ImportsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient

    const counts = (key: string): Effect.Effect<Domain.Counts | null, SqlError> =>
      sql<{ readonly exists: boolean; readonly members: unknown; readonly sites: unknown; readonly assets: unknown; readonly meters: unknown }>`
        SELECT EXISTS (SELECT 1 FROM community WHERE key = ${key}) AS exists,
          (SELECT count(*) FROM membership WHERE community_key = ${key}) AS members,
          (SELECT count(*) FROM site WHERE community_key = ${key}) AS sites,
          (SELECT count(*) FROM asset WHERE community_key = ${key}) AS assets,
          (SELECT count(*) FROM meter WHERE community_key = ${key}) AS meters`.pipe(
        Effect.map(([row]) => {
          if (row === undefined || !row.exists) return null
          const members = Number(row.members)
          return {
            members,
            participants: members,
            memberships: members,
            sites: Number(row.sites),
            assets: Number(row.assets),
            meters: Number(row.meters)
          }
        })
      )

    /** Deletes a community's rows, children first (each table once instead of a cascade per row). */
    const remove = (key: string) =>
      Effect.forEach(
        ["meter", "asset", "site", "membership", "participant", "community"] as const,
        (table) => table === "community"
          ? sql`DELETE FROM community WHERE key = ${key}`
          : sql`DELETE FROM ${sql(table)} WHERE community_key = ${key}`,
        { discard: true }
      )

    const insert = (plan: Plan) =>
      Effect.forEach(
        tables(plan),
        ([table, rows]) =>
          Effect.forEach(
            chunks(rows, insertChunkRows),
            // The JSON of each chunk is built when its statement is sent, and dropped after it.
            (chunk) => Effect.suspend(() => sql.unsafe(insertStatement(table), [JSON.stringify(chunk)])),
            { discard: true }
          ),
        { discard: true }
      )

    return {
      counts,
      /** Replaces the community of the plan; what it held before (null when it is new). */
      replace: Effect.fn("ImportsRepo.replace")(function*(plan: Plan) {
        const key = plan.community.key
        yield* Effect.annotateCurrentSpan({ "registry.community": key, "registry.members": plan.memberships.length })
        return yield* sql.withTransaction(
          Effect.gen(function*() {
            yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`rec-registry:${key}`}))`
            const previous = yield* counts(key)
            yield* remove(key)
            yield* insert(plan)
            return previous
          })
        )
      })
    }
  })
}) {}
