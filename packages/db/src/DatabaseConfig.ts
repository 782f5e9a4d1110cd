/**
 * Every environment variable of the database layer, read in one place.
 *
 * | variable                             | default              | meaning |
 * |--------------------------------------|----------------------|---------|
 * | `DATABASE_URL`                       | unset = PGlite in `./data/<service>` | backend and credentials (see `DatabaseUrl`) |
 * | `DATABASE_SCHEMA`                    | the service name (`grid-gateway` -> `grid_gateway`) | PostgreSQL schema of the service's tables |
 * | `DATABASE_MIGRATE`                   | `true`               | run pending migrations at start |
 * | `DATABASE_POOL_MAX`                  | `10`                 | connections per process (PostgreSQL) |
 * | `DATABASE_POOL_MIN`                  | `0`                  | connections kept open when idle |
 * | `DATABASE_POOL_IDLE_TIMEOUT_SECONDS` | `30`                 | close a connection idle this long |
 * | `DATABASE_POOL_MAX_LIFETIME_SECONDS` | `0` (unlimited)      | recycle connections older than this |
 * | `DATABASE_CONNECT_TIMEOUT_SECONDS`   | `10`                 | opening a connection, or waiting for a free one |
 * | `DATABASE_STATEMENT_TIMEOUT_SECONDS` | `0` (none)           | server-side `statement_timeout` (PostgreSQL only) |
 * | `DATABASE_STARTUP_TIMEOUT_SECONDS`   | `60`                 | keep retrying an unreachable PostgreSQL this long at start |
 * | `DATABASE_ECHO`                      | `false`              | log every SQL statement (debugging) |
 * | `PGLITE_IN_PROCESS`                  | `false`              | run an on-disk PGlite inside the service's process instead of a PGlite server process |
 *
 * `PGLITE_SHARED_BUFFERS` is read where PGlite is opened (`internal/pgliteOpen.ts`), which may be
 * the PGlite server process.
 */
import { Config, ConfigError, Duration, Either, Option, Redacted } from "effect"
import * as DatabaseUrl from "./DatabaseUrl.js"

export interface PoolConfig {
  readonly max: number
  readonly min: number
  readonly idleTimeout: Duration.Duration
  readonly maxLifetime: Option.Option<Duration.Duration>
  readonly connectTimeout: Duration.Duration
}

export interface DatabaseConfig {
  readonly target: DatabaseUrl.DatabaseTarget
  /** Schema that holds the service's tables and its migration table. */
  readonly schema: string
  readonly migrate: boolean
  readonly pool: PoolConfig
  readonly statementTimeout: Option.Option<Duration.Duration>
  readonly startupTimeout: Duration.Duration
  readonly echo: boolean
  /**
   * Keep an on-disk PGlite inside the service's process rather than in a PGlite server process
   * reached over a Unix socket. `pglite://memory` is always in process.
   */
  readonly pgliteInProcess: boolean
  /** Reported to PostgreSQL as `application_name` (visible in `pg_stat_activity`). */
  readonly applicationName: string
}

const schemaPattern = /^[a-z_][a-z0-9_]{0,62}$/

/** `grid-gateway` -> `grid_gateway`: a lower-case identifier that needs no quoting. */
export const schemaFromService = (service: string): string => {
  const cleaned = service.toLowerCase().replace(/[^a-z0-9_]+/g, "_").replace(/^_+|_+$/g, "")
  const prefixed = /^[a-z_]/.test(cleaned) ? cleaned : `s_${cleaned}`
  return prefixed.slice(0, 63)
}

export const isValidSchemaName = (name: string): boolean => schemaPattern.test(name)

/** The default PGlite directory, relative to the working directory (the launcher runs from the repo root). */
export const defaultDataDir = (service: string): string => `./data/${service}`

const seconds = (name: string, fallback: number) =>
  Config.number(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be zero or a positive number of seconds`, validation: (n) => n >= 0 })
  )

const positiveSeconds = (name: string, fallback: number) =>
  Config.number(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a positive number of seconds`, validation: (n) => n > 0 })
  )

const optionalSeconds = (name: string) =>
  Config.map(seconds(name, 0), (n) => (n === 0 ? Option.none() : Option.some(Duration.seconds(n))))

/** Reads the configuration of `service` from the environment (through Effect's `ConfigProvider`). */
export const fromEnv = (service: string): Config.Config<DatabaseConfig> =>
  Config.all({
    target: Config.option(Config.redacted("DATABASE_URL")).pipe(
      Config.mapOrFail((url) =>
        DatabaseUrl.parse(Option.getOrUndefined(Option.map(url, Redacted.value)), defaultDataDir(service)).pipe(
          Either.mapLeft((e) => ConfigError.InvalidData(["DATABASE_URL"], e.message))
        )
      )
    ),
    schema: Config.string("DATABASE_SCHEMA").pipe(
      Config.withDefault(schemaFromService(service)),
      Config.validate({
        message: "DATABASE_SCHEMA must be a lower-case SQL identifier ([a-z_][a-z0-9_]*, at most 63 characters)",
        validation: isValidSchemaName
      })
    ),
    migrate: Config.boolean("DATABASE_MIGRATE").pipe(Config.withDefault(true)),
    pool: Config.all({
      max: Config.integer("DATABASE_POOL_MAX").pipe(
        Config.withDefault(10),
        Config.validate({ message: "DATABASE_POOL_MAX must be at least 1", validation: (n) => n >= 1 })
      ),
      min: Config.integer("DATABASE_POOL_MIN").pipe(
        Config.withDefault(0),
        Config.validate({ message: "DATABASE_POOL_MIN must be zero or more", validation: (n) => n >= 0 })
      ),
      idleTimeout: Config.map(positiveSeconds("DATABASE_POOL_IDLE_TIMEOUT_SECONDS", 30), Duration.seconds),
      maxLifetime: optionalSeconds("DATABASE_POOL_MAX_LIFETIME_SECONDS"),
      connectTimeout: Config.map(positiveSeconds("DATABASE_CONNECT_TIMEOUT_SECONDS", 10), Duration.seconds)
    }),
    statementTimeout: optionalSeconds("DATABASE_STATEMENT_TIMEOUT_SECONDS"),
    startupTimeout: Config.map(seconds("DATABASE_STARTUP_TIMEOUT_SECONDS", 60), Duration.seconds),
    echo: Config.boolean("DATABASE_ECHO").pipe(Config.withDefault(false)),
    pgliteInProcess: Config.boolean("PGLITE_IN_PROCESS").pipe(Config.withDefault(false)),
    applicationName: Config.succeed(service)
  })

/** A configuration built in code (tests, tools) with the same defaults as `fromEnv`. */
export const make = (
  service: string,
  overrides: Partial<Omit<DatabaseConfig, "pool">> & { readonly pool?: Partial<PoolConfig> } = {}
): DatabaseConfig => {
  const { pool, ...rest } = overrides
  return {
    target: DatabaseUrl.parse(undefined, defaultDataDir(service)).pipe(Either.getOrThrow),
    schema: schemaFromService(service),
    migrate: true,
    statementTimeout: Option.none(),
    startupTimeout: Duration.seconds(60),
    echo: false,
    pgliteInProcess: false,
    applicationName: service,
    ...rest,
    pool: {
      max: 10,
      min: 0,
      idleTimeout: Duration.seconds(30),
      maxLifetime: Option.none(),
      connectTimeout: Duration.seconds(10),
      ...pool
    }
  }
}
