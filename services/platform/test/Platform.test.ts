/**
 * `npm start` with every service, as its own process (the built `dist/main.js`) on free ports and
 * a temporary data directory, started twice on the same directory:
 *
 * - every service answers GET /ready with 200;
 * - the demo data is there and readable with dev tokens: the registry's community and its
 *   members (imported from the example bundle), the DSO operator's alert rules (grid gateway),
 *   the assistant's training materials;
 * - the second start reuses the data: the same rows, no duplicates;
 * - `npm run demo`'s pipelines (`Demo.run`) make notifications, points and alert e-mails appear;
 * - SIGTERM stops it with code 0, nothing on stderr, and the PGlite lock released.
 *
 * Timing limits are generous (the machine is shared with other builds); the startup figures are
 * `bench/platform/startup.mjs`'s (docs/performance.md).
 */
import { describe, expect, it } from "@effect/vitest"
import { Config, Demo } from "@rec/launcher"
import { ConfigProvider, Effect } from "effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const here = Path.dirname(fileURLToPath(import.meta.url))
const main = Path.join(here, "..", "dist", "main.js")

const isFree = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = net.createServer()
    server.once("error", () => resolve(false))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
  })

const chosen = new Set<number>()

/**
 * A free port below Linux's ephemeral range (32768-60999): a port the kernel hands out (port 0)
 * may be taken by one of the platform's own outgoing connections before the service binds it.
 */
const freePort = async (): Promise<number> => {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    if (!chosen.has(port) && (await isFree(port))) {
      chosen.add(port)
      return port
    }
  }
}

/** The machine's environment without anything that configures the platform (Vitest sets `BASE_URL=/`). */
const machineEnvironment = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(([key]) =>
      !/^(HOST|PORT|PLATFORM_.*|DEV_IDP_.*|POLICY_.*|DIGITAL_TWIN_.*|DATABASE_.*|SMTP_.*|OTEL_.*|LOG_.*|.*_PORT|BASE_URL)$/.test(key)
    )
  )

const portNames = [
  "DEV_IDP_PORT",
  "POLICY_PORT",
  "DIGITAL_TWIN_PORT",
  "PLATFORM_MQTT_PORT",
  "REGISTRY_PORT",
  "ASSISTANT_PORT",
  "PARTICIPANT_GATEWAY_PORT",
  "GRID_GATEWAY_PORT",
  "NUDGING_PORT",
  "FLEXIBILITY_PORT",
  "MAIL_CATCHER_PORT"
] as const
type Ports = Record<(typeof portNames)[number], number>

/** The services with a /ready endpoint (the identity provider has /health). */
const readyPorts = (ports: Ports) => [
  ports.POLICY_PORT,
  ports.DIGITAL_TWIN_PORT,
  ports.REGISTRY_PORT,
  ports.ASSISTANT_PORT,
  ports.PARTICIPANT_GATEWAY_PORT,
  ports.GRID_GATEWAY_PORT,
  ports.NUDGING_PORT,
  ports.FLEXIBILITY_PORT
]

const statusOf = (url: string): Promise<number> =>
  fetch(url).then(async (r) => {
    await r.arrayBuffer()
    return r.status
  }, () => 0)

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const environment = (ports: Ports, dataDir: string): Record<string, string> => ({
  ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
  PLATFORM_DATA_DIR: dataDir,
  // Info: the flexibility service's settlement lines explain a failing demo assertion.
  LOG_LEVEL: "info"
})

/** Starts the launcher; resolves once the banner is printed and every service is ready. */
const start = async (ports: Ports, dataDir: string) => {
  const child = ChildProcess.spawn(process.execPath, [main], {
    env: { ...machineEnvironment(), ...environment(ports, dataDir) },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const output = { stdout: "", stderr: "" }
  child.stdout.on("data", (chunk: Buffer) => (output.stdout += chunk.toString()))
  child.stderr.on("data", (chunk: Buffer) => (output.stderr += chunk.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal, at: Date.now() }))
  )
  const deadline = Date.now() + 150_000
  for (;;) {
    if (output.stdout.includes("is running")) {
      const statuses = await Promise.all(readyPorts(ports).map((p) => statusOf(`http://127.0.0.1:${p}/ready`)))
      if (statuses.every((s) => s === 200)) break
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL")
      throw new Error(`the platform did not start:\n${output.stdout}\n${output.stderr}`)
    }
    await sleep(200)
  }
  const stop = async () => {
    const sentAt = Date.now()
    child.kill("SIGTERM")
    const exit = await exited
    return { ...exit, elapsed: exit.at - sentAt }
  }
  return { child, output, stop }
}

const token = async (idpPort: number, username: string): Promise<string> => {
  const response = await fetch(`http://127.0.0.1:${idpPort}/protocol/openid-connect/token`, {
    method: "POST",
    headers: { authorization: `Basic ${Buffer.from("rec-cli:dev-only-secret-rec-cli").toString("base64")}` },
    body: new URLSearchParams({ grant_type: "password", username, password: username })
  })
  return ((await response.json()) as { access_token: string }).access_token
}

const getJson = async <A>(url: string, bearer: string): Promise<{ status: number; body: A }> => {
  const response = await fetch(url, { headers: { authorization: `Bearer ${bearer}` } })
  return { status: response.status, body: (await response.json()) as A }
}

/** What the demo data looks like from outside, read with dev tokens. */
const seededData = async (ports: Ports) => {
  const [participant, operator] = await Promise.all([token(ports.DEV_IDP_PORT, "participant"), token(ports.DEV_IDP_PORT, "dso-operator")])
  const community = await getJson<{ key: string; name: string }>(
    `http://127.0.0.1:${ports.REGISTRY_PORT}/user/communities/it-energy-community`,
    participant
  )
  const members = await getJson<{ items: ReadonlyArray<{ id: string; user_id: string }> }>(
    `http://127.0.0.1:${ports.REGISTRY_PORT}/user/communities/it-energy-community/members`,
    participant
  )
  const rules = await getJson<ReadonlyArray<{ id: string; network_id: string; threshold: string }>>(
    `http://127.0.0.1:${ports.GRID_GATEWAY_PORT}/api/alert-rules`,
    operator
  )
  const settings = await getJson<{ email_recipients: ReadonlyArray<string> | null }>(
    `http://127.0.0.1:${ports.GRID_GATEWAY_PORT}/api/notification-settings`,
    operator
  )
  // The training sync runs in the background after the assistant starts.
  const training = async () =>
    getJson<{ items: ReadonlyArray<{ filename: string }>; total: number }>(
      `http://127.0.0.1:${ports.ASSISTANT_PORT}/attachments?scope=shared`,
      participant
    )
  let materials = await training()
  for (let i = 0; i < 60 && materials.body.total < 5; i++) {
    await sleep(500)
    materials = await training()
  }
  return {
    community: { status: community.status, key: community.body.key },
    members: { status: members.status, users: members.body.items.map((m) => m.user_id).sort() },
    rules: { status: rules.status, rows: rules.body.map((r) => `${r.id}:${r.network_id}:${r.threshold}`).sort() },
    recipients: settings.body.email_recipients,
    training: { status: materials.status, files: materials.body.items.map((a) => a.filename).sort() }
  }
}

/** `participant` of dev/identities.yaml. */
const participantSub = "52409e36-6d23-45ed-bb1e-d6c564a2f454"

describe("npm start with every service", () => {
  it.live("starts every service with the demo data, stops with code 0, and a second start on the same data adds nothing", () =>
    Effect.promise(async () => {
      if (!Fs.existsSync(main)) throw new Error(`${main} is missing: build first (pnpm build)`)
      const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "rec-platform-test-"))
      const running = new Set<ChildProcess.ChildProcess>()
      try {
        const ports = Object.fromEntries(await Promise.all(portNames.map(async (n) => [n, await freePort()]))) as Ports

        const first = await start(ports, dataDir)
        running.add(first.child)
        for (const port of readyPorts(ports)) expect(await statusOf(`http://127.0.0.1:${port}/ready`)).toBe(200)
        expect(first.output.stdout).toContain(`docs http://localhost:${ports.GRID_GATEWAY_PORT}/api/docs`)
        expect(first.output.stdout).toContain(`docs http://localhost:${ports.PARTICIPANT_GATEWAY_PORT}/api/docs`)
        expect(first.output.stdout).toContain(`docs http://localhost:${ports.REGISTRY_PORT}/docs`)
        expect(first.output.stdout).toContain("node packages/dev-idp/bin/dev-token.js participant")
        const seeded = await seededData(ports)
        expect(seeded.community).toEqual({ status: 200, key: "it-energy-community" })
        expect(seeded.members.status).toBe(200)
        // The dev user `participant` is one of the bundle's members (her `sub`), so her token sees them.
        expect(seeded.members.users).toContain(participantSub)
        expect(seeded.rules.status).toBe(200)
        expect(seeded.rules.rows).toHaveLength(2)
        expect(seeded.recipients).toEqual(["davide.moretti@alto-garda-distribuzione.example"])
        expect(seeded.training.status).toBe(200)
        expect(seeded.training.files).toEqual([
          "README.md",
          "energy-community.md",
          "flexibility-and-points.md",
          "grid-alerts.md",
          "notifications-and-privacy.md"
        ])

        // npm run demo: the pipelines complete, users see the results.
        const options = await Effect.runPromise(
          Effect.withConfigProvider(Config.launcher, ConfigProvider.fromMap(new Map(Object.entries(environment(ports, dataDir)))))
        )
        const report = await Demo.run(options, () => undefined)
        expect(report.published.map((e) => e.flow)).toEqual([
          "grid-resilience-flow",
          "rec-forecasting-flow",
          "meters-flow",
          "rec-flexibility-flow"
        ])
        // The settlement settled the commitment of the hour that ended; the accepted one is still open.
        const flexibilityLog = first.output.stdout.split("\n").filter((l) => /"component":"flexibility"/.test(l) && /WARN|ERROR|settlement|commitment/i.test(l))
        expect(report.participant.points.settled_commitments, `${JSON.stringify(report)}\n${flexibilityLog.slice(-15).join("\n")}`).toBe(1)
        expect(report.participant.points.open_commitments).toBeGreaterThanOrEqual(1)
        // The opportunity broadcast, the reminder and the settlement notify the participant (how many
        // reach her depends on the hour: the twin's windows, her daily cap).
        expect(report.participant.notifications, JSON.stringify(report.participant)).toBeGreaterThan(0)
        if (report.gridPeriod !== undefined) {
          expect(report.emails.map((m) => m.to)).toContain("davide.moretti@alto-garda-distribuzione.example")
        }

        const firstStop = await first.stop()
        expect({ code: firstStop.code, signal: firstStop.signal, stderr: first.output.stderr }).toEqual({ code: 0, signal: null, stderr: "" })
        expect(firstStop.elapsed).toBeLessThan(15_000)
        // PGlite flushed and unlocked the directory for the next start.
        expect(Fs.existsSync(`${Path.join(dataDir, "pglite")}.lock`)).toBe(false)

        const second = await start(ports, dataDir)
        running.add(second.child)
        const again = await seededData(ports)
        // The very same rows: nothing imported, created or ingested twice.
        expect(again).toEqual(seeded)
        const secondStop = await second.stop()
        expect({ code: secondStop.code, stderr: second.output.stderr }).toEqual({ code: 0, stderr: "" })
      } finally {
        // A failed assertion must not leave a platform running.
        for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
        Fs.rmSync(dataDir, { recursive: true, force: true })
      }
    }), 360_000)
})
