/**
 * The database layer of a service: one `SqlClient` (and `PgClient`) from `@effect/sql-pg`,
 * backed by PostgreSQL when `DATABASE_URL` names a server and by embedded PGlite otherwise,
 * with the service's migrations applied at start.
 *
 * ```ts
 * import { Database } from "@rec/db"
 * import { migrations } from "./migrations/index.js"
 *
 * export const DatabaseLive = Database.layer({ service: "grid-gateway", migrations })
 * // provides SqlClient.SqlClient, PgClient.PgClient and Database.Database
 * ```
 *
 * Conventions every service inherits:
 * - tables live in the service's own schema (`DATABASE_SCHEMA`, default the service name), which
 *   is first on the `search_path` of every connection, followed by `public`;
 * - names: camelCase in TypeScript, snake_case in SQL (`transformQueryNames`/
 *   `transformResultNames`); JSON values are stored as given (`transformJson: false`);
 * - column types arrive as described in `PgTypes` (timestamps as ISO strings, int8 as strings).
 * - `PgClient.listen`/`notify` work on both backends (`notify` uses `pg_notify`: sql-pg 0.53's
 *   own `NOTIFY channel, $1` is rejected by PostgreSQL).
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient } from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import type { ConfigError } from "effect"
import { Context, Duration, Effect, Layer, Option, Runtime, Stream, String as Str } from "effect"
import type * as Pg from "pg"
import * as DatabaseConfig from "./DatabaseConfig.js"
import { DatabaseUnavailable, type MigrationFailed, type PgliteDirectoryLocked } from "./Errors.js"
import { cancelSafePool } from "./internal/cancelSafePool.js"
import * as Pglite from "./internal/pglite.js"
import * as Postgres from "./internal/postgres.js"
import * as Migrations from "./Migrations.js"

export interface DatabaseOptions {
  /** Service name: default schema (`-` becomes `_`), PGlite directory `./data/<service>`, `application_name`. */
  readonly service: string
  /** The service's migrations (see `Migrations`). */
  readonly migrations?: Migrations.MigrationRecord | undefined
  /** camelCase in TypeScript <-> snake_case in SQL. Default `true`. */
  readonly transformNames?: boolean | undefined
}

/** What a running service knows about its database; `check` is the readiness probe. */
export interface DatabaseInfo {
  readonly backend: "postgres" | "pglite"
  readonly schema: string
  /** Safe description of the target (no password). */
  readonly target: string
  /** Migrations applied by this start (empty when none were pending or migrating is off). */
  readonly appliedMigrations: ReadonlyArray<readonly [id: number, name: string]>
  /** `SELECT 1` within five seconds. */
  readonly check: Effect.Effect<void, DatabaseUnavailable>
}

export class Database extends Context.Tag("@rec/db/Database")<Database, DatabaseInfo>() {}

export type DatabaseError = DatabaseUnavailable | PgliteDirectoryLocked | MigrationFailed | SqlError

type Provided = Database | SqlClient | PgClient.PgClient

/**
 * sql-pg 0.53's `notify` sends `NOTIFY "channel", $1`, which PostgreSQL rejects (NOTIFY takes
 * no parameters), and its `listen` opens a socket client from the pool options, which a PGlite
 * session has not got (it is one session: a second connection would share it). Both are
 * replaced on the client this layer created.
 */
const patchNotifications = (client: PgClient.PgClient, pgliteListen: Option.Option<Pglite.PgliteBackend["listen"]>) => {
  const notify = (channel: string, payload: string) =>
    client`SELECT pg_notify(${channel}, ${payload})`.pipe(Effect.asVoid)
  const listen = Option.match(pgliteListen, {
    onNone: () => client.listen,
    onSome: (listenOn) => (channel: string) =>
      Stream.asyncPush<string, SqlError>((emit) =>
        Effect.acquireRelease(
          Effect.tryPromise({
            try: () => listenOn(channel, (payload) => emit.single(payload)),
            catch: (cause) => new SqlError({ cause, message: "Failed to listen" })
          }),
          (unlisten) => Effect.promise(() => unlisten()).pipe(Effect.timeoutOption(Duration.seconds(1)))
        )
      )
  })
  // The client object was created by this layer a moment ago and is not shared yet.
  return Object.assign(client, { notify, listen })
}

/** The database layer with an explicit configuration (tests, tools). */
export const layerWith = (
  options: DatabaseOptions,
  config: DatabaseConfig.DatabaseConfig
): Layer.Layer<Provided, DatabaseError> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      const { target, schema } = config
      const runtime = yield* Effect.runtime<never>()
      const echo = config.echo
        ? (statement: string) =>
          Runtime.runFork(runtime)(Effect.logInfo("sql").pipe(Effect.annotateLogs({ schema, statement })))
        : undefined
      const searchPath = Migrations.searchPath(schema)

      let pool: Pg.Pool
      let pgliteListen: Option.Option<Pglite.PgliteBackend["listen"]> = Option.none()
      let pgliteServerPid: number | undefined
      if (target._tag === "Postgres") {
        pool = cancelSafePool(yield* Postgres.makePool({
          target,
          searchPath,
          pool: config.pool,
          statementTimeout: Option.getOrUndefined(config.statementTimeout),
          startupTimeout: config.startupTimeout,
          applicationName: config.applicationName,
          echo
        }))
      } else {
        const backend = yield* Pglite.make({
          target,
          searchPath,
          acquireTimeout: config.pool.connectTimeout,
          applicationName: config.applicationName,
          echo,
          inProcess: config.pgliteInProcess
        })
        pool = backend.pool
        pgliteListen = Option.some(backend.listen)
        pgliteServerPid = backend.serverPid
        if (Option.isSome(config.statementTimeout)) {
          yield* Effect.logWarning("DATABASE_STATEMENT_TIMEOUT_SECONDS is not applied on PGlite")
        }
      }

      const transformNames = options.transformNames ?? true
      const client = patchNotifications(
        yield* PgClient.fromPool({
          acquire: Effect.succeed(pool),
          applicationName: config.applicationName,
          spanAttributes: { "db.backend": target._tag === "Postgres" ? "postgresql" : "pglite", "db.schema": schema },
          ...(transformNames
            ? { transformQueryNames: Str.camelToSnake, transformResultNames: Str.snakeToCamel, transformJson: false }
            : {})
        }),
        pgliteListen
      )

      let appliedMigrations: ReadonlyArray<readonly [number, string]> = []
      if (options.migrations !== undefined) {
        const migrationOptions = { schema, migrations: options.migrations }
        if (config.migrate) {
          appliedMigrations = yield* Migrations.run(migrationOptions).pipe(Effect.provideService(SqlClient, client))
        } else {
          const { pending } = yield* Migrations.status(migrationOptions).pipe(Effect.provideService(SqlClient, client))
          if (pending.length > 0) {
            yield* Effect.logWarning("pending migrations are not applied (DATABASE_MIGRATE=false)").pipe(
              Effect.annotateLogs({ schema, pending: pending.map(([id, name]) => `${id}_${name}`).join(",") })
            )
          }
        }
      }

      const check = client`SELECT 1`.pipe(
        Effect.timeoutFail({
          duration: Duration.seconds(5),
          onTimeout: () => new DatabaseUnavailable({ target: target.display, message: "no answer within 5 s" })
        }),
        Effect.catchTag("SqlError", (e) =>
          Effect.fail(new DatabaseUnavailable({ target: target.display, message: Postgres.describeError(e.cause) }))),
        Effect.asVoid
      )
      const info: DatabaseInfo = {
        backend: target._tag === "Postgres" ? "postgres" : "pglite",
        schema,
        target: target.display,
        appliedMigrations,
        check
      }
      yield* Effect.logInfo("database ready").pipe(
        Effect.annotateLogs({
          backend: info.backend,
          target: info.target,
          schema,
          migrationsApplied: appliedMigrations.length,
          ...(pgliteServerPid === undefined ? {} : { pgliteServerPid })
        })
      )
      return Context.make(Database, info).pipe(
        Context.add(PgClient.PgClient, client),
        Context.add(SqlClient, client)
      )
    })
  ).pipe(Layer.provide(Reactivity.layer))

/** The database layer configured from the environment (see `DatabaseConfig`). */
export const layer = (options: DatabaseOptions): Layer.Layer<Provided, DatabaseError | ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(DatabaseConfig.fromEnv(options.service), (config) => layerWith(options, config)))
