/**
 * The administrators' operations: every upload and training material listed and inspected,
 * an attachment indexed again from its stored file, and the retrieval state rebuilt from the
 * store (`/admin/reload`). Access is checked by the handlers (`Access.requireAdmin`).
 */
import { HttpErrors } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { toAttachment } from "./Attachments.js"
import { AttachmentsRepo } from "./AttachmentsRepo.js"
import { ChunksRepo } from "./ChunksRepo.js"
import type * as Domain from "./Domain.js"
import { Ingest } from "./Ingest.js"
import { Retrieval } from "./Retrieval.js"
import { VectorStore } from "./VectorStore.js"

/** Characters of each chunk's text shown when inspecting. */
const chunkPreview = 2_000

export class Admin extends Effect.Service<Admin>()("@rec/assistant-service/Admin", {
  effect: Effect.gen(function*() {
    const attachments = yield* AttachmentsRepo
    const chunks = yield* ChunksRepo
    const ingest = yield* Ingest
    const retrieval = yield* Retrieval
    const vectors = yield* VectorStore
    const embedderId = vectors.embedder.id

    const uploads = Effect.fn("Admin.uploads")(function*(request: Domain.AdminUploadsRequest) {
      const { items, total } = yield* attachments.adminList({
        id: request.id,
        ownerId: request.owner_id,
        scope: request.scope,
        status: request.status,
        contentType: request.content_type,
        filename: request.filename,
        limit: request.limit,
        offset: request.offset
      })
      const detailed = yield* Effect.forEach(items, (row) =>
        Effect.gen(function*() {
          const base: Domain.AdminAttachment = {
            ...toAttachment(row),
            owner_id: row.ownerId,
            source: row.source,
            location: row.location,
            sha256: row.sha256,
            indexed_at: row.indexedAt
          }
          if (!request.include_chunks) return base
          const rows = yield* chunks.ofAttachment(row.id, embedderId)
          return {
            ...base,
            chunks: rows.map((c) => ({
              index: c.chunkIndex,
              heading: c.heading,
              token_count: c.tokenCount,
              text: c.text.length > chunkPreview ? `${c.text.slice(0, chunkPreview)}…` : c.text,
              embedded: c.embedded
            }))
          }
        }))
      return { items: detailed, total, limit: request.limit, offset: request.offset }
    })

    const reindex = Effect.fn("Admin.ingest")(function*(id: string) {
      const row = yield* attachments.find(id)
      if (Option.isNone(row)) return yield* Effect.fail(new HttpErrors.NotFound({ detail: `No attachment ${id}` }))
      const prepared = yield* ingest.reindex(row.value).pipe(
        Effect.catchTags({
          StoredFileMissing: () => Effect.fail(new HttpErrors.NotFound({ detail: `The file of attachment ${id} is missing from the storage` })),
          UnsupportedFile: (e) => Effect.fail(new HttpErrors.UnprocessableEntity({ detail: `The stored file is ${e.description}` })),
          UnreadableFile: (e) => Effect.fail(new HttpErrors.UnprocessableEntity({ detail: `The stored file cannot be read: ${e.message}` })),
          EmbeddingFailed: (e) => Effect.fail(new HttpErrors.BadGateway({ detail: e.message }))
        })
      )
      return {
        attachment_id: id as Domain.AttachmentId,
        status: prepared.status,
        chunk_count: prepared.chunks.length,
        embedder: embedderId
      }
    })

    const reload = Effect.fn("Admin.reload")(function*() {
      yield* vectors.ensureIndex
      const embedded = yield* vectors.backfill.pipe(
        Effect.catchTag("EmbeddingFailed", (e) => Effect.fail(new HttpErrors.BadGateway({ detail: e.message })))
      )
      const cleared = yield* retrieval.clearCache
      yield* retrieval.refreshStats(true)
      const counts = yield* vectors.counts
      return {
        status: "ok" as const,
        embedder: embedderId,
        dimensions: vectors.embedder.dimensions,
        attachments: counts.attachments,
        chunks: counts.chunks,
        embedded,
        cache_cleared: cleared
      }
    })

    return { uploads, reindex, reload } as const
  })
}) {}
