/**
 * An exclusive lock on a PGlite data directory. PGlite runs PostgreSQL inside the process and
 * has no postmaster lock of its own: two processes opening the same directory corrupt it (the
 * second one aborts inside the WASM module). The lock is a `<dir>.lock` file beside the
 * directory holding the owner's pid; a lock left by a dead process is taken over.
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { PgliteDirectoryLocked } from "../Errors.js"

const isAlive = (pid: number): boolean => {
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

/** Acquires the lock for `dataDir` in the current scope; releasing deletes the lock file. */
export const acquire = (dataDir: string): Effect.Effect<void, PgliteDirectoryLocked, import("effect/Scope").Scope> => {
  const lockPath = `${path.resolve(dataDir)}.lock`
  const take = Effect.suspend((): Effect.Effect<void, PgliteDirectoryLocked> => {
    fs.mkdirSync(path.dirname(lockPath), { recursive: true })
    if (tryCreate(lockPath)) return Effect.void
    const owner = readOwner(lockPath)
    if (owner !== undefined && isAlive(owner)) {
      return Effect.fail(
        new PgliteDirectoryLocked({
          dataDir,
          pid: owner,
          message:
            owner === process.pid
              ? `PGlite data directory ${dataDir} is already open in this process`
              : `PGlite data directory ${dataDir} is in use by process ${owner}; stop it, or point DATABASE_URL elsewhere`
        })
      )
    }
    // Stale lock (dead owner or unreadable file): replace it once. A concurrent starter may win
    // the race, in which case the second `tryCreate` fails and we report its pid.
    fs.rmSync(lockPath, { force: true })
    if (tryCreate(lockPath)) return Effect.void
    const winner = readOwner(lockPath) ?? 0
    return Effect.fail(
      new PgliteDirectoryLocked({
        dataDir,
        pid: winner,
        message: `PGlite data directory ${dataDir} was just locked by process ${winner}`
      })
    )
  })
  const release = Effect.sync(() => {
    if (readOwner(lockPath) === process.pid) fs.rmSync(lockPath, { force: true })
  })
  return Effect.acquireRelease(take, () => release)
}
