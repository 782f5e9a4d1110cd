#!/usr/bin/env node
// What the participant gateway adds to what it relays (README.md), measured in one run next to
// the upstreams called directly. Needs a build: `pnpm build`.
//
//   node bench/participant-gateway/run.mjs [--iterations 300] [--warmup 40] [--concurrency 4]
//
// 1. starts the dev identity provider, the digital twin simulator, an assistant stand-in
//    (assistant-stub.mjs: the chat's SSE frames, a token every 10 ms) and the gateway
//    (services/participant-gateway/dist/main.js, PGlite in memory, logs off), each in its own
//    process, and gets the access token of the user `participant` (password grant);
// 2. GET /api/overview (the current month) against the same work done directly: the digital
//    twin's profile and assets, then the month's meter readings and shared energy, with the same
//    token and the same concurrency (two calls at a time), summed as the gateway sums them. Two
//    gateways: as deployed (an overview is reused within its quarter hour, OVERVIEW_CACHE_TTL)
//    and with OVERVIEW_CACHE_TTL=0 (every request asks the digital twin: the relaying cost);
// 3. POST /api/assistant/chat against POST /api/chat directly: the time to the first token frame
//    and to the end of the stream, with the stand-in (a token every 10 ms: the relaying alone)
//    and with the assistant itself (services/assistant/dist/main.js, offline answerer, PGlite in
//    memory: retrieval and answer included, as users see it);
// 4. each at concurrency 1 and `--concurrency`, the two sides interleaved in blocks so that the
//    machine's noise falls on both; prints p50/p90/p99, the gateway's overhead at p50 (the
//    difference of the medians) and its CPU time per request, and writes
//    bench/results/participant-gateway.json.
/* global fetch, URLSearchParams, performance, FormData, Blob */
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { cpuMicros, freePort, root, startProcess, waitFor } from "../lib/processes.mjs"

const { values } = parseArgs({
  options: {
    iterations: { type: "string", default: "300" },
    warmup: { type: "string", default: "40" },
    concurrency: { type: "string", default: "4" },
    block: { type: "string", default: "20" }
  }
})
const iterations = Number(values.iterations)
const warmup = Number(values.warmup)
const concurrency = Number(values.concurrency)
const block = Number(values.block)
const participant = "52409e36-6d23-45ed-bb1e-d6c564a2f454"

// --- processes ---------------------------------------------------------------------------------

const idpPort = await freePort()
const issuer = `http://127.0.0.1:${idpPort}`
startProcess("packages/dev-idp/dist/main.js", {
  env: { PORT: String(idpPort), HOST: "127.0.0.1", DEV_IDP_ISSUER: issuer, LOG_LEVEL: "warn" }
})
await waitFor(`${issuer}/health`)
const tokenResponse = await fetch(`${issuer}/protocol/openid-connect/token`, {
  method: "POST",
  headers: { authorization: `Basic ${Buffer.from("rec-cli:dev-only-secret-rec-cli").toString("base64")}` },
  body: new URLSearchParams({ grant_type: "password", username: "participant", password: "participant" })
})
const token = (await tokenResponse.json()).access_token

const twinPort = await freePort()
const twin = `http://127.0.0.1:${twinPort}`
startProcess("packages/digital-twin/dist/simulator/main.js", {
  env: { PORT: String(twinPort), HOST: "127.0.0.1", PLATFORM_OIDC_BASE_URL: issuer, LOG_LEVEL: "warn" }
})
await waitFor(`${twin}/health`)

const stub = startProcess("bench/participant-gateway/assistant-stub.mjs", { stdout: "pipe" })
const stubPort = await new Promise((resolve) => stub.stdout.once("data", (line) => resolve(Number(String(line).trim()))))
const assistant = `http://127.0.0.1:${stubPort}`

// The assistant itself, offline (local embedder, extractive answerer), with a document to find.
const assistantPort = await freePort()
const realAssistant = `http://127.0.0.1:${assistantPort}`
const assistantDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-assistant-"))
process.on("exit", () => fs.rmSync(assistantDir, { recursive: true, force: true }))
startProcess("services/assistant/dist/main.js", {
  env: {
    PORT: String(assistantPort),
    HOST: "127.0.0.1",
    // The benchmark pushes one client far past the write routes' rate limits (issue 19): off.
    RATE_LIMIT_CHAT: "off",
    RATE_LIMIT_UPLOAD: "off",
    PLATFORM_OIDC_BASE_URL: issuer,
    DATABASE_URL: "pglite://memory",
    ASSISTANT_STORAGE_DIR: assistantDir,
    ASSISTANT_CHAT_PROVIDER: "extractive",
    ASSISTANT_EMBEDDING_PROVIDER: "local",
    TRAINING_MATERIALS_SYNC_ON_START: "false",
    PLATFORM_POLICIES_POLICIES_DIR: path.join(root, "policies"),
    POLICY_WATCH: "false",
    LOG_LEVEL: "warn"
  }
})
await waitFor(`${realAssistant}/health`)

/** A gateway process with `env`; answers its URL and process. */
const startGateway = async (env = {}) => {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const child = startProcess("services/participant-gateway/dist/main.js", {
    env: {
      PORT: String(port),
      HOST: "127.0.0.1",
      // The benchmark pushes one client far past the write routes' rate limits (issue 19): off.
      RATE_LIMIT_WRITES: "off",
      PLATFORM_OIDC_BASE_URL: issuer,
      DIGITAL_TWIN_API_URL: twin,
      ASSISTANT_URL: assistant,
      DATABASE_URL: "pglite://memory",
      PLATFORM_POLICIES_POLICIES_DIR: path.join(root, "policies"),
      POLICY_WATCH: "false",
      LOG_LEVEL: "warn",
      ...env
    }
  })
  await waitFor(`${url}/ready`)
  return { url, child }
}

// As deployed (an overview reused within its quarter hour), and recomputing every request (the
// latter also in front of the assistant itself).
const { child: gateway, url: gatewayUrl } = await startGateway()
const { child: coldGateway, url: coldUrl } = await startGateway({ OVERVIEW_CACHE_TTL: "0 seconds", ASSISTANT_URL: realAssistant })
{
  const form = new FormData()
  form.append("file", new Blob([
    "# Shared energy\n\nShared energy is the minimum, hour by hour, of the energy the members of a community feed " +
      "into the grid and the energy they take from it. The incentive of the community is paid on the shared energy.\n"
  ], { type: "text/markdown" }), "shared.md")
  const uploaded = await fetch(`${realAssistant}/api/upload`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: form })
  if (uploaded.status !== 201) throw new Error(`upload to the assistant answered ${uploaded.status}: ${await uploaded.text()}`)
}

// --- the two sides of each measurement ---------------------------------------------------------

const proxyHeader = { "x-auth-request-access-token": token }
const bearer = { authorization: `Bearer ${token}` }

const json = async (url, init) => {
  const response = await fetch(url, init)
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${await response.text()}`)
  return response.json()
}

const first = await json(`${gatewayUrl}/api/overview`, { headers: proxyHeader })
console.log(`overview of ${first.period}: ${first.production_kwh} kWh produced, ${first.consumption_kwh} consumed, ` +
  `${first.shared_kwh} shared, ${first.incentive_eur} EUR`)

const overviewOf = (base) => async () => {
  const body = await json(`${base}/api/overview`, { headers: proxyHeader })
  if (body.period !== first.period) throw new Error("the month changed during the benchmark")
}

/** The gateway's work, done by the client: the same calls with the same concurrency, summed. */
const direct = async () => {
  const [profile, assets] = await Promise.all([
    json(`${twin}/participants/${participant}/profile`, { headers: bearer }),
    json(`${twin}/participants/${participant}/assets`, { headers: bearer })
  ])
  if (profile.membership === null) throw new Error("no membership")
  const meter = assets.items.find((a) => a.sensor_id !== null)
    // The gateway's window: the month up to the last quarter hour that ended.
  const end = new Date(Math.floor(Date.now() / 900_000) * 900_000).toISOString()
  const payload = JSON.stringify({ payload: { device_id: meter.sensor_id, start: first.from, end } })
  const post = (fetcher) =>
    json(`${twin}/participants/${participant}/values/${fetcher}`, {
      method: "POST",
      headers: { ...bearer, "content-type": "application/json" },
      body: payload
    })
  const [readings, shared] = await Promise.all([post("meters_data"), post("rec_virtual_consumption_per_device_15m")])
  let production = 0
  let consumption = 0
  let virtual = 0
  for (const r of readings.items) {
    production += r.production_kwh
    consumption += r.consumption_kwh
  }
  for (const v of shared.items) virtual += v.virtual_consumption_kwh
  return production + consumption + virtual
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })

/** One chat stream: ms to the first token frame and to the end. */
const chat = (base, pathName, headers) =>
  new Promise((resolve, reject) => {
    const url = new URL(base)
    const started = performance.now()
    let firstToken
    const request = http.request({
      agent,
      host: url.hostname,
      port: url.port,
      method: "POST",
      path: pathName,
      headers: { ...headers, "content-type": "application/json", accept: "text/event-stream" }
    }, (response) => {
      if (response.statusCode !== 200) reject(new Error(`${pathName} answered ${response.statusCode}`))
      response.setEncoding("utf8")
      response.on("data", (text) => {
        if (firstToken === undefined && text.includes("\"type\":\"token\"")) firstToken = performance.now() - started
      })
      response.on("end", () => resolve({ firstToken, total: performance.now() - started }))
    })
    request.on("error", reject)
    request.end(JSON.stringify({ message: "What is shared energy?" }))
  })

const chatDirect = () => chat(assistant, "/api/chat", bearer)
const chatGateway = () => chat(gatewayUrl, "/api/assistant/chat", proxyHeader)
const realDirect = () => chat(realAssistant, "/api/chat", bearer)
const realGateway = () => chat(coldUrl, "/api/assistant/chat", proxyHeader)

// --- measuring ---------------------------------------------------------------------------------

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
const stats = (samples) => {
  const sorted = [...samples].sort((a, b) => a - b)
  const r = (n) => Math.round(n * 100) / 100
  return { n: sorted.length, p50_ms: r(percentile(sorted, 50)), p90_ms: r(percentile(sorted, 90)), p99_ms: r(percentile(sorted, 99)) }
}

/** Runs `task` `count` times, `parallel` at a time; answers each run's result and duration. */
const load = async (task, count, parallel) => {
  const results = []
  let next = 0
  const worker = async () => {
    while (next < count) {
      next++
      const started = performance.now()
      const value = await task()
      results.push({ value, ms: performance.now() - started })
    }
  }
  await Promise.all(Array.from({ length: parallel }, worker))
  return results
}

/** Both sides, interleaved in blocks; the gateway's CPU time counted on its side only. */
const compare = async (directTask, gatewayTask, parallel, pid = gateway.pid) => {
  await load(directTask, warmup, parallel)
  await load(gatewayTask, warmup, parallel)
  const sides = { direct: [], gateway: [] }
  let cpu = 0
  for (let done = 0; done < iterations; done += block) {
    const n = Math.min(block, iterations - done)
    sides.direct.push(...await load(directTask, n, parallel))
    const before = cpuMicros(pid)
    sides.gateway.push(...await load(gatewayTask, n, parallel))
    cpu += cpuMicros(pid) - before
  }
  return { ...sides, cpuPerRequestMs: Math.round(cpu / iterations / 10) / 100 }
}

const results = { machine: os.cpus()[0]?.model, cpus: os.cpus().length, node: process.version, iterations, overview: {}, chat: {} }
const rows = []

for (const parallel of [1, concurrency]) {
  for (const [mode, base, pid] of [["cached", gatewayUrl, gateway.pid], ["recomputed", coldUrl, coldGateway.pid]]) {
    const o = await compare(direct, overviewOf(base), parallel, pid)
    const d = stats(o.direct.map((s) => s.ms))
    const g = stats(o.gateway.map((s) => s.ms))
    results.overview[`${mode}_c${parallel}`] = {
      direct: d,
      gateway: g,
      added_p50_ms: Math.round((g.p50_ms - d.p50_ms) * 100) / 100,
      gateway_cpu_ms: o.cpuPerRequestMs
    }
    rows.push([`overview ${mode}, concurrency ${parallel}`, d, g, o.cpuPerRequestMs])
  }

  for (const [name, directTask, gatewayTask, pid] of [
    ["chat (stand-in)", chatDirect, chatGateway, gateway.pid],
    ["chat (assistant)", realDirect, realGateway, coldGateway.pid]
  ]) {
    const c = await compare(directTask, gatewayTask, parallel, pid)
    const df = stats(c.direct.map((s) => s.value.firstToken))
    const gf = stats(c.gateway.map((s) => s.value.firstToken))
    const dt = stats(c.direct.map((s) => s.value.total))
    const gt = stats(c.gateway.map((s) => s.value.total))
    results.chat[`${name}_c${parallel}`] = {
      first_token: { direct: df, gateway: gf, added_p50_ms: Math.round((gf.p50_ms - df.p50_ms) * 100) / 100 },
      whole_stream: { direct: dt, gateway: gt, added_p50_ms: Math.round((gt.p50_ms - dt.p50_ms) * 100) / 100 },
      gateway_cpu_ms: c.cpuPerRequestMs
    }
    rows.push([`${name} first token, conc. ${parallel}`, df, gf, c.cpuPerRequestMs])
    rows.push([`${name} whole stream, conc. ${parallel}`, dt, gt, undefined])
  }
}

const pad = (s, n) => String(s).padEnd(n)
console.log(`\n${results.machine}, ${results.cpus} CPUs, Node ${results.node}, ${iterations} requests per cell`)
console.log(pad("", 44) + pad("direct p50/p90/p99 ms", 26) + pad("gateway p50/p90/p99 ms", 26) + pad("added p50", 11) + "gateway CPU/req")
for (const [name, d, g, cpu] of rows) {
  console.log(
    pad(name, 44) + pad(`${d.p50_ms} / ${d.p90_ms} / ${d.p99_ms}`, 26) + pad(`${g.p50_ms} / ${g.p90_ms} / ${g.p99_ms}`, 26) +
      pad(`${Math.round((g.p50_ms - d.p50_ms) * 100) / 100} ms`, 11) + (cpu === undefined ? "" : `${cpu} ms`)
  )
}
const out = path.join(root, "bench/results/participant-gateway.json")
fs.mkdirSync(path.dirname(out), { recursive: true })
fs.writeFileSync(out, JSON.stringify(results, null, 2))
console.log(`\nwritten to ${path.relative(root, out)}`)
process.exit(0)
