/**
 * The PGlite server process: opens PGlite on one data directory and serves it with the
 * PostgreSQL wire protocol (`@electric-sql/pglite-socket`) on a Unix socket, so that a service
 * reaches it through an ordinary node-postgres pool and PGlite's memory (WebAssembly code and a
 * heap that never shrinks) and its CPU stay out of the service's process.
 *
 *   node packages/db/dist/bin/pgliteServer.js <data dir>
 *
 * Started by `internal/pgliteServerProcess.ts` with an IPC channel, never by hand: it reports
 * `{ type: "ready", socketDir, port }`, `{ type: "held", pid, message }` (another process holds the
 * directory) or `{ type: "failed", message }` to its parent, and it closes PGlite (which
 * flushes the directory) and exits when the parent disconnects: on a clean stop, and also when
 * the parent dies, so the directory is never left to an orphan. SIGTERM and SIGINT close it the
 * same way. It imports no Effect: the process should cost PGlite's memory and little more.
 */
import type { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as dirLock from "../internal/dirLock.js"
import { openPglite } from "../internal/pgliteOpen.js"

/** node-postgres connects to `<host>/.s.PGSQL.<port>` when `host` is a directory. */
const socketPort = 5432

/**
 * The service's pool holds one connection at a time; a few more let a replacement connect
 * before the socket of a discarded one has closed. pglite-socket runs every connection's
 * messages in the one PGlite session, and keeps a transaction's statements together.
 */
const maxConnections = 4

type Report =
  | { readonly type: "ready"; readonly socketDir: string; readonly port: number }
  | { readonly type: "held"; readonly pid: number; readonly message: string }
  | { readonly type: "failed"; readonly message: string }

const report = (message: Report): Promise<void> =>
  new Promise((resolve) => {
    if (process.send === undefined || !process.connected) return resolve()
    process.send(message, undefined, {}, () => resolve())
  })

const main = async (dataDir: string): Promise<void> => {
  const lock = dirLock.acquire(dataDir)
  if (lock._tag === "Held") {
    await report({ type: "held", pid: lock.pid, message: lock.message })
    process.exit(1)
  }
  let db: PGlite | undefined
  let server: PGLiteSocketServer | undefined
  let socketDir: string | undefined
  let stopping: Promise<void> | undefined

  const stop = (code: number): Promise<void> =>
    (stopping ??= (async () => {
      await server?.stop().catch(() => undefined)
      // Closing PGlite writes its state to the directory; only then may another process open it.
      await db?.close().catch((e: unknown) => console.error(`pglite-server: closing ${dataDir} failed:`, e))
      lock.release()
      if (socketDir !== undefined) fs.rmSync(socketDir, { recursive: true, force: true })
      process.exit(code)
    })())

  // The parent disconnects to stop us, or because it is gone.
  process.on("disconnect", () => void stop(0))
  process.on("SIGTERM", () => void stop(0))
  process.on("SIGINT", () => void stop(0))

  try {
    db = await openPglite(dataDir)
    // A private directory (mode 0700) keeps other users of the machine off the socket: PGlite
    // has no authentication. It is short, so the socket path stays under the 107-byte limit.
    socketDir = fs.mkdtempSync(path.join(os.tmpdir(), "rec-pglite-"))
    server = new PGLiteSocketServer({ db, path: path.join(socketDir, `.s.PGSQL.${socketPort}`), maxConnections })
    await server.start()
  } catch (e) {
    await report({ type: "failed", message: e instanceof Error ? e.message : String(e) })
    await stop(1)
    return
  }
  if (!process.connected) return stop(0)
  await report({ type: "ready", socketDir, port: socketPort })
}

const dataDir = process.argv[2]
if (dataDir === undefined || process.send === undefined) {
  console.error("usage: started by @rec/db with an IPC channel: pgliteServer.js <data dir>")
  process.exit(2)
}
void main(dataDir)
