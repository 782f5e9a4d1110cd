/**
 * Validate, import and export on PGlite (the suite in `support/importSuite.ts`, also run on
 * PostgreSQL), and what only needs one backend: upload framing, size and parsing limits over
 * HTTP, and export round trips of random bundles.
 */
import { expect, layer } from "@effect/vitest"
import { Generate } from "@rec/registry-service"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import { exampleText, get, importExample, multipart, post, serviceLayer, tokens } from "./helpers.js"
import { exportOf, importSuite } from "./support/importSuite.js"

const admin = Effect.flatMap(tokens, (mint) => mint("admin"))

layer(serviceLayer(), { excludeTestServices: true, timeout: "180 seconds" })("bundles on PGlite", (it) => {
  importSuite(it)
})

layer(serviceLayer({ env: { REGISTRY_MAX_UPLOAD_BYTES: "60000" } }), { excludeTestServices: true, timeout: "180 seconds" })(
  "uploads and parsing limits",
  (it) => {
    it.effect("the bundle must be the `file` part of a multipart body", () =>
      Effect.gen(function*() {
        const token = yield* admin
        for (const method of ["GET", "POST"] as const) {
          const url = "/admin/import"
          const raw = yield* (method === "GET" ? get : post)(url, { token, text: { body: exampleText, contentType: "application/yaml" } })
          expect(raw.status, method).toBe(400)
          expect(raw.body, method).toEqual({
            detail: "Send the bundle as multipart/form-data with a `file` field (curl -F file=@bundle.yaml)",
            issues: [{ path: ["file"], message: "is missing" }]
          })
          const other = multipart(exampleText, "upload")
          const wrongField = yield* (method === "GET" ? get : post)(url, { token, text: { body: other.body, contentType: other.contentType } })
          expect(wrongField.status, method).toBe(400)
          const empty = yield* (method === "GET" ? get : post)(url, { token })
          expect(empty.status, method).toBe(400)
        }
        // A plain field named `file` (curl -F 'file=<bundle.yaml') is read like a file.
        const boundary = "----plain-field"
        const field = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"\r\n\r\n${exampleText}\r\n--${boundary}--\r\n`)
        const reply = yield* get("/admin/import", { token, text: { body: new Uint8Array(field), contentType: `multipart/form-data; boundary=${boundary}` } })
        expect(reply.body).toMatchObject({ valid: true })
      }))

    it.effect("a bundle over REGISTRY_MAX_UPLOAD_BYTES is a 413; a body over the server's limit too", () =>
      Effect.gen(function*() {
        const token = yield* admin
        const large = Generate.bundle({ community: "large", members: 80 })
        expect(large.length).toBeGreaterThan(60_000)
        for (const method of ["GET", "POST"] as const) {
          const reply = yield* (method === "GET" ? get : post)("/admin/import", { token, bundle: large })
          expect(reply.status, method).toBe(413)
          expect(reply.body).toEqual({ detail: "The bundle is larger than 60000 bytes, the most this service accepts" })
        }
        const huge = yield* post("/admin/import", { token, bundle: "#".repeat(200_000) })
        expect(huge.status).toBe(413)
        expect((yield* get("/user/communities/large", { token })).status).toBe(404)
      }))

    it.effect("YAML bombs and 10,000-level documents are refused quickly with a 400; the service survives hundreds", () =>
      Effect.gen(function*() {
        const token = yield* admin
        let laughs = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        let previous = "a"
        for (const name of "bcdefghi") {
          laughs += `${name}: &${name} [${Array(9).fill(`*${previous}`).join(", ")}]\n`
          previous = name
        }
        const bombs: ReadonlyArray<readonly [string, string]> = [
          [laughs, "The bundle expands to more than 2000000 values through its YAML aliases, the most this service accepts"],
          ["[".repeat(10_000) + "]".repeat(10_000), "The bundle nests YAML collections deeper than 64 levels (line 1), the most this service accepts"],
          ["{a: ".repeat(10_000) + "1" + "}".repeat(10_000), "The bundle nests YAML collections deeper than 64 levels (line 1), the most this service accepts"],
          ["a: &a [1, *a]\n", "The bundle contains a YAML alias inside its own anchor (a cycle)"],
          [`a: &a x\nb: [${Array(101).fill("*a").join(", ")}]\n`, "The bundle uses more than 100 YAML aliases (line 2), the most this service accepts"]
        ]
        for (const [bomb, detail] of bombs) {
          for (const method of ["GET", "POST"] as const) {
            const started = performance.now()
            const reply = yield* (method === "GET" ? get : post)("/admin/import", { token, bundle: bomb })
            expect(performance.now() - started).toBeLessThan(3_000)
            expect(reply.status, `${method} ${detail}`).toBe(400)
            expect(reply.body).toEqual({ detail })
          }
        }
        const started = performance.now()
        const replies = yield* Effect.forEach(
          Array.from({ length: 300 }, (_, i) => bombs[i % bombs.length]![0]),
          (bomb, i) => (i % 2 === 0 ? get : post)("/admin/import", { token, bundle: bomb }),
          { concurrency: 8 }
        )
        expect(replies.every((r) => r.status === 400)).toBe(true)
        expect(performance.now() - started).toBeLessThan(60_000)
        expect((yield* get("/health")).status).toBe(200)
        expect((yield* importExample()).status).toBe(201)
      }))
  }
)

layer(serviceLayer(), { excludeTestServices: true, timeout: "180 seconds" })("export round trips", (it) => {
  it.effect("random valid bundles: the export re-imports to the same export", () =>
    Effect.gen(function*() {
      const cases = fc.sample(
        fc.record({
          members: fc.integer({ min: 0, max: 25 }),
          key: fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,20}$/),
          extra: fc.dictionary(fc.stringMatching(/^x_[a-z]{1,8}$/), fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)), { maxKeys: 3 })
        }),
        { numRuns: 6, seed: 4242 }
      )
      for (const { extra, key, members } of cases) {
        const extraYaml = Object.entries(extra).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join("\n")
        const text = Generate.bundle({ community: key, members }) + (extraYaml === "" ? "" : `${extraYaml}\n`)
        yield* importExample(text)
        const first = yield* exportOf(key)
        for (const k of Object.keys(extra)) expect(first, k).toContain(`${k}: `)
        yield* importExample(first)
        expect(yield* exportOf(key), key).toBe(first)
      }
    }))
})
