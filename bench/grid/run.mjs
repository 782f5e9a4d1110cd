#!/usr/bin/env node
// Grid gateway overhead: GET /api/grid/{network}/summary and /risks through the gateway, next to
// the same digital-twin calls sent to the simulator directly, in the same run (README.md).
// Needs a build: `pnpm build`.
//
//   node bench/grid/run.mjs [--rounds 3] [--duration 5] [--connections 20] [--rate 200] [--warmup 3]
//
// 1. starts the dev identity provider, the digital-twin simulator and the gateway, each in its
//    own process; the gateway on PGlite, without a broker (its listener waits in the background),
//    with its production defaults (token verification and cache, the Rego policy, the digital
//    twin's client with its own client-credentials token, the access log; logs to /dev/null);
// 2. gets a real access token of the operator `dso-operator` (the gateway's caller) and of the
//    gateway's client `svc-grid` (the direct calls);
// 3. per route: both sides warmed up (the simulator called directly: GET /grid/.../summary, POST
//    .../values/risks with the body the gateway sends; and the gateway), then `--rounds` rounds,
//    each measuring both sides back to back in alternating order (direct first in odd rounds,
//    the gateway first in even ones), so that a change in the machine's load falls on both:
//    p50/p99 at a fixed rate, then the highest rate (autocannon, no pipelining, the same
//    connection count for both sides), with each server's CPU time per request;
// 4. per round, the added p50 and the rate ratio; the result is the median over the rounds;
//    prints a table and the goals (the gateway adds at most 2 ms at p50 and keeps at least 50%
//    of the direct request rate) and writes bench/results/grid.json.
/* global fetch, URLSearchParams */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { cpuMicros, freePort, root, run, startProcess, stopAll, waitFor } from "../lib/processes.mjs"

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    duration: { type: "string", default: "5" },
    connections: { type: "string", default: "20" },
    rate: { type: "string", default: "200" },
    warmup: { type: "string", default: "3" },
    "cpu-prof": { type: "boolean", default: false },
    only: { type: "string" }
  }
})
const profileDir = path.join(root, "bench/results/profiles")
const rounds = Math.max(1, Number(values.rounds))
const duration = Number(values.duration)
const connections = Number(values.connections)
const rate = Number(values.rate)
const warmup = Number(values.warmup)

const network = "dso-alto-garda"
const today = new Date().toISOString().slice(0, 10)

// --- the parts

const idpPort = await freePort()
const issuer = `http://127.0.0.1:${idpPort}`
startProcess("packages/dev-idp/dist/main.js", {
  env: { PORT: String(idpPort), HOST: "127.0.0.1", DEV_IDP_ISSUER: issuer, LOG_LEVEL: "warn" }
})
await waitFor(`${issuer}/health`)

const tokenOf = async (client, secret, form) => {
  const response = await fetch(`${issuer}/protocol/openid-connect/token`, {
    method: "POST",
    headers: { authorization: `Basic ${Buffer.from(`${client}:${secret}`).toString("base64")}` },
    body: new URLSearchParams(form)
  })
  return (await response.json()).access_token
}
const operatorToken = await tokenOf("rec-cli", "dev-only-secret-rec-cli", { grant_type: "password", username: "dso-operator", password: "dso-operator" })
const serviceToken = await tokenOf("svc-grid", "dev-only-secret-svc-grid", { grant_type: "client_credentials" })

const twinPort = await freePort()
const twin = startProcess("packages/digital-twin/dist/simulator/main.js", {
  env: { PORT: String(twinPort), HOST: "127.0.0.1", PLATFORM_OIDC_BASE_URL: issuer, PLATFORM_OIDC_AUDIENCE: "rec-platform", LOG_LEVEL: "warn" }
})
const twinUrl = `http://127.0.0.1:${twinPort}`
await waitFor(`${twinUrl}/ready`)

const gatewayPort = await freePort()
const gateway = startProcess("services/grid-gateway/dist/main.js", {
  nodeArgs: values["cpu-prof"] ? ["--cpu-prof", "--cpu-prof-dir", profileDir, "--cpu-prof-name", "grid-gateway.cpuprofile"] : [],
  env: {
    PORT: String(gatewayPort),
    HOST: "127.0.0.1",
    DATABASE_URL: "pglite://memory",
    PLATFORM_OIDC_BASE_URL: issuer,
    PLATFORM_OIDC_AUDIENCE: "rec-platform",
    PLATFORM_OIDC_CLIENT_ID: "svc-grid",
    PLATFORM_OIDC_CLIENT_SECRET: "dev-only-secret-svc-grid",
    DT_CLIENT_SCOPE: "dt.read",
    DIGITAL_TWIN_API_URL: twinUrl,
    PLATFORM_POLICIES_POLICIES_DIR: path.join(root, "policies"),
    POLICY_WATCH: "false",
    PLATFORM_MQTT_HOST: "127.0.0.1",
    PLATFORM_MQTT_PORT: String(await freePort()),
    MQTT_STARTUP_TIMEOUT_SECONDS: "0"
  }
})
const gatewayUrl = `http://127.0.0.1:${gatewayPort}`
await waitFor(`${gatewayUrl}/ready`)

// --- the routes, each direct and through the gateway

const routes = [
  {
    name: "summary",
    direct: { url: `${twinUrl}/grid/${network}/summary`, method: "GET", headers: { authorization: `Bearer ${serviceToken}` } },
    gateway: { url: `${gatewayUrl}/api/grid/${network}/summary`, method: "GET", headers: { authorization: `Bearer ${operatorToken}` } }
  },
  {
    name: "risks",
    direct: {
      url: `${twinUrl}/grid/${network}/values/risks`,
      method: "POST",
      headers: { authorization: `Bearer ${serviceToken}`, "content-type": "application/json" },
      body: JSON.stringify({ payload: { dates: [today], limit: 10000 } })
    },
    gateway: { url: `${gatewayUrl}/api/grid/${network}/risks?dates=${today}`, method: "GET", headers: { authorization: `Bearer ${operatorToken}` } }
  }
]

// Both answers must be the same data, else the comparison means nothing.
for (const route of routes) {
  const direct = await (await fetch(route.direct.url, route.direct)).json()
  const through = await fetch(route.gateway.url, route.gateway)
  const body = await through.json()
  if (through.status !== 200 || JSON.stringify(body) !== JSON.stringify(direct)) {
    console.error(`${route.name}: the gateway's answer (${through.status}) differs from the simulator's`, JSON.stringify(body).slice(0, 300))
    process.exit(1)
  }
  route.bytes = JSON.stringify(body).length
}

const summary = (result) => ({
  requests_per_second: Math.round(result.requests.average),
  p50_ms: result.latency.p50,
  p99_ms: result.latency.p99,
  non_2xx: result.non2xx,
  errors: result.errors + result.timeouts
})

/** A run, with the CPU time per answered request of each process in `pids`. */
const measured = async (pids, options) => {
  const before = pids.map(cpuMicros)
  const result = await run(options)
  const cpu = pids.map((pid, i) => Math.round((10 * (cpuMicros(pid) - before[i])) / Math.max(1, result["2xx"])) / 10)
  return { ...summary(result), cpu_us_per_request: cpu }
}

/** Warm-up at the highest rate (JIT), then at the fixed rate. */
const warm = async (target) => {
  await run({ ...target, connections, duration: warmup })
  await run({ ...target, connections: 10, overallRate: rate, duration: warmup })
}

/** One measurement: at the fixed rate, then the highest. */
const measure = async (target, pids) => {
  const fixed = await measured(pids, { ...target, connections: 10, overallRate: rate, duration })
  const max = await measured(pids, { ...target, connections, duration })
  return { fixed, max }
}

const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
const round3 = (x) => Math.round(x * 1000) / 1000

const results = {
  date: new Date().toISOString(),
  machine: {
    cpu: os.cpus()[0]?.model ?? "unknown",
    cores: os.cpus().length,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    platform: `${os.platform()} ${os.release()}`,
    load_average_1m: Math.round(os.loadavg()[0] * 100) / 100
  },
  node: process.version,
  routes: {}
}

for (const route of routes.filter((r) => values.only === undefined || r.name === values.only)) {
  console.log(`${route.name} (${route.bytes} bytes): warming up both sides...`)
  await warm(route.direct)
  await warm(route.gateway)
  const measuredRounds = []
  for (let i = 0; i < rounds; i++) {
    const directFirst = i % 2 === 0
    const one = {}
    for (const side of directFirst ? ["direct", "gateway"] : ["gateway", "direct"]) {
      one[side] = await measure(route[side], side === "direct" ? [twin.pid] : [gateway.pid, twin.pid])
    }
    const { direct, gateway: through } = one
    const r = {
      order: directFirst ? "direct, gateway" : "gateway, direct",
      direct,
      gateway: through,
      added_p50_ms: through.fixed.p50_ms - direct.fixed.p50_ms,
      rate_ratio: round3(through.max.requests_per_second / direct.max.requests_per_second),
      // What the CPU times say, whatever else runs on the machine: each server process uses at most
      // one core, so the direct rate is bounded by the simulator's CPU per request and the gateway's
      // by the busier of its two processes.
      cpu_capacity_ratio: round3(direct.max.cpu_us_per_request[0] / Math.max(...through.max.cpu_us_per_request))
    }
    console.log(`${route.name} round ${i + 1}/${rounds} (${r.order}): ${direct.max.requests_per_second} / ${through.max.requests_per_second} requests/s ` +
      `(ratio ${r.rate_ratio}), p50 ${direct.fixed.p50_ms} / ${through.fixed.p50_ms} ms, ` +
      `CPU µs/request ${direct.max.cpu_us_per_request[0]} / ${through.max.cpu_us_per_request.join(" + ")}`)
    measuredRounds.push(r)
  }
  // The median round by rate ratio stands for the route in the table.
  const typical = [...measuredRounds].sort((a, b) => a.rate_ratio - b.rate_ratio)[(measuredRounds.length - 1) >> 1]
  results.routes[route.name] = {
    bytes: route.bytes,
    rounds: measuredRounds,
    direct: typical.direct,
    gateway: typical.gateway,
    added_p50_ms: median(measuredRounds.map((r) => r.added_p50_ms)),
    rate_ratio: median(measuredRounds.map((r) => r.rate_ratio)),
    cpu_capacity_ratio: median(measuredRounds.map((r) => r.cpu_capacity_ratio)),
    added_cpu_us: Math.round(median(measuredRounds.map((r) => r.gateway.max.cpu_us_per_request[0]))),
    simulator_cpu_us: Math.round(median(measuredRounds.map((r) => r.direct.max.cpu_us_per_request[0])))
  }
}

results.goals = Object.fromEntries(Object.entries(results.routes).flatMap(([name, r]) => [
  [`${name}_adds_at_most_2ms_p50`, r.added_p50_ms <= 2],
  [`${name}_keeps_half_the_rate`, r.rate_ratio >= 0.5]
]))

const row = (name, r) =>
  `| ${name.padEnd(34)} | ${String(r.requests_per_second).padStart(7)} | ${String(r.p50_ms).padStart(6)} | ${String(r.p99_ms).padStart(6)} | ${String(r.cpu_us_per_request.join(" + ")).padStart(15)} | ${String(r.non_2xx + r.errors).padStart(6)} |`
console.log("")
results.machine.load_average_1m_after = Math.round(os.loadavg()[0] * 100) / 100
console.log(`${results.machine.cpu} x${results.machine.cores}, Node ${process.version}, load ${results.machine.load_average_1m} (after: ${results.machine.load_average_1m_after})`)
console.log(`${rounds} rounds of ${duration} s per side and rate; the table shows each route's median round (by rate ratio), the goals the medians over the rounds`)
console.log(`| ${"run".padEnd(34)} |   req/s | p50 ms | p99 ms | CPU µs/request  | errors |`)
console.log(`|${"-".repeat(36)}|---------|--------|--------|-----------------|--------|`)
for (const [name, r] of Object.entries(results.routes)) {
  console.log(row(`${name}: simulator directly, max`, r.direct.max))
  console.log(row(`${name}: gateway, max`, r.gateway.max))
  console.log(row(`${name}: simulator directly @ ${rate}/s`, r.direct.fixed))
  console.log(row(`${name}: gateway @ ${rate}/s`, r.gateway.fixed))
}
console.log("(CPU: the gateway's + the simulator's for gateway runs)")
for (const [name, r] of Object.entries(results.routes)) {
  console.log(`${name}: the gateway's own CPU ${r.added_cpu_us} µs per request (the simulator's ${r.simulator_cpu_us}); one core per process would give it ${Math.round(r.cpu_capacity_ratio * 100)}% of the direct rate`)
  console.log(`${name}: rate ratio per round ${r.rounds.map((x) => x.rate_ratio).join(", ")}; added p50 per round ${r.rounds.map((x) => x.added_p50_ms).join(", ")} ms`)
  console.log(`${name}: the gateway adds ${r.added_p50_ms} ms at p50 (median; goal <= 2: ${r.added_p50_ms <= 2 ? "met" : "not met"}); ` +
    `keeps ${Math.round(r.rate_ratio * 100)}% of the direct rate (median; goal >= 50%: ${r.rate_ratio >= 0.5 ? "met" : "not met"})`)
}

fs.mkdirSync(path.join(root, "bench/results"), { recursive: true })
fs.writeFileSync(path.join(root, "bench/results/grid.json"), JSON.stringify(results, null, 2) + "\n")
if (values["cpu-prof"]) {
  // The profile is written when the gateway exits.
  const exited = new Promise((resolve) => gateway.once("exit", resolve))
  gateway.kill("SIGTERM")
  await exited
  console.log(`profile: ${path.join(profileDir, "grid-gateway.cpuprofile")}`)
}
stopAll()
process.exit(0)
