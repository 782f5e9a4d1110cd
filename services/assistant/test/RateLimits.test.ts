/**
 * Rate limits of the write routes (`Config.rateLimits`, docs/decisions.md "Rate limits across
 * services"): over a low configured limit a user gets 429 with `Retry-After` and a `{detail}`,
 * counted in one budget whether the route is called at the root or under the frontend's base
 * path; another user keeps their own; the contract lists the 429 on the limited operations.
 * (One budget across replicas: services/flexibility/test/RateLimits.test.ts, the same kit store.)
 *
 * The window is a day long: the shared counter is a fixed window, and a short one could roll
 * over between two requests of the test.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { call, fileForm, serviceLayer, tempDir, tokens } from "./helpers.js"

layer(serviceLayer({ storageDir: tempDir("limits"), env: { RATE_LIMIT_UPLOAD: "2/24h" } }), {
  excludeTestServices: true,
  timeout: "60 seconds"
})("rate limits", (it) => {
  it.effect("a user's third upload in the window is a 429 with Retry-After, at the root or under /api; another user is not limited", () =>
    Effect.gen(function*() {
      const participant = yield* Effect.flatMap(tokens, (mint) => mint("participant"))
      const upload = (path: string, token: string, n: number) =>
        call("POST", path, { token, form: fileForm(`note-${n}.txt`, `A note about the community, number ${n}.`, "text/plain") })
      expect((yield* upload("/upload", participant, 1)).status).toBe(201)
      expect((yield* upload("/api/upload", participant, 2)).status).toBe(201)
      const refused = yield* upload("/upload", participant, 3)
      expect(refused.status).toBe(429)
      expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0)
      expect((refused.body as { detail: string }).detail).toMatch(/^Too many requests: at most 2 per 1d for this client/)
      expect((yield* upload("/api/upload", participant, 4)).status).toBe(429)
      expect((yield* call("GET", "/attachments", { token: participant })).status).toBe(200)
      const consumer = yield* Effect.flatMap(tokens, (mint) => mint("participant-consumer"))
      expect((yield* upload("/upload", consumer, 5)).status).toBe(201)
    }))

  it.effect("the contract lists the 429 on the limited operations only", () =>
    Effect.gen(function*() {
      const doc = (yield* call("GET", "/openapi.json")).body as {
        paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
      }
      expect(doc.paths["/upload"]!.post!.responses["429"]).toBeDefined()
      expect(doc.paths["/chat"]!.post!.responses["429"]).toBeDefined()
      expect(doc.paths["/attachments"]!.get!.responses["429"]).toBeUndefined()
    }))
})
