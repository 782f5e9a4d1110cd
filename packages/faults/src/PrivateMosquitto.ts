/**
 * A Mosquitto broker of the test's own (`mosquitto -c <temp config>` on a free port, with
 * `persistence true`), so a test can really restart the broker without touching the machine's
 * Mosquitto that other tests use. A stop is SIGTERM, on which Mosquitto writes its persistence
 * file (sessions, subscriptions, queued QoS 1 messages); a start loads it again.
 */
import { Duration, Effect } from "effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { awaitPort, freePort } from "./Processes.js"

const candidates = ["/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto", "/usr/bin/mosquitto"]

/** `MOSQUITTO_BIN`, else the Debian location. */
export const binary = (): string | undefined => {
  const configured = process.env["MOSQUITTO_BIN"]
  if (configured !== undefined && configured !== "") return configured
  return candidates.find((c) => fs.existsSync(c))
}

/** Why no private broker can be started, or `undefined`; throws under `REC_REQUIRE_SERVICES=1`. */
export const skipReason = (): string | undefined => {
  const reason = binary() === undefined ? "no mosquitto binary (set MOSQUITTO_BIN)" : undefined
  if (reason !== undefined && process.env["REC_REQUIRE_SERVICES"] === "1") throw new Error(`${reason} (REC_REQUIRE_SERVICES=1)`)
  return reason
}

export interface PrivateMosquitto {
  readonly port: number
  /** SIGTERM and wait for the process to exit (the persistence file is written). */
  readonly stop: Effect.Effect<void>
  /** Starts the broker again on the same port, with the same persistence directory. */
  readonly start: Effect.Effect<void, Error>
}

export const make = Effect.gen(function*() {
  const bin = binary()
  if (bin === undefined) return yield* Effect.fail(new Error("no mosquitto binary"))
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "rec-faults-mosquitto-"))),
    (created) => Effect.sync(() => fs.rmSync(created, { recursive: true, force: true }))
  )
  const port = yield* freePort
  const config = path.join(dir, "mosquitto.conf")
  fs.writeFileSync(
    config,
    [
      `listener ${port} 127.0.0.1`,
      "allow_anonymous true",
      "persistence true",
      `persistence_location ${dir}/`,
      // As root Mosquitto would switch to the mosquitto user, which cannot write the temp dir.
      ...(process.getuid?.() === 0 ? ["user root"] : []),
      "max_queued_messages 100000",
      "log_dest none",
      ""
    ].join("\n")
  )
  let child: childProcess.ChildProcess | undefined
  const stop = Effect.async<void>((resume) => {
    const running = child
    child = undefined
    if (running === undefined || running.exitCode !== null) return resume(Effect.void)
    running.once("exit", () => resume(Effect.void))
    running.kill("SIGTERM")
  })
  const start = Effect.gen(function*() {
    if (child !== undefined) return
    const spawned = childProcess.spawn(bin, ["-c", config], { stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    spawned.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    child = spawned
    yield* awaitPort(port, Duration.seconds(15)).pipe(
      Effect.mapError((e) => new Error(`${e.message}; mosquitto said: ${stderr.trim()}`))
    )
  })
  yield* Effect.acquireRelease(start, () => stop)
  return { port, stop, start } satisfies PrivateMosquitto
})
