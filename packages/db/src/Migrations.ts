/**
 * Per-service migrations on top of the `@effect/sql` Migrator.
 *
 * A service keeps its migrations in `src/migrations/NNNN_name.ts` (default export: an
 * `Effect` that needs `SqlClient`) and lists them with static imports in
 * `src/migrations/index.ts`:
 *
 * ```ts
 * import m0001 from "./0001_create_alert_rules.js"
 * import m0002 from "./0002_add_rule_owner.js"
 * export const migrations = { "0001_create_alert_rules": m0001, "0002_add_rule_owner": m0002 }
 * ```
 *
 * Static imports keep the set bundler-safe and working from `dist/` (no directory scan).
 *
 * What this module adds to the Migrator:
 * - the service's schema is created on first run, and the bookkeeping table lives in it
 *   (`<schema>.effect_sql_migrations`), so services sharing a database never collide;
 * - every migration runs with `search_path` set to `<schema>, public`, whatever the connection's
 *   default, so unqualified `CREATE TABLE x` lands in the service's schema;
 * - **strictly increasing ids**: the Migrator only runs ids above the latest applied one and
 *   silently skips a lower id merged later. Here such a migration fails the run
 *   (`out-of-order`), as does an applied id whose name changed (`renamed`) and a malformed key.
 * - a failing migration becomes a typed `MigrationFailed` (the Migrator makes it a defect).
 *   The whole batch runs in one transaction and is rolled back.
 */
import * as Migrator from "@effect/sql/Migrator"
import { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import { isValidSchemaName } from "./DatabaseConfig.js"
import { MigrationFailed } from "./Errors.js"

/** One migration: it may use the `SqlClient` and fail with anything (the run is rolled back). */
export type MigrationEffect = Effect.Effect<unknown, unknown, SqlClient>

/** `{ "0001_create_things": effect, ... }`: keys are `<positive integer id>_<name>`. */
export type MigrationRecord = Readonly<Record<string, MigrationEffect>>

export interface Migration {
  readonly id: number
  readonly name: string
  readonly effect: MigrationEffect
}

/** The bookkeeping table, inside the service's schema. */
export const tableName = "effect_sql_migrations"

const keyPattern = /^(\d+)_([A-Za-z0-9_]+)$/

/**
 * Checks a migration record: well-formed keys, unique positive ids, Effect values. Returns the
 * migrations sorted by id, or the list of problems. Use it in a unit test of each service so a
 * bad migration set fails CI before it reaches a database.
 */
export const validate = (
  record: MigrationRecord
): { readonly migrations: ReadonlyArray<Migration>; readonly problems: ReadonlyArray<string> } => {
  const problems: Array<string> = []
  const byId = new Map<number, string>()
  const migrations: Array<Migration> = []
  for (const [key, effect] of Object.entries(record)) {
    const match = keyPattern.exec(key)
    if (match === null) {
      problems.push(`"${key}" is not of the form NNNN_name (digits, an underscore, letters/digits/underscores)`)
      continue
    }
    const id = Number(match[1])
    const name = match[2]!
    if (!Number.isSafeInteger(id) || id < 1) {
      problems.push(`"${key}" must have a positive id`)
      continue
    }
    const previous = byId.get(id)
    if (previous !== undefined) {
      problems.push(`"${key}" reuses id ${id} of "${previous}"`)
      continue
    }
    if (!Effect.isEffect(effect)) {
      problems.push(`"${key}" is not an Effect (export the migration Effect itself, not a function)`)
      continue
    }
    byId.set(id, key)
    migrations.push({ id, name, effect })
  }
  migrations.sort((a, b) => a.id - b.id)
  return { migrations, problems }
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, "\"\"")}"`

/** `"<schema>", public`: the service's schema first, `public` for extensions such as `vector`. */
export const searchPath = (schema: string): string => `${quoteIdent(schema)}, public`

interface AppliedRow {
  readonly migration_id: number
  readonly name: string
}

const readApplied = (schema: string) =>
  Effect.flatMap(SqlClient, (sql) =>
    sql<AppliedRow>`SELECT migration_id, name FROM ${sql(`${schema}.${tableName}`)} ORDER BY migration_id`.withoutTransform
  )

const tableExists = (schema: string) =>
  Effect.flatMap(SqlClient, (sql) =>
    sql<{ readonly present: boolean }>`SELECT to_regclass(${`${quoteIdent(schema)}.${tableName}`}) IS NOT NULL AS present`
      .withoutTransform.pipe(Effect.map((rows) => rows[0]?.present === true))
  )

/**
 * Compares the code's migrations with the applied ones. Fails on a lower id added after a higher
 * one was applied, and on a renamed applied migration. Applied ids unknown to the code (a newer
 * release ran first, e.g. during a rolling deploy) are reported, not fatal.
 */
export const checkOrder = (
  schema: string,
  migrations: ReadonlyArray<Migration>,
  applied: ReadonlyArray<AppliedRow>
): { readonly error: Option.Option<MigrationFailed>; readonly unknownApplied: ReadonlyArray<AppliedRow> } => {
  const appliedById = new Map(applied.map((row) => [row.migration_id, row.name]))
  const latest = applied.reduce((max, row) => Math.max(max, row.migration_id), 0)
  const known = new Set(migrations.map((m) => m.id))
  const unknownApplied = applied.filter((row) => !known.has(row.migration_id))
  for (const m of migrations) {
    const appliedName = appliedById.get(m.id)
    if (appliedName !== undefined && appliedName !== m.name) {
      return {
        unknownApplied,
        error: Option.some(
          new MigrationFailed({
            schema,
            reason: "renamed",
            message: `migration ${m.id} is "${m.name}" in the code but "${appliedName}" was applied to schema ${schema}; ` +
              `never rename or replace an applied migration, add a new one`
          })
        )
      }
    }
    if (appliedName === undefined && m.id <= latest) {
      return {
        unknownApplied,
        error: Option.some(
          new MigrationFailed({
            schema,
            reason: "out-of-order",
            message: `migration ${m.id}_${m.name} is not applied but migration ${latest} already is; the Migrator ` +
              `would skip it silently. Renumber it above ${latest}`
          })
        )
      }
    }
  }
  return { error: Option.none(), unknownApplied }
}

/** Creates the schema and the bookkeeping table, serialised between concurrent starters. */
const ensureSchema = (schema: string) =>
  Effect.flatMap(SqlClient, (sql) =>
    sql.withTransaction(
      Effect.all([
        sql`SELECT pg_advisory_xact_lock(hashtext(${`@rec/db:migrations:${schema}`}))`,
        sql.unsafe(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`),
        sql.unsafe(
          `CREATE TABLE IF NOT EXISTS ${quoteIdent(schema)}.${tableName} (
  migration_id integer PRIMARY KEY,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  name text NOT NULL
)`
        )
      ], { discard: true })
    )
  )

/** The migrations of `options`, sorted, or `MigrationFailed` (invalid) for a bad schema name or set. */
const checked = (options: RunOptions): Effect.Effect<ReadonlyArray<Migration>, MigrationFailed> => {
  const { schema } = options
  if (!isValidSchemaName(schema)) {
    return Effect.fail(
      new MigrationFailed({
        schema,
        reason: "invalid",
        message: `"${schema}" is not a valid schema name (lower-case letters, digits and underscores)`
      })
    )
  }
  const { migrations, problems } = validate(options.migrations)
  return problems.length > 0
    ? Effect.fail(new MigrationFailed({ schema, reason: "invalid", message: problems.join("; ") }))
    : Effect.succeed(migrations)
}

export interface RunOptions {
  /** The service's schema (`DatabaseConfig.schema`). */
  readonly schema: string
  readonly migrations: MigrationRecord
}

/**
 * Applies the pending migrations of `schema`, in one transaction, under the Migrator's table
 * lock (replicas starting together wait for each other). Returns the applied `[id, name]`s.
 */
export const run = (
  options: RunOptions
): Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, MigrationFailed | SqlError, SqlClient> =>
  Effect.gen(function*() {
    const { schema } = options
    const migrations = yield* checked(options)
    const sql = yield* SqlClient
    yield* ensureSchema(schema)

    const setPath = sql.unsafe(`SET LOCAL search_path TO ${searchPath(schema)}`)
    // The loader runs inside the Migrator's transaction, after `LOCK TABLE`: the order check
    // sees exactly what the Migrator will compare against.
    const loader: Migrator.Loader<SqlClient> = readApplied(schema).pipe(
      Effect.flatMap((applied) => {
        const { error, unknownApplied } = checkOrder(schema, migrations, applied)
        if (Option.isSome(error)) {
          return Effect.fail(new Migrator.MigrationError({ reason: "bad-state", message: "", cause: error.value }))
        }
        return Effect.as(
          unknownApplied.length === 0 ? Effect.void : Effect.logWarning(
            "the database has migrations this release does not know (a newer release ran?)"
          ).pipe(Effect.annotateLogs({ schema, migrations: unknownApplied.map((r) => `${r.migration_id}_${r.name}`).join(",") })),
          migrations.map((m): Migrator.ResolvedMigration => [m.id, m.name, Effect.succeed(Effect.zipRight(setPath, m.effect))])
        )
      }),
      Effect.catchTag("SqlError", (cause) =>
        Effect.fail(new Migrator.MigrationError({ reason: "failed", message: cause.message, cause })))
    )

    return yield* Migrator.make({})({ loader, table: `${schema}.${tableName}` }).pipe(
      Effect.catchAllDefect((defect) =>
        defect instanceof Migrator.MigrationError ? Effect.fail(defect) : Effect.die(defect)
      ),
      Effect.catchTag("MigrationError", (e) =>
        e.cause instanceof MigrationFailed
          ? Effect.fail(e.cause)
          : Effect.fail(
            new MigrationFailed({
              schema,
              reason: e.reason === "duplicates" ? "invalid" : "failed",
              message: `${e.message}${causeMessage(e.cause)}`
            })
          )
      ),
      Effect.tap((applied) =>
        applied.length === 0
          ? Effect.logDebug("database schema is up to date")
          : Effect.logInfo("applied migrations").pipe(
            Effect.annotateLogs({ schema, migrations: applied.map(([id, name]) => `${id}_${name}`).join(",") })
          )
      ),
      Effect.withSpan("Migrations.run", { attributes: { "db.schema": schema } })
    )
  })

const causeMessage = (cause: unknown): string => {
  // SqlError wraps the driver error; its message is the useful part ("relation x already exists").
  const inner = (cause as { cause?: unknown } | undefined)?.cause
  if (inner instanceof Error && inner.message) return `: ${inner.message}`
  if (cause instanceof Error && cause.message) return `: ${cause.message}`
  return ""
}

export interface MigrationStatus {
  readonly applied: ReadonlyArray<readonly [id: number, name: string]>
  readonly pending: ReadonlyArray<readonly [id: number, name: string]>
}

/** What is applied and what would run, without changing anything (the CLI's `status`). */
export const status = (
  options: RunOptions
): Effect.Effect<MigrationStatus, MigrationFailed | SqlError, SqlClient> =>
  Effect.gen(function*() {
    const { schema } = options
    const migrations = yield* checked(options)
    const applied = (yield* tableExists(schema)) ? yield* readApplied(schema) : []
    const { error } = checkOrder(schema, migrations, applied)
    if (Option.isSome(error)) return yield* error.value
    const appliedIds = new Set(applied.map((r) => r.migration_id))
    return {
      applied: applied.map((r) => [r.migration_id, r.name] as const),
      pending: migrations.filter((m) => !appliedIds.has(m.id)).map((m) => [m.id, m.name] as const)
    }
  })

/**
 * For migrations that need an extension, e.g. `yield* Migrations.createExtension("vector")`.
 * The extension goes into `public` (extensions are per database; creating it inside the
 * service's schema would hide its types from the other services), under a lock so two services
 * migrating at once do not race. PGlite ships `vector`; on a server, pgvector must be installed.
 */
export const createExtension = (name: string): Effect.Effect<void, SqlError, SqlClient> =>
  Effect.flatMap(SqlClient, (sql) =>
    sql.withTransaction(
      Effect.all([
        sql`SELECT pg_advisory_xact_lock(hashtext('@rec/db:create-extension'))`,
        sql.unsafe(`CREATE EXTENSION IF NOT EXISTS ${quoteIdent(name)} WITH SCHEMA public`)
      ], { discard: true })
    )
  )
