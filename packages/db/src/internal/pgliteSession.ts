/**
 * The PGlite session of one data directory (or of one in-memory database), as a node-postgres
 * pool of at most one client, reached one of two ways:
 *
 * - **over a socket** (on-disk directories, the default): PGlite runs in a server process of its
 *   own (`pgliteServerProcess.ts`) and the pool's client is an ordinary node-postgres socket
 *   client. PGlite's memory and its query execution (which would block the event loop) leave
 *   the service's process;
 * - **in process** (`pglite://memory`, or `PGLITE_IN_PROCESS=true`): `@electric-sql/pglite`'s
 *   `PglitePgConnection` stands in for node-postgres's socket and hands the protocol messages to
 *   PGlite directly. Its `createPgConfig()` puts *one* connection object in the pool config,
 *   which every pooled `Client` would then share; once a client is discarded (any `pool.query`
 *   error does that) the next one inherits a connection that has already emitted `end` and fails
 *   with "Connection terminated unexpectedly". Each `Client` here gets a fresh one instead.
 *
 * Both ways it is ONE PostgreSQL session: two clients would interleave their statements in the
 * same session (and the same transaction), so the pool holds one client and queries wait in
 * line for it. Session state survives a discarded client: a transaction it left open is rolled
 * back before the next client uses the session (here in process; by pglite-socket when the
 * discarded client's socket closes), and the `search_path` must be set again.
 */
import type { PGlite } from "@electric-sql/pglite"
import { Duration } from "effect"
import * as Pg from "pg"
import { DatabaseUnavailable, PgliteDirectoryLocked } from "../Errors.js"
import * as PgTypes from "../PgTypes.js"
import * as dirLock from "./dirLock.js"
import * as ServerProcess from "./pgliteServerProcess.js"

export interface Session {
  readonly pool: Pg.Pool
  /** The `search_path` last set on the session (`undefined` after a fresh client). */
  currentPath: string | undefined
  /** The statement logger of the facade holding the session right now. */
  echo: ((statement: string) => void) | undefined
  /** The PGlite server process serving the session, if one does. */
  readonly serverPid: number | undefined
  /** Set when the session is gone for good (its server process exited). */
  failure: DatabaseUnavailable | undefined
  /** `LISTEN channel`; resolves to the function that stops listening. */
  readonly listen: (channel: string, onPayload: (payload: string) => void) => Promise<() => Promise<void>>
  /** Ends the pool and closes PGlite, which flushes the directory. */
  readonly close: () => Promise<void>
}

type MutableSession = { -readonly [K in keyof Session]: Session[K] }

type ClientClass = new (config?: string | Pg.ClientConfig) => Pg.Client

const quoteChannel = (channel: string) => `"${channel.replace(/"/g, "\"\"")}"`

/** The client class of a session: reports statements to the facade holding the session (DATABASE_ECHO). */
const echoing = (Base: ClientClass, session: Pick<Session, "echo">): ClientClass =>
  class SessionClient extends Base {
    // `query` has a dozen overloads; this override only reads the statement text and forwards
    // the arguments untouched.
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

const makePool = (Client: ClientClass, acquireTimeout: Duration.Duration, socket?: Pg.PoolConfig): Pg.Pool => {
  const pool = new Pg.Pool({
    ...socket,
    Client,
    max: 1,
    // Never close the single client for idleness: it is the session, and reconnecting costs.
    idleTimeoutMillis: 0,
    connectionTimeoutMillis: Duration.toMillis(acquireTimeout),
    types: PgTypes.types
  })
  pool.on("error", () => {
    // A discarded client reports here; the next checkout gets a fresh one.
  })
  return pool
}

/** PGlite inside this process. The pglite modules are loaded only when needed. */
export const openInProcess = async (dataDir: string | undefined, acquireTimeout: Duration.Duration): Promise<Session> => {
  let release = () => undefined as void
  if (dataDir !== undefined) {
    const lock = dirLock.acquire(dataDir)
    if (lock._tag === "Held") throw new PgliteDirectoryLocked({ dataDir, pid: lock.pid, message: lock.message })
    release = lock.release
  }
  try {
    const [{ openPglite }, { PglitePgConnection }] = await Promise.all([
      import("./pgliteOpen.js"),
      import("@electric-sql/pglite/node-postgres")
    ])
    const pglite: PGlite = await openPglite(dataDir)
    const session: MutableSession = {
      pool: undefined as unknown as Pg.Pool,
      currentPath: undefined,
      echo: undefined,
      serverPid: undefined,
      failure: undefined,
      listen: (channel, onPayload) => pglite.listen(quoteChannel(channel), onPayload),
      close: async () => {
        await session.pool.end().catch(() => undefined)
        await pglite.close()
        release()
      }
    }
    class SessionConnection extends PglitePgConnection {
      override async connect(port: number, host: string): Promise<void> {
        if (pglite.isInTransaction()) await pglite.exec("ROLLBACK")
        session.currentPath = undefined
        return super.connect(port, host)
      }
    }
    class InProcessClient extends Pg.Client {
      constructor(config?: string | Pg.ClientConfig) {
        const base = typeof config === "object" ? config : {}
        // `connection` is accepted by node-postgres at run time but missing from its typings.
        super({ ...base, connection: new SessionConnection({ pglite }) } as Pg.ClientConfig)
      }
    }
    session.pool = makePool(echoing(InProcessClient, session), acquireTimeout)
    return session
  } catch (e) {
    release()
    throw e
  }
}

/** First start of a directory runs initdb; a loaded machine may take a while. */
const readyTimeoutMs = 120_000
/** Closing PGlite flushes the directory: give it time before killing the process. */
const stopTimeoutMs = 30_000

/** PGlite in a server process of its own, reached over its Unix socket. */
export const openOverSocket = async (dataDir: string, acquireTimeout: Duration.Duration, display: string): Promise<Session> => {
  const server = await ServerProcess.start(dataDir, readyTimeoutMs)
  const listeners = new Map<string, Set<(payload: string) => void>>()
  const session: MutableSession = {
    pool: undefined as unknown as Pg.Pool,
    currentPath: undefined,
    echo: undefined,
    serverPid: server.pid,
    failure: undefined,
    listen: async (channel, onPayload) => {
      let set = listeners.get(channel)
      if (set === undefined) {
        set = new Set()
        listeners.set(channel, set)
        await session.pool.query(`LISTEN ${quoteChannel(channel)}`)
      }
      set.add(onPayload)
      return async () => {
        set.delete(onPayload)
        if (set.size === 0 && listeners.get(channel) === set) {
          listeners.delete(channel)
          await session.pool.query(`UNLISTEN ${quoteChannel(channel)}`).catch(() => undefined)
        }
      }
    },
    close: async () => {
      await session.pool.end().catch(() => undefined)
      await server.stop(stopTimeoutMs)
    }
  }
  server.onUnexpectedExit((reason) => {
    session.failure = new DatabaseUnavailable({
      target: display,
      message: `the PGlite server process (pid ${server.pid}) of ${display} ${reason}; restart the service`
    })
  })
  // The session is one PostgreSQL backend: it receives the notifications of every channel it
  // listens to, in the output of whichever statement runs when they are delivered, so every
  // client forwards them.
  class SocketClient extends Pg.Client {
    constructor(config?: string | Pg.ClientConfig) {
      super(config)
      this.on("notification", (n: Pg.Notification) => listeners.get(n.channel)?.forEach((f) => f(n.payload ?? "")))
    }
  }
  session.pool = makePool(echoing(SocketClient, session), acquireTimeout, {
    host: server.socketDir,
    port: server.port,
    user: "postgres",
    database: "postgres"
  })
  session.pool.on("connect", () => {
    session.currentPath = undefined
  })
  return session
}
