/**
 * SQL of the chunk table: writing an attachment's chunks with their vectors, the hybrid search,
 * and the bookkeeping of `/admin/reload` (chunks without a vector of the current embedder).
 *
 * The search is one statement of three parts, fused by reciprocal rank (k = 60):
 * - vector, shared materials: the HNSW index of the current embedder (cosine distance on
 *   `embedding::vector(<dimensions>)`, the index's own expression, so the planner uses it);
 * - vector, the caller's own chunks: an exact scan through `chunks_owner_embedder` (a user's
 *   chunks are few, and an approximate index filtered to one owner could miss them);
 * - full text: `tsv @@` any of the question's terms (the lexemes of `to_tsvector('english', ...)`)
 *   except those named in `skipTerms`, ranked by `ts_rank_cd`, through the GIN index. The terms
 *   found in many chunks are skipped (`Retrieval` names them from the planner's statistics):
 *   they rank nothing, and every chunk holding one would be read and ranked for every question.
 * Every part is restricted to the caller's own chunks and the shared ones (`owner_id IS NULL`),
 * or to the attachments named in the request, already checked to be the caller's or shared.
 */
import { Columns } from "@rec/db"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

export interface NewChunk {
  readonly index: number
  readonly heading: string | null
  readonly text: string
  readonly tokenCount: number
  readonly embedding: ReadonlyArray<number>
}

export interface Hit {
  readonly chunkId: string
  readonly attachmentId: string
  readonly chunkIndex: number
  readonly heading: string | null
  readonly text: string
  readonly filename: string
  readonly title: string | null
  readonly location: string | null
  readonly source: "upload" | "training_material"
  readonly score: number
  readonly similarity: number | null
  readonly textRank: number | null
}

export interface SearchQuery {
  readonly ownerId: string
  /** `None`: the caller's own and the shared chunks; else only these attachments. */
  readonly attachmentIds: ReadonlyArray<string> | undefined
  readonly text: string
  /** `undefined` when the question has no words to embed. */
  readonly embedding: ReadonlyArray<number> | undefined
  readonly embedder: string
  readonly dimensions: number
  /** Candidates taken from each part before fusing. */
  readonly candidates: number
  readonly limit: number
  readonly scoreFloor: number
  /** Which parts run (the recall benchmark compares them). */
  readonly mode?: "hybrid" | "vector" | "text" | undefined
  /** Lexemes left out of the full-text search. */
  readonly skipTerms?: ReadonlyArray<string> | undefined
}

export interface TermStats {
  /** Rows of the table when it was last analyzed (0: never analyzed). */
  readonly rows: number
  /** Fraction of rows holding each of the most common lexemes. */
  readonly frequencies: ReadonlyMap<string, number>
}

const encodeVector = Schema.encodeSync(Columns.Vector)

const rrfK = 60

/** Name of the HNSW index of an embedder's shared chunks. */
export const indexName = (embedderId: string): string => {
  let h = 0x811c9dc5
  for (let i = 0; i < embedderId.length; i++) h = Math.imul(h ^ embedderId.charCodeAt(i), 0x01000193)
  return `chunks_hnsw_${(h >>> 0).toString(16).padStart(8, "0")}_${embedderId.replace(/[^a-z0-9]+/gi, "_").slice(0, 30).toLowerCase()}`
}

const quoteLiteral = (value: string) => `'${value.replace(/'/g, "''")}'`

export class ChunksRepo extends Effect.Service<ChunksRepo>()("@rec/assistant-service/ChunksRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Writes an attachment's chunks (inside the caller's transaction). */
    const insert = (attachmentId: string, ownerId: string | null, embedder: string, chunks: ReadonlyArray<NewChunk>) =>
      chunks.length === 0 ? Effect.void : sql`
        INSERT INTO chunks ${
        sql.insert(chunks.map((c) => ({
          attachmentId,
          ownerId,
          chunkIndex: c.index,
          heading: c.heading,
          text: c.text,
          tokenCount: c.tokenCount,
          embedder,
          embedding: encodeVector(c.embedding)
        })))
      }`.pipe(Effect.asVoid)

    const removeOf = (attachmentId: string) =>
      sql<{ n: string }>`WITH d AS (DELETE FROM chunks WHERE attachment_id = ${attachmentId} RETURNING 1) SELECT count(*) AS n FROM d`.pipe(
        Effect.map((rows) => Number(rows[0]?.n ?? 0))
      )

    /** Creates the HNSW index of the embedder's shared chunks if missing (replicas: under a lock). */
    const ensureIndex = (embedder: string, dimensions: number) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(hashtext('@rec/assistant-service:hnsw'))`
        yield* sql.unsafe(
          `CREATE INDEX IF NOT EXISTS ${indexName(embedder)} ON chunks USING hnsw ((embedding::vector(${dimensions})) vector_cosine_ops) ` +
            `WHERE embedder = ${quoteLiteral(embedder)} AND owner_id IS NULL`
        )
      }))

    const counts = (embedder: string) =>
      sql<{ attachments: string; chunks: string; embedded: string }>`
        SELECT (SELECT count(*) FROM attachments) AS attachments,
               (SELECT count(*) FROM chunks) AS chunks,
               (SELECT count(*) FROM chunks WHERE embedder = ${embedder}) AS embedded`.pipe(
        Effect.map(([r]) => ({ attachments: Number(r.attachments), chunks: Number(r.chunks), embedded: Number(r.embedded) }))
      )

    /** Up to `limit` chunks without a vector of `embedder`, with what to embed. */
    const missing = (embedder: string, limit: number) =>
      sql<{ id: string; heading: string | null; text: string; title: string | null; filename: string }>`
        SELECT c.id, c.heading, c.text, a.title, a.filename
        FROM chunks c JOIN attachments a ON a.id = c.attachment_id
        WHERE c.embedder IS DISTINCT FROM ${embedder}
        ORDER BY c.id
        LIMIT ${limit}`

    const setEmbeddings = (embedder: string, rows: ReadonlyArray<{ id: string; embedding: ReadonlyArray<number> }>) =>
      sql.withTransaction(Effect.forEach(rows, (row) =>
        sql`UPDATE chunks SET embedder = ${embedder}, embedding = ${encodeVector(row.embedding)}::vector WHERE id = ${row.id}`, {
        discard: true
      }))

    const search = (q: SearchQuery): Effect.Effect<Array<Hit>, SqlError> => {
      const mode = q.mode ?? "hybrid"
      const useVector = mode !== "text" && q.embedding !== undefined
      const useText = mode !== "vector"
      const n = q.candidates
      const dims = sql.literal(String(q.dimensions))
      const vector = useVector ? encodeVector(q.embedding!) : "[]"
      const distance = sql`c.embedding::vector(${dims}) <=> ${vector}::vector(${dims})`
      const within = q.attachmentIds !== undefined
      const scope = within ? sql`c.attachment_id IN ${sql.in(q.attachmentIds!)}` : sql`(c.owner_id IS NULL OR c.owner_id = ${q.ownerId})`

      const vectorPart = !useVector
        ? sql`SELECT NULL::bigint AS id, NULL::float8 AS distance WHERE false`
        : within
        ? sql`SELECT c.id, ${distance} AS distance FROM chunks c
              WHERE c.embedder = ${q.embedder} AND ${scope} ORDER BY ${distance} LIMIT ${n}`
        : sql`(SELECT c.id, ${distance} AS distance FROM chunks c
               WHERE c.embedder = ${q.embedder} AND c.owner_id IS NULL ORDER BY ${distance} LIMIT ${n})
              UNION ALL
              (SELECT c.id, ${distance} AS distance FROM chunks c
               WHERE c.embedder = ${q.embedder} AND c.owner_id = ${q.ownerId} ORDER BY ${distance} LIMIT ${n})`

      // Already stemmed lexemes: the 'simple' configuration takes them as they are.
      const tsquery = sql`(SELECT to_tsquery('simple', string_agg(quote_literal(l), ' | '))
        FROM unnest(tsvector_to_array(to_tsvector('english', ${q.text}))) AS l
        WHERE NOT (l = ANY(${q.skipTerms ?? []}::text[])))`
      const textPart = !useText
        ? sql`SELECT NULL::bigint AS id, NULL::float4 AS rank WHERE false`
        : sql`SELECT c.id, ts_rank_cd(c.tsv, ${tsquery}) AS rank FROM chunks c
              WHERE c.tsv @@ ${tsquery} AND ${scope} ORDER BY rank DESC LIMIT ${n}`

      return sql<{
        chunkId: string
        attachmentId: string
        chunkIndex: number
        heading: string | null
        text: string
        filename: string
        title: string | null
        location: string | null
        source: "upload" | "training_material"
        score: number
        similarity: number | null
        textRank: number | null
      }>`
        WITH vec_raw AS (${vectorPart}),
        vec AS (
          SELECT id, distance, row_number() OVER (ORDER BY distance, id) AS r
          FROM vec_raw WHERE 1 - distance >= ${q.scoreFloor}
          ORDER BY distance, id LIMIT ${n}
        ),
        txt AS (
          SELECT id, rank, row_number() OVER (ORDER BY rank DESC, id) AS r FROM (${textPart}) t
        ),
        fused AS (
          SELECT coalesce(v.id, t.id) AS id,
                 coalesce(1.0 / (${rrfK} + v.r), 0) + coalesce(1.0 / (${rrfK} + t.r), 0) AS score,
                 1 - v.distance AS similarity,
                 t.rank AS text_rank
          FROM vec v FULL OUTER JOIN txt t ON v.id = t.id
        )
        SELECT f.id AS chunk_id, c.attachment_id, c.chunk_index, c.heading, c.text,
               a.filename, a.title, a.location, a.source,
               f.score::float8 AS score, f.similarity::float8 AS similarity, f.text_rank::float8 AS text_rank
        FROM fused f
        JOIN chunks c ON c.id = f.id
        JOIN attachments a ON a.id = c.attachment_id
        ORDER BY f.score DESC, f.similarity DESC NULLS LAST, f.id
        LIMIT ${q.limit}`.pipe(
        Effect.map((rows) => rows.map((r) => ({ ...r, chunkId: String(r.chunkId) })))
      )
    }

    /** The planner's statistics of the chunks' lexemes (`ANALYZE`). */
    const termStats: Effect.Effect<TermStats, SqlError> = Effect.gen(function*() {
      const [table] = yield* sql<{ rows: number }>`SELECT greatest(reltuples, 0)::float8 AS rows FROM pg_class WHERE oid = 'chunks'::regclass`
      const stats = yield* sql<{ elems: ReadonlyArray<string> | null; freqs: ReadonlyArray<number> | null }>`
        SELECT most_common_elems::text::text[] AS elems, most_common_elem_freqs AS freqs
        FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'chunks' AND attname = 'tsv'`
      const frequencies = new Map<string, number>()
      const elems = stats[0]?.elems ?? []
      const freqs = stats[0]?.freqs ?? []
      elems.forEach((lexeme, i) => frequencies.set(lexeme, freqs[i]))
      return { rows: stats.length === 0 ? 0 : Number(table?.rows ?? 0), frequencies }
    })

    const analyze = sql`ANALYZE chunks`.pipe(Effect.asVoid, Effect.withSpan("ChunksRepo.analyze"))

    const count = sql<{ n: string }>`SELECT count(*) AS n FROM chunks`.pipe(Effect.map(([r]) => Number(r.n)))

    /** The chunks of an attachment (admin inspection). */
    const ofAttachment = (attachmentId: string, embedder: string) =>
      sql<{ chunkIndex: number; heading: string | null; tokenCount: number; text: string; embedded: boolean }>`
        SELECT chunk_index, heading, token_count, text, (embedder IS NOT DISTINCT FROM ${embedder}) AS embedded
        FROM chunks WHERE attachment_id = ${attachmentId} ORDER BY chunk_index`

    return { insert, removeOf, ensureIndex, counts, missing, setEmbeddings, search, ofAttachment, termStats, analyze, count } as const
  })
}) {}
