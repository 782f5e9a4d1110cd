/**
 * A service as production runs it: `node <dist entry>` in its own process, configured by
 * environment variables only, on port 0 (the kernel picks a free one). The bound address is
 * read from the kit's start-up log line (`<name> <version> listening on http://host:port`), so
 * no port is guessed and none can collide with the platform's fixed ports.
 */
import * as ChildProcess from "node:child_process"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

export class ServiceStartError extends Data.TaggedError("ServiceStartError")<{
  readonly service: string
  readonly message: string
}> {}

export interface ServiceProcessOptions {
  readonly name: string
  /** Absolute path of the compiled entry point (`services/<name>/dist/main.js`). */
  readonly entry: string
  readonly env: Readonly<Record<string, string>>
  readonly cwd: string
  /** How long start-up may take (generous: CI machines are shared). */
  readonly startTimeout?: Duration.DurationInput | undefined
}

export interface RunningProcess {
  readonly name: string
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  /** The Swagger UI page the kit logged at start (`docs` of the listening line), if any. */
  readonly docsUrl: string | undefined
  /** From spawn to the listening line. */
  readonly startMillis: number
  readonly pid: number
  /** The last lines it wrote (stdout and stderr), for failure messages. */
  readonly output: () => string
}

const listening = /listening on (https?:\/\/[^\s"]+)/
const docsField = /"docs":"(https?:\/\/[^"]+)"/

/** 0.0.0.0 or :: in a logged address is not reachable as written. */
const reachable = (url: string) => url.replace("//0.0.0.0:", "//127.0.0.1:").replace("//[::]:", "//127.0.0.1:")

/** Keeps the last `max` lines of a process's output. */
const tail = (max: number) => {
  const lines: Array<string> = []
  let partial = ""
  return {
    push: (chunk: string) => {
      const parts = (partial + chunk).split("\n")
      partial = parts.pop() ?? ""
      for (const line of parts) {
        lines.push(line)
        if (lines.length > max) lines.shift()
      }
    },
    lines: () => [...lines, ...(partial === "" ? [] : [partial])],
    text: () => [...lines, partial].join("\n").trim()
  }
}

/** Stops the process: SIGTERM (the kit drains and exits), SIGKILL if it is still there after 10 s. */
const stop = (child: ChildProcess.ChildProcess): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000)
    child.once("exit", () => {
      clearTimeout(timer)
      resume(Effect.void)
    })
    child.kill("SIGTERM")
  })

/**
 * Starts the process and waits for its address; the process is stopped when the scope closes
 * (also when start-up fails or times out).
 */
export const start = (options: ServiceProcessOptions) =>
  Effect.gen(function*() {
    const output = tail(40)
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        ChildProcess.spawn(process.execPath, [options.entry], {
          cwd: options.cwd,
          env: options.env,
          stdio: ["ignore", "pipe", "pipe"]
        })
      ),
      stop
    )
    const started = Date.now()
    const line = yield* Effect.async<string, ServiceStartError>((resume) => {
      const failed = (message: string) =>
        resume(Effect.fail(new ServiceStartError({ service: options.name, message: `${message}\n${output.text()}` })))
      const onData = (chunk: Buffer) => {
        output.push(chunk.toString("utf8"))
        for (const line of output.lines()) {
          if (listening.test(line)) {
            cleanup()
            return resume(Effect.succeed(line))
          }
        }
      }
      const onExit = (code: number | null, signal: string | null) => {
        cleanup()
        failed(`${options.name} exited during start-up (code ${code}, signal ${signal})`)
      }
      const onError = (error: Error) => {
        cleanup()
        failed(`${options.name} could not be started: ${error.message}`)
      }
      let cleaned = false
      const cleanup = () => {
        if (cleaned) return
        cleaned = true
        child.stdout?.off("data", onData)
        child.stderr?.off("data", onData)
        child.off("exit", onExit)
        child.off("error", onError)
        // Keep reading, or a chatty service would block on a full pipe.
        child.stdout?.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")))
        child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")))
      }
      child.stdout?.on("data", onData)
      child.stderr?.on("data", onData)
      child.once("exit", onExit)
      child.once("error", onError)
      return Effect.sync(cleanup)
    }).pipe(
      Effect.timeoutFail({
        duration: options.startTimeout ?? Duration.minutes(3),
        onTimeout: () =>
          new ServiceStartError({
            service: options.name,
            message: `${options.name} did not report its address in time\n${output.text()}`
          })
      })
    )
    const startMillis = Date.now() - started
    const url = reachable(listening.exec(line)![1]!)
    const docs = docsField.exec(line)?.[1]
    return {
      name: options.name,
      url,
      docsUrl: docs === undefined ? undefined : reachable(docs),
      startMillis,
      pid: child.pid ?? -1,
      output: output.text
    } satisfies RunningProcess
  })
