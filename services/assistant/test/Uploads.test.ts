/**
 * `POST /upload` for each type the assistant reads (a real PDF, a real DOCX, Markdown, HTML,
 * plain text), the type sniffed from the content whatever the name says, the size limit, the
 * refusals (unsupported, unreadable, no file, not multipart), the raw file as stored, the
 * listing, and deletion removing the file, the chunks and the vectors in one go.
 */
import { expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { makeDocx, makePdf, pngBytes } from "./fixtures.js"
import { baseUrl, call, chat, fileForm, serviceLayer, tempDir, tokens } from "./helpers.js"

const storageDir = tempDir("uploads")

interface Uploaded {
  readonly id: string
  readonly filename: string
  readonly content_type: string
  readonly size_bytes: number
  readonly status: string
  readonly chunk_count: number
  readonly title: string | null
  readonly scope: string
}

layer(serviceLayer({ storageDir, env: { ASSISTANT_MAX_UPLOAD_BYTES: "200000" } }), {
  excludeTestServices: true,
  timeout: "60 seconds"
})("uploads", (it) => {
  const setup = Effect.gen(function*() {
    const token = yield* Effect.flatMap(tokens, (mint) => mint("participant"))
    return { token, url: yield* baseUrl }
  })

  const upload = (token: string, name: string, bytes: Uint8Array | string, type?: string) =>
    call("POST", "/upload", { token, form: fileForm(name, bytes, type) })

  const ask = (url: string, token: string, message: string) =>
    Effect.map(chat(`${url}/api/chat`, token, { message }), (reply) =>
      ((reply.frames.find((f) => f.type === "sources")?.data ?? []) as ReadonlyArray<{ text: string; metadata: { attachment_id: string; heading: string | null } }>))

  it.effect("reads a PDF: text by page, title from the document information", () =>
    Effect.gen(function*() {
      const { token, url } = yield* setup
      const pdf = makePdf([
        ["The warehouse plant has a power of 90 kWp.", "It entered into operation in June."],
        ["The school plant has a power of 60 kWp (photovoltaic)."]
      ], "Plants of the community")
      const reply = yield* upload(token, "plants.pdf", pdf, "application/pdf")
      expect(reply.status).toBe(201)
      const body = reply.body as Uploaded
      expect(body).toMatchObject({ filename: "plants.pdf", content_type: "application/pdf", size_bytes: pdf.length, status: "indexed", title: "Plants of the community", scope: "user" })
      expect(body.chunk_count).toBeGreaterThan(0)
      const sources = yield* ask(url, token, "What power does the school plant have?")
      expect(sources[0].metadata.attachment_id).toBe(body.id)
      expect(sources[0].text).toContain("The school plant has a power of 60 kWp")
    }))

  it.effect("reads a DOCX with its Word headings", () =>
    Effect.gen(function*() {
      const { token, url } = yield* setup
      const docx = yield* Effect.promise(() =>
        makeDocx([
          { heading: 1, text: "Statute of the community" },
          { heading: 2, text: "Withdrawal" },
          { text: "Every member may withdraw with three months of notice, keeping its supply contract." }
        ]))
      const reply = yield* upload(token, "statute.docx", docx)
      expect(reply.status).toBe(201)
      const body = reply.body as Uploaded
      expect(body.content_type).toBe("application/vnd.openxmlformats-officedocument.wordprocessingml.document")
      expect(body.title).toBe("Statute of the community")
      const sources = yield* ask(url, token, "How much notice to withdraw from the community?")
      expect(sources[0].metadata.attachment_id).toBe(body.id)
      expect(sources[0].metadata.heading).toBe("Statute of the community › Withdrawal")
    }))

  it.effect("reads Markdown, HTML (scripts dropped) and plain text, by their content", () =>
    Effect.gen(function*() {
      const { token, url } = yield* setup
      const markdown = yield* upload(token, "readme", "# Heat pumps\n\nRun the **heat pump** at midday to store heat in the tank.\n")
      expect((markdown.body as Uploaded).content_type).toBe("text/markdown; charset=utf-8")

      const html = yield* upload(token, "page.txt",
        "<!DOCTYPE html><html><head><title>Charging guide</title><script>steal(document.cookie)</script></head>" +
          "<body><h1>Electric cars</h1><p>Charge the electric car between 11:00 and 15:00 on sunny days.</p><style>p{}</style></body></html>")
      const htmlBody = html.body as Uploaded
      expect(htmlBody.content_type).toBe("text/html; charset=utf-8")
      expect(htmlBody.title).toBe("Charging guide")

      const text = yield* upload(token, "notes.md", "Meeting notes.\n\nThe assembly approved the budget of 12,000 euro.\n")
      expect((text.body as Uploaded).content_type).toBe("text/plain; charset=utf-8")

      const sources = yield* ask(url, token, "When should I charge the electric car?")
      expect(sources[0].metadata.attachment_id).toBe(htmlBody.id)
      expect(sources.map((s) => s.text).join(" ")).not.toContain("steal")
    }))

  it.effect("sniffs a PDF named .txt as a PDF", () =>
    Effect.gen(function*() {
      const { token } = yield* setup
      const reply = yield* upload(token, "disguised.txt", makePdf([["Hidden PDF content about batteries."]]), "text/plain")
      expect((reply.body as Uploaded).content_type).toBe("application/pdf")
    }))

  it.effect("refuses what it cannot read, with 413, 415, 422 or 400, and keeps nothing", () =>
    Effect.gen(function*() {
      const { token } = yield* setup
      const before = fs.readdirSync(storageDir, { recursive: true }).length

      const big = yield* upload(token, "big.txt", "a".repeat(200_001))
      expect(big.status).toBe(413)
      expect(big.body).toEqual({ detail: "The file is larger than 200000 bytes, the most this assistant accepts (ASSISTANT_MAX_UPLOAD_BYTES)" })

      const png = yield* upload(token, "photo.pdf", pngBytes, "application/pdf")
      expect(png.status).toBe(415)
      expect((png.body as { detail: string }).detail).toContain("image/png")

      const binary = yield* upload(token, "data.bin", new Uint8Array([0, 1, 2, 3, 0, 255]))
      expect(binary.status).toBe(415)

      const empty = yield* upload(token, "empty.txt", "")
      expect(empty.status).toBe(415)

      const corrupt = new TextEncoder().encode("%PDF-1.7\n1 0 obj\n<< /Type /Catalog broken")
      const bad = yield* upload(token, "broken.pdf", corrupt)
      expect(bad.status).toBe(422)
      expect((bad.body as { detail: string }).detail).toContain("The file \"broken.pdf\" cannot be read")

      const form = new FormData()
      form.append("document", new Blob(["text"]), "other-field.txt")
      const noFile = yield* call("POST", "/upload", { token, form })
      expect(noFile.status).toBe(400)
      expect(noFile.body).toEqual({ detail: "The multipart body has no file in the field \"file\": send multipart/form-data with the file in the field \"file\"" })

      const json = yield* call("POST", "/upload", { token, json: { file: "x" } })
      expect(json.status).toBe(400)

      expect(fs.readdirSync(storageDir, { recursive: true }).length).toBe(before)
    }))

  it.effect("serves the raw file with its sniffed type and a safe Content-Disposition", () =>
    Effect.gen(function*() {
      const { token } = yield* setup
      const content = "<html><body><h1>Bill</h1><p>Total: 84 euro</p><script>alert(1)</script></body></html>"
      const uploaded = (yield* upload(token, "bolletta \"marzo\".html", content)).body as Uploaded
      const raw = yield* call("GET", `/api/attachments/${uploaded.id}/raw`, { token })
      expect(raw.status).toBe(200)
      expect(raw.text).toBe(content)
      expect(raw.headers["content-type"]).toBe("text/html; charset=utf-8")
      expect(raw.headers["content-disposition"]).toBe("inline; filename=\"bolletta _marzo_.html\"; filename*=UTF-8''bolletta%20%22marzo%22.html")
      expect(raw.headers["x-content-type-options"]).toBe("nosniff")
      expect(raw.headers["content-security-policy"]).toContain("sandbox")
    }))

  it.effect("lists the caller's attachments, newest first, with paging", () =>
    Effect.gen(function*() {
      const { token } = yield* setup
      const all = yield* call("GET", "/attachments", { token })
      const body = all.body as { items: ReadonlyArray<Uploaded>; total: number }
      expect(body.total).toBe(body.items.length)
      expect(body.items.every((a) => a.scope === "user")).toBe(true)
      const page = yield* call("GET", "/attachments?limit=2&offset=1", { token })
      expect((page.body as { items: ReadonlyArray<Uploaded> }).items.map((a) => a.id)).toEqual(body.items.slice(1, 3).map((a) => a.id))
      const invalid = yield* call("GET", "/attachments?limit=0", { token })
      expect(invalid.status).toBe(400)
    }))

  it.effect("deletes the file, the chunks and the vectors together", () =>
    Effect.gen(function*() {
      const { token, url } = yield* setup
      const sql = yield* SqlClient.SqlClient
      const uploaded = (yield* upload(token, "secret-recipe.md", "# Zucchini flowers\n\nFry the zucchini flowers in sparkling water batter.\n")).body as Uploaded
      const before = yield* ask(url, token, "How do I fry zucchini flowers?")
      expect(before[0].metadata.attachment_id).toBe(uploaded.id)
      const vectors = sql<{ n: string }>`SELECT count(*) AS n FROM chunks WHERE attachment_id = ${uploaded.id} AND embedding IS NOT NULL`
      expect(Number((yield* vectors)[0].n)).toBe(uploaded.chunk_count)

      const deleted = yield* call("DELETE", `/attachments/${uploaded.id}`, { token })
      expect(deleted.status).toBe(200)
      expect(deleted.body).toEqual({ status: "deleted", attachment_id: uploaded.id, chunks_removed: uploaded.chunk_count })

      const after = yield* ask(url, token, "How do I fry zucchini flowers?")
      expect(after.map((s) => s.metadata.attachment_id)).not.toContain(uploaded.id)
      expect((yield* call("GET", `/attachments/${uploaded.id}/raw`, { token })).status).toBe(404)
      expect((yield* call("DELETE", `/attachments/${uploaded.id}`, { token })).status).toBe(404)
      const files = fs.readdirSync(storageDir, { recursive: true }).map(String)
      expect(files.some((f) => f.endsWith(uploaded.id))).toBe(false)
      expect(Number((yield* vectors)[0].n)).toBe(0)
      expect((yield* sql`SELECT 1 FROM attachments WHERE id = ${uploaded.id}`).length).toBe(0)
    }))
})

