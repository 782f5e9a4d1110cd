/**
 * Quality of the offline retrieval on the evaluation set (issue 17 point 8): the REC handbook as
 * training materials, its questions asked by a user without uploads. The goal of recall@5 >= 0.8
 * is for the hybrid retrieval (local embedder + full text, fused by reciprocal rank);
 * `bench/assistant/recall.mjs` prints the same figures with pure vector and pure full-text
 * search next to it.
 */
import { expect, layer } from "@effect/vitest"
import { Testing } from "@rec/db"
import { migrations } from "@rec/assistant-service"
import * as ChunksRepo from "@rec/assistant-service/ChunksRepo"
import * as Embedder from "@rec/assistant-service/Embedder"
import * as Hashing from "@rec/assistant-service/Hashing"
import * as Evaluation from "@rec/assistant-service/Evaluation"
import * as Effect from "effect/Effect"
import * as SqlClient from "@effect/sql/SqlClient"
import * as fs from "node:fs"
import * as path from "node:path"
import { handbookDir, here, tempDir } from "./helpers.js"

const Live = Evaluation.layer({
  database: Testing.layerPglite({ service: "assistant", migrations }),
  embedder: Embedder.local(512),
  storageDir: tempDir("recall")
})

layer(Live, { excludeTestServices: true, timeout: "120 seconds" })("evaluation set", (it) => {
  it.effect("has at least 40 questions whose passages are in the handbook, over at least 30 pages", () =>
    Effect.gen(function*() {
      const questions = yield* Evaluation.loadQuestions(path.join(here, "../eval/questions.json"))
      expect(questions.length).toBeGreaterThanOrEqual(40)
      expect(new Set(questions.map((q) => q.id)).size).toBe(questions.length)
      // 30 pages of about 450 words each.
      const words = fs.readdirSync(handbookDir).filter((f) => f.endsWith(".md"))
        .reduce((n, f) => n + fs.readFileSync(path.join(handbookDir, f), "utf8").split(/\s+/).filter(Boolean).length, 0)
      expect(words).toBeGreaterThanOrEqual(30 * 450)
      const ingested = yield* Evaluation.ingestDirectory(handbookDir)
      expect(ingested.files).toBeGreaterThanOrEqual(15)
      // Every expected passage lies whole inside a chunk of its file (the chunker cut none of them).
      const sql = yield* SqlClient.SqlClient
      const chunks = yield* sql<{ filename: string; text: string }>`
        SELECT a.filename, c.text FROM chunks c JOIN attachments a ON a.id = c.attachment_id`
      const cut = questions.filter((q) =>
        !chunks.some((c) => c.filename === q.file && Evaluation.normalise(c.text).includes(Evaluation.normalise(q.passage))))
      expect(cut.map((q) => q.id)).toEqual([])
    }), { timeout: 120_000 })

  it.effect("the offline hybrid retrieval finds the answering passage in the top 5 for at least 80% of the questions", () =>
    Effect.gen(function*() {
      const questions = yield* Evaluation.loadQuestions(path.join(here, "../eval/questions.json"))
      const results = yield* Effect.forEach(["hybrid", "vector", "text"] as const, (mode) => Evaluation.recall(questions, 5, mode))
      for (const r of results) console.log(`${r.mode}: recall@5 ${r.recall.toFixed(3)} (${r.hits}/${r.total}), MRR ${r.mrr.toFixed(3)}, missed ${r.missed.join(" ")}`)
      expect(results[0].recall).toBeGreaterThanOrEqual(0.8)
    }), { timeout: 120_000 })

  it.effect("the full-text search leaves out the terms it is told to skip", () =>
    Effect.gen(function*() {
      const repo = yield* ChunksRepo.ChunksRepo
      const query = {
        ownerId: "someone",
        attachmentIds: undefined,
        text: "What is the premium tariff for plants up to 200 kW?",
        embedding: undefined,
        embedder: "local-hash-v1:512",
        dimensions: 512,
        candidates: 20,
        limit: 5,
        scoreFloor: 0.1,
        mode: "text" as const
      }
      expect((yield* repo.search(query)).length).toBe(5)
      const lexemes = ["premium", "tariff", "plant", "200", "kw"]
      expect(yield* repo.search({ ...query, skipTerms: lexemes })).toEqual([])
      const onlyKw = yield* repo.search({ ...query, skipTerms: lexemes.filter((l) => l !== "kw") })
      expect(onlyKw.length).toBeGreaterThan(0)
      expect(onlyKw.every((p) => /\bkw\b/i.test(`${p.heading} ${p.text}`))).toBe(true)
    }))

  it.effect("the shared vector search runs on the HNSW index of the current embedder", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const vector = `[${Hashing.embed("shared energy", 512).join(",")}]`
      // The handbook is small enough for a sequential scan: take that choice away to see the plan.
      const plan = yield* sql.withTransaction(Effect.zipRight(
        sql`SET LOCAL enable_seqscan = off`,
        sql.unsafe<{ "QUERY PLAN": string }>(
          `EXPLAIN SELECT id FROM chunks WHERE embedder = 'local-hash-v1:512' AND owner_id IS NULL ` +
            `ORDER BY embedding::vector(512) <=> '${vector}'::vector(512) LIMIT 20`
        )
      ))
      const text = plan.map((row) => Object.values(row).join(" ")).join("\n")
      expect(text).toContain(`Index Scan using ${ChunksRepo.indexName("local-hash-v1:512")}`)
    }))
})
