#!/usr/bin/env node
// Load on the hot path of every service, each next to a baseline measured in the same run: the
// same service's /health at the same rate or connections (the kit, the socket and the event
// loop, without the route's work). The platform runs as separate processes from the built
// dist/main.js files (bench/load/platform.mjs: PostgreSQL 127.0.0.1:5432 with a fresh database,
// Mosquitto, dev identity provider, digital-twin simulator, policy service), rate limits raised
// by env. Needs a build (`pnpm build`).
//
//   node bench/load/run.mjs [--rate 50] [--duration 10] [--connections 10] [--warmup 2] [--only policy,nudging] [--remote-policy] [--json out.json]
//
// Per service, autocannon from this process (no pipelining):
//   fixed rate: `--rate` requests per second over 10 connections for `--duration` seconds;
//   saturation: `--connections` connections, each sending as soon as the previous answer came.
// Printed: p50 and p99 latency (ms), throughput (2xx per second) and error rate (non-2xx,
// socket errors and timeouts over all requests), target and baseline side by side.
import * as fs from "node:fs"
import * as os from "node:os"
import { parseArgs } from "node:util"
import { run } from "../lib/processes.mjs"
import { checkTargets, hotPaths, startPlatform } from "./platform.mjs"

const { values } = parseArgs({
  options: {
    rate: { type: "string", default: "50" },
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "10" },
    warmup: { type: "string", default: "2" },
    only: { type: "string" },
    json: { type: "string" },
    "remote-policy": { type: "boolean", default: false }
  }
})
const rate = Number(values.rate)
const duration = Number(values.duration)
const connections = Number(values.connections)
const warmup = Number(values.warmup)

const platform = await startPlatform({ remotePolicy: values["remote-policy"] })
process.on("SIGINT", () => platform.stop().finally(() => process.exit(130)))

const figures = (result) => {
  const total = result["2xx"] + result.non2xx + result.errors + result.timeouts
  return {
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    throughput_rps: Math.round(result["2xx"] / duration),
    error_rate: total === 0 ? 0 : Number(((result.non2xx + result.errors + result.timeouts) / total).toFixed(4)),
    requests: total
  }
}

const rows = []
try {
  const only = values.only?.split(",")
  const targets = hotPaths(platform).filter((t) => only === undefined || only.includes(t.service))
  await checkTargets(targets)
  console.log(`node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), PostgreSQL ${platform.databaseUrl}, ${platform.broker}`)
  console.log(`fixed rate: ${rate} req/s over 10 connections; saturation: ${connections} connections; ${duration} s each after ${warmup} s warm-up\n`)
  for (const target of targets) {
    const { baseline } = target
    const fixed = { connections: 10, overallRate: rate, duration }
    const saturated = { connections, duration }
    await run({ ...target, connections, duration: warmup })
    await run({ ...baseline, connections, duration: warmup })
    const row = {
      service: target.service,
      route: target.name,
      fixed: { baseline: figures(await run({ ...baseline, ...fixed })), target: figures(await run({ ...target, ...fixed })) },
      saturation: { baseline: figures(await run({ ...baseline, ...saturated })), target: figures(await run({ ...target, ...saturated })) }
    }
    rows.push(row)
    const line = (label, f) =>
      `  ${label.padEnd(28)} p50 ${String(f.p50_ms).padStart(5)} ms  p99 ${String(f.p99_ms).padStart(5)} ms  ${String(f.throughput_rps).padStart(5)} req/s  errors ${(f.error_rate * 100).toFixed(2)}%`
    console.log(`${target.service}: ${target.name}`)
    console.log(line(`${rate}/s /health`, row.fixed.baseline))
    console.log(line(`${rate}/s route`, row.fixed.target))
    console.log(line(`${connections} conn. /health`, row.saturation.baseline))
    console.log(line(`${connections} conn. route`, row.saturation.target))
  }

  console.log("\n| service | route | at " + rate + " req/s: p50 / p99 ms (health) | errors | saturated (" + connections + " conn.): req/s (health) | p50 / p99 ms (health) | errors |")
  console.log("|---|---|---|---|---|---|---|")
  for (const r of rows) {
    const { fixed: f, saturation: s } = r
    console.log(
      `| ${r.service} | \`${r.route}\` | ${f.target.p50_ms} / ${f.target.p99_ms} (${f.baseline.p50_ms} / ${f.baseline.p99_ms}) | ${(f.target.error_rate * 100).toFixed(2)}% | ` +
        `${s.target.throughput_rps} (${s.baseline.throughput_rps}) | ${s.target.p50_ms} / ${s.target.p99_ms} (${s.baseline.p50_ms} / ${s.baseline.p99_ms}) | ${(s.target.error_rate * 100).toFixed(2)}% |`
    )
  }
  if (values.json !== undefined) {
    fs.writeFileSync(values.json, JSON.stringify({ node: process.version, cpus: os.cpus().length, rate, duration, connections, rows }, null, 2))
  }
} finally {
  await platform.stop()
}
process.exit(0)
