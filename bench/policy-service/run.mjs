#!/usr/bin/env node
// Policy service throughput and latency, against a raw node:http JSON echo server started in
// the same run (README.md). Needs a build: `pnpm build` (or tsc -b services/policy).
//
//   node bench/policy-service/run.mjs [--duration 10] [--connections 50] [--rate 1000]
//   taskset -c 0 node bench/policy-service/run.mjs --pin 1    # servers on CPU 1, autocannon on 0
//
// 1. starts the dev identity provider and the echo server, each in its own process, and gets a
//    real access token from the identity provider (password grant, user `editor`);
// 2. measures the echo server: a fixed 1,000 requests/s for p50/p99 (after warming up at the
//    highest rate, then at the fixed rate), then the highest request rate (autocannon, no
//    pipelining);
// 3. the same for POST /authorize of the policy service (`node services/policy/dist/main.js`,
//    own process, logs to /dev/null) with the same body, twice: default settings (access log and
//    audit records), then with POLICY_ACCESS_LOG=false (audit records only);
// 4. prints a table (with the server's CPU time per request, from /proc/<pid>/stat) and writes
//    bench/results/policy-service.json.
import * as os from "node:os"
import * as fs from "node:fs"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { body, cpuMicros, identityProvider, root, run, startPolicy, startProcess, stopAll } from "./harness.mjs"

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "50" },
    rate: { type: "string", default: "1000" },
    warmup: { type: "string", default: "3" },
    pin: { type: "string" }
  }
})
const duration = Number(values.duration)
const connections = Number(values.connections)
const rate = Number(values.rate)
const warmup = Number(values.warmup)
// --pin N: the servers run on CPU N only (start this script on another CPU with taskset).
const pin = values.pin

/** A run against the server process `pid`, with the server's CPU time per answered request. */
const measured = async (pid, options) => {
  const before = cpuMicros(pid)
  const result = await run(options)
  const cpu = cpuMicros(pid) - before
  return { ...summary(result), cpu_us_per_request: Math.round((10 * cpu) / Math.max(1, result["2xx"])) / 10 }
}

const summary = (result) => ({
  requests_per_second: Math.round(result.requests.average),
  p50_ms: result.latency.p50,
  p99_ms: result.latency.p99,
  non_2xx: result.non2xx,
  errors: result.errors + result.timeouts
})

const { issuer, token } = await identityProvider({ pin })
const echo = startProcess("bench/policy-service/echo-server.mjs", { pin, stdout: "pipe" })
const echoPort = await new Promise((resolve) => echo.stdout.once("data", (line) => resolve(Number(String(line).trim()))))
const echoTarget = { url: `http://127.0.0.1:${echoPort}/`, method: "POST", headers: { "content-type": "application/json" }, body }

/**
 * Warm-up at the highest rate (JIT), then the fixed rate (after a warm-up at that rate, so the
 * garbage of the warm-up is collected before measuring), then the highest rate. Measuring the
 * fixed rate right after the highest rate would time the major garbage collections that the
 * highest rate left behind, not the steady state at the fixed rate.
 */
const measureServer = async (pid, target) => {
  await run({ ...target, connections, duration: warmup })
  await run({ ...target, connections: 10, overallRate: rate, duration: warmup })
  const fixed = await measured(pid, { ...target, connections: 10, overallRate: rate, duration })
  const max = await measured(pid, { ...target, connections, duration })
  return { fixed, max }
}

/** Starts the policy service with `env`, measures it, stops it. */
const measurePolicy = async (env) => {
  const { policy, target } = await startPolicy({ issuer, token, env, pin })
  const { fixed, max } = await measureServer(policy.pid, target)
  policy.kill("SIGTERM")
  return { max, fixed }
}

console.log(`echo server: warm-up ${warmup} s + ${warmup} s, ${rate}/s for ${duration} s, maximum rate ${duration} s (${connections} connections)...`)
const { fixed: fixedEcho, max: maxEcho } = await measureServer(echo.pid, echoTarget)

console.log("policy service, default settings (access log and audit on)...")
const standard = await measurePolicy({})
console.log("policy service, POLICY_ACCESS_LOG=false (audit records only)...")
const auditOnly = await measurePolicy({ POLICY_ACCESS_LOG: "false" })

const ratioOf = (r) => Math.round((r.requests_per_second / maxEcho.requests_per_second) * 1000) / 1000
const results = {
  date: new Date().toISOString(),
  machine: {
    cpu: os.cpus()[0]?.model ?? "unknown",
    cores: os.cpus().length,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    platform: `${os.platform()} ${os.release()}`,
    load_average_1m: Math.round(os.loadavg()[0] * 100) / 100,
    servers_pinned_to_cpu: values.pin ?? null
  },
  node: process.version,
  body_bytes: Buffer.byteLength(body),
  token_bytes: token.length,
  echo: { max: maxEcho, fixed: fixedEcho },
  authorize: {
    default: { ...standard, ratio: ratioOf(standard.max) },
    access_log_off: { ...auditOnly, ratio: ratioOf(auditOnly.max) }
  }
}
results.goals = {
  p99_under_5ms: standard.fixed.p99_ms < 5,
  ratio_at_least_0_25: results.authorize.default.ratio >= 0.25
}

const row = (name, r) =>
  `| ${name.padEnd(40)} | ${String(r.requests_per_second).padStart(8)} | ${String(r.p50_ms).padStart(6)} | ${String(r.p99_ms).padStart(6)} | ${String(r.cpu_us_per_request).padStart(6)} | ${String(r.non_2xx + r.errors).padStart(6)} |`
console.log("")
console.log(`${results.machine.cpu} x${results.machine.cores}, Node ${process.version}, load ${results.machine.load_average_1m}; token ${results.token_bytes} B, body ${results.body_bytes} B`)
console.log(`| ${"run".padEnd(40)} |    req/s | p50 ms | p99 ms | CPU µs | errors |`)
console.log(`|${"-".repeat(42)}|----------|--------|--------|--------|--------|`)
console.log(row("node:http JSON echo, max", maxEcho))
console.log(row("POST /authorize, max", standard.max))
console.log(row("POST /authorize, max, access log off", auditOnly.max))
console.log(row(`node:http JSON echo @ ${rate}/s`, fixedEcho))
console.log(row(`POST /authorize @ ${rate}/s`, standard.fixed))
console.log(row(`POST /authorize @ ${rate}/s, access log off`, auditOnly.fixed))
console.log(`ratio /authorize : echo = ${results.authorize.default.ratio} (access log off: ${results.authorize.access_log_off.ratio}); goal >= 0.25: ${results.goals.ratio_at_least_0_25 ? "met" : "not met"}`)
console.log(`p99 at ${rate}/s = ${standard.fixed.p99_ms} ms; goal < 5 ms: ${results.goals.p99_under_5ms ? "met" : "not met"}`)

fs.mkdirSync(path.join(root, "bench/results"), { recursive: true })
fs.writeFileSync(path.join(root, "bench/results/policy-service.json"), JSON.stringify(results, null, 2) + "\n")
stopAll()
process.exit(0)
