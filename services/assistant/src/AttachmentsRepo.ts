/**
 * SQL of the attachment table. Readers see a row when it is theirs or shared
 * (`owner_id IS NULL`); everything else about access is decided by the callers.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

export type AttachmentSource = "upload" | "training_material"
export type AttachmentStatus = "indexed" | "empty"

export interface AttachmentRow {
  readonly id: string
  readonly ownerId: string | null
  readonly source: AttachmentSource
  readonly filename: string
  readonly contentType: string
  readonly sizeBytes: number
  readonly sha256: string
  readonly storageKey: string
  readonly title: string | null
  readonly location: string | null
  readonly status: AttachmentStatus
  readonly chunkCount: number
  readonly createdAt: string
  readonly indexedAt: string | null
}

export interface NewAttachment {
  readonly id: string
  readonly ownerId: string | null
  readonly source: AttachmentSource
  readonly filename: string
  readonly contentType: string
  readonly sizeBytes: number
  readonly sha256: string
  readonly storageKey: string
  readonly title: string | null
  readonly location: string | null
  readonly status: AttachmentStatus
  readonly chunkCount: number
}

export interface AdminFilter {
  readonly id?: string | undefined
  readonly ownerId?: string | undefined
  readonly scope?: "user" | "shared" | undefined
  readonly status?: AttachmentStatus | undefined
  readonly contentType?: string | undefined
  readonly filename?: string | undefined
  readonly limit: number
  readonly offset: number
}

type Raw = Omit<AttachmentRow, "sizeBytes"> & { readonly sizeBytes: string | number }

const decode = (row: Raw): AttachmentRow => ({ ...row, sizeBytes: Number(row.sizeBytes) })

const columns = "id, owner_id, source, filename, content_type, size_bytes, sha256, storage_key, title, location, status, chunk_count, created_at, indexed_at"

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`)

export class AttachmentsRepo extends Effect.Service<AttachmentsRepo>()("@rec/assistant-service/AttachmentsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)

    const insert = (a: NewAttachment) =>
      sql`INSERT INTO attachments ${sql.insert({ ...a, indexedAt: new Date().toISOString() })}`.pipe(Effect.asVoid)

    /** The attachment if `ownerId` may read it (own or shared). */
    const findReadable = (id: string, ownerId: string) =>
      sql<Raw>`SELECT ${cols} FROM attachments WHERE id = ${id} AND (owner_id = ${ownerId} OR owner_id IS NULL)`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), decode))
      )

    const find = (id: string) =>
      sql<Raw>`SELECT ${cols} FROM attachments WHERE id = ${id}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), decode))
      )

    /** Of the given ids, those `ownerId` may read. */
    const readableIds = (ids: ReadonlyArray<string>, ownerId: string) =>
      ids.length === 0
        ? Effect.succeed(new Set<string>())
        : sql<{ id: string }>`SELECT id FROM attachments WHERE id IN ${sql.in(ids)} AND (owner_id = ${ownerId} OR owner_id IS NULL)`.pipe(
          Effect.map((rows) => new Set(rows.map((r) => r.id)))
        )

    const list = (ownerId: string, scope: "own" | "shared" | "all", limit: number, offset: number) => {
      const where = scope === "own"
        ? sql`owner_id = ${ownerId}`
        : scope === "shared"
        ? sql`owner_id IS NULL`
        : sql`(owner_id = ${ownerId} OR owner_id IS NULL)`
      return Effect.all({
        items: sql<Raw>`SELECT ${cols} FROM attachments WHERE ${where} ORDER BY created_at DESC, id LIMIT ${limit} OFFSET ${offset}`.pipe(
          Effect.map((rows) => rows.map(decode))
        ),
        total: sql<{ n: string }>`SELECT count(*) AS n FROM attachments WHERE ${where}`.pipe(Effect.map(([r]) => Number(r.n)))
      })
    }

    const adminList = (f: AdminFilter) => {
      const conditions = [
        f.id === undefined ? undefined : sql`id = ${f.id}`,
        f.ownerId === undefined ? undefined : sql`owner_id = ${f.ownerId}`,
        f.scope === undefined ? undefined : f.scope === "user" ? sql`owner_id IS NOT NULL` : sql`owner_id IS NULL`,
        f.status === undefined ? undefined : sql`status = ${f.status}`,
        f.contentType === undefined ? undefined : sql`content_type LIKE ${escapeLike(f.contentType) + "%"}`,
        f.filename === undefined ? undefined : sql`filename ILIKE ${"%" + escapeLike(f.filename) + "%"}`
      ].filter((c) => c !== undefined)
      const where = conditions.length === 0 ? sql`true` : sql.and(conditions)
      return Effect.all({
        items: sql<Raw>`SELECT ${cols} FROM attachments WHERE ${where} ORDER BY created_at DESC, id LIMIT ${f.limit} OFFSET ${f.offset}`.pipe(
          Effect.map((rows) => rows.map(decode))
        ),
        total: sql<{ n: string }>`SELECT count(*) AS n FROM attachments WHERE ${where}`.pipe(Effect.map(([r]) => Number(r.n)))
      })
    }

    /** Deletes the row (its chunks go with it); the deleted row, if there was one. */
    const remove = (id: string) =>
      sql<Raw>`DELETE FROM attachments WHERE id = ${id} RETURNING ${cols}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), decode))
      )

    const setIndexed = (id: string, values: {
      readonly status: AttachmentStatus
      readonly chunkCount: number
      readonly title: string | null
      readonly contentType: string
    }) =>
      sql`UPDATE attachments SET status = ${values.status}, chunk_count = ${values.chunkCount}, title = ${values.title},
            content_type = ${values.contentType}, indexed_at = now() WHERE id = ${id}`.pipe(Effect.asVoid)

    /** Training materials by location (path without `.md`). */
    const trainingMaterials = sql<Raw>`SELECT ${cols} FROM attachments WHERE source = 'training_material'`.pipe(
      Effect.map((rows) => new Map(rows.map((r) => [r.location ?? "", decode(r)])))
    )

    /** Replaces a training material's file data (the chunks are replaced by the caller). */
    const updateTraining = (id: string, values: {
      readonly sha256: string
      readonly sizeBytes: number
      readonly title: string | null
      readonly status: AttachmentStatus
      readonly chunkCount: number
      readonly filename: string
    }) =>
      sql`UPDATE attachments SET sha256 = ${values.sha256}, size_bytes = ${values.sizeBytes}, title = ${values.title},
            status = ${values.status}, chunk_count = ${values.chunkCount}, filename = ${values.filename}, indexed_at = now()
          WHERE id = ${id}`.pipe(Effect.asVoid)

    return { insert, findReadable, find, readableIds, list, adminList, remove, setIndexed, trainingMaterials, updateTraining } as const
  })
}) {}
