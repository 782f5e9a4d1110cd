/**
 * Rate limits of the write routes (`Config.rateLimits`, docs/decisions.md "Rate limits across
 * services"): over a low configured limit a client gets 429 with `Retry-After` and a `{detail}`,
 * another client keeps its own budget, and the contract lists the 429 on the limited operation.
 * (One budget across replicas: services/flexibility/test/RateLimits.test.ts, the same kit store.)
 *
 * The window is a day long: the shared counter is a fixed window, and a short one could roll
 * over between two requests of the test.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { call, serviceLayer, token, userId } from "./support/Service.js"

const community = "it-energy-community"

layer(serviceLayer({ env: { RATE_LIMIT_PREFERENCES: "2/24h" } }), { excludeTestServices: true, timeout: "60 seconds" })(
  "rate limits",
  (it) => {
    it.effect("a user's third preferences write in the window is a 429 with Retry-After; another user is not limited", () =>
      Effect.gen(function*() {
        const participant = yield* token("participant")
        const body = { user_id: yield* userId("participant"), community_id: community, language: "it" }
        for (let i = 0; i < 2; i++) {
          const reply = yield* call("PUT", "/preferences", { token: participant, json: body })
          expect(reply.status, JSON.stringify(reply.body)).not.toBe(429)
        }
        const refused = yield* call("PUT", "/preferences", { token: participant, json: body })
        expect(refused.status).toBe(429)
        expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0)
        expect((refused.body as { detail: string }).detail).toMatch(/^Too many requests: at most 2 per 1d for this client/)
        // Reads are not limited.
        expect((yield* call("GET", `/preferences?user_id=${body.user_id}&community_id=${community}`, { token: participant })).status)
          .not.toBe(429)
        const consumer = yield* token("participant-consumer")
        const other = yield* call("PUT", "/preferences", {
          token: consumer,
          json: { ...body, user_id: yield* userId("participant-consumer") }
        })
        expect(other.status, JSON.stringify(other.body)).not.toBe(429)
      }))

    it.effect("the contract lists the 429 on the limited operations only", () =>
      Effect.gen(function*() {
        const doc = (yield* call("GET", "/openapi.json")).body as {
          paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
        }
        expect(doc.paths["/preferences"]!.put!.responses["429"]).toBeDefined()
        expect(doc.paths["/ingest-event"]!.post!.responses["429"]).toBeDefined()
        expect(doc.paths["/preferences"]!.get!.responses["429"]).toBeUndefined()
      }))
  }
)
