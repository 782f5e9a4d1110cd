/**
 * Small process and port helpers for the fault tests: a free port, a command run to completion,
 * waiting until a TCP port accepts connections.
 */
import { Duration, Effect } from "effect"
import * as childProcess from "node:child_process"
import * as net from "node:net"

/** A port nothing listens on (bound, read, released). */
export const freePort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as net.AddressInfo
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** Runs `command` to completion; fails with its stderr when it exits non-zero. */
export const run = (command: string, args: ReadonlyArray<string>, options: { readonly asUser?: string | undefined } = {}) =>
  Effect.async<string, Error>((resume) => {
    const [cmd, argv] = options.asUser === undefined
      ? [command, [...args]]
      : ["runuser", ["-u", options.asUser, "--", command, ...args]]
    childProcess.execFile(cmd, argv, { timeout: 60_000 }, (error, stdout, stderr) => {
      resume(
        error
          ? Effect.fail(new Error(`${command} ${args.join(" ")} failed: ${stderr.trim() || error.message}`))
          : Effect.succeed(stdout)
      )
    })
  })

/** Whether something accepts TCP connections on 127.0.0.1:`port` right now. */
export const accepts = (port: number) =>
  Effect.async<boolean>((resume) => {
    const socket = net.connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.succeed(true))
    })
    socket.once("error", () => {
      socket.destroy()
      resume(Effect.succeed(false))
    })
  })

/** Waits until 127.0.0.1:`port` accepts connections (fails after `timeout`). */
export const awaitPort = (port: number, timeout: Duration.DurationInput = Duration.seconds(15)) =>
  Effect.gen(function*() {
    const limit = Duration.decode(timeout)
    const deadline = Date.now() + Duration.toMillis(limit)
    while (Date.now() < deadline) {
      if (yield* accepts(port)) return
      yield* Effect.sleep(Duration.millis(50))
    }
    return yield* Effect.fail(new Error(`nothing accepts connections on 127.0.0.1:${port} after ${Duration.format(limit)}`))
  })
