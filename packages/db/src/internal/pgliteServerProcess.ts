/**
 * Starting and stopping the PGlite server process (`bin/pgliteServer.ts`) of one data
 * directory, from the service's side.
 */
import { type ChildProcess, fork } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { PgliteDirectoryLocked } from "../Errors.js"

export interface ServerProcess {
  readonly pid: number
  /** node-postgres `host` (the socket's directory) and `port`. */
  readonly socketDir: string
  readonly port: number
  /** Why the process is gone, once it is (it should live as long as the session). */
  readonly exitReason: () => string | undefined
  /** Called once when the process exits without being asked to. */
  readonly onUnexpectedExit: (listener: (reason: string) => void) => void
  /** Asks it to close PGlite (flushing the directory) and waits; kills it after `timeoutMs`. */
  readonly stop: (timeoutMs: number) => Promise<void>
}

/**
 * The compiled server script. From `dist/internal/` it is `dist/bin/`; tests run this module
 * from `src/` (the workspace aliases), where only the compiled copy can be run by plain Node.
 */
export const serverScript = (): string => {
  const here = fileURLToPath(import.meta.url)
  return path.resolve(path.dirname(here), here.endsWith(".ts") ? "../../dist/bin/pgliteServer.js" : "../bin/pgliteServer.js")
}

type Report =
  | { readonly type: "ready"; readonly socketDir: string; readonly port: number }
  | { readonly type: "held"; readonly pid: number; readonly message: string }
  | { readonly type: "failed"; readonly message: string }

const describeExit = (code: number | null, signal: NodeJS.Signals | null): string =>
  signal !== null ? `killed by ${signal}` : `exited with code ${code ?? "?"}`

/**
 * Starts the server process on `dataDir` and resolves when it serves; rejects with
 * `PgliteDirectoryLocked` when another process holds the directory, and with an `Error`
 * naming the cause for anything else (PGlite could not open the files, the process died).
 */
export const start = (dataDir: string, readyTimeoutMs: number): Promise<ServerProcess> =>
  new Promise((resolve, reject) => {
    let child: ChildProcess
    try {
      child = fork(serverScript(), [dataDir], {
        // Own process group: Ctrl-C in a terminal reaches the service, which drains its requests
        // and then stops this process, instead of both at once.
        detached: true,
        stdio: ["ignore", "inherit", "inherit", "ipc"],
        // Not the service's flags (--inspect, --cpu-prof, a heap limit sized for the service).
        execArgv: [],
        env: process.env
      })
    } catch (e) {
      return reject(e)
    }
    let settled = false
    let stopRequested = false
    let exitReason: string | undefined
    const unexpected: Array<(reason: string) => void> = []
    const exited = new Promise<void>((done) => {
      child.once("exit", (code, signal) => {
        exitReason = describeExit(code, signal)
        done()
        if (!settled) {
          settled = true
          clearTimeout(timer)
          reject(new Error(`the PGlite server process ${exitReason} before it was ready`))
        } else if (!stopRequested) {
          unexpected.forEach((listener) => listener(exitReason!))
        }
      })
    })
    const timer = setTimeout(() => {
      if (settled) return
      settled = true
      child.kill("SIGKILL")
      reject(new Error(`the PGlite server process was not ready within ${Math.round(readyTimeoutMs / 1000)} s`))
    }, readyTimeoutMs)
    child.once("error", (e) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      reject(e)
    })
    child.on("message", (message: Report) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (message.type === "ready") {
        // The service's exit must not wait for this process: it stops when the channel closes.
        child.unref()
        child.channel?.unref()
        // A server killed outright cannot remove its socket's directory; its parent does.
        void exited.then(() => fs.rmSync(message.socketDir, { recursive: true, force: true }))
        resolve({
          pid: child.pid!,
          socketDir: message.socketDir,
          port: message.port,
          exitReason: () => exitReason,
          onUnexpectedExit: (listener) => void unexpected.push(listener),
          stop: async (timeoutMs) => {
            if (exitReason !== undefined) return
            stopRequested = true
            if (child.connected) child.disconnect()
            else child.kill("SIGTERM")
            let killer: NodeJS.Timeout | undefined
            await Promise.race([
              exited,
              new Promise<void>((done) => {
                killer = setTimeout(() => {
                  child.kill("SIGKILL")
                  done()
                }, timeoutMs)
              })
            ])
            clearTimeout(killer)
          }
        })
      } else if (message.type === "held") {
        reject(new PgliteDirectoryLocked({ dataDir, pid: message.pid, message: message.message }))
      } else {
        // It closes PGlite and releases the directory itself, then exits.
        reject(new Error(message.message))
      }
    })
  })
