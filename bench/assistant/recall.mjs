// Recall of the assistant's offline retrieval on the evaluation set (issue 17 point 8): the REC
// handbook (services/assistant/eval/handbook) ingested as shared training materials into an
// in-memory PGlite with pgvector, the 54 questions of eval/questions.json asked by a user
// without uploads, and recall@k of three retrievals in the same run:
//   hybrid - the service's default: local embedder (HNSW, cosine) + full text, reciprocal rank fusion
//   vector - the local embedder's vectors alone
//   text   - PostgreSQL full text alone
// A question counts when one of the first k passages comes from its file and contains its passage.
//
//   pnpm build && node bench/assistant/recall.mjs [--k 5] [--dimensions 512]
// Goal: hybrid recall@5 >= 0.8. Results also in bench/results/assistant-recall.json.
import { arg, handbookDir, load, machine, questionsFile, tempDir, writeResults } from "./lib.mjs"

const k = Number(arg("k", "5"))
const dimensions = Number(arg("dimensions", "512"))
const { Db, Effect, Embedder, Evaluation, Logger, migrations } = await load()

const layer = Evaluation.layer({
  database: Db.Testing.layerPglite({ service: "assistant", migrations }),
  embedder: Embedder.local(dimensions),
  storageDir: tempDir("recall")
})

const program = Effect.gen(function*() {
  const questions = yield* Evaluation.loadQuestions(questionsFile)
  const started = Date.now()
  const ingested = yield* Evaluation.ingestDirectory(handbookDir)
  const ingestMs = Date.now() - started
  const rows = []
  for (const mode of ["hybrid", "vector", "text"]) {
    for (const kk of [1, 3, k, 10].filter((v, i, a) => a.indexOf(v) === i).sort((a, b) => a - b)) {
      rows.push(yield* Evaluation.recall(questions, kk, mode))
    }
  }
  return { questions: questions.length, ingested, ingestMs, rows }
})

const result = await Effect.runPromise(
  program.pipe(Effect.provide(layer), Effect.provide(Logger.remove(Logger.defaultLogger)), Effect.scoped)
)

const at = (mode, kk) => result.rows.find((r) => r.mode === mode && r.k === kk)
const m = machine()
console.log(`${m.cpu} x${m.cores}, Node ${m.node}, load ${m.load_average_1m}`)
console.log(`handbook: ${result.ingested.files} files, ${result.ingested.chunks} chunks (ingested in ${result.ingestMs} ms); ${result.questions} questions; local embedder ${dimensions} dimensions`)
console.log("")
console.log("retrieval | recall@1 | recall@3 | recall@5 | recall@10 | MRR@10 | missed at 5")
console.log("----------|----------|----------|----------|-----------|--------|------------")
for (const mode of ["hybrid", "vector", "text"]) {
  const cells = [1, 3, 5, 10].map((kk) => at(mode, kk)?.recall.toFixed(3) ?? "-")
  console.log(`${mode.padEnd(9)} | ${cells.join(" | ")} | ${at(mode, 10).mrr.toFixed(3)} | ${at(mode, k).missed.join(" ")}`)
}
const goal = at("hybrid", k).recall >= 0.8
console.log("")
console.log(`goal hybrid recall@${k} >= 0.8: ${goal ? "met" : "NOT met"} (${at("hybrid", k).recall.toFixed(3)})`)
writeResults("assistant-recall.json", { machine: m, dimensions, k, ...result, goal_met: goal })
