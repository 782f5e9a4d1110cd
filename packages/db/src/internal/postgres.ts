/**
 * A node-postgres pool on a PostgreSQL server, opened with a start-up probe that retries while
 * the server is unreachable (it may still be starting, e.g. in docker-compose or Kubernetes).
 */
import { Duration, Effect, Redacted, Schedule, type Scope } from "effect"
import * as Pg from "pg"
import type { PoolConfig } from "../DatabaseConfig.js"
import type { PostgresTarget } from "../DatabaseUrl.js"
import { DatabaseUnavailable } from "../Errors.js"
import * as PgTypes from "../PgTypes.js"
import { withEcho } from "./echo.js"

export interface PostgresOptions {
  readonly target: PostgresTarget
  readonly searchPath: string
  readonly pool: PoolConfig
  readonly statementTimeout: Duration.Duration | undefined
  readonly startupTimeout: Duration.Duration
  readonly applicationName: string
  readonly echo: ((statement: string) => void) | undefined
}

/** The message of a connection error, including every address tried (`localhost` is two). */
export const describeError = (cause: unknown): string => {
  if (cause instanceof AggregateError && cause.errors.length > 0) {
    return cause.errors.map(describeError).join("; ")
  }
  if (cause instanceof Error) return cause.message || cause.name
  return String(cause)
}

/** Errors that no amount of waiting fixes: wrong password, unknown role, no permission. */
const isPermanent = (cause: unknown): boolean => {
  const code = (cause as { code?: unknown } | null)?.code
  return code === "28P01" || code === "28000" || code === "42501"
}

export const makePool = (options: PostgresOptions): Effect.Effect<Pg.Pool, DatabaseUnavailable, Scope.Scope> =>
  Effect.gen(function*() {
    const { target } = options
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const created = new Pg.Pool({
          Client: options.echo === undefined ? Pg.Client : withEcho(Pg.Client, options.echo),
          connectionString: Redacted.value(target.url),
          max: options.pool.max,
          min: options.pool.min,
          idleTimeoutMillis: Duration.toMillis(options.pool.idleTimeout),
          connectionTimeoutMillis: Duration.toMillis(options.pool.connectTimeout),
          ...(options.pool.maxLifetime._tag === "Some"
            ? { maxLifetimeSeconds: Math.max(1, Math.round(Duration.toSeconds(options.pool.maxLifetime.value))) }
            : {}),
          application_name: options.applicationName,
          // Startup parameters: every connection starts in the service's schema.
          options: `-c search_path=${options.searchPath.replace(/\s+/g, "")}`,
          ...(options.statementTimeout === undefined
            ? {}
            : { statement_timeout: Duration.toMillis(options.statementTimeout) }),
          types: PgTypes.types
        })
        created.on("error", () => {
          // An idle connection broke (server restart, network); the pool drops it and the next
          // query opens a new one. Without a listener node-postgres would crash the process.
        })
        return created
      }),
      (p) => Effect.promise(() => p.end()).pipe(Effect.timeoutOption(Duration.seconds(5)))
    )

    const probe = Effect.tryPromise({
      try: () => pool.query("SELECT 1"),
      catch: (cause) => cause
    })
    const schedule = Schedule.exponential(Duration.millis(250), 2).pipe(
      Schedule.union(Schedule.spaced(Duration.seconds(5))),
      Schedule.jittered,
      Schedule.upTo(options.startupTimeout)
    )
    let attempts = 0
    yield* probe.pipe(
      Effect.tapError((cause) =>
        Effect.suspend(() => {
          attempts++
          return isPermanent(cause)
            ? Effect.void
            : Effect.logWarning("PostgreSQL not reachable yet; retrying").pipe(
              Effect.annotateLogs({ target: target.display, attempt: attempts, error: describeError(cause) })
            )
        })
      ),
      Effect.retry({ schedule, while: (cause) => !isPermanent(cause) }),
      Effect.mapError((cause) =>
        new DatabaseUnavailable({
          target: target.display,
          message: isPermanent(cause)
            ? `PostgreSQL at ${target.host}:${target.port} refused database "${target.database}"` +
              `${target.user === undefined ? "" : ` for user "${target.user}"`}: ${describeError(cause)}`
            : `PostgreSQL at ${target.host}:${target.port} (database "${target.database}") is not reachable after ` +
              `${Duration.format(options.startupTimeout)} and ${attempts} attempt(s): ${describeError(cause)}`
        })
      )
    )
    return pool
  })
