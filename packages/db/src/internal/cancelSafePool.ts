/**
 * A node-postgres pool as `@effect/sql-pg` should see it, so that cancelling an interrupted
 * statement never stops another request's statement.
 *
 * sql-pg (0.53) cancels an interrupted statement with `SELECT pg_cancel_backend(<processID>)` on
 * another connection of the pool, while the interrupted statement's connection goes back to the
 * pool as soon as that statement ends, which can be before the cancel runs (it waits for a free
 * connection): the cancel then stops whatever the connection runs next, some other request's
 * statement (seen as "canceling statement due to user request" under load; Effect-TS/effect#8068).
 *
 * Here every lease of a connection is shown to sql-pg under a number of its own (negative, so
 * never a real process id) instead of the backend's process id. A cancel of a lease that has
 * ended is dropped (its statement is over); a cancel of a live lease is sent to the backend, and
 * that connection is closed when the lease ends instead of being reused, since the cancel's
 * signal may reach the backend after its statement ended.
 */
import type * as Pg from "pg"

interface Lease {
  readonly client: Pg.PoolClient
  active: boolean
  cancelSent: boolean
}

const cancelStatement = /^SELECT pg_cancel_backend\((-\d+)\)$/

export const cancelSafePool = (pool: Pg.Pool): Pg.Pool => {
  const leases = new Map<number, Lease>()
  let lastId = 0

  const leaseOf = (client: Pg.PoolClient): Pg.PoolClient => {
    const id = --lastId
    const lease: Lease = { client, active: true, cancelSent: false }
    leases.set(id, lease)
    const release = (error?: Error | boolean) => {
      if (lease.active) {
        lease.active = false
        leases.delete(id)
      }
      client.release(
        error !== undefined && error !== false
          ? error
          : lease.cancelSent
          ? new Error("closed rather than reused: a cancel was sent to its backend")
          : undefined
      )
    }
    return new Proxy(client, {
      get(target, property) {
        // An in-process PGlite connection has no process id: sql-pg sends no cancel for it.
        if (property === "processID") return (target as { processID?: number }).processID === undefined ? undefined : id
        if (property === "release") return release
        const value: unknown = Reflect.get(target, property, target)
        return typeof value === "function" ? value.bind(target) : value
      }
    })
  }

  const cancel = (id: number, callback: (error: Error | null, result?: unknown) => void) => {
    const lease = leases.get(id)
    const pid = lease === undefined ? undefined : (lease.client as { processID?: number }).processID
    if (lease === undefined || !lease.active || pid === undefined) return callback(null, { rows: [] })
    lease.cancelSent = true
    pool.query(`SELECT pg_cancel_backend(${pid})`, (error: Error | null, result: unknown) => callback(error, result))
  }

  const connect = (callback?: (error: Error | undefined, client: Pg.PoolClient | undefined, done: (release?: unknown) => void) => void) => {
    if (callback === undefined) return pool.connect().then(leaseOf)
    pool.connect((error, client) => {
      if (error !== undefined && error !== null || client === undefined) {
        return callback(error ?? undefined, undefined, () => undefined)
      }
      const leased = leaseOf(client)
      callback(undefined, leased, (release?: unknown) => leased.release(release as Error | undefined))
    })
  }

  const query = (...args: Array<unknown>) => {
    const [text, callback] = args
    const match = typeof text === "string" && typeof callback === "function" ? cancelStatement.exec(text) : null
    if (match !== null) return cancel(Number(match[1]), callback as (error: Error | null, result?: unknown) => void)
    return (pool.query as (...a: Array<unknown>) => unknown)(...args)
  }

  return new Proxy(pool, {
    get(target, property) {
      if (property === "connect") return connect
      if (property === "query") return query
      const value: unknown = Reflect.get(target, property, target)
      return typeof value === "function" ? value.bind(target) : value
    }
  })
}
