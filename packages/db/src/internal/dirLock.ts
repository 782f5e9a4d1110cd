/**
 * An exclusive, cross-process lock on a PGlite data directory. PGlite runs PostgreSQL inside the
 * process and has no postmaster lock of its own: two processes opening the same directory
 * corrupt it (the second one aborts inside the WASM module). The lock is a `<dir>.lock` file
 * beside the directory holding the owner's pid; a lock whose owner is gone is taken over.
 * Within one process, services share an open directory instead (see `pglite.ts`), so a lock
 * file naming this very process can only be a stale one from a previous process with the same pid.
 * The lock is taken by the process that runs PGlite: the service's own, or the PGlite server
 * process (`bin/pgliteServer.ts`), which is why this module imports nothing heavier than `node:`.
 */
import * as fs from "node:fs"
import * as path from "node:path"

const isAlive = (pid: number): boolean => {
  if (pid === process.pid) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

const readOwner = (lockPath: string): number | undefined => {
  try {
    const pid = Number(fs.readFileSync(lockPath, "utf8").trim())
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

const tryCreate = (lockPath: string): boolean => {
  try {
    fs.writeFileSync(lockPath, `${process.pid}\n`, { flag: "wx" })
    return true
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false
    throw e
  }
}

export const lockPath = (dataDir: string): string => `${path.resolve(dataDir)}.lock`

export type LockResult =
  | { readonly _tag: "Locked"; readonly release: () => void }
  | { readonly _tag: "Held"; readonly pid: number; readonly message: string }

/** Takes the lock, or says which live process holds it. */
export const acquire = (dataDir: string): LockResult => {
  const file = lockPath(dataDir)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const release = () => {
    if (readOwner(file) === process.pid) fs.rmSync(file, { force: true })
  }
  if (tryCreate(file)) return { _tag: "Locked", release }
  const owner = readOwner(file)
  if (owner !== undefined && isAlive(owner)) {
    return {
      _tag: "Held",
      pid: owner,
      message: `PGlite data directory ${dataDir} is in use by process ${owner}; stop it, or point DATABASE_URL elsewhere`
    }
  }
  // Stale lock (owner gone, or unreadable): replace it once. A concurrent starter may win the
  // race, in which case the second `tryCreate` fails and we report its pid.
  fs.rmSync(file, { force: true })
  if (tryCreate(file)) return { _tag: "Locked", release }
  const winner = readOwner(file) ?? 0
  return { _tag: "Held", pid: winner, message: `PGlite data directory ${dataDir} was just locked by process ${winner}` }
}
