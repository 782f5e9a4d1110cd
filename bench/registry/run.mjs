#!/usr/bin/env node
// Community registry: import and export of a generated 10,000-member community, on PGlite and on
// PostgreSQL, with time and peak memory, next to a baseline measured in the same run: the same
// rows inserted by one multi-row INSERT per table (README.md). Needs a build (`pnpm build`).
//
//   node bench/registry/run.mjs [--members 10000] [--runs 3] [--backend pglite,postgres]
//
// 1. starts the dev identity provider (own process) and gets an admin's access token;
// 2. per backend, starts the registry (`services/registry/dist/main.js`, own process, production
//    defaults; PGlite in a temporary data directory, or a fresh PostgreSQL database on
//    TEST_DATABASE_URL) and, per run, times over HTTP: POST /admin/import of a new community,
//    POST /admin/import replacing it, GET /admin/export; with the registry process's peak memory
//    (its VmHWM, reset before each phase through /proc/<pid>/clear_refs, so a peak inside
//    synchronous work counts) and, on PGlite, the same for the PGlite server process the
//    registry starts (@rec/db serves an on-disk PGlite from a process of its own), so that the
//    database's memory and CPU are reported next to the registry's, not hidden;
// 3. times the baselines in this process, on a database of the same backend with the registry's
//    tables: the rows the import writes (planned from the same bundle), one INSERT per table in
//    one transaction, as `INSERT ... SELECT ... FROM jsonb_to_recordset($1)` (what the import
//    itself sends) and as `INSERT ... VALUES (...), (...)` with literals;
// 4. prints medians and writes bench/results/registry.json.
/* global fetch, URLSearchParams, performance */
import * as fs from "node:fs"
import * as http from "node:http"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { parseArgs } from "node:util"
import { cpuMicros, freePort, root, startProcess, stopAll } from "../lib/processes.mjs"

const { values } = parseArgs({
  options: {
    members: { type: "string", default: "10000" },
    runs: { type: "string", default: "3" },
    backend: { type: "string", default: "pglite,postgres" }
  }
})
const members = Number(values.members)
const runs = Number(values.runs)

// The registry's own copies of its dependencies (one instance of each module in this process).
const requireFrom = createRequire(path.join(root, "services/registry/package.json"))
const esm = (pkg, file) => import(pathToFileURL(path.join(path.dirname(requireFrom.resolve(`${pkg}/package.json`)), file)).href)
const dist = (dir) => import(pathToFileURL(path.join(root, dir, "dist/index.js")).href)

const { Effect, Either, Layer, Logger, ManagedRuntime } = await esm("effect", "dist/esm/index.js")
const { SqlClient } = await esm("@effect/sql", "dist/esm/SqlClient.js")
const { Bundles, Config, Generate, ImportsRepo, migrations } = await dist("services/registry")
const { Database, DatabaseConfig, DatabaseUrl, Testing } = await dist("packages/db")

// ---------------------------------------------------------------------------------------------
// Processes

const waitReady = async (url, seconds = 120) => {
  for (let i = 0; i < seconds * 4; i++) {
    try {
      const response = await fetch(url)
      if (response.status === 200) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250))
  }
  throw new Error(`${url} was not ready within ${seconds} s`)
}

const identityProvider = async () => {
  const port = await freePort()
  const issuer = `http://127.0.0.1:${port}`
  startProcess("packages/dev-idp/dist/main.js", { env: { PORT: String(port), HOST: "127.0.0.1", DEV_IDP_ISSUER: issuer, LOG_LEVEL: "warn" } })
  await waitReady(`${issuer}/health`)
  const response = await fetch(`${issuer}/protocol/openid-connect/token`, {
    method: "POST",
    headers: { authorization: `Basic ${Buffer.from("rec-cli:dev-only-secret-rec-cli").toString("base64")}` },
    body: new URLSearchParams({ grant_type: "password", username: "admin", password: "admin" })
  })
  return { issuer, token: (await response.json()).access_token }
}

/** A fresh PostgreSQL database for the registry process, dropped at the end. */
const postgresDatabase = async () => {
  const pg = createRequire(path.join(root, "packages/db/package.json"))("pg")
  const adminUrl = Testing.testDatabaseUrl()
  const name = `rec_bench_registry_${Date.now().toString(36)}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name} TEMPLATE template0`)
  await admin.end()
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    url: url.href,
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl })
      await c.connect()
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await c.end()
    }
  }
}

const status = (pid) => fs.readFileSync(`/proc/${pid}/status`, "utf8")

/** The PGlite server process started by `parentPid` (@rec/db's `pgliteServer.js`), if any. */
const pgliteServerOf = (parentPid) => {
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      if (ppid === parentPid && fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").includes("pgliteServer.js")) return Number(entry)
    } catch {
      // the process ended while we looked
    }
  }
  return undefined
}
const kb = (pid, field) => Number(status(pid).match(new RegExp(`${field}:\\s+(\\d+)`))[1])

// ---------------------------------------------------------------------------------------------
// HTTP (a new connection per request: a kept-alive one may have been closed while idle)

const request = (base, token, method, url, body) =>
  new Promise((resolve, reject) => {
    const headers = { authorization: `Bearer ${token}` }
    if (body !== undefined) {
      headers["content-type"] = body.type
      headers["content-length"] = body.bytes.length
    }
    const req = http.request(`${base}${url}`, { method, headers, agent: false }, (res) => {
      const chunks = []
      res.on("data", (c) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString("utf8") }))
    })
    req.on("error", reject)
    if (body !== undefined) req.write(body.bytes)
    req.end()
  })

const multipart = (text) => {
  const boundary = "----registry-bench"
  return {
    bytes: Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bundle.yaml"\r\nContent-Type: application/yaml\r\n\r\n`),
      Buffer.from(text),
      Buffer.from(`\r\n--${boundary}--\r\n`)
    ]),
    type: `multipart/form-data; boundary=${boundary}`
  }
}

// ---------------------------------------------------------------------------------------------
// Baselines (this process)

const quote = (value) => `'${String(value).replace(/'/g, "''")}'`
const literal = (value, type) =>
  value === null || value === undefined ? "NULL" : type === "jsonb" ? `${quote(JSON.stringify(value))}::jsonb` : quote(value)

const recordsetStatements = (tables) =>
  tables.filter(([, rows]) => rows.length > 0).map(([table, rows]) => [ImportsRepo.insertStatement(table), [JSON.stringify(rows)]])

const valuesStatements = (tables) =>
  tables.filter(([, rows]) => rows.length > 0).map(([table, rows]) => {
    const columns = ImportsRepo.Columns[table].split(", ").map((c) => c.split(" "))
    const tuples = rows.map((row) => `(${columns.map(([name, type]) => literal(row[name], type)).join(", ")})`)
    return [`INSERT INTO ${table} (${columns.map(([name]) => name).join(", ")}) VALUES ${tuples.join(",\n")}`, []]
  })

const plan = (text) => {
  const checked = Bundles.make({ limits: { ...Config.defaultLimits, maxUploadBytes: 2 ** 30 }, knownOwner: () => false }).checkText(text)
  if (Either.isLeft(checked) || checked.right.plan === undefined) throw new Error("the generated bundle does not validate")
  return ImportsRepo.tables(checked.right.plan)
}

const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

// ---------------------------------------------------------------------------------------------

const { issuer, token } = await identityProvider()
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
  members,
  runs,
  backends: {}
}

const measureBackend = async (backend) => {
  let database
  // PGlite as deployed by default: a data directory (in memory, the whole database would count as the registry's memory).
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "registry-bench-"))
  if (backend === "postgres") {
    const reason = await Testing.postgresSkipReason()
    if (reason !== undefined) return { skipped: reason }
    database = await postgresDatabase()
  }
  const start = async () => {
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const registry = startProcess("services/registry/dist/main.js", {
      env: {
        PORT: String(port),
        HOST: "127.0.0.1",
        // The benchmark pushes one client far past the write routes' rate limits (issue 19): off.
        RATE_LIMIT_IMPORT: "off",
        DATABASE_URL: database?.url ?? `pglite://${path.join(dataDir, "registry")}`,
        PLATFORM_OIDC_BASE_URL: issuer,
        PLATFORM_POLICIES_POLICIES_DIR: path.join(root, "policies"),
        POLICY_WATCH: "false",
        LOG_LEVEL: "warn"
      }
    })
    await waitReady(`${base}/ready`)
    const server = pgliteServerOf(registry.pid)
    return {
      registry,
      base,
      rss_mb: Math.round(kb(registry.pid, "VmRSS") / 1024),
      server,
      server_rss_mb: server === undefined ? undefined : Math.round(kb(server, "VmRSS") / 1024)
    }
  }
  const stop = async (registry) => {
    registry.kill("SIGTERM")
    await new Promise((r) => registry.once("exit", r))
  }
  // PGlite: the first start creates the data directory (initdb, migrations), which leaves a few
  // hundred MB in that process for good; a deployed registry starts on its existing directory,
  // so the measured process is the second start. The first start's memory is reported too.
  let firstStart
  if (backend === "pglite") {
    const first = await start()
    firstStart = {
      rss_at_ready_mb: first.rss_mb,
      peak_rss_mb: Math.round(kb(first.registry.pid, "VmHWM") / 1024),
      ...(first.server === undefined ? {} : {
        pglite_server_rss_at_ready_mb: first.server_rss_mb,
        pglite_server_peak_rss_mb: Math.round(kb(first.server, "VmHWM") / 1024)
      })
    }
    await stop(first.registry)
  }
  const { registry, base, rss_mb: rssAtReady, server: registryServer, server_rss_mb: serverRssAtReady } = await start()
  try {
    const pid = registry.pid

    // The baselines' database: the same backend, the registry's tables (migrations).
    const options = { service: "registry", migrations, transformNames: false }
    const baselineDb = backend === "postgres"
      ? Testing.layerPostgres(options)
      : Database.layerWith(options, DatabaseConfig.make("registry", {
        target: Either.getOrThrow(DatabaseUrl.parse(`pglite://${path.join(dataDir, "baseline")}`, dataDir)),
        // Where the registry's PGlite runs, the baseline's runs too (PGLITE_IN_PROCESS, passed on to the registry).
        pgliteInProcess: process.env["PGLITE_IN_PROCESS"] === "true"
      }))
    const runtime = ManagedRuntime.make(baselineDb.pipe(Layer.provide(Logger.remove(Logger.defaultLogger))))
    const insert = (statements) =>
      runtime.runPromise(Effect.flatMap(SqlClient, (sql) =>
        sql.withTransaction(Effect.forEach(statements, ([text, params]) => sql.unsafe(text, params), { discard: true }))))
    const clearBaseline = (key) =>
      runtime.runPromise(Effect.flatMap(SqlClient, (sql) =>
        Effect.forEach(["meter", "asset", "site", "membership", "participant"], (t) => sql.unsafe(`DELETE FROM ${t} WHERE community_key = $1`, [key]), { discard: true })
          .pipe(Effect.zipRight(sql`DELETE FROM community WHERE key = ${key}`))))

    const importBundle = async (upload) => {
      const reply = await request(base, token, "POST", "/admin/import", upload)
      if (reply.status !== 201) throw new Error(`import answered ${reply.status}: ${reply.text.slice(0, 300)}`)
    }
    const exportBundle = async (key) => {
      const reply = await request(base, token, "GET", `/admin/export?community=${key}`)
      if (reply.status !== 200) throw new Error(`export answered ${reply.status}: ${reply.text.slice(0, 300)}`)
      return reply.text
    }

    // The baselines' own PGlite server process, started by this process when the runtime builds
    // its layer (on first use).
    await runtime.runPromise(Effect.void)
    const baselineServer = backend === "pglite" ? pgliteServerOf(process.pid) : undefined

    /**
     * A phase timed here; peak memory of `pid` (the registry, or this process for the baselines)
     * and of its PGlite server process `serverPid` when there is one.
     */
    const phase = async (measuredPid, serverPid, work) => {
      globalThis.gc?.()
      fs.writeFileSync(`/proc/${measuredPid}/clear_refs`, "5")
      if (serverPid !== undefined) fs.writeFileSync(`/proc/${serverPid}/clear_refs`, "5")
      const before = kb(measuredPid, "VmRSS")
      const cpuBefore = cpuMicros(measuredPid)
      const serverBefore = serverPid === undefined ? undefined : { rss: kb(serverPid, "VmRSS"), cpu: cpuMicros(serverPid) }
      const started = performance.now()
      await work()
      const ms = performance.now() - started
      const peak = kb(measuredPid, "VmHWM")
      // CPU time of the measured process (on PostgreSQL the server's share is not in it).
      const cpu_ms = Math.round((cpuMicros(measuredPid) - cpuBefore) / 1000)
      const server = serverPid === undefined || serverBefore === undefined ? {} : {
        pglite_server_cpu_ms: Math.round((cpuMicros(serverPid) - serverBefore.cpu) / 1000),
        pglite_server_rss_before_mb: serverBefore.rss / 1024,
        pglite_server_peak_rss_mb: kb(serverPid, "VmHWM") / 1024
      }
      return { ms: Math.round(ms), cpu_ms, rss_before_mb: before / 1024, peak_rss_mb: peak / 1024, peak_over_before_mb: (peak - before) / 1024, ...server }
    }

    // Warm-up (JIT, pools, caches) on both sides with a small community.
    const warm = Generate.bundle({ community: "warm-up", members: 500 })
    await importBundle(multipart(warm))
    await importBundle(multipart(warm))
    await exportBundle("warm-up")
    const warmRows = plan(warm)
    await insert(recordsetStatements(warmRows))
    await clearBaseline("warm-up")

    const measuredRuns = []
    let info
    for (let i = 0; i < runs; i++) {
      // A new community per run (the registry has no delete): generated and planned untimed.
      const key = `bench-${i}`
      const text = Generate.bundle({ community: key, members })
      const upload = multipart(text)
      const rows = plan(text)
      const baseline_recordset = await phase(process.pid, baselineServer, () => insert(recordsetStatements(rows)))
      await clearBaseline(key)
      const baseline_values = await phase(process.pid, baselineServer, () => insert(valuesStatements(rows)))
      await clearBaseline(key)
      const import_new = await phase(pid, registryServer, () => importBundle(upload))
      const import_replace = await phase(pid, registryServer, () => importBundle(upload))
      let exported = ""
      const exportPhase = await phase(pid, registryServer, async () => {
        exported = await exportBundle(key)
      })
      info = {
        bundle_mb: Math.round((text.length / 1e6) * 10) / 10,
        export_mb: Math.round((exported.length / 1e6) * 10) / 10,
        rows: rows.reduce((n, [, r]) => n + r.length, 0),
        rows_per_table: Object.fromEntries(rows.map(([table, r]) => [table, r.length]))
      }
      measuredRuns.push({ baseline_recordset, baseline_values, import_new, import_replace, export: exportPhase })
      console.log(`  run ${i + 1}: import ${import_new.ms} / ${import_replace.ms} ms, export ${exportPhase.ms} ms, baselines ${baseline_recordset.ms} / ${baseline_values.ms} ms`)
    }
    await runtime.dispose()
    return { info: { ...info, registry_rss_at_ready_mb: rssAtReady, ...(serverRssAtReady === undefined ? {} : { pglite_server_rss_at_ready_mb: serverRssAtReady }), ...(firstStart === undefined ? {} : { first_start_creating_the_data_directory: firstStart }) }, runs: measuredRuns }
  } finally {
    await stop(registry)
    await database?.drop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

for (const backend of values.backend.split(",")) {
  console.log(`${backend}: ${members} members, ${runs} runs...`)
  const measured = await measureBackend(backend)
  if (measured.skipped !== undefined) {
    console.log(`${backend}: skipped (${measured.skipped})`)
    continue
  }
  const phases = ["baseline_recordset", "baseline_values", "import_new", "import_replace", "export"]
  const summary = Object.fromEntries(phases.map((name) => [name, Object.fromEntries(
    ["ms", "cpu_ms", "rss_before_mb", "peak_rss_mb", "peak_over_before_mb", "pglite_server_cpu_ms", "pglite_server_rss_before_mb", "pglite_server_peak_rss_mb"]
      .filter((field) => measured.runs[0][name][field] !== undefined)
      .map((field) => [field, Math.round(median(measured.runs.map((r) => r[name][field])))])
  )]))
  const baseline = Math.min(summary.baseline_recordset.ms, summary.baseline_values.ms)
  results.backends[backend] = {
    ...measured.info,
    phases: summary,
    all_runs: measured.runs,
    ratios: {
      import_new_over_baseline: Math.round((summary.import_new.ms / baseline) * 100) / 100,
      import_replace_over_baseline: Math.round((summary.import_replace.ms / baseline) * 100) / 100
    }
  }
}
stopAll()

const goals = {}
for (const [backend, r] of Object.entries(results.backends)) {
  const service = [r.phases.import_new, r.phases.import_replace, r.phases.export]
  goals[backend] = {
    import_within_3x_baseline: r.ratios.import_new_over_baseline <= 3 && r.ratios.import_replace_over_baseline <= 3,
    ...(backend === "postgres" ? { export_under_2s: r.phases.export.ms < 2000 } : {}),
    // The goal is the registry process's; with a PGlite server process its peak is printed beside it.
    peak_rss_under_300mb: Math.max(...service.map((p) => p.peak_rss_mb)) < 300,
    ...(service[0].pglite_server_peak_rss_mb === undefined ? {} : {
      pglite_server_peak_rss_mb: Math.max(...service.map((p) => p.pglite_server_peak_rss_mb)),
      registry_plus_pglite_server_peak_rss_mb: Math.max(...service.map((p) => p.peak_rss_mb + p.pglite_server_peak_rss_mb))
    })
  }
}
results.goals = goals

const labels = {
  baseline_recordset: "baseline: INSERT ... jsonb_to_recordset",
  baseline_values: "baseline: INSERT ... VALUES (literals)",
  import_new: "POST /admin/import (new community)",
  import_replace: "POST /admin/import (replacing it)",
  export: "GET /admin/export"
}
console.log("")
console.log(`${results.machine.cpu} x${results.machine.cores}, Node ${process.version}, load ${results.machine.load_average_1m}; ${members} members, median of ${runs} runs`)
console.log("memory and CPU: the registry process for its phases, the benchmark process for the baselines; PGlite server: the process serving that PGlite")
console.log(`| backend  | phase                                   |      ms |  CPU ms | RSS before MB | peak RSS MB | peak - before MB | PGlite server CPU ms | PGlite server RSS before -> peak MB |`)
console.log(`|----------|-----------------------------------------|---------|---------|---------------|-------------|------------------|----------------------|-------------------------------------|`)
for (const [backend, r] of Object.entries(results.backends)) {
  for (const [phase, p] of Object.entries(r.phases)) {
    const server = p.pglite_server_cpu_ms === undefined ? ["-", "-"] : [String(p.pglite_server_cpu_ms), `${p.pglite_server_rss_before_mb} -> ${p.pglite_server_peak_rss_mb}`]
    console.log(`| ${backend.padEnd(8)} | ${labels[phase].padEnd(39)} | ${String(p.ms).padStart(7)} | ${String(p.cpu_ms).padStart(7)} | ${String(p.rss_before_mb).padStart(13)} | ${String(p.peak_rss_mb).padStart(11)} | ${String(p.peak_over_before_mb).padStart(16)} | ${server[0].padStart(20)} | ${server[1].padStart(35)} |`)
  }
  const first = r.first_start_creating_the_data_directory
  console.log(`${backend}: registry RSS at ready ${r.registry_rss_at_ready_mb} MB${r.pglite_server_rss_at_ready_mb === undefined ? "" : `, its PGlite server ${r.pglite_server_rss_at_ready_mb} MB`}${first === undefined ? "" : ` (the first start, creating the data directory: ${first.rss_at_ready_mb} MB at ready, peak ${first.peak_rss_mb} MB${first.pglite_server_peak_rss_mb === undefined ? "" : `; its PGlite server ${first.pglite_server_rss_at_ready_mb} MB at ready, peak ${first.pglite_server_peak_rss_mb} MB`})`}`)
  console.log(`${backend}: bundle ${r.bundle_mb} MB, export ${r.export_mb} MB, ${r.rows} rows; import / baseline = ${r.ratios.import_new_over_baseline} (new), ${r.ratios.import_replace_over_baseline} (replace); goals ${JSON.stringify(goals[backend])}`)
}

fs.mkdirSync(path.join(root, "bench/results"), { recursive: true })
fs.writeFileSync(path.join(root, "bench/results/registry.json"), JSON.stringify(results, null, 2) + "\n")
process.exit(0)
