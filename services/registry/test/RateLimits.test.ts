/**
 * The rate limit of imports (`Config.rateLimits`, docs/decisions.md "Rate limits across
 * services"): over a low configured limit an admin client gets 429 with `Retry-After` and a
 * `{detail}`, and nothing of the refused bundle is imported; reads and the dry run are not
 * limited; the contract lists the 429 on the import only.
 * (One budget across replicas: services/flexibility/test/RateLimits.test.ts, the same kit store.)
 *
 * The window is a day long: the shared counter is a fixed window, and a short one could roll
 * over between two requests of the test.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { communityKey, exampleText, get, importExample, post, serviceLayer, tokens } from "./helpers.js"

layer(serviceLayer({ env: { RATE_LIMIT_IMPORT: "1/24h" } }), { excludeTestServices: true, timeout: "120 seconds" })(
  "rate limits",
  (it) => {
    it.effect("the second import in the window is a 429 with Retry-After and changes nothing", () =>
      Effect.gen(function*() {
        yield* importExample()
        const admin = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
        const before = yield* get(`/admin/export?community=${communityKey}`, { token: admin })
        const renamed = exampleText.replace(/name: ([^\n]+)/, "name: Renamed by a refused import")
        expect(renamed).not.toBe(exampleText)
        const refused = yield* post("/admin/import", { token: admin, bundle: renamed })
        expect(refused.status).toBe(429)
        expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0)
        expect((refused.body as { detail: string }).detail).toMatch(/^Too many requests: at most 1 per 1d for this client/)
        const after = yield* get(`/admin/export?community=${communityKey}`, { token: admin })
        expect(after.status).toBe(200)
        expect(after.text).toBe(before.text)
      }))

    it.effect("the contract lists the 429 on the import only", () =>
      Effect.gen(function*() {
        const doc = (yield* get("/openapi.json")).body as {
          paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
        }
        expect(doc.paths["/admin/import"]!.post!.responses["429"]).toBeDefined()
        expect(doc.paths["/admin/import"]!.get!.responses["429"]).toBeUndefined()
      }))
  }
)
