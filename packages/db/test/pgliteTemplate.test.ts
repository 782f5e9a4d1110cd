import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { openPglite } from "../src/internal/pgliteOpen.js"
import { templatePath } from "../src/internal/pgliteTemplate.js"

// A new cluster loaded from the kept template instead of initdb (PGLITE_TEMPLATE_CACHE).
describe("the PGlite template cluster", () => {
  const withCache = async <A>(f: (cacheDir: string) => Promise<A>, mode = 0o700): Promise<A> => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "rec-db-template-"))
    const cacheDir = path.join(root, "cache")
    fs.mkdirSync(cacheDir, { mode })
    fs.chmodSync(cacheDir, mode)
    const before = process.env["PGLITE_TEMPLATE_CACHE"]
    process.env["PGLITE_TEMPLATE_CACHE"] = cacheDir
    try {
      return await f(cacheDir)
    } finally {
      if (before === undefined) delete process.env["PGLITE_TEMPLATE_CACHE"]
      else process.env["PGLITE_TEMPLATE_CACHE"] = before
      fs.rmSync(root, { recursive: true, force: true })
    }
  }

  it("is kept by the first new database and loaded by the next, in memory and on disk", () =>
    withCache(async (cacheDir) => {
      const file = templatePath()!
      expect(path.dirname(file)).toBe(cacheDir)
      const first = await openPglite(undefined)
      expect(fs.statSync(file).size).toBeGreaterThan(1_000_000)
      expect(fs.statSync(file).mode & 0o777).toBe(0o600)

      // A template with a marker shows that the next databases come from it, not from initdb.
      await first.exec("CREATE TABLE from_template (v text); INSERT INTO from_template VALUES ('kept')")
      fs.writeFileSync(file, Buffer.from(await (await first.dumpDataDir("none")).arrayBuffer()))
      await first.close()

      const inMemory = await openPglite(undefined)
      expect((await inMemory.query("SELECT v FROM from_template")).rows).toEqual([{ v: "kept" }])
      await inMemory.close()

      const dataDir = path.join(cacheDir, "..", "on-disk", "db")
      const onDisk = await openPglite(dataDir)
      await onDisk.exec("INSERT INTO from_template VALUES ('written')")
      await onDisk.close()
      // Reopened, the directory is resumed (not loaded again), with what was written to it.
      const reopened = await openPglite(dataDir)
      expect((await reopened.query("SELECT v FROM from_template ORDER BY v")).rows).toEqual([{ v: "kept" }, { v: "written" }])
      await reopened.close()
    }), 120_000)

  it("is not used from a directory other users may write", () =>
    withCache(async () => {
      expect(templatePath()).toBeUndefined()
    }, 0o777))

  it("is dropped when PGlite cannot load it, and an in-memory database starts the ordinary way", () =>
    withCache(async () => {
      const file = templatePath()!
      fs.writeFileSync(file, "not a tarball")
      const db = await openPglite(undefined)
      expect((await db.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }])
      await db.close()
      expect(fs.existsSync(file)).toBe(false)
    }), 120_000)

  it("is off without PGLITE_TEMPLATE_CACHE", () => {
    expect(templatePath("")).toBeUndefined()
  })
})
