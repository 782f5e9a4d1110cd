/**
 * The caller's attachments: upload (read the multipart `file` field within
 * `ASSISTANT_MAX_UPLOAD_BYTES`, then `Ingest`), list, the raw file, delete. A user sees their
 * own attachments and the shared training materials; another user's attachment is "not found".
 * Shared materials are deleted by admins only (the training sync manages them); admins may also
 * delete any user's attachment.
 */
import * as Multipart from "@effect/platform/Multipart"
import type { Subject } from "@rec/auth"
import { HttpErrors } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { Access } from "./Access.js"
import { AttachmentsRepo, type AttachmentRow } from "./AttachmentsRepo.js"
import * as Config from "./Config.js"
import * as Domain from "./Domain.js"
import { cleanFilename, Ingest } from "./Ingest.js"
import { FileStore } from "./Storage.js"

export const toAttachment = (row: AttachmentRow): Domain.Attachment => ({
  id: row.id as Domain.AttachmentId,
  filename: row.filename,
  content_type: row.contentType,
  size_bytes: row.sizeBytes,
  scope: row.ownerId === null ? "shared" : "user",
  status: row.status,
  chunk_count: row.chunkCount,
  title: row.title,
  created_at: row.createdAt
})

/**
 * `inline`, with the name twice: an ASCII fallback for old clients and the exact UTF-8 name
 * (RFC 6266, RFC 8187); quotes, backslashes and control characters never reach the header.
 */
export const contentDisposition = (filename: string): string => {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, "_")
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `inline; filename="${ascii}"; filename*=UTF-8''${encoded}`
}

const tooLarge = (max: number) =>
  new HttpErrors.PayloadTooLarge({ detail: `The file is larger than ${max} bytes, the most this assistant accepts (ASSISTANT_MAX_UPLOAD_BYTES)` })

const badMultipart = (detail: string) =>
  new HttpErrors.BadRequest({ detail: `${detail}: send multipart/form-data with the file in the field "file"` })

/** The `file` part of a multipart body, read within `max` bytes; other parts are drained. */
export const readFilePart = (parts: Stream.Stream<Multipart.Part, Multipart.MultipartError>, max: number) =>
  Effect.gen(function*() {
    let found: { name: string; bytes: Uint8Array } | undefined
    yield* Stream.runForEach(parts, (part) => {
      if (!Multipart.isFile(part)) return Effect.void
      if (part.key !== "file" || found !== undefined) return Stream.runDrain(part.content)
      return Effect.gen(function*() {
        const chunks: Array<Uint8Array> = []
        let size = 0
        yield* Stream.runForEach(part.content, (chunk) => {
          size += chunk.length
          if (size > max) return Effect.fail(tooLarge(max))
          chunks.push(chunk)
          return Effect.void
        })
        found = { name: part.name, bytes: Buffer.concat(chunks) }
      })
    }).pipe(
      Effect.catchTag("MultipartError", (e): Effect.Effect<never, HttpErrors.BadRequest | HttpErrors.PayloadTooLarge> => {
        switch (e.reason) {
          case "FileTooLarge":
          case "BodyTooLarge":
            return Effect.fail(tooLarge(max))
          case "TooManyParts":
          case "FieldTooLarge":
            return Effect.fail(badMultipart(`The multipart body is malformed (${e.reason})`))
          case "Parse":
            return Effect.fail(badMultipart("The body is not a readable multipart/form-data body"))
          default:
            return Effect.die(e)
        }
      })
    )
    if (found === undefined) return yield* Effect.fail(badMultipart("The multipart body has no file in the field \"file\""))
    return found
  })

export class Attachments extends Effect.Service<Attachments>()("@rec/assistant-service/Attachments", {
  effect: Effect.gen(function*() {
    const repo = yield* AttachmentsRepo
    const ingest = yield* Ingest
    const store = yield* FileStore
    const access = yield* Access
    const { maxUploadBytes } = yield* Config.http

    const notFound = (id: string) => new HttpErrors.NotFound({ detail: `No attachment ${id} for this user` })

    const upload = Effect.fn("Attachments.upload")(function*(
      ownerId: string,
      parts: Stream.Stream<Multipart.Part, Multipart.MultipartError>
    ) {
      const file = yield* readFilePart(parts, maxUploadBytes)
      const filename = cleanFilename(file.name)
      const prepared = yield* ingest.prepare(file.bytes, filename).pipe(
        Effect.catchTags({
          UnsupportedFile: (e) =>
            Effect.fail(new Domain.UnsupportedMediaType({
              detail: `The file "${filename}" is ${e.description}; the assistant reads PDF, DOCX, Markdown, HTML and plain text`
            })),
          UnreadableFile: (e) => Effect.fail(new HttpErrors.UnprocessableEntity({ detail: `The file "${filename}" cannot be read: ${e.message}` })),
          EmbeddingFailed: (e) => Effect.fail(new HttpErrors.BadGateway({ detail: `The file could not be indexed: ${e.message}` }))
        })
      )
      const row = yield* ingest.create({ ownerId, source: "upload", filename, location: null, bytes: file.bytes, prepared })
      yield* Effect.annotateCurrentSpan({ attachment: row.id, chunks: row.chunkCount })
      return toAttachment(row)
    })

    const list = (ownerId: string, params: typeof Domain.AttachmentListParams.Type) =>
      Effect.map(repo.list(ownerId, params.scope, params.limit, params.offset), ({ items, total }) => ({
        items: items.map(toAttachment),
        total,
        limit: params.limit,
        offset: params.offset
      }))

    /** The row and a stream of its file, if the caller may read it. */
    const raw = (ownerId: string, id: string) =>
      Effect.gen(function*() {
        const row = yield* repo.findReadable(id, ownerId)
        if (Option.isNone(row)) return yield* Effect.fail(notFound(id))
        const content = yield* store.stream(row.value.storageKey).pipe(
          Effect.catchTag("StoredFileMissing", () =>
            Effect.fail(new HttpErrors.NotFound({ detail: `The file of attachment ${id} is missing from the storage` })))
        )
        return { row: row.value, content }
      })

    const remove = Effect.fn("Attachments.remove")(function*(subject: Subject.Subject, id: string) {
      const ownerId = subject.id
      const row = yield* repo.find(id)
      if (Option.isNone(row)) return yield* Effect.fail(notFound(id))
      const own = row.value.ownerId === ownerId
      if (!own) {
        const admin = yield* access.isAdmin(subject)
        // Another user's attachment does not exist for a non-admin; a shared one is visible but theirs to keep.
        if (!admin && row.value.ownerId !== null) return yield* Effect.fail(notFound(id))
        if (!admin) {
          return yield* Effect.fail(new HttpErrors.Forbidden({
            detail: "Shared training materials are managed by the training sync; only administrators may delete them"
          }))
        }
      }
      const chunks = yield* ingest.remove(row.value)
      return { status: "deleted" as const, attachment_id: id as Domain.AttachmentId, chunks_removed: chunks }
    })

    return { upload, list, raw, remove } as const
  })
}) {}
