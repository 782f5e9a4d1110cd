/**
 * Rate limits of the write routes (`Config.rateLimits`, docs/decisions.md "Rate limits across
 * services"): over a low configured limit a user gets 429 with `Retry-After` and a `{detail}` on
 * every write under `/api` (one budget), another user keeps their own, reads are not limited, and
 * the contract lists the 429 on the limited operations (some reads list one already: an
 * upstream's 429 passed on).
 * (One budget across replicas: services/flexibility/test/RateLimits.test.ts, the same kit store.)
 *
 * The window is a day long: the shared counter is a fixed window, and a short one could roll
 * over between two requests of the test.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { FlexibilityState } from "./support/FakeFlexibility.js"
import * as FakeFlexibility from "./support/FakeFlexibility.js"
import { NudgingState } from "./support/FakeNudging.js"
import * as FakeNudging from "./support/FakeNudging.js"
import { TwinState } from "./support/FakeTwin.js"
import { call, gatewayLayer, token, users } from "./support/Harness.js"

const twin = new TwinState()
twin.member(users.participant)
twin.member(users.consumer)
const clients = Layer.mergeAll(twin.layer(), FakeNudging.clientLayer(new NudgingState()), FakeFlexibility.clientLayer(new FlexibilityState()))

const settings = { notifications_enabled: true, preferred_language: "it", max_per_day: 3 }

layer(gatewayLayer(() => Effect.succeed({ clients, env: { RATE_LIMIT_WRITES: "2/24h" } })), {
  excludeTestServices: true,
  timeout: "60 seconds"
})("rate limits", (it) => {
  it.effect("a user's third write in the window is a 429 with Retry-After; another user is not limited", () =>
    Effect.gen(function*() {
      const participant = yield* token("participant")
      for (let i = 0; i < 2; i++) {
        const reply = yield* call("PUT", "/api/settings", { token: participant, json: settings })
        expect(reply.status, JSON.stringify(reply.body)).toBe(200)
      }
      // One budget for every write: a POST after two PUTs is refused.
      const refused = yield* call("POST", "/api/settings/push-unsubscribe", { token: participant, json: {} })
      expect(refused.status).toBe(429)
      expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0)
      expect((refused.body as { detail: string }).detail).toMatch(/^Too many requests: at most 2 per 1d for this client/)
      expect((yield* call("GET", "/api/settings", { token: participant })).status).toBe(200)
      const other = yield* call("PUT", "/api/settings", { token: yield* token("participant-consumer"), json: settings })
      expect(other.status, JSON.stringify(other.body)).toBe(200)
    }))

  it.effect("the contract lists the 429 on the limited operations", () =>
    Effect.gen(function*() {
      const doc = (yield* call("GET", "/api/openapi.json")).body as {
        paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
      }
      expect(doc.paths["/api/settings"]!.put!.responses["429"]).toBeDefined()
      expect(doc.paths["/api/commitments"]!.post!.responses["429"]).toBeDefined()
    }))
})
