import { describe, expect, it } from "@effect/vitest"
import { Duration } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { openOverSocket } from "../src/internal/pgliteSession.js"

// The session of a PGlite server process, below the per-service facade of `Database`.
describe("a PGlite session over the server's socket", () => {
  it("rolls back a transaction left open by a discarded client before the next client uses the session", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "rec-db-session-"))
    const dataDir = path.join(root, "db")
    const session = await openOverSocket(dataDir, Duration.seconds(10), `pglite://${dataDir}`)
    try {
      const client = await session.pool.connect()
      await client.query("BEGIN")
      await client.query("CREATE TABLE half_done (a int)")
      // What node-postgres does with a client whose query failed: it closes its socket.
      client.release(new Error("discarded"))

      const next = await session.pool.connect()
      try {
        const { rows } = await next.query<{ t: string | null }>("SELECT to_regclass('public.half_done')::text AS t")
        expect(rows).toEqual([{ t: null }])
        // Not inside the abandoned transaction: this one commits on its own.
        await next.query("CREATE TABLE done (a int)")
      } finally {
        next.release()
      }
      const { rows } = await session.pool.query<{ t: string | null }>("SELECT to_regclass('public.done')::text AS t")
      expect(rows).toEqual([{ t: "done" }])
    } finally {
      await session.close()
      fs.rmSync(root, { recursive: true, force: true })
    }
  }, 60_000)
})
