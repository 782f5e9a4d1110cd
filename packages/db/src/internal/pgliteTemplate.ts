/**
 * A freshly initialized PGlite cluster kept as a tarball, so that a new database (in memory, or
 * an empty data directory) is loaded from it instead of running `initdb` again: in WebAssembly
 * `initdb` takes seconds, loading the tarball a fraction of that. A test suite opens dozens of
 * fresh databases; a service opens one, so only `PGLITE_TEMPLATE_CACHE` turns this on (the test
 * runner sets it).
 *
 * The tarball is keyed by PGlite's version and lives in a directory only this user may write
 * (mode 0700, owned by us): a cluster loaded from a file somebody else planted would be theirs.
 * Anything unusual (a shared directory, an unreadable or half-written file) means no template:
 * the database is initialized the ordinary way.
 */
import type { PGlite } from "@electric-sql/pglite"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"

const pgliteVersion = (): string | undefined => {
  try {
    const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite")
    // .../@electric-sql/pglite/dist/index.cjs: the package's own package.json is one level up.
    const manifest = JSON.parse(fs.readFileSync(path.join(path.dirname(entry), "..", "package.json"), "utf8")) as {
      readonly name?: unknown
      readonly version?: unknown
    }
    return manifest.name === "@electric-sql/pglite" && typeof manifest.version === "string" ? manifest.version : undefined
  } catch {
    return undefined
  }
}

const isPrivateDirectory = (dir: string): boolean => {
  try {
    const stat = fs.lstatSync(dir)
    const uid = process.getuid?.()
    return stat.isDirectory() && (stat.mode & 0o077) === 0 && (uid === undefined || stat.uid === uid)
  } catch {
    return false
  }
}

/** Where the template of this PGlite version is kept, or `undefined` when there is no usable cache. */
export const templatePath = (cacheDir: string | undefined = process.env["PGLITE_TEMPLATE_CACHE"]): string | undefined => {
  if (cacheDir === undefined || cacheDir.trim() === "") return undefined
  const version = pgliteVersion()
  if (version === undefined) return undefined
  const dir = path.resolve(cacheDir)
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  } catch {
    return undefined
  }
  return isPrivateDirectory(dir) ? path.join(dir, `pglite-${version}.tar`) : undefined
}

/** The template's bytes, when one was kept. */
export const readTemplate = (file: string): Blob | undefined => {
  try {
    return new Blob([fs.readFileSync(file)])
  } catch {
    return undefined
  }
}

/**
 * Keeps `db` (just initialized, nothing written to it yet) as the template. Written under a
 * temporary name and renamed, so that processes opening databases at the same time see either
 * no template or a whole one; a failure only means the next database runs `initdb` too.
 */
export const keepTemplate = async (db: PGlite, file: string): Promise<void> => {
  const partial = `${file}.${process.pid}.${Date.now()}.partial`
  try {
    const tarball = await db.dumpDataDir("none")
    fs.writeFileSync(partial, Buffer.from(await tarball.arrayBuffer()), { mode: 0o600 })
    fs.renameSync(partial, file)
  } catch {
    fs.rmSync(partial, { force: true })
  }
}
