#!/usr/bin/env node
// Flexibility service on PostgreSQL: the request paths (create, list, settle) next to the same
// SQL run bare on node-postgres in the same run, and one settlement run of 10,000 commitments
// against the digital-twin simulator (README.md). Needs a build (`pnpm build`) and PostgreSQL
// (TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres).
//
//   node bench/flexibility/run.mjs [--duration 5] [--connections 20] [--settle 10000]
//
// 1. creates a database of its own (dropped at the end) and starts, each in its own process,
//    the dev identity provider, the simulator with a synthetic community of `--settle` members,
//    and the flexibility service (`services/flexibility/dist/main.js`, production defaults,
//    logs at warn); a small node:http stand-in answers the nudging service's ingest (the
//    service under test sends its settled nudges there), and MQTT is the machine's Mosquitto
//    (else an aedes broker in this process);
// 2. baseline: the service's own statements with node-postgres (pool of 10, as the service's),
//    `--connections` at a time for `--duration` seconds each: INSERT ... RETURNING, the list's
//    page + count, UPDATE ... RETURNING;
// 3. the service: POST /api/commitments (svc-flexibility creating for users), GET /api/commitments
//    (a user's page of 50 with the total), PATCH /api/commitments/{id}/settle, with autocannon at
//    the same concurrency; the ratio baseline / service per path (goal: at most 4);
// 4. export: the whole table (over 200,000 rows by then) streamed, its time and the service's memory;
// 5. settlement: `--settle` committed windows of yesterday, one per synthetic member, then a
//    completed `rec-flexibility-flow` run published on MQTT; the time until every one is settled
//    (goal: under 30 s) and until every settled nudge went out, the service's peak memory;
// 6. prints a table and writes bench/results/flexibility.json.
/* global fetch, URLSearchParams, setInterval, clearInterval */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { cpuMicros, freePort, root, run, startProcess, stopAll, waitFor } from "../lib/processes.mjs"

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    connections: { type: "string", default: "20" },
    settle: { type: "string", default: "10000" },
    warmup: { type: "string", default: "2" },
    // --profile <dir>: the service writes a CPU profile there (node --cpu-prof) when it stops.
    profile: { type: "string" },
    // --only list: one of create, list, settle, export, settlement, for profiling.
    only: { type: "string" },
    // --heap 256: the service's old-generation limit in MB (--max-old-space-size), to show what
    // it needs rather than what V8 lets it grow to.
    heap: { type: "string" }
  }
})
const duration = Number(values.duration)
const connections = Number(values.connections)
const settleCount = Number(values.settle)
const warmup = Number(values.warmup)

const requireFrom = (pkg) => createRequire(path.join(root, pkg, "package.json"))
const pg = requireFrom("services/flexibility")("pg")
const mqtt = requireFrom("services/flexibility")("mqtt")

const adminUrl = process.env.TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
const database = `rec_bench_flexibility_${Date.now().toString(36)}`
const databaseUrl = (() => {
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  return url.toString()
})()

const admin = async (sql) => {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

// --- infrastructure ------------------------------------------------------------------------

await admin(`CREATE DATABASE ${database} TEMPLATE template0`)
let dropped = false
const dropDatabase = async () => {
  if (dropped) return
  dropped = true
  await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch((e) => console.error(`could not drop ${database}: ${e.message}`))
}

const idpPort = await freePort()
const issuer = `http://127.0.0.1:${idpPort}`
startProcess("packages/dev-idp/dist/main.js", { env: { PORT: String(idpPort), HOST: "127.0.0.1", DEV_IDP_ISSUER: issuer, LOG_LEVEL: "warn" } })
await waitFor(`${issuer}/health`)

const tokenOf = async (body, client) => {
  const response = await fetch(`${issuer}/protocol/openid-connect/token`, {
    method: "POST",
    headers: { authorization: `Basic ${Buffer.from(`${client}:dev-only-secret-${client}`).toString("base64")}` },
    body: new URLSearchParams(body)
  })
  return (await response.json()).access_token
}
const adminToken = await tokenOf({ grant_type: "client_credentials" }, "svc-flexibility")
const userToken = await tokenOf({ grant_type: "password", username: "participant", password: "participant" }, "rec-cli")
const participant = JSON.parse(Buffer.from(userToken.split(".")[1], "base64url").toString()).sub

const community = "bench-community"
const simPort = await freePort()
const simulator = startProcess("packages/digital-twin/dist/simulator/main.js", {
  env: {
    PORT: String(simPort),
    HOST: "127.0.0.1",
    PLATFORM_OIDC_BASE_URL: issuer,
    DIGITAL_TWIN_SYNTHETIC_COMMUNITIES: `${community}:${settleCount}`,
    LOG_LEVEL: "warn"
  }
})
await waitFor(`http://127.0.0.1:${simPort}/health`)

// The nudging service's ingest, answered at once (the benchmark is not about nudging).
const ingested = { settled: 0, other: 0, lastAt: 0, scheduled: 0, scheduleCalls: 0, ingestCalls: 0 }
const nudging = http.createServer((request, response) => {
  const chunks = []
  request.on("data", (c) => chunks.push(c))
  request.on("end", () => {
    if (request.method === "POST" && request.url.endsWith("/ingest-events/batch")) {
      const { events } = JSON.parse(Buffer.concat(chunks).toString())
      for (const event of events) {
        if (event.event_type === "commitment_settled") ingested.settled++
        else ingested.other++
      }
      ingested.ingestCalls++
      ingested.lastAt = Date.now()
      response.writeHead(200, { "content-type": "application/json" })
      response.end(JSON.stringify({
        results: events.map((e) => ({
          status: 204, event_type: e.event_type, user_id: e.user_id ?? "", community_id: e.community_id ?? null, outcomes: [], detail: "no rule"
        }))
      }))
    } else if (request.method === "POST" && request.url.endsWith("/ingest-event")) {
      ingested.ingestCalls++
      const event = JSON.parse(Buffer.concat(chunks).toString())
      if (event.event_type === "commitment_settled") ingested.settled++
      else ingested.other++
      ingested.lastAt = Date.now()
      response.writeHead(204).end()
    } else if (request.method === "POST" && request.url.endsWith("/scheduled-events/batch")) {
      const { events } = JSON.parse(Buffer.concat(chunks).toString())
      ingested.scheduled += events.length
      ingested.scheduleCalls++
      response.writeHead(200, { "content-type": "application/json" })
      response.end(JSON.stringify({
        created: events.length,
        replaced: 0,
        events: events.map((e) => ({ id: crypto.randomUUID(), external_key: e.external_key ?? null, created: true }))
      }))
    } else if (request.method === "POST" && request.url.endsWith("/scheduled-events")) {
      ingested.scheduled++
      ingested.scheduleCalls++
      response.writeHead(201, { "content-type": "application/json" })
      const now = new Date().toISOString()
      const event = JSON.parse(Buffer.concat(chunks).toString())
      response.end(JSON.stringify({
        created: true,
        event: {
          id: crypto.randomUUID(), external_key: event.external_key ?? null, event_type: event.event_type, user_id: event.user_id ?? null,
          community_id: event.community_id ?? null, trigger_at: event.trigger_at, facts: event.facts, status: "pending",
          http_status: null, outcomes: [], last_error: null, created_at: now, updated_at: now, dispatched_at: null
        }
      }))
    } else {
      response.writeHead(204).end()
    }
  })
})
await new Promise((resolve) => nudging.listen(0, "127.0.0.1", resolve))
const nudgingUrl = `http://127.0.0.1:${nudging.address().port}`

// MQTT: the machine's Mosquitto, else aedes here.
const mosquittoUp = await new Promise((resolve) => {
  const socket = net.connect(1883, "127.0.0.1", () => {
    socket.destroy()
    resolve(true)
  })
  socket.on("error", () => resolve(false))
})
let mqttPort = 1883
let brokerName = "Mosquitto 127.0.0.1:1883"
if (!mosquittoUp) {
  const aedes = requireFrom("packages/mqtt")("aedes")
  const broker = await aedes.Aedes.createBroker()
  const server = net.createServer(broker.handle)
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  mqttPort = server.address().port
  brokerName = `aedes 127.0.0.1:${mqttPort} (in the benchmark's process)`
}
const topicPrefix = `bench-${crypto.randomBytes(4).toString("hex")}/`

const servicePort = await freePort()
const service = startProcess("services/flexibility/dist/main.js", {
  nodeArgs: [
    ...(values.profile === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${path.resolve(values.profile)}`]),
    ...(values.heap === undefined ? [] : [`--max-old-space-size=${Number(values.heap)}`])
  ],
  env: {
    PORT: String(servicePort),
    HOST: "127.0.0.1",
    // The benchmark pushes one client far past the write routes' rate limits (issue 19): off.
    RATE_LIMIT_COMMITMENTS: "off",
    RATE_LIMIT_SETTLE: "off",
    DATABASE_URL: databaseUrl,
    PLATFORM_OIDC_BASE_URL: issuer,
    PLATFORM_OIDC_AUDIENCE: "rec-platform",
    PLATFORM_OIDC_CLIENT_ID: "svc-flexibility",
    PLATFORM_OIDC_CLIENT_SECRET: "dev-only-secret-svc-flexibility",
    PLATFORM_POLICIES_POLICIES_DIR: path.join(root, "policies"),
    POLICY_WATCH: "false",
    DIGITAL_TWIN_API_URL: `http://127.0.0.1:${simPort}`,
    NUDGING_API_URL: nudgingUrl,
    REC_REGISTRY_URL: nudgingUrl,
    PLATFORM_MQTT_HOST: "127.0.0.1",
    PLATFORM_MQTT_PORT: String(mqttPort),
    PLATFORM_MQTT_TOPIC_PREFIX: topicPrefix,
    LOG_LEVEL: "warn"
  }
})
await waitFor(`http://127.0.0.1:${servicePort}/ready`)
const base = `http://127.0.0.1:${servicePort}`

// The service's announcements of new commitments, counted (every commitment made is announced).
const announced = { count: 0 }
const listener = await mqtt.connectAsync(`mqtt://127.0.0.1:${mqttPort}`, { clientId: `bench-listen-${crypto.randomBytes(4).toString("hex")}` })
listener.on("message", () => announced.count++)
await listener.subscribeAsync(`${topicPrefix}rec/flexibility/committed/#`, { qos: 1 })

const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 })
// The baseline's table: the service's own, copied with its defaults, constraints and indexes.
await pool.query("CREATE SCHEMA baseline")
await pool.query("CREATE TABLE baseline.flexibility_commitments (LIKE flexibility.flexibility_commitments INCLUDING ALL)")

const columns = "id, user_id, suggestion_id, suggestion_type, community_id, device_id, period_start, period_end, committed_at, " +
  "settled_at, reminded_at, cancelled_at, status, reward_points_estimated, reward_points_actual, actual_kwh"

/** `rows` committed rows of `users` users, windows starting in an hour, made in one statement. */
const seed = (schema, rows, users, prefix) =>
  pool.query(
    `INSERT INTO ${schema}.flexibility_commitments (user_id, suggestion_id, suggestion_type, period_start, period_end, reward_points_estimated)
     SELECT $1 || (i % $3), $2 || i, 'shift-consumption', now() + interval '1 hour', now() + interval '2 hours', 10
     FROM generate_series(1, $4) AS i`,
    [`${prefix}-user-`, `${prefix}-s-`, users, rows]
  )

// --- measurements ----------------------------------------------------------------------------

const summary = (result) => ({
  requests_per_second: Math.round(result.requests.average),
  p50_ms: result.latency.p50,
  p99_ms: result.latency.p99,
  non_2xx: result.non2xx,
  errors: result.errors + result.timeouts
})

/** `connections` loops running `operation(i)` for `seconds`; operations per second and latency. */
const loop = async (seconds, operation) => {
  const latencies = []
  let next = 0
  let errors = 0
  const end = Date.now() + seconds * 1000
  const worker = async () => {
    while (Date.now() < end) {
      const i = next++
      const started = process.hrtime.bigint()
      try {
        await operation(i)
      } catch (e) {
        errors++
        if (errors === 1) console.error(`baseline error: ${e.message}`)
      }
      latencies.push(Number(process.hrtime.bigint() - started) / 1e6)
    }
  }
  const started = Date.now()
  await Promise.all(Array.from({ length: connections }, worker))
  const elapsed = (Date.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  const at = (q) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] * 10) / 10
  return { requests_per_second: Math.round(latencies.length / elapsed), p50_ms: at(0.5), p99_ms: at(0.99), non_2xx: 0, errors }
}

/** autocannon against the service, with its CPU time per answered request. */
/** Resolves once the nudging stand-in heard nothing for 300 ms: the background work of the requests is done. */
const nudgingQuiet = () =>
  new Promise((resolve) => {
    let seen = -1
    const poll = () => {
      const now = ingested.scheduleCalls + ingested.ingestCalls
      if (now === seen) resolve()
      else {
        seen = now
        setTimeout(poll, 300)
      }
    }
    poll()
  })

/**
 * autocannon against the service, with its CPU time per answered request: until the background
 * work the requests started (announcements, reminders, nudges) is done too, so work left for
 * after the measured seconds is not left out.
 */
const measured = async (options) => {
  await run({ ...options, connections, duration: warmup })
  await nudgingQuiet()
  const before = cpuMicros(service.pid)
  const result = await run({ ...options, connections, duration })
  await nudgingQuiet()
  const cpu = cpuMicros(service.pid) - before
  return { ...summary(result), answered: result["2xx"], cpu_us_per_request: Math.round((10 * cpu) / Math.max(1, result["2xx"])) / 10 }
}

const json = { "content-type": "application/json" }
const window = () => {
  const start = Date.now() + 3_600_000
  return { period_start: new Date(start).toISOString(), period_end: new Date(start + 3_600_000).toISOString() }
}

console.log(`PostgreSQL ${new URL(adminUrl).host}, MQTT ${brokerName}; ${connections} at a time, ${warmup} s warm-up + ${duration} s per path`)

const measureCreate = async () => {
  console.log("create: baseline INSERT ... RETURNING, then POST /api/commitments ...")
  let n = 0
  await loop(warmup, () => pool.query("SELECT 1"))
  const baseline = await loop(duration, (i) =>
    pool.query(
      `INSERT INTO baseline.flexibility_commitments (user_id, suggestion_id, suggestion_type, community_id, device_id, period_start, period_end, status, reward_points_estimated)
       VALUES ($1, $2, 'shift-consumption', $3, $4, $5, $6, 'committed', 5) ON CONFLICT DO NOTHING RETURNING ${columns}`,
      [`b-user-${i % 1000}`, `b-s-${i}`, community, `meter-${i % 1000}`, window().period_start, window().period_end]
    ))
  const service = await measured({
    url: `${base}/api/commitments`,
    method: "POST",
    headers: { ...json, authorization: `Bearer ${adminToken}` },
    requests: [{
      setupRequest: (request) => ({
        ...request,
        body: JSON.stringify({
          user_id: `h-user-${n % 1000}`,
          suggestion_id: `h-s-${n++}`,
          community_id: community,
          device_id: `meter-${n % 1000}`,
          reward_points_estimated: 5,
          ...window()
        })
      })
    }]
  })
  const { rows: [{ n: created }] } = await pool.query("SELECT count(*)::int AS n FROM flexibility.flexibility_commitments WHERE suggestion_id LIKE 'h-s-%'")
  service.reminders = { commitments: created, scheduled: ingested.scheduled, calls: ingested.scheduleCalls, announced: announced.count }
  console.log(`  ${created} commitments made, ${announced.count} announced on MQTT, ${ingested.scheduled} reminders scheduled in ${ingested.scheduleCalls} calls`)
  return { baseline, service }
}

/** A user with 120 commitments: the first page of 50 and the total. */
const measureList = async () => {
  console.log("list: baseline page + count, then GET /api/commitments ...")
  await seed("flexibility", 120, 1, `list-${participant}`)
  await pool.query("UPDATE flexibility.flexibility_commitments SET user_id = $1 WHERE user_id = $2", [participant, `list-${participant}-user-0`])
  await seed("baseline", 120, 1, "list")
  const baseline = await loop(duration, () =>
    Promise.all([
      pool.query(`SELECT ${columns} FROM baseline.flexibility_commitments WHERE user_id = $1 ORDER BY committed_at DESC, id DESC LIMIT 50 OFFSET 0`, ["list-user-0"]),
      pool.query("SELECT count(*) AS total FROM baseline.flexibility_commitments WHERE user_id = $1", ["list-user-0"])
    ]))
  const service = await measured({ url: `${base}/api/commitments?limit=50`, headers: { authorization: `Bearer ${userToken}` } })
  return { baseline, service }
}

/** A pool of committed rows, each settled once. */
const measureSettle = async () => {
  console.log("settle: baseline UPDATE ... RETURNING, then PATCH /api/commitments/{id}/settle ...")
  const pending = 200_000
  await seed("baseline", pending, 1000, "settle")
  await seed("flexibility", pending, 1000, "settle")
  const baselineIds = (await pool.query("SELECT id FROM baseline.flexibility_commitments WHERE suggestion_id LIKE 'settle-s-%'")).rows.map((r) => r.id)
  const serviceIds = (await pool.query("SELECT id FROM flexibility.flexibility_commitments WHERE suggestion_id LIKE 'settle-s-%'")).rows.map((r) => r.id)
  const baseline = await loop(duration, (i) =>
    pool.query(
      `UPDATE baseline.flexibility_commitments SET status = 'settled', reward_points_actual = $2, actual_kwh = $3, settled_at = now()
       WHERE id = $1 AND status = 'committed' RETURNING ${columns}`,
      [baselineIds[i], 12, 1.2]
    ))
  let s = 0
  const settledBefore = ingested.settled
  const callsBefore = ingested.ingestCalls
  const service = await measured({
    url: base,
    method: "PATCH",
    headers: { ...json, authorization: `Bearer ${adminToken}` },
    requests: [{
      setupRequest: (request) => ({
        ...request,
        path: `/api/commitments/${serviceIds[s++]}/settle`,
        body: JSON.stringify({ reward_points_actual: 12, actual_kwh: 1.2 })
      })
    }]
  })
  // The settled nudges of the PATCHes went out in the background (`measured` waited for them).
  service.nudges = { settled: ingested.settled - settledBefore, calls: ingested.ingestCalls - callsBefore }
  console.log(`  ${s} settle requests (warm-up included), ${service.nudges.settled} settled nudges in ${service.nudges.calls} calls`)
  return { baseline, service }
}

/** `settleCount` commitments of yesterday against the simulator, one run on MQTT. */
const measureSettlement = async () => {
  console.log(`settlement: ${settleCount} commitments of yesterday, one run on MQTT ...`)
  const yesterday = new Date()
  yesterday.setUTCHours(0, 0, 0, 0)
  yesterday.setUTCDate(yesterday.getUTCDate() - 1)
  const day = yesterday.toISOString().slice(0, 10)
  const width = String(settleCount).length
  await pool.query(
    `INSERT INTO flexibility.flexibility_commitments
       (user_id, suggestion_id, suggestion_type, community_id, device_id, period_start, period_end, reward_points_estimated)
     SELECT 'sim-${community}-' || lpad(i::text, ${width}, '0'), 'run-s-' || i, 'shift-consumption', $1,
            'member-${community}-' || lpad(i::text, ${width}, '0') || '-meter',
            $2::timestamptz + ((i % 20) || ' hours')::interval, $2::timestamptz + ((i % 20 + 1 + i % 3) || ' hours')::interval, 10
     FROM generate_series(1, $3) AS i`,
    [community, yesterday.toISOString(), settleCount]
  )
  const status = () => fs.readFileSync(`/proc/${service.pid}/status`, "utf8")
  const kib = (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status())?.[1] ?? 0)
  const rssBefore = kib("VmRSS")
  const nudgesBefore = ingested.settled
  const ingestCallsBefore = ingested.ingestCalls
  const cpuBefore = cpuMicros(service.pid)
  const publisher = await mqtt.connectAsync(`mqtt://127.0.0.1:${mqttPort}`, { clientId: `bench-${crypto.randomBytes(4).toString("hex")}` })
  const started = Date.now()
  await publisher.publishAsync(`${topicPrefix}rec/pipelines/runs/rec`, JSON.stringify({
    flow: "rec-flexibility-flow",
    namespace: "rec",
    status: "completed",
    run_id: `bench-${crypto.randomUUID()}`,
    timestamp: new Date().toISOString(),
    period: day
  }), { qos: 1 })
  let rssPeak = rssBefore
  let settledAt = 0
  while (Date.now() - started < 180_000) {
    rssPeak = Math.max(rssPeak, kib("VmRSS"))
    const { rows } = await pool.query(
      "SELECT count(*)::int AS n FROM flexibility.flexibility_commitments WHERE suggestion_id LIKE 'run-s-%' AND status = 'settled'"
    )
    if (rows[0].n >= settleCount && settledAt === 0) settledAt = Date.now()
    if (settledAt !== 0 && ingested.settled - nudgesBefore >= settleCount) break
    await new Promise((r) => setTimeout(r, 50))
  }
  const nudgedAt = ingested.settled - nudgesBefore >= settleCount ? ingested.lastAt : 0
  const cpu = (cpuMicros(service.pid) - cpuBefore) / 1e6
  await publisher.endAsync()
  const { rows: [check] } = await pool.query(
    `SELECT count(*)::int AS settled, count(*) FILTER (WHERE reward_points_actual IS NULL OR actual_kwh IS NULL)::int AS incomplete
     FROM flexibility.flexibility_commitments WHERE suggestion_id LIKE 'run-s-%' AND status = 'settled'`
  )
  return {
    commitments: settleCount,
    settled: check.settled,
    incomplete: check.incomplete,
    seconds_to_settled: settledAt === 0 ? null : Math.round((settledAt - started) / 100) / 10,
    seconds_to_nudged: nudgedAt === 0 ? null : Math.round((nudgedAt - started) / 100) / 10,
    nudges_sent: ingested.settled - nudgesBefore,
    nudge_calls: ingested.ingestCalls - ingestCallsBefore,
    service_cpu_seconds: Math.round(cpu * 10) / 10,
    service_rss_mb_before: Math.round(rssBefore / 1024),
    service_rss_mb_peak: Math.round(rssPeak / 1024),
    service_peak_rss_mb_lifetime: Math.round(kib("VmHWM") / 1024)
  }
}

/** The whole table through GET /api/commitments/export: time, bytes, the service's memory meanwhile. */
const measureExport = async () => {
  console.log("export: every commitment, streamed ...")
  const { rows: [{ n }] } = await pool.query("SELECT count(*)::int AS n FROM flexibility.flexibility_commitments")
  const status = () => fs.readFileSync(`/proc/${service.pid}/status`, "utf8")
  const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(status())?.[1] ?? 0)
  const before = rss()
  let peak = before
  const timer = setInterval(() => (peak = Math.max(peak, rss())), 20)
  const started = Date.now()
  const response = await fetch(`${base}/api/commitments/export`, { headers: { authorization: `Bearer ${adminToken}` } })
  let bytes = 0
  let rows = 0
  for await (const chunk of response.body) {
    bytes += chunk.length
    for (const byte of chunk) if (byte === 0x7b) rows++ // one "{" per row: the records hold no nested objects
  }
  clearInterval(timer)
  return {
    rows_in_table: n,
    rows_exported: rows,
    megabytes: Math.round(bytes / 1e5) / 10,
    seconds: Math.round((Date.now() - started) / 100) / 10,
    service_rss_mb_before: Math.round(before / 1024),
    service_rss_mb_peak: Math.round(peak / 1024)
  }
}

const wanted = (name) => values.only === undefined || values.only === name
const ratio = (p) => ({ ...p, ratio: Math.round((p.baseline.requests_per_second / Math.max(1, p.service.requests_per_second)) * 100) / 100 })
const paths = {}
if (wanted("create")) paths.create = ratio(await measureCreate())
if (wanted("list")) paths.list = ratio(await measureList())
if (wanted("settle")) paths.settle = ratio(await measureSettle())
const exported = wanted("export") ? await measureExport() : null
const settlement = wanted("settlement") ? await measureSettlement() : null

// --- report ----------------------------------------------------------------------------------

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
  postgres: (await pool.query("SHOW server_version")).rows[0].server_version,
  broker: brokerName,
  connections,
  duration_s: duration,
  paths,
  export: exported,
  settlement
}
results.goals = {
  paths_within_4x: Object.values(results.paths).every((p) => p.ratio <= 4),
  settlement_under_30s: settlement === null ? null : settlement.seconds_to_settled !== null && settlement.seconds_to_settled < 30
}

const row = (name, r) =>
  `| ${name.padEnd(44)} | ${String(r.requests_per_second).padStart(7)} | ${String(r.p50_ms).padStart(6)} | ${String(r.p99_ms).padStart(6)} | ${String(r.cpu_us_per_request ?? "").padStart(6)} | ${String(r.non_2xx + r.errors).padStart(6)} |`
console.log("")
console.log(`${results.machine.cpu} x${results.machine.cores}, Node ${process.version}, PostgreSQL ${results.postgres}, load ${results.machine.load_average_1m}`)
console.log(`| ${"path".padEnd(44)} |   ops/s | p50 ms | p99 ms | CPU µs | errors |`)
console.log(`|${"-".repeat(46)}|---------|--------|--------|--------|--------|`)
const labels = {
  create: ["baseline INSERT ... RETURNING", "POST /api/commitments"],
  list: ["baseline page of 50 + count", "GET /api/commitments?limit=50"],
  settle: ["baseline UPDATE ... RETURNING", "PATCH /api/commitments/{id}/settle"]
}
for (const [name, p] of Object.entries(paths)) {
  console.log(row(labels[name][0], p.baseline))
  console.log(row(labels[name][1], p.service))
}
for (const [name, p] of Object.entries(paths)) console.log(`${name}: baseline / service = ${p.ratio} (goal <= 4)`)
if (exported !== null) {
  console.log(
    `export of ${exported.rows_in_table} commitments: ${exported.rows_exported} rows, ${exported.megabytes} MB in ${exported.seconds} s; ` +
      `service RSS ${exported.service_rss_mb_before} -> peak ${exported.service_rss_mb_peak} MB`
  )
}
if (settlement !== null) {
  const st = settlement
  console.log(
    `settlement of ${st.commitments}: ${st.settled} settled in ${st.seconds_to_settled} s (goal < 30 s: ${results.goals.settlement_under_30s ? "met" : "not met"}), ` +
      `nudged in ${st.seconds_to_nudged} s (${st.nudges_sent} nudges in ${st.nudge_calls} calls); service CPU ${st.service_cpu_seconds} s, RSS ${st.service_rss_mb_before} -> peak ${st.service_rss_mb_peak} MB`
  )
}

fs.mkdirSync(path.join(root, "bench/results"), { recursive: true })
fs.writeFileSync(path.join(root, "bench/results/flexibility.json"), JSON.stringify(results, null, 2) + "\n")
await pool.end()
await listener.endAsync()
stopAll()
simulator.kill("SIGTERM")
nudging.close()
await new Promise((r) => setTimeout(r, 500))
await dropDatabase()
process.exit(0)
