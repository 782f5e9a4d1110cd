#!/usr/bin/env node
// Soak: the whole platform (bench/load/platform.mjs: every service a separate process from its
// dist/main.js, PostgreSQL, Mosquitto, dev identity provider, digital-twin simulator, policy
// service) under a steady load for `--minutes` (default 10): every service's hot path at
// `--rate` requests per second each, plus a stream of writes (nudging POST /ingest-event, one
// new recipient per event, `--writes` per second). Needs a build (`pnpm build`).
//
//   node bench/load/soak.mjs [--minutes 10] [--rate 10] [--writes 2] [--sample 10] [--warmup 60] [--remote-policy] [--json out.json]
//
// Each service process samples itself every `--sample` seconds (bench/load/diagnostics.mjs,
// preloaded; a full GC first, so the heap figure is what survives): heap used, RSS, active
// handles. Printed per service: the first sample after `--warmup` seconds, the last, the
// largest, and a verdict: bounded when the heap after warm-up grows by less than 25% (mean of
// the last three samples against the first three) and the handles by fewer than 20; with the
// latency and errors of each hot path over the whole soak.
import * as fs from "node:fs"
import * as os from "node:os"
import { parseArgs } from "node:util"
import { run } from "../lib/processes.mjs"
import { checkTargets, hotPaths, samples, startPlatform } from "./platform.mjs"

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    rate: { type: "string", default: "10" },
    writes: { type: "string", default: "2" },
    sample: { type: "string", default: "10" },
    warmup: { type: "string", default: "60" },
    json: { type: "string" },
    "remote-policy": { type: "boolean", default: false }
  }
})
const seconds = Math.round(Number(values.minutes) * 60)
const rate = Number(values.rate)
const writes = Number(values.writes)
const warmupMs = Number(values.warmup) * 1000

const platform = await startPlatform({ diagnosticsMs: Number(values.sample) * 1000, remotePolicy: values["remote-policy"] })
process.on("SIGINT", () => platform.stop().finally(() => process.exit(130)))

const mb = (bytes) => (bytes / 1048576).toFixed(1)
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)

try {
  const targets = hotPaths(platform)
  await checkTargets(targets)
  console.log(`node ${process.version}, ${os.cpus().length} CPUs, load average at start ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`)
  console.log(`PostgreSQL ${platform.databaseUrl}, ${platform.broker}`)
  console.log(`${seconds} s: ${targets.length} hot paths at ${rate} req/s each, ${writes} ingest-event/s; samples every ${values.sample} s\n`)

  let written = 0
  const ingest = {
    url: `${platform.services.nudging.url}/ingest-event`,
    method: "POST",
    headers: { authorization: `Bearer ${platform.tokens.grid}`, "content-type": "application/json" },
    setupRequest: (request) => ({
      ...request,
      body: JSON.stringify({
        event_type: "imported_up",
        user_id: `soak-user-${written++}`,
        community_id: "it-energy-community",
        facts: { facts_version: "1.0", scenario: "imported_up", time: new Date().toISOString().slice(0, 10), delta_pct: 35.2, cur: 412.5, prev: 305.1 }
      })
    })
  }
  const startedAt = Date.now()
  const results = await Promise.all([
    ...targets.map((target) => run({ ...target, connections: 5, overallRate: rate, duration: seconds, timeout: 30 })),
    run({ url: ingest.url, method: "POST", connections: 2, overallRate: writes, duration: seconds, timeout: 30, requests: [ingest] })
  ])
  const endedAt = Date.now()
  const loadAtEnd = os.loadavg()

  console.log("| service | hot path | p50 / p99 ms | answered | errors |")
  console.log("|---|---|---|---|---|")
  const traffic = results.map((result, i) => {
    const name = i < targets.length ? `${targets[i].service} \`${targets[i].name}\`` : "nudging `POST /ingest-event` (writes)"
    const total = result["2xx"] + result.non2xx + result.errors + result.timeouts
    const errors = result.non2xx + result.errors + result.timeouts
    const kinds = Object.entries(result.statusCodeStats ?? {}).filter(([code]) => !code.startsWith("2")).map(([code, { count }]) => `${count}x${code}`)
    if (result.timeouts > 0) kinds.push(`${result.timeouts} timeouts`)
    if (result.errors > result.timeouts) kinds.push(`${result.errors - result.timeouts} socket errors`)
    console.log(`| ${name.split(" ")[0]} | ${name.split(" ").slice(1).join(" ")} | ${result.latency.p50} / ${result.latency.p99} | ${result["2xx"]} | ${errors} (${((errors / Math.max(1, total)) * 100).toFixed(2)}%)${kinds.length > 0 ? ` ${kinds.join(", ")}` : ""} |`)
    return { name, p50_ms: result.latency.p50, p99_ms: result.latency.p99, ok: result["2xx"], errors }
  })

  console.log("\n| service | heap MB first / last / max | RSS MB first / last / max | handles first / last / max | heap growth | verdict |")
  console.log("|---|---|---|---|---|---|")
  const memory = []
  let allBounded = true
  for (const [name, service] of Object.entries(platform.services)) {
    const all = samples(service)
    const after = all.filter((s) => s.at >= startedAt + warmupMs && s.at <= endedAt)
    if (after.length < 6) {
      console.log(`| ${name} | too few samples after warm-up (${after.length}) | | | | ? |`)
      allBounded = false
      continue
    }
    const first = after[0]
    const last = after.at(-1)
    const max = (key) => Math.max(...after.map((s) => s[key]))
    const heapStart = mean(after.slice(0, 3).map((s) => s.heap_used))
    const heapEnd = mean(after.slice(-3).map((s) => s.heap_used))
    const growth = (heapEnd - heapStart) / heapStart
    const handleGrowth = mean(after.slice(-3).map((s) => s.handles)) - mean(after.slice(0, 3).map((s) => s.handles))
    const bounded = growth < 0.25 && handleGrowth < 20
    allBounded &&= bounded
    memory.push({ name, samples: after.length, first, last, heap_growth: growth, handle_growth: handleGrowth, bounded, max_heap: max("heap_used"), max_rss: max("rss"), max_handles: max("handles") })
    console.log(
      `| ${name} | ${mb(first.heap_used)} / ${mb(last.heap_used)} / ${mb(max("heap_used"))} | ${mb(first.rss)} / ${mb(last.rss)} / ${mb(max("rss"))} | ` +
        `${first.handles} / ${last.handles} / ${max("handles")} | ${(growth * 100).toFixed(1)}% | ${bounded ? "bounded" : "GROWING"} |`
    )
  }
  console.log(`\nload average at the end ${loadAtEnd.map((l) => l.toFixed(1)).join(" ")}; ${written} events written`)
  console.log(allBounded ? "verdict: heap and handles bounded in every service" : "verdict: growth in at least one service (see above)")
  if (values.json !== undefined) {
    fs.writeFileSync(values.json, JSON.stringify({ node: process.version, cpus: os.cpus().length, seconds, rate, writes, traffic, memory }, null, 2))
  }
} finally {
  await platform.stop()
}
process.exit(0)
