/**
 * A small process supervisor for the end-to-end tests: starts each component as its own OS
 * process (as an operator would: `node <main.js>` with environment variables only), waits for
 * its readiness URL, keeps its output, stops everything on teardown (SIGTERM, then SIGKILL), and
 * prints the output of a process that died while it was supposed to run.
 */
import { type ChildProcess, spawn } from "node:child_process"

export interface ProcessSpec {
  /** Unique name, used in messages and to find the logs (`nudging#2`). */
  readonly name: string
  /** The script run with the current `node`. */
  readonly script: string
  readonly env: Readonly<Record<string, string>>
  /** Polled until it answers 200 (any other status or a connection error: not ready yet). */
  readonly readyUrl: string
  readonly cwd: string
}

export interface Managed {
  readonly spec: ProcessSpec
  readonly child: ChildProcess
  /** stdout and stderr lines, in arrival order. */
  readonly lines: Array<string>
  exit: { readonly code: number | null; readonly signal: NodeJS.Signals | null } | undefined
  /** How long it took to become ready (from the wait's start). */
  readyAfterMs?: number
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** The last lines of a process's output, for failure messages. */
export const tail = (managed: Managed, count = 60): string =>
  managed.lines.slice(-count).map((line) => `  [${managed.spec.name}] ${line}`).join("\n")

export class Supervisor {
  readonly processes: Array<Managed> = []
  private stopping = false

  /** Starts a process; it inherits nothing from the test's environment but `PATH`. */
  start(spec: ProcessSpec): Managed {
    const child = spawn(process.execPath, [spec.script], {
      cwd: spec.cwd,
      env: { PATH: process.env["PATH"] ?? "", ...spec.env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const managed: Managed = { spec, child, lines: [], exit: undefined }
    const collect = (stream: NodeJS.ReadableStream) => {
      let rest = ""
      stream.setEncoding("utf8")
      stream.on("data", (chunk: string) => {
        const parts = (rest + chunk).split("\n")
        rest = parts.pop() ?? ""
        managed.lines.push(...parts)
      })
      stream.on("end", () => {
        if (rest !== "") managed.lines.push(rest)
      })
    }
    collect(child.stdout!)
    collect(child.stderr!)
    child.on("exit", (code, signal) => {
      managed.exit = { code, signal }
      if (!this.stopping) {
        process.stderr.write(`\n${spec.name} exited unexpectedly (code ${code}, signal ${signal}); its output:\n${tail(managed, 200)}\n`)
      }
    })
    this.processes.push(managed)
    return managed
  }

  /** Waits until the process answers 200 on its readiness URL; fails with its output if it died or took too long. */
  async waitReady(managed: Managed, timeoutMs = 90_000): Promise<void> {
    const started = Date.now()
    const deadline = started + timeoutMs
    let last = "no answer yet"
    while (Date.now() < deadline) {
      if (managed.exit !== undefined) {
        throw new Error(`${managed.spec.name} exited before it was ready (code ${managed.exit.code}):\n${tail(managed)}`)
      }
      try {
        const response = await fetch(managed.spec.readyUrl, { signal: AbortSignal.timeout(5_000) })
        if (response.status === 200) {
          managed.readyAfterMs = Date.now() - started
          return
        }
        last = `${response.status} ${(await response.text()).slice(0, 300)}`
      } catch (error) {
        last = error instanceof Error ? error.message : String(error)
      }
      await sleep(250)
    }
    throw new Error(`${managed.spec.name} not ready at ${managed.spec.readyUrl} within ${timeoutMs} ms (last: ${last}):\n${tail(managed)}`)
  }

  /** Starts several processes at once and waits until every one is ready. */
  async startAll(specs: ReadonlyArray<ProcessSpec>, timeoutMs = 180_000): Promise<Array<Managed>> {
    const started = specs.map((spec) => this.start(spec))
    await Promise.all(started.map((managed) => this.waitReady(managed, timeoutMs)))
    return started
  }

  /** Processes that exited (before `stopAll`: the ones that died while they should run). */
  exited(): Array<Managed> {
    return this.processes.filter((p) => p.exit !== undefined)
  }

  /** The output lines of the processes whose name starts with `prefix`, by process name. */
  logsOf(prefix: string): Map<string, Array<string>> {
    return new Map(this.processes.filter((p) => p.spec.name.startsWith(prefix)).map((p) => [p.spec.name, p.lines]))
  }

  /** SIGTERM to every process (in reverse start order), SIGKILL to those still alive after `graceMs`. */
  async stopAll(graceMs = 5_000): Promise<void> {
    this.stopping = true
    const alive = this.processes.filter((p) => p.exit === undefined).reverse()
    const exited = alive.map((p) =>
      new Promise<void>((resolve) => {
        if (p.exit !== undefined) return resolve()
        p.child.once("exit", () => resolve())
      })
    )
    for (const p of alive) p.child.kill("SIGTERM")
    const timer = setTimeout(() => {
      for (const p of alive) if (p.exit === undefined) p.child.kill("SIGKILL")
    }, graceMs)
    await Promise.all(exited)
    clearTimeout(timer)
  }
}
