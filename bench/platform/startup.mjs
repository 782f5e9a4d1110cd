#!/usr/bin/env node
// Platform startup (issue 18, point 7): how long the built launcher (`node
// services/platform/dist/main.js`, what `npm start` runs after its build) takes until every
// service answers GET /ready with 200, and the resident memory (VmRSS) of that one process with
// everything running, next to baselines measured in the same run:
//
//   - bare node:   `node -e <keep alive>`, nothing loaded (the floor of any Node process);
//   - foundation:  the launcher with PLATFORM_SERVICES=none (identity provider, policy service,
//                  digital-twin simulator, broker, mail catcher; no PGlite);
//   - platform, first start:  every service on an empty data directory (PGlite created, migrations,
//                  every seed applied);
//   - platform, second start: the same data directory again (what a developer meets every day).
//
// Goal: under 10 s and under 600 MB. Needs a build (`pnpm build`). Ports are free ones, the data
// directory a temporary one, logs go to /dev/null.
//
//   node bench/platform/startup.mjs [--runs 3] [--cpu-prof]
//
// --cpu-prof writes a V8 CPU profile of each platform start to bench/results/profiles/.
// Prints a table and writes bench/results/platform-startup.json.
/* global fetch, performance */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import * as net from "node:net"
import { cpuMicros, root } from "../lib/processes.mjs"

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    "cpu-prof": { type: "boolean", default: false }
  }
})
const runs = Number(values.runs)
const main = path.join(root, "services/platform/dist/main.js")
if (!fs.existsSync(main)) {
  console.error(`${main} is missing: build first (pnpm build)`)
  process.exit(2)
}
const profileDir = path.join(root, "bench/results/profiles")

const rssMiB = (pid) => {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

const ready = async (port) => {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/ready`)
    await response.arrayBuffer()
    return response.status === 200
  } catch {
    return false
  }
}

const isFree = (port) =>
  new Promise((resolve) => {
    const server = net.createServer()
    server.once("error", () => resolve(false))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
  })

const chosen = new Set()
/** Below Linux's ephemeral range: a kernel-chosen port may be taken by the platform's own outgoing connections. */
const freePort = async () => {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    if (!chosen.has(port) && (await isFree(port))) {
      chosen.add(port)
      return port
    }
  }
}

const ports = async () => {
  const names = ["DEV_IDP_PORT", "POLICY_PORT", "DIGITAL_TWIN_PORT", "PLATFORM_MQTT_PORT", "REGISTRY_PORT", "ASSISTANT_PORT",
    "PARTICIPANT_GATEWAY_PORT", "GRID_GATEWAY_PORT", "NUDGING_PORT", "FLEXIBILITY_PORT", "MAIL_CATCHER_PORT"]
  return Object.fromEntries(await Promise.all(names.map(async (n) => [n, String(await freePort())])))
}

/** The machine's environment without anything that configures the platform. */
const cleanEnv = () =>
  Object.fromEntries(Object.entries(process.env).filter(([k]) =>
    !/^(HOST|PORT|PLATFORM_.*|DEV_IDP_.*|POLICY_.*|DIGITAL_TWIN_.*|DATABASE_.*|SMTP_.*|OTEL_.*|LOG_.*)$/.test(k)
  ))

/** Starts the launcher; resolves when every HTTP port answers /ready 200 (or the deadline passes). */
const launch = async ({ services, dataDir, label }) => {
  const env = { ...cleanEnv(), ...(await ports()), PLATFORM_DATA_DIR: dataDir, PLATFORM_SERVICES: services, LOG_LEVEL: "warn" }
  const httpPorts = ["POLICY_PORT", "DIGITAL_TWIN_PORT"].concat(
    services === "none" ? [] : ["REGISTRY_PORT", "ASSISTANT_PORT", "PARTICIPANT_GATEWAY_PORT", "GRID_GATEWAY_PORT", "NUDGING_PORT", "FLEXIBILITY_PORT"]
  ).map((n) => Number(env[n]))
  const nodeArgs = values["cpu-prof"] && services !== "none"
    ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=platform-${label}-${Date.now()}.cpuprofile`]
    : []
  const logFile = path.join(os.tmpdir(), `rec-startup-${label}.log`)
  const log = fs.openSync(logFile, "w")
  const started = performance.now()
  const child = spawn(process.execPath, [...nodeArgs, main], { cwd: root, env, stdio: ["ignore", log, log] })
  fs.closeSync(log)
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, at: performance.now() })))
  const deadline = started + 180_000
  const pending = new Set(httpPorts)
  // The identity provider answers /health (it has no /ready).
  let idp = false
  while (pending.size > 0 || !idp) {
    if (child.exitCode !== null || performance.now() > deadline) {
      child.kill("SIGKILL")
      const tail = fs.readFileSync(logFile, "utf8").split("\n").slice(-20).join("\n")
      throw new Error(`${label}: the launcher did not become ready (exit ${child.exitCode}); ${logFile}:\n${tail}`)
    }
    for (const port of [...pending]) if (await ready(port)) pending.delete(port)
    if (!idp) {
      idp = await fetch(`http://127.0.0.1:${env.DEV_IDP_PORT}/health`).then((r) => r.ok, () => false)
    }
    if (pending.size > 0 || !idp) await sleep(50)
  }
  const seconds = (performance.now() - started) / 1000
  // Let background work that follows readiness (training sync, the first MQTT subscriptions) settle.
  await sleep(3000)
  const rss = rssMiB(child.pid)
  const cpuSeconds = cpuMicros(child.pid) / 1e6
  const stopAt = performance.now()
  child.kill("SIGTERM")
  const exit = await exited
  return { seconds, rss, cpuSeconds, stopSeconds: (exit.at - stopAt) / 1000, exitCode: exit.code }
}

const bareNode = async () => {
  const started = performance.now()
  const child = spawn(process.execPath, ["-e", "process.stdout.write('up\\n'); setInterval(() => {}, 1000)"], {
    stdio: ["ignore", "pipe", "ignore"]
  })
  await new Promise((resolve) => child.stdout.once("data", resolve))
  const seconds = (performance.now() - started) / 1000
  const rss = rssMiB(child.pid)
  const cpuSeconds = cpuMicros(child.pid) / 1e6
  child.kill("SIGTERM")
  return { seconds, rss, cpuSeconds, stopSeconds: 0, exitCode: 0 }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

const results = { bare: [], foundation: [], first: [], second: [] }
for (let i = 0; i < runs; i++) {
  results.bare.push(await bareNode())
  const foundationDir = fs.mkdtempSync(path.join(os.tmpdir(), "rec-startup-foundation-"))
  results.foundation.push(await launch({ services: "none", dataDir: foundationDir, label: "foundation" }))
  fs.rmSync(foundationDir, { recursive: true, force: true })
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "rec-startup-"))
  results.first.push(await launch({ services: "all", dataDir, label: "first" }))
  results.second.push(await launch({ services: "all", dataDir, label: "second" }))
  fs.rmSync(dataDir, { recursive: true, force: true })
  process.stderr.write(`run ${i + 1}/${runs} done\n`)
}

const rows = [
  ["bare node (baseline)", results.bare],
  ["launcher, foundation only (baseline)", results.foundation],
  ["platform, first start (empty data dir)", results.first],
  ["platform, second start (data dir reused)", results.second]
]
const load = os.loadavg().map((l) => l.toFixed(1)).join(" ")
console.log(`\nPlatform startup, median of ${runs} run(s); ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), Node ${process.version}, load ${load}\n`)
console.log("| process | ready (s) | CPU time to ready + 3 s (s) | RSS (MiB) | stop (s) |")
console.log("|---|---|---|---|---|")
for (const [name, xs] of rows) {
  console.log(
    `| ${name} | ${median(xs.map((x) => x.seconds)).toFixed(2)} | ${median(xs.map((x) => x.cpuSeconds)).toFixed(2)} | ` +
      `${median(xs.map((x) => x.rss)).toFixed(0)} | ${median(xs.map((x) => x.stopSeconds)).toFixed(2)} |`
  )
}
const second = results.second
const goal = median(second.map((x) => x.seconds)) < 10 && median(second.map((x) => x.rss)) < 600
console.log(`\ngoal (second start under 10 s and under 600 MiB): ${goal ? "met" : "NOT met"}`)
const badExits = Object.values(results).flat().filter((x) => x.exitCode !== 0)
if (badExits.length > 0) console.log(`${badExits.length} launcher(s) did not exit with code 0`)
fs.mkdirSync(path.join(root, "bench/results"), { recursive: true })
fs.writeFileSync(
  path.join(root, "bench/results/platform-startup.json"),
  JSON.stringify({ node: process.version, cpus: os.cpus().length, load: os.loadavg(), results }, null, 2)
)
