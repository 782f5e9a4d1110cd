#!/usr/bin/env node
// Nudging service: ingest-event throughput and p50/p99 on PGlite and on PostgreSQL, with every
// notification's web push delivered to a local push service, next to a baseline measured in the
// same run: the same notification INSERT alone, through the same pool. Needs a build
// (`pnpm build`); PostgreSQL from TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres),
// skipped with a note when it does not answer.
//
//   node bench/nudging/run.mjs [--operations 2000] [--concurrency 10] [--duration 10] [--connections 10] [--cpu-prof]
//
// --cpu-prof writes a V8 profile of each measuring process to bench/results/profiles/
// (summarise with bench/service-kit/profile-summary.mjs).
//
// Per backend, in a child process (bench/nudging/service.mjs) running the service with its pool:
// baseline (INSERT alone), ingest in process (Ingest.ingest: rule lookup, facts, condition,
// rendering, the orchestrator's transaction with its advisory lock, preferences, daily cap,
// notification and delivery rows; the push is sent in the background), baseline again (once those
// pushes were sent); then
// POST /ingest-event over HTTP with autocannon from this process (token verification,
// authorization, JSON), then the outbox drained. Goal: ingest in process costs at most 4x the
// baseline INSERT (mean latency at the same concurrency).
/* global fetch, URLSearchParams */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { parseArgs } from "node:util"
import { freePort, root, run, startProcess, waitFor } from "../lib/processes.mjs"

const { values } = parseArgs({
  options: {
    operations: { type: "string", default: "2000" },
    concurrency: { type: "string", default: "10" },
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "10" },
    "cpu-prof": { type: "boolean", default: false },
    // pglite, postgres or both (default): one backend while iterating.
    backend: { type: "string", default: "both" },
    // Skip the HTTP run (in-process figures only, while iterating).
    "no-http": { type: "boolean", default: false }
  }
})
const requireFromService = createRequire(path.join(root, "services/nudging/package.json"))
const Pg = requireFromService("pg")

// ---------------------------------------------------------------------------------------------
// The identity provider (a real client-credentials token of the grid gateway) and the push service

const idpPort = await freePort()
const issuer = `http://127.0.0.1:${idpPort}`
startProcess("packages/dev-idp/dist/main.js", {
  env: { PORT: String(idpPort), HOST: "127.0.0.1", DEV_IDP_ISSUER: issuer, LOG_LEVEL: "warn" }
})
await waitFor(`${issuer}/health`)
const tokenResponse = await fetch(`${issuer}/protocol/openid-connect/token`, {
  method: "POST",
  headers: { authorization: `Basic ${Buffer.from("svc-grid:dev-only-secret-svc-grid").toString("base64")}` },
  body: new URLSearchParams({ grant_type: "client_credentials" })
})
const token = (await tokenResponse.json()).access_token

let pushes = 0
const pushService = http.createServer((request, response) => {
  request.resume()
  request.on("end", () => {
    if (request.headers["content-encoding"] === "aes128gcm" && /^vapid t=/.test(request.headers.authorization ?? "")) pushes++
    response.writeHead(201).end()
  })
})
// Connections the push senders opened (extra reporting: a new connection per push costs CPU on both sides).
let pushConnections = 0
pushService.on("connection", () => pushConnections++)
await new Promise((resolve) => pushService.listen(0, "127.0.0.1", resolve))
const pushOrigin = `http://127.0.0.1:${pushService.address().port}`

// ---------------------------------------------------------------------------------------------
// One backend

const lines = (child) => {
  const queue = []
  const waiters = []
  child.once("exit", (code) => {
    if (code !== 0) {
      console.error(`the measuring process stopped with code ${code}`)
      process.exit(1)
    }
  })
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    if (!line.startsWith("{")) return
    const message = JSON.parse(line)
    const waiter = waiters.shift()
    if (waiter) waiter(message)
    else queue.push(message)
  })
  return () => queue.length > 0 ? Promise.resolve(queue.shift()) : new Promise((resolve) => waiters.push(resolve))
}

const measureBackend = async (name, databaseUrl) => {
  console.log(`${name}: baseline and ingest in process (${values.operations} each, concurrency ${values.concurrency})...`)
  const profile = values["cpu-prof"]
    ? ["--cpu-prof", `--cpu-prof-dir=${path.join(root, "bench/results/profiles")}`, `--cpu-prof-name=nudging-${name}.cpuprofile`]
    : []
  const child = spawn(process.execPath, [...profile, path.join(root, "bench/nudging/service.mjs")], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      DATABASE_POOL_MAX: "10",
      // The benchmark pushes one client far past the write routes' rate limits (issue 19): off.
      RATE_LIMIT_INGEST: "off",
      PLATFORM_OIDC_BASE_URL: issuer,
      PLATFORM_OIDC_AUDIENCE: "rec-platform",
      PLATFORM_POLICIES_POLICIES_DIR: path.join(root, "policies"),
      POLICY_WATCH: "false",
      WEBPUSH_ALLOWED_ENDPOINTS: "http://127.0.0.1:*",
      NUDGING_DELIVERY_POLL_SECONDS: "1",
      LOG_LEVEL: "warn",
      BENCH_PUSH_ORIGIN: pushOrigin,
      BENCH_OPERATIONS: values.operations,
      BENCH_CONCURRENCY: values.concurrency
    },
    stdio: ["pipe", "pipe", "inherit"]
  })
  const next = lines(child)
  const [pushesAtStart, connectionsAtStart] = [pushes, pushConnections]
  const { ready } = await next()
  const inProcessPushes = { pushes: pushes - pushesAtStart, connections: pushConnections - connectionsAtStart }
  if (values["no-http"]) {
    child.stdin.write("done\n")
    const { results } = await next()
    await new Promise((resolve) => child.once("exit", resolve))
    return { ...results, push_connections_in_process: inProcessPushes }
  }
  const pushesBefore = pushes
  const connectionsBefore = pushConnections
  console.log(`${name}: POST /ingest-event over HTTP, ${values.connections} connections, ${values.duration} s...`)
  let n = 0
  const target = {
    url: `http://127.0.0.1:${ready.port}/ingest-event`,
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    connections: Number(values.connections),
    duration: Number(values.duration),
    requests: [{
      setupRequest: (request) => ({
        ...request,
        body: JSON.stringify({
          event_type: "botanswer",
          user_id: `bench-${400 + (n++ % 400)}`,
          community_id: "bench-community",
          facts: { facts_version: "1.0", scenario: "botanswer", status: "answered" }
        })
      })
    }]
  }
  await run({ ...target, duration: 2 })
  const result = await run(target)
  child.stdin.write("done\n")
  const { results } = await next()
  await new Promise((resolve) => child.once("exit", resolve))
  return {
    ...results,
    ingest_http: {
      per_second: Math.round(result.requests.average),
      p50_ms: result.latency.p50,
      p99_ms: result.latency.p99,
      statuses: { ...Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count])), errors: result.errors + result.timeouts }
    },
    pushes_received_during_http: pushes - pushesBefore,
    push_connections_in_process: inProcessPushes,
    push_connections_during_http: pushConnections - connectionsBefore
  }
}

// ---------------------------------------------------------------------------------------------
// Both backends

const results = {
  date: new Date().toISOString(),
  machine: { cpu: os.cpus()[0]?.model ?? "unknown", cores: os.cpus().length, load_average_1m: Math.round(os.loadavg()[0] * 100) / 100 },
  node: process.version,
  backends: {}
}
if (values.backend !== "postgres") results.backends.pglite = await measureBackend("PGlite", "pglite://memory")

const adminUrl = process.env.TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
const admin = new Pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 })
const database = `rec_bench_nudging_${Date.now().toString(36)}`
const reachable = values.backend === "pglite" ? false : await admin.connect().then(() => true, (error) => {
  results.backends.postgres = { skipped: `PostgreSQL at ${adminUrl} is not reachable: ${error.message}` }
  return false
})
if (reachable) {
  await admin.query(`CREATE DATABASE ${Pg.escapeIdentifier(database)} TEMPLATE template0`)
  try {
    const url = new URL(adminUrl)
    url.pathname = `/${database}`
    results.backends.postgres = await measureBackend("PostgreSQL", url.toString())
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${Pg.escapeIdentifier(database)} WITH (FORCE)`)
    await admin.end()
  }
}
pushService.close()

// ---------------------------------------------------------------------------------------------
// Report

const row = (name, r) =>
  `| ${name.padEnd(34)} | ${String(r.per_second).padStart(7)} | ${String(r.p50_ms).padStart(7)} | ${String(r.p99_ms).padStart(7)} | ${String(r.mean_ms ?? "").padStart(7)} |`
console.log("")
console.log(`${results.machine.cpu} x${results.machine.cores}, Node ${process.version}, load ${results.machine.load_average_1m}`)
for (const [name, r] of Object.entries(results.backends)) {
  if (r.skipped) {
    console.log(`\n${name}: skipped (${r.skipped})`)
    continue
  }
  const base = (r.baseline.mean_ms + r.baseline_again.mean_ms) / 2
  r.ratio = Math.round((r.ingest_in_process.mean_ms / base) * 100) / 100
  r.ratio_without_deliveries = Math.round((r.ingest_without_deliveries.mean_ms / base) * 100) / 100
  r.goal_at_most_4x = r.ratio <= 4
  console.log(`\n${name}`)
  console.log(`| ${"run".padEnd(34)} |   ops/s | p50 ms  | p99 ms  | mean ms |`)
  console.log(`|${"-".repeat(36)}|${"-".repeat(9)}|${"-".repeat(9)}|${"-".repeat(9)}|${"-".repeat(9)}|`)
  console.log(row("baseline: notification INSERT", r.baseline))
  console.log(row("ingest, recipients without push", r.ingest_without_deliveries))
  console.log(row("ingest with web push (in process)", r.ingest_in_process))
  console.log(row("baseline again", r.baseline_again))
  if (r.ingest_http) console.log(row("POST /ingest-event (HTTP)", r.ingest_http))
  console.log(`ingest with web push / baseline (mean latency): ${r.ratio} (goal <= 4: ${r.goal_at_most_4x ? "met" : "not met"}); ` +
    `without deliveries: ${r.ratio_without_deliveries}; ` +
    `in-process statuses ${JSON.stringify(r.ingest_in_process.statuses)}, HTTP ${JSON.stringify(r.ingest_http?.statuses)}`)
  console.log(`CPU of the measuring process per operation (ms): baseline ${r.baseline.cpu_ms_per_op} / ${r.baseline_again.cpu_ms_per_op}, ` +
    `ingest without push ${r.ingest_without_deliveries.cpu_ms_per_op}, with web push ${r.ingest_in_process.cpu_ms_per_op} ` +
    `(then ${r.backlog_cpu_ms} ms in all to send the pushes left after the runs)`)
  console.log(`  of which the main thread (the event loop of the ingests): baseline ${r.baseline.main_thread_cpu_ms_per_op} / ` +
    `${r.baseline_again.main_thread_cpu_ms_per_op}, ingest without push ${r.ingest_without_deliveries.main_thread_cpu_ms_per_op}, ` +
    `with web push ${r.ingest_in_process.main_thread_cpu_ms_per_op}`)
  if (r.baseline.postgres_cpu_ms_per_op !== undefined) {
    console.log(`CPU of the PostgreSQL backends (and WAL writer) per operation (ms): baseline ${r.baseline.postgres_cpu_ms_per_op} / ` +
      `${r.baseline_again.postgres_cpu_ms_per_op}, ingest without push ${r.ingest_without_deliveries.postgres_cpu_ms_per_op}, ` +
      `with web push ${r.ingest_in_process.postgres_cpu_ms_per_op}`)
  }
  console.log(`CPU of this process (the local push service) per operation (ms): ingest without push ` +
    `${r.ingest_without_deliveries.receiver_cpu_ms_per_op}, with web push ${r.ingest_in_process.receiver_cpu_ms_per_op}`)
  console.log(`deliveries ${JSON.stringify(r.deliveries)}; the in-process runs' pushes were all sent ${r.backlog_after_in_process_ms} ms after them; ` +
    `after the HTTP run, ${r.drain_ms} ms (pending then: ${r.pending_after_drain}); ` +
    `pushes received by the local push service for the HTTP run: ${r.pushes_received_during_http}`)
  console.log(`connections opened to the local push service: ${r.push_connections_in_process.connections} for the in-process runs' ` +
    `${r.push_connections_in_process.pushes} pushes (warm-up included)` +
    (r.ingest_http ? `, ${r.push_connections_during_http} for the HTTP run's ${r.pushes_received_during_http}` : ""))
}
fs.mkdirSync(path.join(root, "bench/results"), { recursive: true })
fs.writeFileSync(path.join(root, "bench/results/nudging.json"), JSON.stringify(results, null, 2))
process.exit(0)
