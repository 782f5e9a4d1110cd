// What the assistant's benchmarks share: the service's built modules (services/assistant/dist)
// and the very Effect modules they use (imported by path from the service's node_modules, so
// there is one Effect instance), the machine description, and percentiles.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { root } from "../lib/processes.mjs"

export { root }

const service = path.join(root, "services/assistant")

const fromService = async (file) => {
  const full = path.join(service, file)
  if (!fs.existsSync(full)) {
    console.error(`${path.relative(root, full)} is missing: build first (pnpm build)`)
    process.exit(2)
  }
  return import(pathToFileURL(fs.realpathSync(full)).href)
}

/** An Effect module (`Effect`, `Layer`, ...) as the service's code sees it. */
const effect = (name) => fromService(`node_modules/effect/dist/esm/${name}.js`)

export const load = async () => ({
  Effect: await effect("Effect"),
  Layer: await effect("Layer"),
  Logger: await effect("Logger"),
  LogLevel: await effect("LogLevel"),
  Evaluation: await fromService("dist/Evaluation.js"),
  Embedder: await fromService("dist/Embedder.js"),
  Retrieval: await fromService("dist/Retrieval.js"),
  ChunksRepo: await fromService("dist/ChunksRepo.js"),
  Chunker: await fromService("dist/Chunker.js"),
  Hashing: await fromService("dist/Hashing.js"),
  migrations: (await fromService("dist/migrations/index.js")).migrations,
  Db: await fromService("node_modules/@rec/db/dist/index.js"),
  SqlClient: await fromService("node_modules/@effect/sql/dist/esm/SqlClient.js")
})

export const handbookDir = path.join(service, "eval/handbook")
export const questionsFile = path.join(service, "eval/questions.json")

export const tempDir = (prefix) => fs.mkdtempSync(path.join(os.tmpdir(), `assistant-bench-${prefix}-`))

export const machine = () => ({
  cpu: os.cpus()[0]?.model ?? "unknown",
  cores: os.cpus().length,
  node: process.version,
  load_average_1m: Number(os.loadavg()[0].toFixed(2))
})

export const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]

export const summary = (samples) => {
  const sorted = [...samples].sort((a, b) => a - b)
  return {
    n: sorted.length,
    p50_ms: Number(percentile(sorted, 50).toFixed(2)),
    p99_ms: Number(percentile(sorted, 99).toFixed(2)),
    mean_ms: Number((sorted.reduce((s, x) => s + x, 0) / sorted.length).toFixed(2))
  }
}

export const writeResults = (name, results) => {
  const dir = path.join(root, "bench/results")
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, name), JSON.stringify(results, null, 2) + "\n")
}

export const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]
}
