/**
 * The admin endpoints: who may call them (policy `rec.assistant.admin`, failing closed), listing
 * and inspecting every upload with filters and paging, re-indexing one, and rebuilding the
 * retrieval state (`/admin/reload`) after vectors went missing.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { Engines } from "@rec/policy"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { baseUrl, call, chat, fileForm, serviceLayer, tempDir, tokens } from "./helpers.js"

const storageDir = tempDir("admin")
const refusal = { detail: "Administrators only: requires the admin or admins group, or the assistant.admin scope" }

interface AdminItem {
  readonly id: string
  readonly owner_id: string | null
  readonly filename: string
  readonly chunk_count: number
  readonly chunks?: ReadonlyArray<{ index: number; heading: string | null; token_count: number; text: string; embedded: boolean }>
}

describe("admin", () => {
  layer(serviceLayer({ storageDir }), { excludeTestServices: true, timeout: "60 seconds" })("with the repository's policies", (it) => {
    const setup = Effect.gen(function*() {
      const mint = yield* tokens
      const admin = yield* mint("admin")
      const alice = yield* mint("participant")
      const bob = yield* mint("participant-consumer")
      const upload = (token: string, name: string, text: string) =>
        Effect.map(call("POST", "/upload", { token, form: fileForm(name, text) }), (r) => r.body as { id: string; chunk_count: number })
      return { mint, admin, alice, bob, upload }
    })

    it.effect("refuses users outside the admin groups on every admin endpoint, and admits the assistant.admin scope", () =>
      Effect.gen(function*() {
        const { alice, mint } = yield* setup
        const requests = [
          ["/admin/uploads", {}],
          ["/admin/ingest", { attachment_id: "0b8e3c1a-7f6d-4e2b-9a5c-3d1f0e9b8a7c" }],
          ["/admin/reload", undefined],
          ["/admin/training-materials/sync", {}],
          ["/api/admin/reload", undefined]
        ] as const
        for (const [url, json] of requests) {
          const reply = yield* call("POST", url, { token: alice, json })
          expect(reply.status, url).toBe(403)
          expect(reply.body, url).toEqual(refusal)
        }
        const manager = yield* call("POST", "/admin/uploads", { token: yield* mint("manager"), json: {} })
        expect(manager.status).toBe(403)
        const scoped = yield* call("POST", "/admin/uploads", { token: yield* mint("participant", { scopes: ["assistant.admin"] }), json: {} })
        expect(scoped.status).toBe(200)
        expect((yield* call("POST", "/admin/uploads", { json: {} })).status).toBe(401)
      }))

    it.effect("lists every user's uploads with filters and paging, and inspects chunks", () =>
      Effect.gen(function*() {
        const { admin, alice, bob, upload } = yield* setup
        const a1 = yield* upload(alice, "alice-bill.md", "# Bill\n\nAlice's bill for March: 84 euro.\n")
        yield* upload(alice, "alice-notes.txt", "Notes of Alice about the assembly.")
        const b1 = yield* upload(bob, "bob-bill.md", "# Bill\n\nBob's bill for March: 61 euro.\n")

        const all = (yield* call("POST", "/admin/uploads", { token: admin, json: {} })).body as { items: ReadonlyArray<AdminItem>; total: number }
        expect(all.total).toBeGreaterThanOrEqual(3)
        expect(all.items.map((i) => i.owner_id)).toEqual(expect.arrayContaining([
          "52409e36-6d23-45ed-bb1e-d6c564a2f454",
          "cc28f729-6d12-46a8-bdfe-c8b6952a99e0"
        ]))

        const bills = (yield* call("POST", "/api/admin/uploads", { token: admin, json: { filename: "BILL", scope: "user" } })).body as {
          items: ReadonlyArray<AdminItem>
          total: number
        }
        expect(bills.items.map((i) => i.filename).sort()).toEqual(["alice-bill.md", "bob-bill.md"])

        const bobs = (yield* call("POST", "/admin/uploads", { token: admin, json: { owner_id: "cc28f729-6d12-46a8-bdfe-c8b6952a99e0" } })).body as { items: ReadonlyArray<AdminItem> }
        expect(bobs.items.map((i) => i.id)).toEqual([b1.id])

        const markdown = (yield* call("POST", "/admin/uploads", { token: admin, json: { content_type: "text/markdown", limit: 1 } })).body as {
          items: ReadonlyArray<AdminItem>
          total: number
          limit: number
        }
        expect(markdown.items).toHaveLength(1)
        expect(markdown.total).toBe(2)
        expect(markdown.limit).toBe(1)

        const inspected = (yield* call("POST", "/admin/uploads", { token: admin, json: { id: a1.id, include_chunks: true } })).body as { items: ReadonlyArray<AdminItem> }
        expect(inspected.items[0].chunks).toEqual([
          { index: 0, heading: "Bill", token_count: expect.any(Number), text: "Alice's bill for March: 84 euro.", embedded: true }
        ])

        const invalid = yield* call("POST", "/admin/uploads", { token: admin, json: { limit: 0, scope: "everyone" } })
        expect(invalid.status).toBe(400)
        expect((invalid.body as { issues: ReadonlyArray<unknown> }).issues).toHaveLength(2)
      }))

    it.effect("re-indexes an attachment from its stored file, and says what is missing", () =>
      Effect.gen(function*() {
        const { admin, alice, upload } = yield* setup
        const doc = yield* upload(alice, "guide.md", "# Guide\n\nCharge the car at noon.\n\n## Heat pump\n\nRun it at one.\n")
        const reindexed = yield* call("POST", "/admin/ingest", { token: admin, json: { attachment_id: doc.id } })
        expect(reindexed.status).toBe(200)
        expect(reindexed.body).toEqual({ attachment_id: doc.id, status: "indexed", chunk_count: doc.chunk_count, embedder: "local-hash-v1:512" })

        const unknown = "0b8e3c1a-7f6d-4e2b-9a5c-3d1f0e9b8a7c"
        const missing = yield* call("POST", "/admin/ingest", { token: admin, json: { attachment_id: unknown } })
        expect(missing.status).toBe(404)
        expect(missing.body).toEqual({ detail: `No attachment ${unknown}` })

        const files = fs.readdirSync(storageDir, { recursive: true }).map(String).filter((f) => f.endsWith(doc.id))
        fs.rmSync(path.join(storageDir, files[0]))
        const gone = yield* call("POST", "/admin/ingest", { token: admin, json: { attachment_id: doc.id } })
        expect(gone.status).toBe(404)
        expect(gone.body).toEqual({ detail: `The file of attachment ${doc.id} is missing from the storage` })
        // Its chunks were left as they were.
        const inspected = (yield* call("POST", "/admin/uploads", { token: admin, json: { id: doc.id, include_chunks: true } })).body as { items: ReadonlyArray<AdminItem> }
        expect(inspected.items[0].chunks).toHaveLength(doc.chunk_count)
      }))

    it.effect("reload embeds the chunks that lack a vector of the current embedder, and search finds them again", () =>
      Effect.gen(function*() {
        const { admin, alice, upload } = yield* setup
        const sql = yield* SqlClient.SqlClient
        const url = yield* baseUrl
        const doc = yield* upload(alice, "geothermal.md", "# Geothermal\n\nThe geothermal probe of the school reaches 120 metres.\n")
        // As after a restore, or a change of embedder: these chunks have no usable vector.
        yield* sql`UPDATE chunks SET embedder = NULL, embedding = NULL WHERE attachment_id = ${doc.id}`
        const stats = yield* sql<{ total: string }>`SELECT count(*) AS total FROM chunks`
        const reload = yield* call("POST", "/admin/reload", { token: admin })
        expect(reload.status).toBe(200)
        expect(reload.body).toMatchObject({
          status: "ok",
          embedder: "local-hash-v1:512",
          dimensions: 512,
          chunks: Number(stats[0].total),
          embedded: doc.chunk_count
        })
        const vectors = yield* sql<{ n: string }>`SELECT count(*) AS n FROM chunks WHERE attachment_id = ${doc.id} AND embedder = 'local-hash-v1:512'`
        expect(Number(vectors[0].n)).toBe(doc.chunk_count)
        const reply = yield* chat(`${url}/api/chat`, alice, { message: "How deep is the geothermal probe of the school?", include_citations: true })
        const sources = reply.frames[1].data as ReadonlyArray<{ metadata: { attachment_id: string; similarity: number | null } }>
        expect(sources[0].metadata.attachment_id).toBe(doc.id)
        expect(sources[0].metadata.similarity).not.toBeNull()
        // A second reload has nothing left to do.
        expect(((yield* call("POST", "/admin/reload", { token: admin })).body as { embedded: number }).embedded).toBe(0)
      }))

    it.effect("admins may delete another user's attachment", () =>
      Effect.gen(function*() {
        const { admin, bob, upload } = yield* setup
        const doc = yield* upload(bob, "spam.txt", "Buy cheap panels now.")
        const deleted = yield* call("DELETE", `/attachments/${doc.id}`, { token: admin })
        expect(deleted.status).toBe(200)
        expect((yield* call("GET", `/attachments/${doc.id}/raw`, { token: bob })).status).toBe(404)
      }))
  })

  layer(
    serviceLayer({ engine: Engines.embeddedWith({ directory: tempDir("no-policies"), watch: false }) }),
    { excludeTestServices: true, timeout: "60 seconds" }
  )("without policies", (it) => {
    it.effect("fails closed: 503 for admins, not an allow", () =>
      Effect.gen(function*() {
        const admin = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
        const reply = yield* call("POST", "/admin/reload", { token: admin })
        expect(reply.status).toBe(503)
        expect((reply.body as { detail: string }).detail).toMatch(/^Access cannot be decided now/)
        // The user profile says "not admin" rather than failing.
        expect(((yield* call("GET", "/user", { token: admin })).body as { is_admin: boolean }).is_admin).toBe(false)
      }))
  })
})
