/**
 * Embedded PostgreSQL (PGlite, PostgreSQL 18 compiled to WASM) behind a node-postgres `Pool`, so
 * that `@effect/sql-pg` drives it exactly like a server.
 *
 * How: `@electric-sql/pglite/node-postgres` ships `PglitePgConnection`, a stand-in for
 * node-postgres's socket `Connection` that hands protocol messages to PGlite. Its
 * `createPgConfig()` puts *one* connection object in the pool config, which every pooled
 * `Client` would then share; once a client is discarded (any `pool.query` error does that) the
 * next client inherits a connection that has already emitted `end`, and fails with "Connection
 * terminated unexpectedly". We therefore give each `Client` a fresh `PglitePgConnection`.
 *
 * PGlite is one PostgreSQL session, not a server. Consequences, enforced here:
 * - the pool holds at most one client: two pooled clients would interleave their statements in
 *   the same session (and the same transaction). Queries wait in line for it;
 * - session state survives a discarded client, so a new client first rolls back a transaction
 *   left open and re-applies the `search_path`;
 * - a data directory is opened by one process at a time (`dirLock`).
 */
import { PGlite } from "@electric-sql/pglite"
import { PglitePgConnection } from "@electric-sql/pglite/node-postgres"
import { vector } from "@electric-sql/pglite-pgvector"
import { Duration, Effect, type Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Pg from "pg"
import type { PgliteTarget } from "../DatabaseUrl.js"
import { DatabaseUnavailable, type PgliteDirectoryLocked } from "../Errors.js"
import * as PgTypes from "../PgTypes.js"
import * as dirLock from "./dirLock.js"
import { withEcho } from "./echo.js"

export interface PgliteBackend {
  readonly pglite: PGlite
  readonly pool: Pg.Pool
}

export interface PgliteOptions {
  readonly target: PgliteTarget
  readonly searchPath: string
  readonly acquireTimeout: Duration.Duration
  readonly applicationName: string
  readonly echo: ((statement: string) => void) | undefined
}

const errorMessage = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

export const make = (options: PgliteOptions): Effect.Effect<PgliteBackend, DatabaseUnavailable | PgliteDirectoryLocked, Scope.Scope> =>
  Effect.gen(function*() {
    const { dataDir, display } = options.target
    if (dataDir !== undefined) {
      yield* dirLock.acquire(dataDir)
      // PGlite creates the directory itself but not its parents.
      yield* Effect.sync(() => fs.mkdirSync(path.dirname(path.resolve(dataDir)), { recursive: true }))
    }

    const pglite = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => PGlite.create(dataDir === undefined ? "memory://" : path.resolve(dataDir), { extensions: { vector } }),
        catch: (cause) =>
          new DatabaseUnavailable({ target: display, message: `PGlite could not open ${display}: ${errorMessage(cause)}` })
      }),
      // Closing flushes the data directory; it must finish before the lock is released.
      (db) => Effect.promise(() => db.close()).pipe(Effect.timeoutOption(Duration.seconds(30)))
    )

    const resetSession = async () => {
      if (pglite.isInTransaction()) await pglite.exec("ROLLBACK")
      await pglite.exec(`SET search_path TO ${options.searchPath}`)
    }
    yield* Effect.tryPromise({
      try: resetSession,
      catch: (cause) => new DatabaseUnavailable({ target: display, message: `PGlite session setup failed: ${errorMessage(cause)}` })
    })

    class SessionConnection extends PglitePgConnection {
      override async connect(port: number, host: string): Promise<void> {
        await resetSession()
        return super.connect(port, host)
      }
    }
    class PgliteClient extends Pg.Client {
      constructor(config?: string | Pg.ClientConfig) {
        const base = typeof config === "object" ? config : {}
        // `connection` is accepted by node-postgres at run time but missing from its typings.
        super({ ...base, connection: new SessionConnection({ pglite }) } as Pg.ClientConfig)
      }
    }

    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const created = new Pg.Pool({
          Client: options.echo === undefined ? PgliteClient : withEcho(PgliteClient, options.echo),
          max: 1,
          // Never close the single client for idleness: reconnecting is pointless in-process.
          idleTimeoutMillis: 0,
          connectionTimeoutMillis: Duration.toMillis(options.acquireTimeout),
          application_name: options.applicationName,
          types: PgTypes.types,
          // Placeholders that node-postgres and sql-pg read for span attributes; PGlite ignores them.
          host: "pglite",
          database: dataDir === undefined ? "memory" : path.basename(dataDir),
          user: "postgres"
        })
        created.on("error", () => {
          // A discarded client reports here; the next query gets a fresh one.
        })
        return created
      }),
      (p) => Effect.promise(() => p.end()).pipe(Effect.timeoutOption(Duration.seconds(5)))
    )
    return { pglite, pool }
  })
