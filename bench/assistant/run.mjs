// Speed of the assistant (issue 17 point 8), two figures with their baselines from the same run:
//
// 1. Retrieval over 100,000 chunks (goal: p50 under 50 ms). An embedded PGlite with pgvector
//    holds 90,000 shared chunks (100 training materials) and 10,000 chunks of 1,000 users, built
//    from the handbook's sentences and made-up words with a Zipf distribution, embedded by the
//    local embedder (512 dimensions), analyzed (the term statistics retrieval reads); the
//    database is kept in data/bench-assistant-100k and reused (--rebuild starts over). One user
//    asks the 54 evaluation questions in turn, the question cache off, so every query is
//    embedded: the service's hybrid retrieval (HNSW + own chunks + full text, fused), next to its
//    parts (vector only, full text only), the same vector query as an exact scan (no index), and
//    `SELECT 1` (the database's floor).
// 2. Time to the first streamed token with the offline provider (goal: under 100 ms): the
//    service (services/assistant/dist/main.js) on that database, the dev identity provider for a
//    real token, POST /api/chat timed to the first `token` frame; next to GET /health and the
//    authenticated GET /api/user on the same server (the HTTP and token-check floors).
//
//   pnpm build && node bench/assistant/run.mjs [--queries 540] [--chats 100] [--rebuild]
// Results also in bench/results/assistant.json.
/* global fetch, URLSearchParams, performance, TextDecoder */
import * as fs from "node:fs"
import * as path from "node:path"
import { freePort, startProcess, stopAll, waitFor } from "../lib/processes.mjs"
import { arg, handbookDir, load, machine, questionsFile, root, summary, tempDir, writeResults } from "./lib.mjs"

const queries = Number(arg("queries", "540"))
const chats = Number(arg("chats", "100"))
const rebuild = process.argv.includes("--rebuild")
const dimensions = 512
const sharedMaterials = 100
const chunksPerMaterial = 900
const users = 1000
const chunksPerUser = 10
const total = sharedMaterials * chunksPerMaterial + users * chunksPerUser
// The corpus's recipe version: a changed recipe builds a new database.
const recipe = 2
const dataDir = path.join(root, "data/bench-assistant-100k")
const marker = path.join(root, "data/bench-assistant-100k.json")
const storageDir = tempDir("files")
const asker = "bench-user-0007"

// Every query is embedded, as for a question never asked before.
process.env.ASSISTANT_QUERY_CACHE_SIZE = "0"

const { ChunksRepo, Db, Effect, Embedder, Evaluation, Hashing, Layer, Logger, Retrieval, SqlClient, migrations } = await load()

// ---------------------------------------------------------------------------------------------
// The corpus

/** A small deterministic generator (mulberry32), so every build has the same corpus. */
const random = (seed) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const handbook = fs.readdirSync(handbookDir).filter((f) => f.endsWith(".md")).map((f) => fs.readFileSync(path.join(handbookDir, f), "utf8"))
const plain = handbook.map((t) => t.replace(/^---[\s\S]*?---/, "").replace(/[*`#|]/g, " "))
const sentences = plain.flatMap((t) => t.split(/(?<=[.!?])\s+/)).map((s) => s.replace(/\s+/g, " ").trim()).filter((s) => s.split(" ").length >= 6)
const headings = handbook.flatMap((t) => [...t.matchAll(/^#{1,3} (.+)$/gm)].map((m) => m[1]))

// A long-tailed vocabulary beside the handbook's: 30,000 made-up words drawn by Zipf's law
// (exponent 1.07), so term frequencies look like a real collection's, where most words are rare.
const syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "bra", "del", "fin", "gor", "har", "jus", "ken", "lum", "mor", "nal", "pir"]
const wordOf = (rank) => {
  let word = ""
  let r = rank + 20
  while (r > 0) {
    word += syllables[r % syllables.length]
    r = Math.floor(r / syllables.length)
  }
  return word
}
const vocabulary = Array.from({ length: 30_000 }, (_, i) => wordOf(i))
const cumulative = []
let mass = 0
for (let i = 0; i < vocabulary.length; i++) cumulative.push((mass += 1 / Math.pow(i + 1, 1.07)))
const zipfWord = (next) => {
  const x = next() * mass
  let lo = 0
  let hi = cumulative.length - 1
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (cumulative[mid] < x) lo = mid + 1
    else hi = mid
  }
  return vocabulary[lo]
}
const madeUpSentence = (next) => {
  const n = 8 + Math.floor(next() * 7)
  const words = Array.from({ length: n }, () => zipfWord(next))
  return `${words[0][0].toUpperCase()}${words.join(" ").slice(1)}.`
}

/** Two of the handbook's sentences and three to five made-up ones, about 150-250 tokens. */
const chunkText = (next) => {
  const picked = [sentences[Math.floor(next() * sentences.length)], sentences[Math.floor(next() * sentences.length)]]
  const extra = 3 + Math.floor(next() * 3)
  for (let i = 0; i < extra; i++) picked.splice(Math.floor(next() * (picked.length + 1)), 0, madeUpSentence(next))
  return picked.join(" ")
}

const buildCorpus = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const repo = yield* ChunksRepo.ChunksRepo
  const embedder = yield* Embedder.Embedder
  const next = random(17)
  let done = 0
  const started = Date.now()
  const attachment = (id, owner, n, location) =>
    sql`INSERT INTO attachments (id, owner_id, source, filename, content_type, size_bytes, sha256, storage_key, title, location, status, chunk_count)
        VALUES (${id}, ${owner}, ${owner === null ? "training_material" : "upload"}, ${`${id}.md`}, 'text/markdown; charset=utf-8', 0,
                ${id}, ${owner === null ? `shared/${id}` : `users/${id}`}, ${`Material ${id.slice(0, 8)}`}, ${location}, 'indexed', ${n})`
  const fill = (id, owner, n) =>
    Effect.gen(function*() {
      for (let start = 0; start < n; start += 500) {
        const rows = []
        for (let i = start; i < Math.min(n, start + 500); i++) {
          const heading = headings[Math.floor(next() * headings.length)]
          const text = chunkText(next)
          rows.push({ index: i, heading, text, tokenCount: 0, embedding: Hashing.embed(`${heading}\n${text}`, dimensions) })
        }
        yield* sql.withTransaction(repo.insert(id, owner, embedder.id, rows))
        done += rows.length
        if (Math.floor(done / 10_000) > Math.floor((done - rows.length) / 10_000)) {
          process.stdout.write(`\r  ${done} / ${total} chunks (${Math.round((Date.now() - started) / 1000)} s)`)
        }
      }
    })
  // Loaded without the HNSW index, which is built once at the end (much faster than row by row).
  yield* sql.unsafe(`DROP INDEX IF EXISTS ${ChunksRepo.indexName(embedder.id)}`)
  for (let m = 0; m < sharedMaterials; m++) {
    const id = `00000000-0000-4000-8000-${String(m).padStart(12, "0")}`
    yield* attachment(id, null, chunksPerMaterial, `bench/${m}`)
    yield* fill(id, null, chunksPerMaterial)
  }
  for (let u = 0; u < users; u++) {
    const id = `00000000-0000-4000-9000-${String(u).padStart(12, "0")}`
    const owner = `bench-user-${String(u).padStart(4, "0")}`
    yield* attachment(id, owner, chunksPerUser, null)
    yield* fill(id, owner, chunksPerUser)
  }
  process.stdout.write("\n  building the HNSW index...")
  const indexStarted = Date.now()
  // The whole graph in memory: beyond maintenance_work_mem pgvector builds on disk, many times slower.
  yield* sql`SET maintenance_work_mem = '1GB'`
  yield* repo.ensureIndex(embedder.id, dimensions)
  yield* sql`RESET maintenance_work_mem`
  yield* sql`ANALYZE chunks`
  process.stdout.write(` ${Math.round((Date.now() - indexStarted) / 1000)} s (with ANALYZE)\n`)
  return { load_s: Math.round((Date.now() - started) / 1000) }
})

const database = Db.Database.layerWith(
  { service: "assistant", migrations },
  Db.DatabaseConfig.make("assistant", { target: Db.DatabaseUrl.parse(`pglite://${dataDir}`, dataDir).pipe((e) => e.right) })
)

const quiet = Logger.remove(Logger.defaultLogger)

const stale = !fs.existsSync(marker) || JSON.parse(fs.readFileSync(marker, "utf8")).recipe !== recipe
if (rebuild || stale) {
  fs.rmSync(dataDir, { recursive: true, force: true })
  fs.rmSync(marker, { force: true })
  console.log(`building ${total} chunks in ${path.relative(root, dataDir)} (once; --rebuild to redo)`)
  const built = await Effect.runPromise(
    buildCorpus.pipe(Effect.provide(Layer.mergeAll(ChunksRepo.ChunksRepo.Default, Embedder.local(dimensions)).pipe(Layer.provideMerge(database))), Effect.provide(quiet))
  )
  fs.writeFileSync(marker, JSON.stringify({ recipe, total, dimensions, ...built }) + "\n")
}
const corpus = JSON.parse(fs.readFileSync(marker, "utf8"))

// ---------------------------------------------------------------------------------------------
// 1. Retrieval

const questions = JSON.parse(fs.readFileSync(questionsFile, "utf8")).questions.map((q) => q.question)

const timed = (effect) => Effect.gen(function*() {
  const start = performance.now()
  yield* effect
  return performance.now() - start
})

const retrievalRun = Effect.gen(function*() {
  const retrieval = yield* Retrieval.Retrieval
  const repo = yield* ChunksRepo.ChunksRepo
  const embedder = yield* Embedder.Embedder
  const sql = yield* SqlClient.SqlClient
  const [{ n }] = yield* sql`SELECT count(*) AS n FROM chunks`
  const base = { ownerId: asker, attachmentIds: undefined, embedder: embedder.id, dimensions, candidates: 20, limit: 5, scoreFloor: 0.1 }
  const exact = (q) =>
    Effect.flatMap(embedder.embed([q]), ([vector]) =>
      sql.withTransaction(Effect.zipRight(
        sql`SET LOCAL enable_indexscan = off`,
        repo.search({ ...base, text: q, embedding: vector, mode: "vector" })
      )))
  const runs = {
    hybrid: (q) => retrieval.search(asker, q, { topK: 5 }),
    vector_only: (q) => retrieval.search(asker, q, { topK: 5, mode: "vector" }),
    text_only: (q) => retrieval.search(asker, q, { topK: 5, mode: "text" }),
    vector_exact_scan: exact,
    select_1: () => sql`SELECT 1`
  }
  // Warm-up: the JIT and PostgreSQL's caches.
  for (const run of Object.values(runs)) for (const q of questions.slice(0, 20)) yield* run(q)
  const out = {}
  for (const [name, run] of Object.entries(runs)) {
    const samples = []
    const count = name === "vector_exact_scan" ? Math.min(queries, 108) : queries
    for (let i = 0; i < count; i++) samples.push(yield* timed(run(questions[i % questions.length])))
    out[name] = summary(samples)
  }
  const plan = yield* sql.unsafe(
    `EXPLAIN SELECT id FROM chunks WHERE embedder = '${embedder.id}' AND owner_id IS NULL ORDER BY embedding::vector(${dimensions}) <=> '${JSON.stringify(Hashing.embed("shared energy", dimensions))}'::vector(${dimensions}) LIMIT 20`
  )
  const stats = yield* repo.termStats
  return {
    chunks: Number(n),
    results: out,
    hnsw_used: plan.some((row) => /hnsw/i.test(Object.values(row).join(" "))),
    // Lexemes the full-text search leaves out (held by more than ASSISTANT_TEXT_TERM_LIMIT chunks).
    frequent_terms_skipped: Retrieval.frequentTerms(stats, 1000).length
  }
})

console.log("retrieval: warming up, then measuring...")
const retrievalResults = await Effect.runPromise(
  retrievalRun.pipe(
    Effect.provide(Evaluation.layer({ database, embedder: Embedder.local(dimensions), storageDir })),
    Effect.provide(quiet),
    Effect.scoped
  )
)

const retrievalRow = (name, r) => `${name.padEnd(30)} | ${String(r.p50_ms).padStart(8)} | ${String(r.p99_ms).padStart(8)} | ${String(r.n).padStart(5)}`
console.log(`${"retrieval (in process)".padEnd(30)} |  p50 ms  |  p99 ms  |     n`)
for (const [name, r] of Object.entries(retrievalResults.results)) console.log(retrievalRow(name, r))
writeResults("assistant.json", { machine: machine(), corpus, retrieval: retrievalResults })

// ---------------------------------------------------------------------------------------------
// 2. Time to the first token, over HTTP

const idpPort = await freePort()
const issuer = `http://127.0.0.1:${idpPort}`
startProcess("packages/dev-idp/dist/main.js", { env: { PORT: String(idpPort), HOST: "127.0.0.1", DEV_IDP_ISSUER: issuer, LOG_LEVEL: "warn" } })
await waitFor(`${issuer}/health`)
const tokenResponse = await fetch(`${issuer}/protocol/openid-connect/token`, {
  method: "POST",
  headers: { authorization: `Basic ${Buffer.from("rec-cli:dev-only-secret-rec-cli").toString("base64")}` },
  body: new URLSearchParams({ grant_type: "password", username: "participant", password: "participant" })
})
const token = (await tokenResponse.json()).access_token

const port = await freePort()
const server = startProcess("services/assistant/dist/main.js", {
  env: {
    PORT: String(port),
    HOST: "127.0.0.1",
    // The benchmark pushes one client far past the write routes' rate limits (issue 19): off.
    RATE_LIMIT_CHAT: "off",
    RATE_LIMIT_UPLOAD: "off",
    RATE_LIMIT_ADMIN: "off",
    DATABASE_URL: `pglite://${dataDir}`,
    ASSISTANT_STORAGE_DIR: storageDir,
    PLATFORM_OIDC_BASE_URL: issuer,
    PLATFORM_OIDC_AUDIENCE: "rec-platform",
    PLATFORM_POLICIES_POLICIES_DIR: path.join(root, "policies"),
    POLICY_WATCH: "false",
    LOG_LEVEL: "warn",
    ASSISTANT_CHAT_PROVIDER: "extractive",
    ASSISTANT_EMBEDDING_PROVIDER: "local"
  },
  // The service logs to stdout: its warnings and a failed start go to the benchmark's stderr.
  stdout: "inherit"
})
const base = `http://127.0.0.1:${port}`
let exited = false
server.once("exit", (code) => {
  exited = true
  console.error(`the assistant exited with code ${code}`)
})
const startedAt = Date.now()
let ready = false
// Opening 100,000 chunks of PGlite takes a while on a busy machine.
while (!ready && !exited && Date.now() - startedAt < 600_000) {
  try {
    ready = (await fetch(`${base}/ready`)).status === 200
  } catch {
    // not listening yet
  }
  if (!ready) await new Promise((r) => setTimeout(r, 250))
}
if (!ready) {
  console.error("the assistant did not become ready")
  process.exit(1)
}
console.log(`the assistant is ready after ${Math.round((Date.now() - startedAt) / 1000)} s; measuring chats...`)
const auth = { authorization: `Bearer ${token}` }

/** ms to the response headers, to the first `token` frame, and to the end. */
const chatOnce = async (message) => {
  const start = performance.now()
  const response = await fetch(`${base}/api/chat`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ message })
  })
  const headers = performance.now() - start
  if (response.status !== 200) throw new Error(`chat answered ${response.status}: ${await response.text()}`)
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  let firstToken
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    buffer += decoder.decode(value, { stream: true })
    if (firstToken === undefined && buffer.includes("\"type\":\"token\"")) firstToken = performance.now() - start
  }
  if (firstToken === undefined || !buffer.includes("data: [DONE]")) throw new Error("the stream had no token or no [DONE]")
  return { headers, firstToken, total: performance.now() - start }
}

const timeFetch = async (url, init) => {
  const start = performance.now()
  const response = await fetch(url, init)
  await response.arrayBuffer()
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}`)
  return performance.now() - start
}

for (let i = 0; i < 10; i++) {
  await chatOnce(questions[i])
  await timeFetch(`${base}/health`)
  await timeFetch(`${base}/api/user`, { headers: auth })
}
const ttft = []
const headersMs = []
const totals = []
const health = []
const user = []
for (let i = 0; i < chats; i++) {
  const r = await chatOnce(questions[i % questions.length])
  ttft.push(r.firstToken)
  headersMs.push(r.headers)
  totals.push(r.total)
  health.push(await timeFetch(`${base}/health`))
  user.push(await timeFetch(`${base}/api/user`, { headers: auth }))
}
server.kill("SIGTERM")
stopAll()

const chatResults = {
  chat_first_token: summary(ttft),
  chat_headers: summary(headersMs),
  chat_complete: summary(totals),
  health: summary(health),
  user_profile: summary(user)
}

// ---------------------------------------------------------------------------------------------
// Report

const m = machine()
const row = (name, s) => `${name.padEnd(30)} | ${String(s.p50_ms).padStart(8)} | ${String(s.p99_ms).padStart(8)} | ${String(s.n).padStart(5)}`
console.log("")
console.log(`${m.cpu} x${m.cores}, Node ${m.node}, load ${m.load_average_1m}`)
console.log(`corpus: ${retrievalResults.chunks} chunks (512 dimensions), HNSW index used by the shared vector query: ${retrievalResults.hnsw_used}, ${retrievalResults.frequent_terms_skipped} frequent lexemes left out of the full-text search`)
console.log("")
console.log(`${"retrieval (in process)".padEnd(30)} |  p50 ms  |  p99 ms  |     n`)
for (const [name, s] of Object.entries(retrievalResults.results)) console.log(row(name, s))
console.log("")
console.log(`${"HTTP, offline provider".padEnd(30)} |  p50 ms  |  p99 ms  |     n`)
for (const [name, s] of Object.entries(chatResults)) console.log(row(name, s))
const goals = {
  retrieval_p50_under_50ms: retrievalResults.results.hybrid.p50_ms < 50,
  first_token_p50_under_100ms: chatResults.chat_first_token.p50_ms < 100
}
console.log("")
console.log(`goals: retrieval p50 < 50 ms ${goals.retrieval_p50_under_50ms ? "met" : "NOT met"}; first token p50 < 100 ms ${goals.first_token_p50_under_100ms ? "met" : "NOT met"}`)
writeResults("assistant.json", { machine: m, corpus, retrieval: retrievalResults, http: chatResults, goals })
