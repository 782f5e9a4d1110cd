/**
 * From bytes to searchable chunks: sniff the type, parse, chunk by tokens along the document's
 * structure, embed, and write the attachment with its chunks in one transaction, the raw file
 * in object storage. Nothing is written until the file is parsed and embedded, so a bad file or
 * an embedding failure leaves nothing behind; a database failure after the file was stored
 * removes the file again.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { createHash, randomUUID } from "node:crypto"
import { AttachmentsRepo, type AttachmentRow, type AttachmentSource, type AttachmentStatus } from "./AttachmentsRepo.js"
import * as Chunker from "./Chunker.js"
import { ChunksRepo, type NewChunk } from "./ChunksRepo.js"
import * as Config from "./Config.js"
import { Embedder } from "./Embedder.js"
import * as Parsers from "./Parsers.js"
import { FileStore, keyOf } from "./Storage.js"

/** The content is not a type the assistant reads. */
export class UnsupportedFile extends Schema.TaggedError<UnsupportedFile>()("UnsupportedFile", {
  description: Schema.String
}) {}

/** The content has the signature of a supported type but cannot be read. */
export class UnreadableFile extends Schema.TaggedError<UnreadableFile>()("UnreadableFile", {
  message: Schema.String
}) {}

export interface Prepared {
  readonly kind: Parsers.Kind
  readonly contentType: string
  readonly title: string | null
  readonly sha256: string
  readonly sizeBytes: number
  readonly chunks: ReadonlyArray<NewChunk>
  readonly status: AttachmentStatus
}

export const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")

/** `report.final.pdf` -> `report.final`. */
const stem = (filename: string) => filename.replace(/\.[A-Za-z0-9]{1,8}$/, "") || filename

/** A name safe to store and show: no directories, no control characters, at most 255 characters. */
export const cleanFilename = (name: string): string => {
  // Browsers send `"`, CR and LF of a file name as %22, %0D, %0A (the HTML form encoding).
  const decoded = name.replace(/%22/gi, "\"").replace(/%0[ad]/gi, "")
  const base = decoded.split(/[\\/]/).pop() ?? ""
  // eslint-disable-next-line no-control-regex
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, "").trim().slice(0, 255)
  return clean === "" || clean === "." || clean === ".." ? "file" : clean
}

export class Ingest extends Effect.Service<Ingest>()("@rec/assistant-service/Ingest", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const attachments = yield* AttachmentsRepo
    const chunks = yield* ChunksRepo
    const embedder = yield* Embedder
    const store = yield* FileStore
    const chunking = yield* Config.chunking

    /** Parses, chunks and embeds a file of a known kind; writes nothing. */
    const prepareAs = Effect.fn("Ingest.prepare")(function*(kind: Parsers.Kind, bytes: Uint8Array, filename: string) {
      const parsed = yield* Effect.tryPromise({
        try: () => Parsers.parse(kind, bytes),
        catch: (cause) =>
          new UnreadableFile({
            message: cause instanceof Parsers.ParseFailure ? cause.message : `the file could not be parsed (${String(cause)})`
          })
      })
      const title = parsed.title?.trim() || stem(filename)
      const pieces = Chunker.chunk(parsed.blocks, chunking)
      const vectors = yield* embedder.embed(pieces.map((c) => Chunker.searchText(title, c.heading, c.text)))
      yield* Effect.annotateCurrentSpan({ kind, chunks: pieces.length })
      const prepared: Prepared = {
        kind,
        contentType: Parsers.contentTypes[kind],
        title,
        sha256: sha256(bytes),
        sizeBytes: bytes.length,
        chunks: pieces.map((c, i) => ({ ...c, embedding: vectors[i] })),
        status: pieces.length === 0 ? "empty" : "indexed"
      }
      return prepared
    })

    /** Sniffs the type from the content, then `prepareAs`. */
    const prepare = (bytes: Uint8Array, filename: string) =>
      Effect.gen(function*() {
        const sniffed = yield* Effect.promise(() => Parsers.sniff(bytes))
        if (sniffed._tag === "Unsupported") return yield* new UnsupportedFile({ description: sniffed.description })
        return yield* prepareAs(sniffed.kind, bytes, filename)
      })

    /** Stores a new attachment: file, row and chunks. */
    const create = Effect.fn("Ingest.create")(function*(input: {
      readonly ownerId: string | null
      readonly source: AttachmentSource
      readonly filename: string
      readonly location: string | null
      readonly bytes: Uint8Array
      readonly prepared: Prepared
    }) {
      const id = randomUUID()
      const key = keyOf(input.ownerId, id)
      const p = input.prepared
      yield* store.put(key, input.bytes)
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* attachments.insert({
          id,
          ownerId: input.ownerId,
          source: input.source,
          filename: input.filename,
          contentType: p.contentType,
          sizeBytes: p.sizeBytes,
          sha256: p.sha256,
          storageKey: key,
          title: p.title,
          location: input.location,
          status: p.status,
          chunkCount: p.chunks.length
        })
        yield* chunks.insert(id, input.ownerId, embedder.id, p.chunks)
      })).pipe(Effect.onError(() => store.remove(key).pipe(Effect.ignore)))
      // Read back for the database's created_at; the row was written by this transaction.
      return yield* Effect.orDie(Effect.flatten(attachments.find(id)))
    })

    /** Replaces the chunks of an existing attachment with those of `prepared` (one transaction). */
    const replaceChunks = (row: AttachmentRow, prepared: Prepared) =>
      Effect.gen(function*() {
        yield* chunks.removeOf(row.id)
        yield* chunks.insert(row.id, row.ownerId, embedder.id, prepared.chunks)
      })

    /** Parses the stored file again and replaces the chunks (`/admin/ingest`). */
    const reindex = Effect.fn("Ingest.reindex")(function*(row: AttachmentRow) {
      const bytes = yield* store.get(row.storageKey)
      const prepared = yield* prepare(bytes, row.filename)
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* replaceChunks(row, prepared)
        yield* attachments.setIndexed(row.id, {
          status: prepared.status,
          chunkCount: prepared.chunks.length,
          // Training materials keep the title their sync gave them.
          title: row.source === "training_material" ? row.title : prepared.title,
          contentType: prepared.contentType
        })
      }))
      return prepared
    })

    /** Deletes an attachment: row, chunks and vectors, then its file (all or nothing). */
    const remove = Effect.fn("Ingest.remove")(function*(row: AttachmentRow) {
      return yield* sql.withTransaction(Effect.gen(function*() {
        const removed = yield* chunks.removeOf(row.id)
        yield* attachments.remove(row.id)
        // Last step before the commit: if the file cannot be removed, nothing is.
        yield* store.remove(row.storageKey)
        return removed
      }))
    })

    return { prepare, prepareAs, create, reindex, replaceChunks, remove, embedder } as const
  })
}) {}
