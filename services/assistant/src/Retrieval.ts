/**
 * Retrieval for a question: the question's vector (kept in an in-memory LRU, dropped by
 * `/admin/reload`), then the hybrid search of `ChunksRepo`, always restricted to the caller's
 * own attachments and the shared training materials. When the request names attachments, their
 * best passages come first and the general search fills the rest.
 *
 * The other in-memory state: the lexemes found in more than `ASSISTANT_TEXT_TERM_LIMIT` chunks,
 * from the planner's statistics of the chunks (`ANALYZE`), which the full-text search leaves
 * out. Loaded at start (analyzing first when a filled table has no statistics), refreshed every
 * `ASSISTANT_STATS_REFRESH_MINUTES`, after a training sync and by `/admin/reload`.
 */
import { ExpiringLru } from "@rec/platform"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Config from "./Config.js"
import { ChunksRepo, type Hit, type TermStats } from "./ChunksRepo.js"
import type * as Domain from "./Domain.js"
import { Embedder } from "./Embedder.js"
import { words } from "./Text.js"
import { VectorStore } from "./VectorStore.js"

export type Passage = Hit

export interface SearchOptions {
  readonly topK?: number | undefined
  /** Already checked to be the caller's or shared. */
  readonly attachmentIds?: ReadonlyArray<string> | undefined
  readonly mode?: "hybrid" | "vector" | "text" | undefined
  /** The question is "summarise the attachments": their passages pass whatever their score. */
  readonly summarise?: boolean | undefined
}

interface CachedVector {
  readonly expiresAt: number
  readonly vector: ReadonlyArray<number>
}

/** "Title › Section › Subsection", without repeating a title that is also the first heading. */
export const labelOf = (p: Passage): string => {
  const title = p.title ?? p.filename
  if (p.heading === null || p.heading === "") return title
  return p.heading === title || p.heading.startsWith(`${title} › `) ? p.heading : `${title} › ${p.heading}`
}

/** The passage as the client sees it (the `sources` frame). */
export const toSource = (p: Passage): Domain.Source => ({
  source: p.source === "training_material" ? `training-materials://${p.location ?? ""}` : `attachment://${p.attachmentId}`,
  title: p.title ?? p.filename,
  text: p.text,
  score: p.score,
  metadata: {
    attachment_id: p.attachmentId as Domain.AttachmentId,
    filename: p.filename,
    kind: p.source,
    heading: p.heading,
    chunk_index: p.chunkIndex,
    location: p.location,
    similarity: p.similarity,
    text_rank: p.textRank
  }
})

/** The lexemes held by more than `limit` chunks, by the statistics. */
export const frequentTerms = (stats: TermStats, limit: number): Array<string> =>
  [...stats.frequencies].filter(([, frequency]) => frequency * stats.rows > limit).map(([lexeme]) => lexeme)

export class Retrieval extends Effect.Service<Retrieval>()("@rec/assistant-service/Retrieval", {
  scoped: Effect.gen(function*() {
    // The store is usable first (pgvector installed, the index of the current embedder).
    yield* VectorStore
    const repo = yield* ChunksRepo
    const embedder = yield* Embedder
    const settings = yield* Config.retrieval
    const cache = new ExpiringLru.ExpiringLru<CachedVector>(Math.max(1, settings.queryCacheSize))
    const skipTerms = yield* Ref.make<ReadonlyArray<string>>([])

    /** Reads the term statistics (after `ANALYZE` when asked, or when a filled table has none). */
    const refreshStats = (analyze: boolean) =>
      Effect.gen(function*() {
        if (analyze) yield* repo.analyze
        let stats = yield* repo.termStats
        if (!analyze && stats.rows === 0 && (yield* repo.count) > 0) {
          yield* repo.analyze
          stats = yield* repo.termStats
        }
        const frequent = frequentTerms(stats, settings.textTermLimit)
        yield* Ref.set(skipTerms, frequent)
        return frequent.length
      }).pipe(Effect.withSpan("Retrieval.refreshStats"))

    yield* refreshStats(false)
    if (settings.statsRefreshMinutes > 0) {
      yield* refreshStats(true).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("refreshing the term statistics failed", cause)),
        Effect.repeat(Schedule.spaced(Duration.minutes(settings.statsRefreshMinutes))),
        Effect.delay(Duration.minutes(settings.statsRefreshMinutes)),
        Effect.forkScoped
      )
    }

    const vectorOf = (text: string) => {
      if (words(text).length === 0) return Effect.succeed(undefined)
      const key = text.trim().toLowerCase()
      const hit = settings.queryCacheSize > 0 ? cache.get(key) : undefined
      if (hit !== undefined) return Effect.succeed(hit.vector)
      return Effect.map(embedder.embed([text]), ([vector]) => {
        if (settings.queryCacheSize > 0) cache.set(key, { expiresAt: Number.POSITIVE_INFINITY, vector })
        return vector
      })
    }

    const search = Effect.fn("Retrieval.search")(function*(ownerId: string, question: string, options: SearchOptions = {}) {
      const limit = options.topK ?? settings.topK
      if (question.trim() === "" && (options.attachmentIds?.length ?? 0) === 0) return []
      const embedding = yield* vectorOf(question)
      const query = {
        ownerId,
        text: question,
        embedding,
        embedder: embedder.id,
        dimensions: embedder.dimensions,
        candidates: Math.max(limit * 4, 20),
        limit,
        scoreFloor: settings.scoreFloor,
        mode: options.mode,
        skipTerms: yield* Ref.get(skipTerms)
      }
      const ids = options.attachmentIds ?? []
      if (ids.length === 0) return yield* repo.search({ ...query, attachmentIds: undefined })
      // A question about attached files: their passages first.
      const within = yield* repo.search({ ...query, attachmentIds: ids, scoreFloor: options.summarise === true ? -1 : query.scoreFloor })
      const general = yield* repo.search({ ...query, attachmentIds: undefined })
      const seen = new Set(within.map((p) => p.chunkId))
      return [...within, ...general.filter((p) => !seen.has(p.chunkId))].slice(0, limit)
    })

    /** Drops the cached question vectors; returns how many there were. */
    const clearCache = Effect.sync(() => {
      const size = cache.size
      cache.clear()
      return size
    })

    return { search, clearCache, refreshStats, embedder } as const
  })
}) {}
