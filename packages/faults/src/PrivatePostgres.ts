/**
 * A PostgreSQL cluster of the test's own (`initdb` + `pg_ctl` in a temporary directory, on a
 * free port), so a test can really stop and start PostgreSQL without touching the machine's
 * server that other tests use. As root the binaries run as the `postgres` user (PostgreSQL
 * refuses to run as root).
 */
import { Duration, Effect } from "effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { awaitPort, freePort, run } from "./Processes.js"

/** `PG_BIN_DIR`, else the newest `/usr/lib/postgresql/<major>/bin` that has `initdb`. */
export const binDir = (): string | undefined => {
  const configured = process.env["PG_BIN_DIR"]
  if (configured !== undefined && configured !== "") return configured
  const root = "/usr/lib/postgresql"
  if (!fs.existsSync(root)) return undefined
  const majors = fs.readdirSync(root).filter((d) => /^\d+$/.test(d)).sort((a, b) => Number(b) - Number(a))
  return majors.map((m) => path.join(root, m, "bin")).find((d) => fs.existsSync(path.join(d, "initdb")))
}

const runAsUser = (): string | undefined => (process.getuid?.() === 0 ? "postgres" : undefined)

/**
 * Why a private cluster cannot be made here, or `undefined`. Throws instead under
 * `REC_REQUIRE_SERVICES=1` (CI), where a missing PostgreSQL installation is a failure.
 */
export const skipReason = (): string | undefined => {
  const dir = binDir()
  const reason = dir === undefined
    ? "no PostgreSQL binaries (initdb, pg_ctl) under /usr/lib/postgresql and PG_BIN_DIR is not set"
    : undefined
  if (reason !== undefined && process.env["REC_REQUIRE_SERVICES"] === "1") throw new Error(`${reason} (REC_REQUIRE_SERVICES=1)`)
  return reason
}

export interface PrivatePostgres {
  readonly port: number
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  readonly url: string
  /** `pg_ctl stop -m fast`: every session is terminated (57P01), new connections are refused. */
  readonly stop: Effect.Effect<void, Error>
  /** `pg_ctl start -w`: back, accepting connections. */
  readonly start: Effect.Effect<void, Error>
}

/** Makes, starts and (with the scope) stops and deletes a cluster. */
export const make = Effect.gen(function*() {
  const bin = binDir()
  if (bin === undefined) return yield* Effect.fail(new Error("no PostgreSQL binaries"))
  const user = runAsUser()
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const created = fs.mkdtempSync(path.join(os.tmpdir(), "rec-faults-pg-"))
      if (user !== undefined) fs.chownSync(created, userId(user), groupId(user))
      return created
    }),
    (created) => Effect.sync(() => fs.rmSync(created, { recursive: true, force: true }))
  )
  const data = path.join(dir, "data")
  const port = yield* freePort
  const pgCtl = path.join(bin, "pg_ctl")
  yield* run(path.join(bin, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"], { asUser: user })
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`
  const start = run(pgCtl, ["-D", data, "-o", options, "-l", path.join(dir, "log"), "-w", "-t", "30", "start"], { asUser: user }).pipe(
    Effect.zipRight(awaitPort(port, Duration.seconds(30)))
  )
  const stop = run(pgCtl, ["-D", data, "-m", "fast", "-w", "-t", "30", "stop"], { asUser: user }).pipe(Effect.asVoid)
  yield* Effect.acquireRelease(start, () => Effect.ignore(run(pgCtl, ["-D", data, "-m", "immediate", "-w", "stop"], { asUser: user })))
  return { port, url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop, start } satisfies PrivatePostgres
})

/** The numeric id of a system user or its group (`id -u` / `id -g`). */
const idOf = (flag: "-u" | "-g", user: string): number =>
  Number(childProcess.execFileSync("id", [flag, user], { encoding: "utf8" }).trim())
const userId = (user: string) => idOf("-u", user)
const groupId = (user: string) => idOf("-g", user)
