/**
 * The vector side of the store: pgvector must be there (PGlite ships it; a PostgreSQL server
 * needs the extension installed), the HNSW index of the current embedder exists, and chunks
 * lacking a vector of the current embedder can be embedded (`backfill`, run by
 * `/admin/reload`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { ChunksRepo } from "./ChunksRepo.js"
import { searchText } from "./Chunker.js"
import { Embedder } from "./Embedder.js"

/** The database has no pgvector: the assistant cannot start. */
export class VectorExtensionMissing extends Schema.TaggedError<VectorExtensionMissing>()("VectorExtensionMissing", {
  message: Schema.String
}) {}

const missingMessage =
  "The assistant needs the PostgreSQL extension \"vector\" (pgvector), which this database server does not have. " +
  "Install pgvector on the server (for example the postgresql-<version>-pgvector package, or a managed PostgreSQL " +
  "that offers it), or run the assistant on the embedded database (leave DATABASE_URL unset)."

/** Fails with `VectorExtensionMissing` unless the server can create or already has `vector`. */
export const requireExtension = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ name: string }>`SELECT name FROM pg_available_extensions WHERE name = 'vector'`
  if (rows.length === 0) return yield* new VectorExtensionMissing({ message: missingMessage })
})

/** Fails with `VectorExtensionMissing` unless `vector` is installed in the database. */
export const requireInstalled = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ extname: string }>`SELECT extname FROM pg_extension WHERE extname = 'vector'`
  if (rows.length === 0) {
    yield* requireExtension
    return yield* new VectorExtensionMissing({
      message: "The PostgreSQL extension \"vector\" is available but not installed in this database: apply the " +
        "assistant's migrations (DATABASE_MIGRATE=true) or run CREATE EXTENSION vector."
    })
  }
})

/** Chunks embedded per transaction by `backfill`. */
const backfillBatch = 256

export class VectorStore extends Effect.Service<VectorStore>()("@rec/assistant-service/VectorStore", {
  effect: Effect.gen(function*() {
    const repo = yield* ChunksRepo
    const embedder = yield* Embedder

    yield* requireInstalled
    yield* repo.ensureIndex(embedder.id, embedder.dimensions)
    const counts = yield* repo.counts(embedder.id)
    if (counts.embedded < counts.chunks) {
      yield* Effect.logWarning(
        `${counts.chunks - counts.embedded} of ${counts.chunks} chunks have no vector of the current embedder ` +
          `(${embedder.id}); POST /admin/reload embeds them`
      )
    }

    /** Embeds every chunk that has no vector of the current embedder; returns how many. */
    const backfill = Effect.gen(function*() {
      let done = 0
      while (true) {
        const rows = yield* repo.missing(embedder.id, backfillBatch)
        if (rows.length === 0) return done
        const vectors = yield* embedder.embed(rows.map((r) => searchText(r.title ?? r.filename, r.heading, r.text)))
        yield* repo.setEmbeddings(embedder.id, rows.map((r, i) => ({ id: r.id, embedding: vectors[i] })))
        done += rows.length
      }
    }).pipe(Effect.withSpan("VectorStore.backfill"))

    return {
      embedder,
      ensureIndex: repo.ensureIndex(embedder.id, embedder.dimensions),
      counts: repo.counts(embedder.id),
      backfill
    } as const
  })
}) {}
