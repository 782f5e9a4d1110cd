#!/usr/bin/env node
// What one `POST /authorize` allocates in the policy service, and what the collector does about
// it: bytes allocated per request (exact, from the heap before and after every collection),
// young-generation collections (scavenges) and mark-compacts per 10,000 requests with their
// pauses, and the server's CPU time per request. With --heap, V8's sampling heap profiler over
// the same window instead, summarised by allocation site (README.md).
//
//   node bench/policy-service/alloc.mjs [--requests 10000] [--rounds 3] [--connections 10]
//     [--rate <requests/s>]  a fixed rate instead of as fast as the service answers
//     [--access-log false]   POLICY_ACCESS_LOG for the service
//     [--heap] [--top 30]    allocation sites; the profile goes to bench/results/profiles/
//     [--cpu-prof]           also a V8 CPU profile of the service (bench/results/profiles/,
//                            summarise it with bench/service-kit/profile-summary.mjs)
//
// The service runs with the benchmark's settings (run.mjs) and `alloc-probe.mjs` preloaded; it
// is warmed up with --warmup requests, then each round is a window opened and closed by SIGUSR2
// around exactly --requests requests.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { cpuMicros, identityProvider, root, run, startPolicy, stopAll } from "./harness.mjs"

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "10000" },
    warmup: { type: "string", default: "30000" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "10" },
    rate: { type: "string" },
    "access-log": { type: "string", default: "true" },
    heap: { type: "boolean", default: false },
    "cpu-prof": { type: "boolean", default: false },
    interval: { type: "string", default: "1024" },
    top: { type: "string", default: "30" },
    pin: { type: "string" }
  }
})
const requests = Number(values.requests)
const connections = Number(values.connections)
const rate = values.rate === undefined ? undefined : Number(values.rate)
const mode = values.heap ? "heap" : "gc"
const probeOut = path.join(os.tmpdir(), `rec-alloc-probe-${process.pid}.json`)
const profileDir = path.join(root, "bench/results/profiles")

const { issuer, token } = await identityProvider({ pin: values.pin })
const { policy, target } = await startPolicy({
  issuer,
  token,
  pin: values.pin,
  nodeArgs: [
    "--import",
    path.join(root, "bench/policy-service/alloc-probe.mjs"),
    ...(values["cpu-prof"] ? ["--cpu-prof", "--cpu-prof-dir", profileDir, "--cpu-prof-name", "policy-authorize.cpuprofile"] : [])
  ],
  env: {
    POLICY_ACCESS_LOG: values["access-log"],
    REC_ALLOC_PROBE: mode,
    REC_ALLOC_PROBE_OUT: probeOut,
    REC_ALLOC_PROBE_INTERVAL: values.interval
  }
})

const load = (amount) =>
  run({ ...target, connections, amount, ...(rate === undefined ? {} : { overallRate: rate }) })

/** Signals the probe and waits for what it writes. */
const signal = async () => {
  fs.rmSync(probeOut, { force: true })
  policy.kill("SIGUSR2")
  for (let i = 0; i < 600; i++) {
    await new Promise((r) => setTimeout(r, 50))
    if (fs.existsSync(probeOut)) {
      try {
        return JSON.parse(fs.readFileSync(probeOut, "utf8"))
      } catch {
        // still being written
      }
    }
  }
  throw new Error("the probe did not answer")
}

/** One window of exactly `requests` requests. */
const window = async () => {
  await signal()
  const before = cpuMicros(policy.pid)
  const result = await load(requests)
  const cpu = cpuMicros(policy.pid) - before
  const probe = await signal()
  if (result["2xx"] !== requests) throw new Error(`${requests - result["2xx"]} requests failed`)
  return { result, probe, cpuPerRequest: cpu / requests }
}

const per10k = (n) => Math.round((n * 10_000) / requests)
const round1 = (n) => Math.round(n * 10) / 10

await load(Number(values.warmup))
console.log(
  `${os.cpus()[0]?.model ?? "unknown"} x${os.cpus().length}, Node ${process.version}, load ${os.loadavg()[0].toFixed(2)}; ` +
    `${requests} requests per round, ${connections} connections${rate === undefined ? "" : `, ${rate}/s`}, ` +
    `access log ${values["access-log"]}`
)

if (mode === "gc") {
  const rows = []
  for (let i = 0; i < Number(values.rounds); i++) {
    const { cpuPerRequest, probe, result } = await window()
    const scavenges = probe.collections.Scavenge ?? { count: 0, pause_ms: 0, max_ms: 0 }
    const majors = probe.collections.MarkSweepCompact ?? { count: 0, pause_ms: 0, max_ms: 0 }
    rows.push({
      bytes_per_request: Math.round(probe.allocated_bytes / requests),
      scavenges_per_10k: per10k(scavenges.count),
      scavenge_ms_mean: round1(scavenges.pause_ms / Math.max(1, scavenges.count)),
      scavenge_ms_max: round1(scavenges.max_ms),
      mark_compacts_per_10k: per10k(majors.count),
      cpu_us_per_request: round1(cpuPerRequest),
      p99_ms: result.latency.p99
    })
  }
  console.table(rows)
  const median = (key) => rows.map((r) => r[key]).sort((a, b) => a - b)[Math.floor(rows.length / 2)]
  console.log(
    `median: ${median("bytes_per_request")} bytes and ${median("cpu_us_per_request")} µs CPU per request, ` +
      `${median("scavenges_per_10k")} scavenges per 10,000 requests`
  )
} else {
  const { probe } = await window()
  const profile = probe.profile
  fs.mkdirSync(profileDir, { recursive: true })
  const file = path.join(profileDir, "policy-alloc.heapprofile")
  fs.writeFileSync(file, JSON.stringify(profile))
  summarise(profile, Number(values.top))
  console.log(`profile (open in Chrome DevTools, Memory tab): ${path.relative(root, file)}`)
}
if (values["cpu-prof"]) {
  // The profile is written when the service exits.
  await new Promise((resolve) => {
    policy.once("exit", resolve)
    policy.kill("SIGTERM")
  })
  console.log(`CPU profile: ${path.relative(root, path.join(profileDir, "policy-authorize.cpuprofile"))}`)
}
stopAll()
process.exit(0)

/**
 * Bytes per request by allocation site (the function that allocated), each with the nearest
 * caller in the repository's own code (packages/, services/), which says which of our lines the
 * allocations of Node, Effect or V8 builtins serve.
 */
function summarise(profile, top) {
  const shortFile = (url) =>
    url === ""
      ? "(native)"
      : url.replace(/^file:\/\//, "").replace(/.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, "").replace(/.*\/work\/main\//, "")
  const label = (frame) => `${frame.functionName || "(anonymous)"} ${shortFile(frame.url)}:${frame.lineNumber + 1}`
  const ours = (frame) => /\/(packages|services)\/[^/]+\/dist\//.test(frame.url)
  const sites = new Map()
  const callers = new Map()
  let total = 0
  const visit = (node, ownCaller) => {
    const frame = node.callFrame
    const caller = ours(frame) ? label(frame) : ownCaller
    if (node.selfSize > 0) {
      total += node.selfSize
      const site = label(frame)
      sites.set(site, (sites.get(site) ?? 0) + node.selfSize)
      const key = `${site}\u0000${caller ?? "-"}`
      callers.set(key, (callers.get(key) ?? 0) + node.selfSize)
    }
    for (const child of node.children ?? []) visit(child, caller)
  }
  visit(profile.head, undefined)
  const perRequest = (bytes) => String(Math.round(bytes / requests)).padStart(6)
  console.log(`\nsampled: ${Math.round(total / requests)} bytes per request`)
  console.log("\nbytes/request  allocation site")
  for (const [site, bytes] of [...sites].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${perRequest(bytes)}  ${site}`)
  console.log("\nbytes/request  allocation site  <-  nearest caller in packages/ or services/")
  for (const [key, bytes] of [...callers].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    const [site, caller] = key.split("\u0000")
    console.log(`${perRequest(bytes)}  ${site}  <-  ${caller}`)
  }
}
