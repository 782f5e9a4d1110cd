/**
 * Opening a PGlite instance, the same way wherever it runs (inside the service's process or in
 * the PGlite server process of `pgliteServer.ts`): `vector` loaded, small `shared_buffers`.
 */
import { PGlite } from "@electric-sql/pglite"
import { vector } from "@electric-sql/pglite-pgvector"
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * PostgreSQL's 128 MB default buffer pool lives in PGlite's WebAssembly memory, which never
 * shrinks: one embedded session serving a development platform needs far less (its data is small
 * and the OS page cache still holds the files). `PGLITE_SHARED_BUFFERS` overrides it.
 */
const sharedBuffers = (): string => {
  const value = process.env["PGLITE_SHARED_BUFFERS"]?.trim()
  return value !== undefined && /^\d+(kB|MB|GB)?$/.test(value) ? value : "32MB"
}

/** Opens PGlite on `dataDir` (created with its parents if missing), or in memory. */
export const openPglite = (dataDir: string | undefined): Promise<PGlite> => {
  // PGlite creates the directory itself but not its parents.
  if (dataDir !== undefined) fs.mkdirSync(path.dirname(path.resolve(dataDir)), { recursive: true })
  return PGlite.create(dataDir === undefined ? "memory://" : path.resolve(dataDir), {
    extensions: { vector },
    startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${sharedBuffers()}`]
  })
}
