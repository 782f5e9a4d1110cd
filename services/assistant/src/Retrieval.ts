/**
 * Retrieval for a question: the question's vector (kept in an in-memory LRU, dropped by
 * `/admin/reload`), then the hybrid search of `ChunksRepo`, always restricted to the caller's
 * own attachments and the shared training materials. When the request names attachments, their
 * best passages come first and the general search fills the rest.
 */
import { ExpiringLru } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Config from "./Config.js"
import { ChunksRepo, type Hit } from "./ChunksRepo.js"
import type * as Domain from "./Domain.js"
import { Embedder } from "./Embedder.js"
import { words } from "./Text.js"

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

export class Retrieval extends Effect.Service<Retrieval>()("@rec/assistant-service/Retrieval", {
  effect: Effect.gen(function*() {
    const repo = yield* ChunksRepo
    const embedder = yield* Embedder
    const settings = yield* Config.retrieval
    const cache = new ExpiringLru.ExpiringLru<CachedVector>(Math.max(1, settings.queryCacheSize))

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
        mode: options.mode
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

    return { search, clearCache, embedder } as const
  })
}) {}
