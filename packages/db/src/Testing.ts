/**
 * Test databases: a fresh, isolated database per test file, on PGlite (in memory) or on the
 * machine's PostgreSQL (`TEST_DATABASE_URL`, default `postgres://postgres@127.0.0.1:5432/postgres`),
 * built with the same `Database.layerWith` as production so migrations and type mapping are
 * exercised for real.
 *
 * ```ts
 * import { layer } from "@effect/vitest"
 * import { Testing } from "@rec/db"
 *
 * const skip = await Testing.postgresSkipReason()
 * describe.skipIf(skip !== undefined)(`on PostgreSQL${skip ? ` (skipped: ${skip})` : ""}`, () => {
 *   layer(Testing.layerPostgres({ service: "grid", migrations }))((it) => { ... })
 * })
 * layer(Testing.layerPglite({ service: "grid", migrations }))((it) => { ... })
 * ```
 *
 * The PostgreSQL database is created from `template0` and dropped (`WITH (FORCE)`) when the
 * layer is released. Databases left behind by a killed run are dropped by later runs after
 * six hours (their names carry the creation time).
 */
import { Duration, Effect, Either, Layer, Redacted } from "effect"
import * as crypto from "node:crypto"
import * as Pg from "pg"
import * as Database from "./Database.js"
import * as DatabaseConfig from "./DatabaseConfig.js"
import * as DatabaseUrl from "./DatabaseUrl.js"
import { DatabaseUnavailable, InvalidDatabaseConfig } from "./Errors.js"

export const defaultTestDatabaseUrl = "postgres://postgres@127.0.0.1:5432/postgres"

/** `TEST_DATABASE_URL`, or the local server. */
export const testDatabaseUrl = (): string => process.env["TEST_DATABASE_URL"] || defaultTestDatabaseUrl

/** `REC_REQUIRE_SERVICES=1` (CI): an unreachable service is a failure, not a skip. */
export const servicesRequired = (): boolean => process.env["REC_REQUIRE_SERVICES"] === "1"

const parsePostgres = (url: string): Either.Either<DatabaseUrl.PostgresTarget, InvalidDatabaseConfig> =>
  Either.flatMap(DatabaseUrl.parse(url, "unused"), (target) =>
    target._tag === "Postgres"
      ? Either.right(target)
      : Either.left(new InvalidDatabaseConfig({ message: "TEST_DATABASE_URL must be a postgresql:// URL" })))

const withAdminClient = async <A>(target: DatabaseUrl.PostgresTarget, f: (client: Pg.Client) => Promise<A>): Promise<A> => {
  const client = new Pg.Client({ connectionString: Redacted.value(target.url), connectionTimeoutMillis: 3000 })
  client.on("error", () => {
    // Reported through the failing query instead.
  })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end().catch(() => undefined)
  }
}

/**
 * Why PostgreSQL tests must be skipped, or `undefined` when the server answers. Throws instead
 * of returning a reason when `REC_REQUIRE_SERVICES=1`. Meant for a top-level `await` in a test file.
 */
export const postgresSkipReason = async (url: string = testDatabaseUrl()): Promise<string | undefined> => {
  const target = parsePostgres(url)
  if (Either.isLeft(target)) throw new Error(target.left.message)
  const reason = await withAdminClient(target.right, (c) => c.query("SELECT 1")).then(
    () => undefined,
    (cause: unknown) =>
      `PostgreSQL at ${target.right.display} is not reachable (${cause instanceof Error ? cause.message : String(cause)}); ` +
      `start it with scripts/services.sh or set TEST_DATABASE_URL`
  )
  if (reason !== undefined && servicesRequired()) throw new Error(`${reason} (REC_REQUIRE_SERVICES=1)`)
  return reason
}

/** Whether the server at `url` can `CREATE EXTENSION name` (e.g. pgvector is installed). */
export const postgresHasExtension = async (name: string, url: string = testDatabaseUrl()): Promise<boolean> => {
  const target = Either.getOrThrow(parsePostgres(url))
  return withAdminClient(target, async (c) => {
    const result = await c.query("SELECT 1 FROM pg_available_extensions WHERE name = $1", [name])
    return result.rowCount !== null && result.rowCount > 0
  }).catch(() => false)
}

const testPrefix = "rec_test_"
const staleAfter = Duration.hours(6)

const testDatabaseName = (service: string): string => {
  const stamp = Date.now().toString(36)
  const random = crypto.randomBytes(4).toString("hex")
  return `${testPrefix}${stamp}_${DatabaseConfig.schemaFromService(service).slice(0, 24)}_${random}`
}

const dropStale = (client: Pg.Client) =>
  client.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE 'rec\\_test\\_%'").then(
    async ({ rows }) => {
      const cutoff = Date.now() - Duration.toMillis(staleAfter)
      for (const { datname } of rows) {
        const created = parseInt(datname.slice(testPrefix.length).split("_")[0] ?? "", 36)
        if (Number.isFinite(created) && created < cutoff) {
          await client.query(`DROP DATABASE IF EXISTS ${Pg.escapeIdentifier(datname)} WITH (FORCE)`).catch(() => undefined)
        }
      }
    }
  )

export interface TestDatabaseOptions extends Database.DatabaseOptions {
  /** Overrides of the test configuration (schema, pool size, echo, ...). */
  readonly config?: Partial<Omit<DatabaseConfig.DatabaseConfig, "target" | "pool">> & {
    readonly pool?: Partial<DatabaseConfig.PoolConfig>
  }
}

/** A fresh in-memory PGlite database with the service's migrations applied. */
export const layerPglite = (options: TestDatabaseOptions) =>
  Database.layerWith(
    options,
    DatabaseConfig.make(options.service, {
      ...options.config,
      target: Either.getOrThrow(DatabaseUrl.parse("pglite://memory", "unused"))
    })
  )

/**
 * A fresh, empty database on the PostgreSQL at `url` (default `TEST_DATABASE_URL`), dropped when
 * the scope closes: its target, for tests that open it more than once (several service
 * instances, each with its own pool, on one database). Check `postgresSkipReason()` first.
 */
export const makePostgresDatabase = (options: { readonly service: string; readonly url?: string | undefined }) =>
  Effect.gen(function*() {
    const admin = yield* Either.match(parsePostgres(options.url ?? testDatabaseUrl()), {
      onLeft: Effect.fail,
      onRight: Effect.succeed
    })
    const name = testDatabaseName(options.service)
    const unavailable = (cause: unknown) =>
      new DatabaseUnavailable({
        target: admin.display,
        message: `cannot create test database ${name}: ${cause instanceof Error ? cause.message : String(cause)}`
      })
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          withAdminClient(admin, async (c) => {
            await dropStale(c).catch(() => undefined)
            await c.query(`CREATE DATABASE ${Pg.escapeIdentifier(name)} TEMPLATE template0`)
          }),
        catch: unavailable
      }),
      () =>
        Effect.promise(() =>
          withAdminClient(admin, (c) => c.query(`DROP DATABASE IF EXISTS ${Pg.escapeIdentifier(name)} WITH (FORCE)`))
            .catch(() => undefined)
        )
    )
    return DatabaseUrl.withDatabase(admin, name)
  })

/** The test configuration of a database made by `makePostgresDatabase` (short start-up, 5 connections). */
export const postgresConfig = (options: TestDatabaseOptions, target: DatabaseUrl.PostgresTarget) =>
  DatabaseConfig.make(options.service, {
    startupTimeout: Duration.seconds(5),
    ...options.config,
    target,
    pool: { max: 5, ...options.config?.pool }
  })

/**
 * A fresh database on the PostgreSQL at `url` (default `TEST_DATABASE_URL`) with the service's
 * migrations applied, dropped when the layer is released. Check `postgresSkipReason()` first.
 */
export const layerPostgres = (options: TestDatabaseOptions & { readonly url?: string }) =>
  Layer.unwrapScoped(
    Effect.map(makePostgresDatabase(options), (target) => Database.layerWith(options, postgresConfig(options, target)))
  )
