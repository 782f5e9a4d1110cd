#!/usr/bin/env node
// Messages/s the embedded MQTT broker forwards with and without its per-delivery read check, in
// the same run (README.md). Needs a build: `pnpm build`.
//
//   node bench/mqtt/run.mjs [--duration 5] [--warmup 2] [--rounds 3] [--subscribers 10] [--topics 100] [--only 0,1]
//
// 1. starts the dev identity provider and the policy service (each in its own process, as in the
//    policy service benchmark) and gets real access tokens (`admin` publishes, `editor`s
//    subscribe: the policy lets members read `rec/telemetry/+/+/readings`);
// 2. per variant, starts `broker.mjs` in its own process, connects the subscribers (QoS 0, one
//    filter each) and one publisher, and publishes QoS 0 messages round-robin over `--topics`
//    topics as fast as the broker takes them; after a warm-up it counts, for `--duration`
//    seconds, the messages the subscribers receive (each published message is forwarded once
//    to every subscriber) and the broker process's CPU time (/proc/<pid>/stat);
// 3. the variants, interleaved in each round, for each of two authorizers (in-process, allowing
//    everything: the broker's own cost; the policy service over HTTP, as `npm start` wires it):
//    no delivery check (the baseline), the check with its default 5 s decision cache, and the
//    check asking for every delivery (TTL 0);
// 4. prints a table and writes bench/results/mqtt.json.
/* global fetch, URLSearchParams, performance, setImmediate */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { cpuMicros, identityProvider, root, startPolicy, startProcess, stopAll } from "../policy-service/harness.mjs"

const mqtt = createRequire(path.join(root, "packages/mqtt/package.json"))("mqtt")

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    warmup: { type: "string", default: "2" },
    rounds: { type: "string", default: "3" },
    subscribers: { type: "string", default: "10" },
    topics: { type: "string", default: "100" },
    only: { type: "string" }
  }
})
const duration = Number(values.duration) * 1000
const warmup = Number(values.warmup) * 1000
const rounds = Number(values.rounds)
const subscriberCount = Number(values.subscribers)
const topicCount = Number(values.topics)

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const freePort = () =>
  new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

/** An access token of `username` (its password is its name in dev/identities.yaml). */
const tokenOf = async (issuer, username) => {
  const response = await fetch(`${issuer}/protocol/openid-connect/token`, {
    method: "POST",
    headers: { authorization: `Basic ${Buffer.from("rec-cli:dev-only-secret-rec-cli").toString("base64")}` },
    body: new URLSearchParams({ grant_type: "password", username, password: username })
  })
  return (await response.json()).access_token
}

const connect = (port, clientId, password) =>
  new Promise((resolve, reject) => {
    const client = mqtt.connect(`mqtt://127.0.0.1:${port}`, {
      clientId,
      username: "bench",
      password,
      protocolVersion: 4,
      reconnectPeriod: 0,
      connectTimeout: 10_000
    })
    client.once("connect", () => resolve(client))
    client.once("error", reject)
  })

/** Connects until the broker answers (it starts in its own process). */
const connectWhenUp = async (port, clientId, password) => {
  for (let i = 0; i < 100; i++) {
    try {
      return await connect(port, clientId, password)
    } catch (error) {
      if (error.code !== "ECONNREFUSED") throw error
      await sleep(100)
    }
  }
  throw new Error(`no broker on ${port}`)
}

const topics = Array.from({ length: topicCount }, (_, i) => `rec/telemetry/pv/m-${i}/readings`)
const payload = Buffer.from(JSON.stringify({ kwh: 1.25, at: "2024-05-01T10:15:00Z" }))

/** One variant: a fresh broker process, loaded for warm-up + duration. */
const measure = async (variant, { policyUrl, adminToken, editorToken }) => {
  const port = await freePort()
  const broker = startProcess("bench/mqtt/broker.mjs", { stdout: "inherit",
    env: {
      PORT: String(port),
      CHECKS: variant.checks ? "on" : "off",
      READ_TTL_MS: String(variant.ttl ?? 5000),
      POLICY_URL: variant.policy ? policyUrl : ""
    }
  })
  const subscribers = []
  let received = 0
  for (let i = 0; i < subscriberCount; i++) {
    const client = await connectWhenUp(port, `bench-sub-${i}`, editorToken)
    const granted = await client.subscribeAsync("rec/telemetry/+/+/readings", { qos: 0 })
    if (granted[0]?.qos !== 0) throw new Error(`${variant.name}: subscription refused`)
    client.on("message", () => received++)
    subscribers.push(client)
  }
  const publisher = await connectWhenUp(port, "bench-pub", adminToken)

  // As fast as the socket takes them: at most `window` publishes written but not yet flushed.
  let running = true
  let published = 0
  const window = 256
  let inflight = 0
  await new Promise((resolve) => {
    const pump = () => {
      while (running && inflight < window) {
        inflight++
        publisher.publish(topics[published++ % topics.length], payload, { qos: 0 }, () => {
          inflight--
          if (running) setImmediate(pump)
          else if (inflight === 0) resolve()
        })
      }
    }
    pump()
    setTimeout(async () => {
      const startReceived = received
      const startPublished = published
      const startCpu = cpuMicros(broker.pid)
      const startedAt = performance.now()
      await sleep(duration)
      const seconds = (performance.now() - startedAt) / 1000
      const forwarded = received - startReceived
      const cpu = cpuMicros(broker.pid) - startCpu
      variant.results.push({
        forwarded_per_second: Math.round(forwarded / seconds),
        published_per_second: Math.round((published - startPublished) / seconds),
        broker_cpu_us_per_forwarded: Math.round((10 * cpu) / Math.max(1, forwarded)) / 10
      })
      running = false
      if (inflight === 0) resolve()
    }, warmup)
  })
  for (const client of [publisher, ...subscribers]) client.end(true)
  broker.kill("SIGTERM")
  await new Promise((resolve) => broker.once("exit", resolve))
}

const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

const { issuer, token: editorToken } = await identityProvider()
const { target } = await startPolicy({ issuer, token: editorToken })
const policyUrl = new URL(target.url).origin
const adminToken = await tokenOf(issuer, "admin")

// Pairs with the same authorizer: in-process (allows everything: the broker's own cost of a
// check) and the policy service (the `npm start` wiring, where every PUBLISH is also checked over
// HTTP, with or without delivery checks).
const variants = [
  { name: "in-process: no delivery check (baseline)", checks: false },
  { name: "in-process: check, decisions cached 5 s", checks: true, ttl: 5000 },
  { name: "in-process: check asks for every delivery", checks: true, ttl: 0 },
  { name: "policy service: no delivery check (baseline)", checks: false, policy: true },
  { name: "policy service: check, decisions cached 5 s", checks: true, ttl: 5000, policy: true },
  { name: "policy service: check asks for every delivery", checks: true, ttl: 0, policy: true }
].map((v) => ({ ...v, results: [] }))
  .filter((_, i) => values.only === undefined || values.only.split(",").map(Number).includes(i))

// The policy service's first thousand questions run cold (JIT): warm it up, unmeasured.
await measure({ name: "warm-up", checks: true, ttl: 0, policy: true, results: [] }, { policyUrl, adminToken, editorToken })

for (let round = 0; round < rounds; round++) {
  for (const variant of variants) {
    await measure(variant, { policyUrl, adminToken, editorToken })
    const last = variant.results.at(-1)
    console.error(`round ${round + 1}: ${variant.name}: ${last.forwarded_per_second} forwarded/s, ${last.broker_cpu_us_per_forwarded} µs broker CPU each`)
  }
}

const rateOf = (v) => median(v.results.map((r) => r.forwarded_per_second))
const rows = variants.map((v) => {
  const rate = rateOf(v)
  const baseline = variants.find((b) => !b.checks && b.policy === v.policy)
  return {
    variant: v.name,
    forwarded_per_second: rate,
    ratio_to_baseline: baseline === undefined ? null : Math.round((100 * rate) / rateOf(baseline)) / 100,
    broker_cpu_us_per_forwarded: median(v.results.map((r) => r.broker_cpu_us_per_forwarded)),
    runs: v.results
  }
})
console.table(rows.map(({ runs: _runs, ...row }) => row))

const result = {
  date: new Date().toISOString(),
  machine: os.cpus()[0]?.model,
  cpus: os.cpus().length,
  node: process.version,
  load_average: os.loadavg(),
  settings: { duration_s: duration / 1000, warmup_s: warmup / 1000, rounds, subscribers: subscriberCount, topics: topicCount },
  rows
}
fs.mkdirSync(path.join(root, "bench/results"), { recursive: true })
fs.writeFileSync(path.join(root, "bench/results/mqtt.json"), JSON.stringify(result, null, 2) + "\n")
stopAll()
process.exit(0)
