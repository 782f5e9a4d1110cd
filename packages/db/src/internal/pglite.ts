/**
 * Embedded PostgreSQL (PGlite: PostgreSQL 18 compiled to WASM) behind node-postgres, so that
 * `@effect/sql-pg` drives it exactly like a server.
 *
 * How: `@electric-sql/pglite/node-postgres` ships `PglitePgConnection`, a stand-in for
 * node-postgres's socket `Connection` that hands protocol messages to PGlite. Its
 * `createPgConfig()` puts *one* connection object in the pool config, which every pooled
 * `Client` would then share; once a client is discarded (any `pool.query` error does that) the
 * next client inherits a connection that has already emitted `end` and fails with "Connection
 * terminated unexpectedly". Each `Client` here gets a fresh `PglitePgConnection` instead.
 *
 * PGlite is one PostgreSQL session, not a server. Consequences, enforced here:
 * - the session pool holds at most one client: two clients would interleave their statements
 *   in the same session (and the same transaction). Queries wait in line for it;
 * - session state survives a discarded client, so a new client first rolls back a transaction
 *   left open;
 * - a data directory is opened by one process at a time (`dirLock`). Inside one process,
 *   services naming the same directory share one PGlite instance (about 300 MB of memory and
 *   1.5-4 s of start-up each): every service gets its own pool facade that sets the session's
 *   `search_path` to the service's schema whenever it takes the session.
 */
import { PGlite } from "@electric-sql/pglite"
import { PglitePgConnection } from "@electric-sql/pglite/node-postgres"
import { vector } from "@electric-sql/pglite-pgvector"
import { Duration, Effect, type Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Pg from "pg"
import type { PgliteTarget } from "../DatabaseUrl.js"
import { DatabaseUnavailable, PgliteDirectoryLocked } from "../Errors.js"
import * as PgTypes from "../PgTypes.js"
import * as dirLock from "./dirLock.js"

export interface PgliteOptions {
  readonly target: PgliteTarget
  readonly searchPath: string
  readonly acquireTimeout: Duration.Duration
  readonly applicationName: string
  readonly echo: ((statement: string) => void) | undefined
}

export interface PgliteBackend {
  readonly pglite: PGlite
  /** A facade over the shared session: what `PgClient.fromPool` drives. */
  readonly pool: Pg.Pool
}

/** One PGlite instance and the single-client pool that is its session. */
interface Session {
  readonly pglite: PGlite
  readonly pool: Pg.Pool
  /** The `search_path` last set on the session (`undefined` after a fresh client). */
  currentPath: string | undefined
  /** The statement logger of the facade holding the session right now. */
  echo: ((statement: string) => void) | undefined
  readonly close: () => Promise<void>
}

const errorMessage = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

/**
 * PostgreSQL's 128 MB default buffer pool lives in PGlite's WebAssembly memory, which never
 * shrinks: one embedded session serving a development platform needs far less (its data is small
 * and the OS page cache still holds the files). `PGLITE_SHARED_BUFFERS` overrides it.
 */
const sharedBuffers = (): string => {
  const value = process.env["PGLITE_SHARED_BUFFERS"]?.trim()
  return value !== undefined && /^\d+(kB|MB|GB)?$/.test(value) ? value : "32MB"
}

const openSession = async (dataDir: string | undefined, acquireTimeout: Duration.Duration): Promise<Session> => {
  const unlock = dataDir === undefined ? () => undefined : dirLock.lock(dataDir)
  try {
    // PGlite creates the directory itself but not its parents.
    if (dataDir !== undefined) fs.mkdirSync(path.dirname(path.resolve(dataDir)), { recursive: true })
    const pglite = await PGlite.create(dataDir === undefined ? "memory://" : path.resolve(dataDir), {
      extensions: { vector },
      startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${sharedBuffers()}`]
    })
    const session: { -readonly [K in keyof Session]: Session[K] } = {
      pglite,
      pool: undefined as unknown as Pg.Pool,
      currentPath: undefined,
      echo: undefined,
      close: async () => {
        await session.pool.end().catch(() => undefined)
        await pglite.close()
        unlock()
      }
    }
    class SessionConnection extends PglitePgConnection {
      override async connect(port: number, host: string): Promise<void> {
        if (pglite.isInTransaction()) await pglite.exec("ROLLBACK")
        session.currentPath = undefined
        return super.connect(port, host)
      }
    }
    class SessionClient extends Pg.Client {
      constructor(config?: string | Pg.ClientConfig) {
        const base = typeof config === "object" ? config : {}
        // `connection` is accepted by node-postgres at run time but missing from its typings.
        super({ ...base, connection: new SessionConnection({ pglite }) } as Pg.ClientConfig)
      }
      // `query` has a dozen overloads; this override only reads the statement text for
      // DATABASE_ECHO and forwards the arguments untouched.
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      override query(...args: Array<any>): any {
        const first: unknown = args[0]
        if (session.echo !== undefined) {
          const text = typeof first === "string" ? first : (first as { text?: unknown } | null)?.text
          if (typeof text === "string") session.echo(text)
        }
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        return (super.query as (...a: Array<any>) => unknown)(...args)
      }
    }
    session.pool = new Pg.Pool({
      Client: SessionClient,
      max: 1,
      // Never close the single client for idleness: reconnecting is pointless in-process.
      idleTimeoutMillis: 0,
      connectionTimeoutMillis: Duration.toMillis(acquireTimeout),
      types: PgTypes.types
    })
    session.pool.on("error", () => {
      // A discarded client reports here; the next checkout gets a fresh one.
    })
    return session
  } catch (e) {
    unlock()
    throw e
  }
}

// Open on-disk sessions of this process, by absolute directory, with their users.
const shared = new Map<string, { refs: number; readonly session: Promise<Session> }>()

const attach = (dataDir: string | undefined, acquireTimeout: Duration.Duration): Promise<Session> => {
  if (dataDir === undefined) return openSession(undefined, acquireTimeout)
  const key = path.resolve(dataDir)
  let entry = shared.get(key)
  if (entry === undefined) {
    const created = { refs: 0, session: openSession(dataDir, acquireTimeout) }
    created.session.catch(() => {
      if (shared.get(key) === created) shared.delete(key)
    })
    shared.set(key, created)
    entry = created
  }
  entry.refs++
  return entry.session
}

const detach = async (dataDir: string | undefined, session: Session): Promise<void> => {
  if (dataDir === undefined) return session.close()
  const key = path.resolve(dataDir)
  const entry = shared.get(key)
  if (entry === undefined) return
  entry.refs--
  if (entry.refs === 0) {
    shared.delete(key)
    await session.close()
  }
}

type ConnectCallback = (err: Error | undefined, client: Pg.PoolClient | undefined, done: (release?: unknown) => void) => void

/**
 * What `@effect/sql-pg` uses of a pool (`connect` both ways, `query`, `options`, `ending`,
 * `end`), over the shared session: taking the session sets this service's `search_path`.
 */
class SchemaPool {
  ending = false
  readonly options: Pg.PoolOptions

  constructor(
    private readonly session: Session,
    private readonly searchPath: string,
    private readonly echo: ((statement: string) => void) | undefined,
    options: { readonly database: string; readonly applicationName: string }
  ) {
    // Read by sql-pg for span attributes; no socket is ever opened from them.
    this.options = {
      host: "pglite",
      port: 0,
      database: options.database,
      user: "postgres",
      application_name: options.applicationName,
      max: 1,
      types: PgTypes.types
    } as Pg.PoolOptions
  }

  private async take(): Promise<Pg.PoolClient> {
    if (this.ending) throw new Error("the PGlite pool of this service is closed")
    const client = await this.session.pool.connect()
    try {
      this.session.echo = undefined
      if (this.session.currentPath !== this.searchPath) {
        await client.query(`SET search_path TO ${this.searchPath}`)
        this.session.currentPath = this.searchPath
      }
      this.session.echo = this.echo
      return client
    } catch (e) {
      client.release(e instanceof Error ? e : new Error(String(e)))
      throw e
    }
  }

  connect(callback?: ConnectCallback): Promise<Pg.PoolClient> | void {
    if (callback === undefined) return this.take()
    this.take().then(
      (client) => callback(undefined, client, (release) => client.release(release as Error | boolean | undefined)),
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), undefined, () => undefined)
    )
  }

  query(text: string | Pg.QueryConfig, values?: unknown, callback?: (err: Error | undefined, result?: Pg.QueryResult) => void) {
    const cb = typeof values === "function" ? (values as typeof callback) : callback
    const params = typeof values === "function" ? undefined : (values as Array<unknown> | undefined)
    const run = this.take().then(async (client) => {
      try {
        return await client.query(text as string, params)
      } finally {
        client.release()
      }
    })
    if (cb === undefined) return run
    run.then((result) => cb(undefined, result), (err: Error) => cb(err))
  }

  end(callback?: () => void): Promise<void> | void {
    this.ending = true
    if (callback === undefined) return Promise.resolve()
    callback()
  }
}

export const make = (
  options: PgliteOptions
): Effect.Effect<PgliteBackend, DatabaseUnavailable | PgliteDirectoryLocked, Scope.Scope> =>
  Effect.gen(function*() {
    const { dataDir, display } = options.target
    const session = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => attach(dataDir, options.acquireTimeout),
        catch: (cause) =>
          cause instanceof PgliteDirectoryLocked
            ? cause
            : new DatabaseUnavailable({ target: display, message: `PGlite could not open ${display}: ${errorMessage(cause)}` })
      }),
      // The last user closes PGlite, which flushes the directory, then releases the lock.
      (s) => Effect.promise(() => detach(dataDir, s)).pipe(Effect.timeoutOption(Duration.seconds(30)))
    )
    const pool = new SchemaPool(session, options.searchPath, options.echo, {
      database: dataDir === undefined ? "memory" : path.basename(dataDir),
      applicationName: options.applicationName
    })
    // Only the members listed on SchemaPool are used by sql-pg; see its doc comment.
    return { pglite: session.pglite, pool: pool as unknown as Pg.Pool }
  })
