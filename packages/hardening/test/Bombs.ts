/**
 * Upload bombs and YAML bombs (issue 19 point 3): answered with a 4xx that says why, quickly,
 * without the service's memory growing by what the bomb would expand to.
 */
import { expect } from "@effect/vitest"
import { checkFile } from "@rec/owners"
import * as Effect from "effect/Effect"
import { detailOf, request } from "./support/Http.js"
import { Stack } from "./support/Stack.js"
import type { It } from "./support/Types.js"
import { docxBomb } from "./support/ZipBomb.js"

export interface BombOutcome {
  readonly service: string
  readonly bomb: string
  readonly sentBytes: number
  readonly status: number
  readonly ms: number
  /** Growth of this process's resident memory (every service runs in it), in MB. */
  readonly rssGrowthMb: number
}

export const bombOutcomes: Array<BombOutcome> = []

const mb = 1024 * 1024

/** A bundle whose aliases expand to 9^9 (387 million) strings: billion laughs. */
export const billionLaughs = [
  "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]",
  ..."bcdefghi".split("").map((name, i) => {
    const previous = "abcdefghi"[i]!
    return `${name}: &${name} [${Array.from({ length: 9 }, () => `*${previous}`).join(", ")}]`
  }),
  "community: *i"
].join("\n") + "\n"

/** Collections nested 50,000 deep, in flow and in block style. */
export const deepFlow = `community: ${"[".repeat(50_000)}${"]".repeat(50_000)}\n`
export const deepBlock = "community:\n" + Array.from({ length: 3_000 }, (_, i) => `${" ".repeat(2 * (i + 1))}a:`).join("\n") + " 1\n"

const timed = <A>(f: () => Promise<A>) =>
  Effect.promise(async () => {
    global.gc?.()
    const rss = process.memoryUsage().rss
    const started = performance.now()
    const value = await f()
    return { value, ms: Math.round(performance.now() - started), rssGrowthMb: Math.round((process.memoryUsage().rss - rss) / mb) }
  })

const multipart = (field: string, name: string, bytes: Uint8Array, type: string) => {
  const form = new FormData()
  form.append(field, new Blob([bytes], { type }), name)
  return form
}

export const bombTests = (it: It) => {
  it.effect("assistant: a DOCX ZIP bomb and an oversized PDF are 4xx fast, without memory blow-up", () =>
    Effect.gen(function*() {
      const { idp, urls } = yield* Stack
      const token = yield* Effect.orDie(idp.mint("participant", { client: "rec-frontend" }))
      const upload = (body: FormData | Uint8Array, headers: Record<string, string> = {}) =>
        timed(() => request("POST", `${urls.assistant}/upload`, { token, body, headers, timeoutMs: 120_000 }))

      // 128 MiB of XML in a file of about 310 KB (four times what the assistant reads).
      const bomb = docxBomb(128 * mb)
      const docx = yield* upload(multipart("file", "bomb.docx", bomb, "application/vnd.openxmlformats-officedocument.wordprocessingml.document"))
      bombOutcomes.push({ service: "assistant", bomb: "DOCX ZIP bomb (128 MiB of XML)", sentBytes: bomb.length, status: docx.value.status, ms: docx.ms, rssGrowthMb: docx.rssGrowthMb })
      expect(docx.value.status, docx.value.text.slice(0, 300)).toBeGreaterThanOrEqual(400)
      expect(docx.value.status).toBeLessThan(500)
      expect(detailOf(docx.value.body)).toBeDefined()
      expect(docx.rssGrowthMb).toBeLessThan(512)

      // Over ASSISTANT_MAX_UPLOAD_BYTES (2 MiB in the stack), under the body limit (3 MiB): the
      // assistant counts while reading and stops at the limit, 413.
      const pdf = new Uint8Array(2 * mb + 200 * 1024)
      pdf.set(new TextEncoder().encode("%PDF-1.7\n"))
      const huge = yield* upload(multipart("file", "huge.pdf", pdf, "application/pdf"))
      bombOutcomes.push({ service: "assistant", bomb: "PDF over the upload limit (2.2 MiB)", sentBytes: pdf.length, status: huge.value.status, ms: huge.ms, rssGrowthMb: huge.rssGrowthMb })
      expect(huge.value.status, huge.value.text.slice(0, 300)).toBe(413)
      expect(detailOf(huge.value.body)).toMatch(/larger than/)

      // The service is still answering.
      expect((yield* Effect.promise(() => request("GET", `${urls.assistant}/health`))).status).toBe(200)
    }), 180_000)

  it.effect("registry: billion laughs and 50,000-deep YAML in an import are a 4xx naming the limit, fast", () =>
    Effect.gen(function*() {
      const { idp, urls } = yield* Stack
      const token = yield* Effect.orDie(idp.mint("admin", { client: "rec-frontend" }))
      for (const [bomb, text] of [["billion laughs (9^9 aliases)", billionLaughs], ["flow nesting 50,000 deep", deepFlow], ["block nesting 3,000 deep", deepBlock]] as const) {
        const bytes = new TextEncoder().encode(text)
        const reply = yield* timed(() =>
          request("POST", `${urls.registry}/admin/import`, { token, body: multipart("file", "bundle.yaml", bytes, "application/yaml"), timeoutMs: 60_000 })
        )
        bombOutcomes.push({ service: "registry", bomb, sentBytes: bytes.length, status: reply.value.status, ms: reply.ms, rssGrowthMb: reply.rssGrowthMb })
        expect(reply.value.status, `${bomb}: ${reply.value.text.slice(0, 300)}`).toBeGreaterThanOrEqual(400)
        expect(reply.value.status).toBeLessThan(500)
        expect(detailOf(reply.value.body), bomb).toBeDefined()
        expect(reply.rssGrowthMb, bomb).toBeLessThan(256)
      }
    }), 120_000)

  it("owners registry files: billion laughs and deep nesting are reported problems, not exceptions", () => {
    for (const [bomb, text] of [
      ["billion laughs", billionLaughs.replace("community: *i", "owners: *i")],
      ["flow nesting 50,000 deep", deepFlow.replace("community:", "owners:")]
    ] as const) {
      const started = performance.now()
      const checked = checkFile({ file: "owners.yaml", text })
      const ms = Math.round(performance.now() - started)
      bombOutcomes.push({ service: "owners (registry's OWNERS_FILE)", bomb, sentBytes: text.length, status: 0, ms, rssGrowthMb: 0 })
      expect(checked.entries).toEqual([])
      expect(checked.problems.map((p) => p.rule)).toEqual(["yaml"])
      expect(checked.problems[0]!.message).toMatch(/^invalid YAML: /)
      expect(ms).toBeLessThan(20_000)
    }
  })
}
