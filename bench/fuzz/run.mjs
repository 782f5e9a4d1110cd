#!/usr/bin/env node
// Contract fuzzing of every service at a larger count than CI (issue 19 point 1), and with
// `--all` the security figures too (point 3). Runs packages/hardening's tests with
// HARDENING_FUZZ_RUNS samples per endpoint (default 25; CI runs 2) and prints the tables of
// docs/reliability.md §1 (requests per service, statuses, findings; answers per mutation kind)
// and, with --all, §3 (JWT attacks, cross-user attempts, SSRF inputs, bombs, log search).
//
//   node bench/fuzz/run.mjs [--runs 25] [--seed 19] [--all]
//
// Needs a build (`pnpm build`: the tables are printed by packages/hardening/dist). Exits 1 when
// a test failed (a finding), after printing what was measured.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const args = process.argv.slice(2)
const option = (name, fallback) => {
  const i = args.indexOf(name)
  return i === -1 ? fallback : args[i + 1]
}
const runs = Number(option("--runs", "25"))
const seed = Number(option("--seed", "19"))
const all = args.includes("--all")
const report = path.join(os.tmpdir(), `rec-hardening-${process.pid}.json`)

const started = Date.now()
const vitest = spawnSync(
  "npx",
  ["vitest", "run", "--project", "@rec/hardening", ...(all ? [] : ["-t", "contract fuzzing|the figures"])],
  {
    cwd: root,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, HARDENING_FUZZ_IDENTITIES: "all", HARDENING_FUZZ_RUNS: String(runs), HARDENING_FUZZ_SEED: String(seed), HARDENING_REPORT: report }
  }
)
const seconds = Math.round((Date.now() - started) / 1000)
if (!fs.existsSync(report)) {
  console.error("no report was written (did the stack start?)")
  process.exit(1)
}
const figures = JSON.parse(fs.readFileSync(report, "utf8"))
fs.rmSync(report)
const { FuzzReport } = await import(pathToFileURL(path.join(root, "packages/hardening/dist/index.js")).href)

console.log(`\n## Contract fuzzing: ${runs} samples per endpoint, seed ${seed}, ${seconds} s (Node ${process.version}, ${os.cpus().length} cores)\n`)
console.log(FuzzReport.markdown(figures.fuzz))

if (all) {
  const count = (rows, key) => {
    const out = new Map()
    for (const row of rows) {
      const k = key(row)
      out.set(k, (out.get(k) ?? 0) + 1)
    }
    return out
  }
  const statuses = (rows) => [...count(rows, (r) => String(r.status))].map(([s, n]) => `${s}: ${n}`).join(", ")
  const byService = (rows) => {
    const services = [...new Set(rows.map((r) => r.service))]
    return services.map((s) => [s, rows.filter((r) => r.service === s)])
  }
  console.log("\n## JWT attacks per service\n")
  console.log("| service | attacks | outcomes | with a detail |\n|---|---:|---|---:|")
  for (const [service, rows] of byService(figures.jwt)) {
    console.log(`| ${service} | ${rows.length} | ${statuses(rows)} | ${rows.filter((r) => r.detail !== undefined && r.detail !== null).length} |`)
  }
  console.log("\n## Cross-user attempts\n")
  console.log("| service | attempts | outcomes |\n|---|---:|---|")
  for (const [service, rows] of byService(figures.crossUser)) console.log(`| ${service} | ${rows.length} | ${statuses(rows)} |`)
  console.log("\n## SSRF inputs\n")
  console.log("| service | inputs | outcomes |\n|---|---:|---|")
  for (const [service, rows] of byService(figures.ssrf)) console.log(`| ${service} | ${rows.length} | ${statuses(rows)} |`)
  console.log("\n## Bombs\n")
  console.log("| service | bomb | bytes sent | status | ms | RSS growth (MB) |\n|---|---|---:|---:|---:|---:|")
  for (const b of figures.bombs) console.log(`| ${b.service} | ${b.bomb} | ${b.sentBytes} | ${b.status || "problem reported"} | ${b.ms} | ${b.rssGrowthMb} |`)
  console.log("\n## Log search\n")
  for (const l of figures.logs) {
    console.log(`${l.lines} log lines searched after ${l.requests} extra requests, for ${l.secrets} secrets and every JWT/Bearer shape: ${l.leaks} leaks (nudging on ${l.nudgingOnPostgres ? "PostgreSQL" : "PGlite"})`)
  }
}
process.exit(vitest.status ?? 1)
