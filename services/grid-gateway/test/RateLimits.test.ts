/**
 * Rate limits of the write routes (`GridConfig.rateLimits`, docs/decisions.md "Rate limits across
 * services"): over a low configured limit an operator gets 429 with `Retry-After` and a
 * `{detail}` on every alert-rule write (one budget for create, update and delete), another
 * operator keeps their own, and the contract lists the 429 on the limited operations.
 * (One budget across replicas: services/flexibility/test/RateLimits.test.ts, the same kit store.)
 *
 * The window is a day long: the shared counter is a fixed window, and a short one could roll
 * over between two requests of the test.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { call, gatewayLayer, tokenOf } from "./support/Gateway.js"

const rule = { risk_types: ["wind"], threshold: "ALERT" }

layer(gatewayLayer({ env: { RATE_LIMIT_ALERT_RULES: "2/24h" } }), { excludeTestServices: true, timeout: "60 seconds" })(
  "rate limits",
  (it) => {
    it.effect("an operator's third alert-rule write in the window is a 429 with Retry-After; another operator is not limited", () =>
      Effect.gen(function*() {
        const token = yield* tokenOf("dso-operator")
        const created = yield* call("POST", "/api/alert-rules", { token, json: rule })
        expect(created.status, JSON.stringify(created.body)).toBe(201)
        const updated = yield* call("PATCH", `/api/alert-rules/${created.body.id}`, { token, json: { threshold: "WARNING" } })
        expect(updated.status, JSON.stringify(updated.body)).toBe(200)
        const refused = yield* call("DELETE", `/api/alert-rules/${created.body.id}`, { token })
        expect(refused.status).toBe(429)
        expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0)
        expect(refused.body.detail).toMatch(/^Too many requests: at most 2 per 1d for this client/)
        expect((yield* call("POST", "/api/alert-rules", { token, json: rule })).status).toBe(429)
        // Reads are not limited, and the refused delete left the rule in place.
        const list = yield* call("GET", "/api/alert-rules", { token })
        expect(list.status).toBe(200)
        expect(JSON.stringify(list.body)).toContain(created.body.id)
        const other = yield* call("POST", "/api/alert-rules", { token: yield* tokenOf("dso-operator-valsugana"), json: rule })
        expect(other.status, JSON.stringify(other.body)).toBe(201)
      }))

    it.effect("the contract lists the 429 on the limited operations only", () =>
      Effect.gen(function*() {
        const doc = (yield* call("GET", "/api/openapi.json")).body
        expect(doc.paths["/api/alert-rules"].post.responses["429"]).toBeDefined()
        expect(doc.paths["/api/alert-rules/{id}"].delete.responses["429"]).toBeDefined()
        expect(doc.paths["/api/notification-settings"].put.responses["429"]).toBeDefined()
        expect(doc.paths["/api/alert-rules"].get.responses["429"]).toBeUndefined()
      }))
  }
)
