/**
 * The retrieval evaluation: the REC handbook (`eval/handbook/*.md`) ingested as shared training
 * materials, and the questions of `eval/questions.json`, each with the file and an exact passage
 * that answers it. A question is answered at k when one of the first k retrieved passages comes
 * from that file and contains the passage (compared without Markdown emphasis, table pipes at
 * the ends, case and spacing). Used by `bench/assistant/recall.mjs` and the service's tests.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { AttachmentsRepo } from "./AttachmentsRepo.js"
import { ChunksRepo } from "./ChunksRepo.js"
import type { Embedder } from "./Embedder.js"
import { Ingest } from "./Ingest.js"
import { type Passage, Retrieval } from "./Retrieval.js"
import * as Storage from "./Storage.js"
import { VectorStore } from "./VectorStore.js"

/**
 * Ingestion and retrieval on `database` (with the service's migrations applied), files in
 * `storageDir`: what the evaluation and the benchmarks run on, without the HTTP service.
 */
export const layer = <E>(options: {
  readonly database: Layer.Layer<SqlClient.SqlClient, E>
  readonly embedder: Layer.Layer<Embedder>
  readonly storageDir: string
}) =>
  Layer.mergeAll(Ingest.Default, Retrieval.Default).pipe(
    Layer.provideMerge(VectorStore.Default),
    Layer.provideMerge(Layer.mergeAll(
      ChunksRepo.Default,
      AttachmentsRepo.Default,
      options.embedder,
      Storage.folder(options.storageDir)
    )),
    Layer.provideMerge(options.database),
    Layer.provideMerge(NodeContext.layer)
  )

export const Question = Schema.Struct({
  id: Schema.String,
  question: Schema.String,
  file: Schema.String,
  passage: Schema.String
})
export type Question = typeof Question.Type

const QuestionsFile = Schema.parseJson(Schema.Struct({ description: Schema.String, questions: Schema.Array(Question) }))

/** The questions of a `questions.json`. */
export const loadQuestions = (file: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    Effect.flatMap(fs.readFileString(file), (text) => Schema.decodeUnknown(QuestionsFile)(text))).pipe(
    Effect.map((f) => f.questions)
  )

/** Text as compared: no Markdown emphasis or code marks, no table pipes at the ends, one space, lower case. */
export const normalise = (text: string): string =>
  text.replace(/[*`]/g, "").replace(/\s+/g, " ").trim().replace(/^\|\s*/, "").replace(/\s*\|$/, "").toLowerCase()

/** Whether `passage` answers `question`. */
export const answers = (passage: Passage, question: Question): boolean =>
  passage.filename === question.file && normalise(passage.text).includes(normalise(question.passage))

/** Ingests every Markdown file of `dir` as a shared training material; returns files and chunks. */
export const ingestDirectory = (dir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const ingest = yield* Ingest
    const files = (yield* fs.readDirectory(dir)).filter((f) => f.endsWith(".md")).sort()
    let chunks = 0
    for (const filename of files) {
      const bytes = yield* fs.readFile(path.join(dir, filename))
      const prepared = yield* ingest.prepareAs("markdown", bytes, filename)
      yield* ingest.create({
        ownerId: null,
        source: "training_material",
        filename,
        location: filename.replace(/\.md$/, ""),
        bytes,
        prepared
      })
      chunks += prepared.chunks.length
    }
    return { files: files.length, chunks }
  })

export type Mode = "hybrid" | "vector" | "text"

export interface RecallResult {
  readonly mode: Mode
  readonly k: number
  readonly recall: number
  readonly hits: number
  readonly total: number
  /** Reciprocal rank of the first answering passage, averaged (0 when none in the first k). */
  readonly mrr: number
  readonly missed: ReadonlyArray<string>
}

/** Recall at `k` of `questions`, asked by a user with no uploads of their own. */
export const recall = (questions: ReadonlyArray<Question>, k: number, mode: Mode) =>
  Effect.gen(function*() {
    const retrieval = yield* Retrieval
    let hits = 0
    let reciprocal = 0
    const missed: Array<string> = []
    for (const q of questions) {
      const passages = yield* retrieval.search("evaluation-user", q.question, { topK: k, mode })
      const rank = passages.findIndex((p) => answers(p, q))
      if (rank >= 0) {
        hits++
        reciprocal += 1 / (rank + 1)
      } else {
        missed.push(q.id)
      }
    }
    const result: RecallResult = {
      mode,
      k,
      recall: hits / questions.length,
      hits,
      total: questions.length,
      mrr: reciprocal / questions.length,
      missed
    }
    return result
  })
