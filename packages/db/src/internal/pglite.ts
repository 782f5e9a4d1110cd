/**
 * Embedded PostgreSQL (PGlite: PostgreSQL 18 compiled to WASM) behind node-postgres, so that
 * `@effect/sql-pg` drives it exactly like a server.
 *
 * An on-disk directory is served by a PGlite server process of its own and reached over a Unix
 * socket; `pglite://memory` (tests) and `PGLITE_IN_PROCESS=true` keep PGlite inside this process
 * (see `pgliteSession.ts`). Either way PGlite is one PostgreSQL session, not a server:
 * - the session pool holds at most one client, and queries wait in line for it;
 * - a data directory is opened by one process at a time (`dirLock`). Inside one process,
 *   services naming the same directory share one session (one PGlite instance: about 170 MB of
 *   memory and 1.5-4 s of start-up each): every service gets its own pool facade that sets the
 *   session's `search_path` to the service's schema whenever it takes the session.
 */
import { Duration, Effect, type Scope } from "effect"
import * as path from "node:path"
import type * as Pg from "pg"
import type { PgliteTarget } from "../DatabaseUrl.js"
import { DatabaseUnavailable, PgliteDirectoryLocked } from "../Errors.js"
import * as PgTypes from "../PgTypes.js"
import { openInProcess, openOverSocket, type Session } from "./pgliteSession.js"

export interface PgliteOptions {
  readonly target: PgliteTarget
  readonly searchPath: string
  readonly acquireTimeout: Duration.Duration
  readonly applicationName: string
  readonly echo: ((statement: string) => void) | undefined
  /** Keep an on-disk PGlite inside this process (`PGLITE_IN_PROCESS`). */
  readonly inProcess: boolean
}

export interface PgliteBackend {
  /** A facade over the shared session: what `PgClient.fromPool` drives. */
  readonly pool: Pg.Pool
  /** `LISTEN` on the session; resolves to the function that stops listening. */
  readonly listen: Session["listen"]
  /** The PGlite server process's pid, when the session is served by one. */
  readonly serverPid: number | undefined
}

const errorMessage = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

const openSession = (
  target: PgliteTarget,
  acquireTimeout: Duration.Duration,
  inProcess: boolean
): Promise<Session> =>
  target.dataDir === undefined || inProcess
    ? openInProcess(target.dataDir, acquireTimeout)
    : openOverSocket(target.dataDir, acquireTimeout, target.display)

// Open on-disk sessions of this process, by absolute directory, with their users.
const shared = new Map<string, { refs: number; readonly session: Promise<Session> }>()

const attach = (target: PgliteTarget, acquireTimeout: Duration.Duration, inProcess: boolean): Promise<Session> => {
  const { dataDir } = target
  if (dataDir === undefined) return openSession(target, acquireTimeout, true)
  const key = path.resolve(dataDir)
  let entry = shared.get(key)
  if (entry === undefined) {
    // The first service to open a directory decides where its PGlite runs.
    const created = { refs: 0, session: openSession(target, acquireTimeout, inProcess) }
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
    // A dead server process: fail at once, as an outage (503), rather than wait for a socket.
    if (this.session.failure !== undefined) throw this.session.failure
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
        try: () => attach(options.target, options.acquireTimeout, options.inProcess),
        catch: (cause) =>
          cause instanceof PgliteDirectoryLocked
            ? cause
            : new DatabaseUnavailable({ target: display, message: `PGlite could not open ${display}: ${errorMessage(cause)}` })
      }),
      // The last user closes PGlite, which flushes the directory, then releases the lock.
      (s) => Effect.promise(() => detach(dataDir, s)).pipe(Effect.timeoutOption(Duration.seconds(35)))
    )
    const pool = new SchemaPool(session, options.searchPath, options.echo, {
      database: dataDir === undefined ? "memory" : path.basename(dataDir),
      applicationName: options.applicationName
    })
    // Only the members listed on SchemaPool are used by sql-pg; see its doc comment.
    return { pool: pool as unknown as Pg.Pool, listen: session.listen, serverPid: session.serverPid }
  })
