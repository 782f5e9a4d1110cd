#!/usr/bin/env node
// Server CPU per request of the service kit (`@rec/platform`) against raw node:http, measured in
// the same run (README.md). Needs a build: `tsc -b packages/platform`.
//
//   node bench/service-kit/run.mjs [--duration 5] [--connections 10] [--rounds 3] [--cpu-prof]
//
// Each server (`server.mjs raw|kit`, the kit once more with its access log off) runs in its own
// process. autocannon (no pipelining) drives one request type at a time at the highest rate it
// reaches; the server's CPU time (user + system, from /proc/<pid>/stat) over the run divided by
// the requests answered is its cost per request. That figure hardly depends on what else runs
// on the machine, unlike requests/s. Rounds interleave the servers, so drift in the machine's
// load affects them alike; the table shows the median and the range of the rounds.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { cpuMicros, freePort, root, run, startProcess, waitFor } from "../lib/processes.mjs"

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    connections: { type: "string", default: "10" },
    rounds: { type: "string", default: "3" },
    warmup: { type: "string", default: "2" },
    "cpu-prof": { type: "boolean", default: false },
    stack: { type: "boolean", default: false }
  }
})
const duration = Number(values.duration)
const connections = Number(values.connections)
const rounds = Number(values.rounds)
const warmup = Number(values.warmup)
const profileDir = path.join(root, "bench/results/profiles")

if (!fs.existsSync(path.join(root, "packages/platform/dist/index.js"))) {
  console.error("packages/platform/dist is missing: build first (tsc -b packages/platform)")
  process.exit(2)
}

const start = async (name, mode, env) => {
  const port = await freePort()
  const flags = values["cpu-prof"] && mode !== "raw" ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}.cpuprofile`] : []
  const child = startProcess("bench/service-kit/server.mjs", {
    nodeArgs: flags,
    args: [mode],
    env: { PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "info", ...env }
  })
  await waitFor(`http://127.0.0.1:${port}/items/1`)
  return { name, port, pid: child.pid, child }
}

const body = JSON.stringify({ name: "meter 7", quantity: 12, tags: ["energy", "community", "2024"] })
const requests = {
  GET: (port) => ({ url: `http://127.0.0.1:${port}/items/1`, method: "GET" }),
  POST: (port) => ({
    url: `http://127.0.0.1:${port}/items`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body
  })
}

const load = (options, seconds) => run({ ...options, connections, duration: seconds })

/** CPU µs per request and requests/s of one run against one server. */
const measure = async (server, kind) => {
  const before = cpuMicros(server.pid)
  const result = await load(requests[kind](server.port), duration)
  const after = cpuMicros(server.pid)
  const answered = result["2xx"]
  if (answered === 0 || result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${server.name} ${kind}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  }
  return { cpu_us: (after - before) / answered, rps: result.requests.average }
}

// --stack adds the layers below the kit on their own (server.mjs `stack:*`).
const servers = [
  await start("raw", "raw", {}),
  ...(values.stack
    ? [
      await start("fiber", "stack:fiber", {}),
      await start("platform", "stack:platform", {}),
      await start("platform-no-tracer", "stack:platform-no-tracer", {}),
      await start("router", "stack:router", {}),
      await start("kit-handler", "stack:kit-handler", {}),
      await start("kit-router", "stack:kit-router", {})
    ]
    : []),
  await start("kit", "kit", {}),
  await start("kit-no-access-log", "kit", { KIT_ACCESS_LOG: "false" })
]

for (const server of servers) {
  for (const kind of Object.keys(requests)) await load(requests[kind](server.port), warmup)
}

const samples = {}
for (let round = 0; round < rounds; round++) {
  for (const kind of Object.keys(requests)) {
    for (const server of servers) {
      const key = `${server.name} ${kind}`
      ;(samples[key] ??= []).push(await measure(server, kind))
    }
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const stats = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) })
const results = {
  date: new Date().toISOString(),
  machine: {
    cpu: os.cpus()[0]?.model ?? "unknown",
    cores: os.cpus().length,
    platform: `${os.platform()} ${os.release()}`,
    load_average_1m: Math.round(os.loadavg()[0] * 100) / 100
  },
  node: process.version,
  connections,
  duration_s: duration,
  rounds,
  rows: {}
}
for (const [key, list] of Object.entries(samples)) {
  results.rows[key] = { cpu_us: stats(list.map((s) => s.cpu_us)), rps: stats(list.map((s) => s.rps)) }
}

const fmt = (s) => `${s.median.toFixed(1)} (${s.min.toFixed(1)}–${s.max.toFixed(1)})`
console.log(`${results.machine.cpu} x${results.machine.cores}, Node ${process.version}, load ${results.machine.load_average_1m}; ${connections} connections, ${rounds} × ${duration} s`)
console.log(`| ${"server, request".padEnd(28)} | ${"CPU µs/request".padEnd(22)} | × raw | ${"requests/s".padEnd(24)} |`)
console.log(`|${"-".repeat(30)}|${"-".repeat(24)}|-------|${"-".repeat(26)}|`)
for (const kind of Object.keys(requests)) {
  const base = results.rows[`raw ${kind}`].cpu_us.median
  for (const server of servers) {
    const row = results.rows[`${server.name} ${kind}`]
    const rps = `${Math.round(row.rps.median)} (${Math.round(row.rps.min)}–${Math.round(row.rps.max)})`
    console.log(`| ${`${server.name} ${kind}`.padEnd(28)} | ${fmt(row.cpu_us).padEnd(22)} | ${(row.cpu_us.median / base).toFixed(2).padStart(5)} | ${rps.padEnd(24)} |`)
  }
}

fs.mkdirSync(path.join(root, "bench/results"), { recursive: true })
fs.writeFileSync(path.join(root, "bench/results/service-kit.json"), JSON.stringify(results, null, 2) + "\n")

// Profiles are written when the processes exit.
await Promise.all(servers.map((server) =>
  new Promise((resolve) => {
    server.child.once("exit", resolve)
    server.child.kill("SIGTERM")
  })))
if (values["cpu-prof"]) console.log(`CPU profiles in ${path.relative(root, profileDir)}/`)
process.exit(0)
