// The measuring side of bench/nudging/run.mjs, in its own process: the nudging service (built,
// configured by the environment run.mjs sets: DATABASE_URL, PLATFORM_OIDC_BASE_URL, ...) with
// its database pool, and in that process, through that pool:
//
// 1. the baseline: the notification record's INSERT alone (the row an ingest writes, with the
//    same columns and values), one autocommit statement each, through the service's pool;
// 2. ingest in process: Ingest.ingest for `botanswer` events (a rule without deduplication) of
//    recipients that each have a push subscription at the local push service, so every ingest
//    writes a notification and a web push delivery that the dispatcher sends right after;
// 3. once every push of those runs was sent, the baseline again;
//
// then prints {"ready": {port}} and serves POST /ingest-event to run.mjs's autocannon until a
// line arrives on stdin; then waits for the outbox to drain and prints the results as JSON.
import { createRequire } from "node:module"
import { performance } from "node:perf_hooks"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const service = path.join(root, "services/nudging")
const requireFromService = createRequire(path.join(service, "package.json"))

/** The ESM entry of `pkg/subpath` as the service resolves it (one copy of effect in the process). */
const esm = async (pkg, subpath = ".") => {
  const manifest = requireFromService(`${pkg}/package.json`)
  const entry = manifest.exports[subpath]
  const file = typeof entry === "string" ? entry : entry.import ?? entry.default
  return import(pathToFileURL(path.join(path.dirname(requireFromService.resolve(`${pkg}/package.json`)), file)).href)
}

const { Effect, Layer, Context, Logger, LogLevel, Scope, Exit } = await esm("effect")
const SqlClient = await esm("@effect/sql", "./SqlClient")
const HttpServer = await esm("@effect/platform", "./HttpServer")
const { Http } = await import(pathToFileURL(path.join(service, "dist/index.js")).href)
const { Ingest } = await import(pathToFileURL(path.join(service, "dist/Ingest.js")).href)
const { Dispatcher } = await import(pathToFileURL(path.join(service, "dist/Dispatcher.js")).href)

const count = Number(process.env.BENCH_OPERATIONS ?? "2000")
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? "10")
const recipients = Number(process.env.BENCH_RECIPIENTS ?? "400")
const pushOrigin = process.env.BENCH_PUSH_ORIGIN
const community = "bench-community"

/**
 * CPU time of this process's main thread (the service's event loop) in ms, from
 * /proc/thread-self/stat (Linux); `process.cpuUsage()` also counts the push worker threads.
 */
const ticksPerMs = 100 / 1000 // USER_HZ: 100 on Linux
const mainThreadCpuMs = () => {
  try {
    const stat = fs.readFileSync("/proc/thread-self/stat", "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / ticksPerMs
  } catch {
    return undefined
  }
}

/**
 * CPU in ms of the other processes the runs keep busy on the same machine (Linux, else
 * undefined): the PostgreSQL backends of this benchmark's database (and the server's WAL writer),
 * and run.mjs, the parent process, where the local push service answers the pushes.
 */
const databaseName = (() => {
  try {
    const url = new URL(process.env.DATABASE_URL ?? "")
    return url.protocol.startsWith("postgres") ? decodeURIComponent(url.pathname.slice(1)) : undefined
  } catch {
    return undefined
  }
})()
const cpuOfPid = (pid) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) / ticksPerMs
}
const otherCpuMs = () => {
  try {
    let postgres = 0
    if (databaseName !== undefined) {
      for (const pid of fs.readdirSync("/proc")) {
        if (!/^\d+$/.test(pid)) continue
        try {
          const title = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8")
          if (!title.startsWith("postgres:")) continue
          if (title.includes(` ${databaseName} `) || title.includes("walwriter")) postgres += cpuOfPid(pid)
        } catch {
          // gone meanwhile
        }
      }
    }
    return { postgres: databaseName === undefined ? undefined : postgres, receiver: cpuOfPid(process.ppid) }
  } catch {
    return undefined
  }
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]

/** Runs `operation(i)` `count` times, `concurrency` at a time; throughput and latency in ms. */
const measure = (operation) =>
  Effect.gen(function*() {
    const latencies = []
    const cpu = process.cpuUsage()
    const mainCpu = mainThreadCpuMs()
    const others = otherCpuMs()
    const started = performance.now()
    yield* Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) =>
      Effect.suspend(() => {
        const t0 = performance.now()
        return Effect.tap(operation(i), () => Effect.sync(() => latencies.push(performance.now() - t0)))
      }), { concurrency, discard: true })
    const seconds = (performance.now() - started) / 1000
    const used = process.cpuUsage(cpu)
    const mainUsed = mainCpu === undefined ? undefined : mainThreadCpuMs() - mainCpu
    const othersAfter = others === undefined ? undefined : otherCpuMs()
    latencies.sort((a, b) => a - b)
    const round = (x) => Math.round(x * 1000) / 1000
    return {
      operations: count,
      concurrency,
      per_second: Math.round(count / seconds),
      mean_ms: round(latencies.reduce((a, b) => a + b, 0) / latencies.length),
      p50_ms: round(percentile(latencies, 50)),
      p99_ms: round(percentile(latencies, 99)),
      // CPU of this process (the service and the measuring loop) during the run, per operation.
      cpu_ms_per_op: round((used.user + used.system) / 1000 / count),
      // The same for the main thread alone (the event loop the ingests run on).
      main_thread_cpu_ms_per_op: mainUsed === undefined ? undefined : round(mainUsed / count),
      // The PostgreSQL backends of this database (and the WAL writer), and run.mjs (the push service).
      postgres_cpu_ms_per_op: others?.postgres === undefined || othersAfter?.postgres === undefined
        ? undefined
        : round((othersAfter.postgres - others.postgres) / count),
      receiver_cpu_ms_per_op: othersAfter === undefined ? undefined : round((othersAfter.receiver - others.receiver) / count)
    }
  })

const scope = Effect.runSync(Scope.make())
const context = await Effect.runPromise(
  Layer.buildWithScope(Http.makeTest(), scope).pipe(Effect.provide(Logger.minimumLogLevel(LogLevel.Warning)))
)
const run = (effect) => Effect.runPromise(Effect.provide(effect, context).pipe(Effect.provide(Logger.minimumLogLevel(LogLevel.Warning))))

const sql = Context.get(context, SqlClient.SqlClient)
const ingest = Context.get(context, Ingest)
const dispatcher = Context.get(context, Dispatcher)
const address = await run(HttpServer.addressFormattedWith((a) => Effect.succeed(a)))
const port = Number(new URL(address.replace("0.0.0.0", "127.0.0.1")).port)

// Recipients: a push subscription each (at the local push service) and room for many a day.
const ecdh = crypto.createECDH("prime256v1")
ecdh.generateKeys()
const keys = { p256dh: ecdh.getPublicKey().toString("base64url"), auth: crypto.randomBytes(16).toString("base64url") }
const now = new Date().toISOString()
await run(Effect.forEach(Array.from({ length: recipients }, (_, i) => i), (i) =>
  sql`INSERT INTO preferences (user_id, community_id, max_per_day, created_at, updated_at)
    VALUES (${`quiet-${i}`}, ${community}, 100, ${now}, ${now})`, { concurrency: 1, discard: true }))
await run(Effect.forEach(Array.from({ length: recipients * 2 }, (_, i) => i), (i) =>
  Effect.all([
    sql`INSERT INTO push_subscriptions (id, user_id, community_id, endpoint, p256dh, auth, enabled, created_at, updated_at)
      VALUES (${crypto.randomUUID()}, ${`bench-${i}`}, ${community}, ${`${pushOrigin}/push/${i}`}, ${keys.p256dh}, ${keys.auth}, true, ${now}, ${now})`,
    sql`INSERT INTO preferences (user_id, community_id, max_per_day, created_at, updated_at)
      VALUES (${`bench-${i}`}, ${community}, 100, ${now}, ${now})`
  ]), { concurrency: 1, discard: true }))

/** The notification record as an ingest writes it, inserted alone. */
const insertRecord = () => {
  const id = crypto.randomUUID()
  const at = new Date().toISOString()
  return sql`INSERT INTO notifications (id, rule_id, event_type, scenario, user_id, community_id, family, type, severity,
      kind, language, title, body, url, facts, status, reason, dedup_window, window_bucket, created_at)
    VALUES (${id}, 'botanswer', 'botanswer', 'botanswer', ${`baseline-${id.slice(0, 8)}`}, ${community}, 'system',
      'informative', 'info', 'service_messages', 'en', 'The assistant has answered',
      'The answer to your question is ready in the assistant.', '/assistant',
      ${JSON.stringify({ facts_version: "1.0", scenario: "botanswer", status: "answered" })}::jsonb, 'dispatched', NULL,
      'always', ${`always:${id}`}, ${at})`
}

const event = (i, prefix = "bench") => ({
  event_type: "botanswer",
  user_id: `${prefix}-${i % recipients}`,
  community_id: community,
  facts: { facts_version: "1.0", scenario: "botanswer", status: "answered" }
})

// Warm-up of both (JIT, the pool's connections), then the measured runs, baseline first.
await run(Effect.forEach(Array.from({ length: 200 }, (_, i) => i), () => insertRecord(), { concurrency, discard: true }))
await run(Effect.forEach(Array.from({ length: 200 }, (_, i) => i), (i) => ingest.ingest(event(i + 7)), { concurrency, discard: true }))
await run(dispatcher.awaitIdle)
const baseline = await run(measure(() => insertRecord()))
const tally = (statuses) => (report) => Effect.sync(() => {
  statuses[report.status] = (statuses[report.status] ?? 0) + 1
})
// Recipients without a push subscription: the ingest's own work (one statement), no delivery.
const quietStatuses = {}
const quiet = await run(measure((i) => Effect.flatMap(ingest.ingest(event(i, "quiet")), tally(quietStatuses))))
const statuses = {}
const inProcess = await run(measure((i) => Effect.flatMap(ingest.ingest(event(i)), tally(statuses))))

/** Waits until every delivery was sent (or given up): the outbox polled; how long it took and what is left. */
const drain = async () => {
  const started = performance.now()
  let pending = -1
  for (let i = 0; i < 3000; i++) {
    const [row] = await run(sql`SELECT count(*)::int AS n FROM deliveries WHERE status IN ('pending', 'sending')`)
    pending = row.n
    if (pending === 0) break
    await new Promise((r) => setTimeout(r, 100))
  }
  return { pending, ms: Math.round(performance.now() - started) }
}

// The in-process runs leave pushes behind (with push worker threads, the ingests can outpace
// them): sent before the baseline is measured again, so that it does not compete with them (which
// would flatter the ratio), and before the HTTP run, which then measures ingests and their own
// deliveries only.
const backlogCpu = process.cpuUsage()
const backlog = await drain()
const backlogUsed = process.cpuUsage(backlogCpu)
const baselineAgain = await run(measure(() => insertRecord()))
process.stdout.write(`${JSON.stringify({ ready: { port } })}\n`)
await new Promise((resolve) => readline.createInterface({ input: process.stdin }).once("line", resolve))

const { ms: drainMs, pending } = await drain()
const deliveries = await run(sql`SELECT status, count(*)::int AS n FROM deliveries GROUP BY status ORDER BY status`)
process.stdout.write(`${JSON.stringify({
  results: {
    baseline,
    baseline_again: baselineAgain,
    ingest_without_deliveries: { ...quiet, statuses: quietStatuses },
    ingest_in_process: { ...inProcess, statuses },
    deliveries: Object.fromEntries(deliveries.map((r) => [r.status, r.n])),
    pending_after_drain: pending,
    drain_ms: drainMs,
    backlog_after_in_process_ms: backlog.ms,
    backlog_cpu_ms: Math.round((backlogUsed.user + backlogUsed.system) / 1000)
  }
})}\n`)
await Effect.runPromise(Scope.close(scope, Exit.void))
process.exit(0)
