/**
 * `npm start` as a newcomer meets it: the launcher as its own process (the compiled
 * `dist/main.js`, which `npm start` runs), stopped with Ctrl-C (SIGINT) or SIGTERM while clients
 * hold keep-alive HTTP connections and an MQTT session open. It must exit with code 0 in under
 * 3 seconds. And when the MQTT port is taken, its banner says how to fix that.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as Mqtt from "mqtt"

const here = Path.dirname(fileURLToPath(import.meta.url))
const main = Path.join(here, "..", "dist", "main.js")

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

/** The machine's environment without anything that configures the platform (a developer's HOST, ...). */
const machineEnvironment = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(([key]) =>
      !/^(HOST|PORT|PLATFORM_.*|DEV_IDP_.*|POLICY_.*|DIGITAL_TWIN_.*|DATABASE_.*|SMTP_.*|OTEL_.*|LOG_.*|.*_PORT)$/.test(key)
    )
  )

interface Ports {
  readonly idp: number
  readonly policy: number
  readonly twin: number
  readonly mqtt: number
  readonly mail: number
}

/** Starts the launcher and resolves once its banner is printed and the policy service answers. */
const launch = (ports: Ports) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const child = ChildProcess.spawn(process.execPath, [main], {
        env: {
          ...machineEnvironment(),
          DEV_IDP_PORT: String(ports.idp),
          POLICY_PORT: String(ports.policy),
          DIGITAL_TWIN_PORT: String(ports.twin),
          PLATFORM_MQTT_PORT: String(ports.mqtt),
          MAIL_CATCHER_PORT: String(ports.mail),
          // The foundation: `Platform.test.ts` stops the platform with every service.
          PLATFORM_SERVICES: "none",
          PLATFORM_DATA_DIR: Path.join(Os.tmpdir(), `rec-stop-test-${process.pid}`),
          LOG_LEVEL: "warn"
        },
        stdio: ["ignore", "pipe", "pipe"]
      })
      const output = { stdout: "", stderr: "" }
      child.stdout.on("data", (chunk: Buffer) => (output.stdout += chunk.toString()))
      child.stderr.on("data", (chunk: Buffer) => (output.stderr += chunk.toString()))
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
        child.on("exit", (code, signal) => resolve({ code, signal, at: Date.now() }))
      )
      const deadline = Date.now() + 30_000
      for (;;) {
        if (output.stdout.includes("is running")) {
          const health = await fetch(`http://127.0.0.1:${ports.policy}/health`).catch(() => undefined)
          if (health?.ok === true) break
        }
        if (child.exitCode !== null || Date.now() > deadline) {
          child.kill("SIGKILL")
          throw new Error(`the launcher did not start:\n${output.stdout}\n${output.stderr}`)
        }
        await new Promise((r) => setTimeout(r, 50))
      }
      return { child, output, exited }
    }),
    ({ child }) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
  )

/** A GET on a keep-alive connection that stays open after the answer. */
const keepAlive = (agent: Http.Agent, port: number, path: string) =>
  Effect.promise(() =>
    new Promise<number>((resolve, reject) => {
      Http.get({ host: "127.0.0.1", port, path, agent }, (res) => {
        res.resume()
        res.on("end", () => resolve(res.statusCode ?? 0))
      }).on("error", reject)
    })
  )

const stopsCleanly = (signal: NodeJS.Signals, options: { readonly mqttTaken: boolean }) =>
  Effect.gen(function*() {
    if (!Fs.existsSync(main)) {
      return yield* Effect.dieMessage(`${main} is missing: build first (pnpm build)`)
    }
    const [idp, policy, twin, mqtt, mail] = yield* Effect.promise(() => Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]))
    const ports: Ports = { idp, policy, twin, mqtt, mail }
    if (options.mqttTaken) {
      // Another broker on the MQTT port (a local Mosquitto, as on many newcomers' machines).
      yield* Effect.acquireRelease(
        Effect.async<net.Server>((resume) => {
          const server = net.createServer((socket) => socket.destroy())
          server.listen(mqtt, "127.0.0.1", () => resume(Effect.succeed(server)))
        }),
        (server) =>
          Effect.async<void>((resume) => {
            server.close(() => resume(Effect.void))
          })
      )
    }
    const { child, exited, output } = yield* launch(ports)

    // Clients that keep their connections open: HTTP keep-alive to every HTTP component...
    const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
    yield* Effect.addFinalizer(() => Effect.sync(() => agent.destroy()))
    expect(yield* keepAlive(agent, policy, "/health")).toBe(200)
    expect(yield* keepAlive(agent, twin, "/health")).toBe(200)
    expect(yield* keepAlive(agent, idp, "/health")).toBe(200)
    const open = Object.values(agent.sockets).flat().length + Object.values(agent.freeSockets).flat().length
    expect(open).toBe(3)
    // ...and an MQTT session, when the embedded broker runs.
    if (!options.mqttTaken) {
      const token = yield* Effect.promise(async () => {
        const response = await fetch(`http://127.0.0.1:${idp}/protocol/openid-connect/token`, {
          method: "POST",
          headers: { authorization: `Basic ${Buffer.from("rec-cli:dev-only-secret-rec-cli").toString("base64")}` },
          body: new URLSearchParams({ grant_type: "password", username: "viewer", password: "viewer" })
        })
        return ((await response.json()) as { access_token: string }).access_token
      })
      const client = yield* Effect.promise(() =>
        Mqtt.connectAsync(`mqtt://127.0.0.1:${mqtt}`, { username: "", password: token, reconnectPeriod: 0, keepalive: 60 })
      )
      yield* Effect.addFinalizer(() => Effect.promise(() => client.endAsync(true)))
      expect(client.connected).toBe(true)
    }

    const sentAt = Date.now()
    child.kill(signal)
    const exit = yield* Effect.promise(() => exited)
    const elapsed = exit.at - sentAt
    expect({ code: exit.code, signal: exit.signal, stderr: output.stderr }).toEqual({ code: 0, signal: null, stderr: "" })
    expect(elapsed).toBeLessThan(3000)
    return output.stdout
  }).pipe(Effect.scoped)

describe("stopping the platform", () => {
  it.live("Ctrl-C (SIGINT) stops it with code 0 in under 3 s; with the MQTT port taken the banner says how to fix it", () =>
    Effect.gen(function*() {
      const stdout = yield* stopsCleanly("SIGINT", { mqttTaken: true })
      expect(stdout).toContain("is already in use (a local Mosquitto?)")
      expect(stdout).toMatch(/PLATFORM_MQTT_PORT=\d+ npm start/)
      expect(stdout).toContain("PLATFORM_MQTT_HOST=localhost npm start")
    }), 60_000)

  it.live("SIGTERM stops it with code 0 in under 3 s while clients hold keep-alive and MQTT connections", () =>
    Effect.gen(function*() {
      const stdout = yield* stopsCleanly("SIGTERM", { mqttTaken: false })
      expect(stdout).toContain("REC platform (development) is running")
      expect(stdout).not.toContain("not started")
    }), 60_000)
})
