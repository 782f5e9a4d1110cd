/**
 * Opening a PGlite instance, the same way wherever it runs (inside the service's process or in
 * the PGlite server process of `pgliteServer.ts`): `vector` loaded, small `shared_buffers`.
 */
import { PGlite } from "@electric-sql/pglite"
import { vector } from "@electric-sql/pglite-pgvector"
import * as fs from "node:fs"
import * as path from "node:path"
import { keepTemplate, readTemplate, templatePath } from "./pgliteTemplate.js"

/**
 * PostgreSQL's 128 MB default buffer pool lives in PGlite's WebAssembly memory, which never
 * shrinks: one embedded session serving a development platform needs far less (its data is small
 * and the OS page cache still holds the files). `PGLITE_SHARED_BUFFERS` overrides it.
 */
const sharedBuffers = (): string => {
  const value = process.env["PGLITE_SHARED_BUFFERS"]?.trim()
  return value !== undefined && /^\d+(kB|MB|GB)?$/.test(value) ? value : "32MB"
}

/**
 * Opens PGlite on `dataDir` (created with its parents if missing), or in memory. A new cluster
 * comes from the template of `PGLITE_TEMPLATE_CACHE` when there is one (`pgliteTemplate.ts`).
 */
export const openPglite = async (dataDir: string | undefined): Promise<PGlite> => {
  const target = dataDir === undefined ? undefined : path.resolve(dataDir)
  // PGlite creates the directory itself but not its parents.
  if (target !== undefined) fs.mkdirSync(path.dirname(target), { recursive: true })
  const isNew = target === undefined || !fs.existsSync(path.join(target, "PG_VERSION"))
  const template = isNew ? templatePath() : undefined
  const tarball = template === undefined ? undefined : readTemplate(template)
  const open = (loadDataDir: Blob | undefined) =>
    PGlite.create(target ?? "memory://", {
      extensions: { vector },
      startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${sharedBuffers()}`],
      ...(loadDataDir === undefined ? {} : { loadDataDir })
    })
  if (template === undefined) return open(undefined)
  if (tarball === undefined) {
    const db = await open(undefined)
    await keepTemplate(db, template)
    return db
  }
  return open(tarball).catch((cause: unknown) => {
    // A template PGlite cannot load is no template. In memory nothing was left behind, so the
    // ordinary way is tried at once; a directory may hold part of the tarball: the error stands.
    fs.rmSync(template, { force: true })
    if (target === undefined) return open(undefined)
    throw cause
  })
}
