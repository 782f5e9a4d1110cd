/**
 * `GET /api/me` and `POST /api/me/terms` (issue 16 point 2), and the authentication every route
 * shares (point 1): the token in the reverse proxy's header or as a bearer token, verified with
 * the identity provider's keys; users only.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import { DevIdp } from "@rec/dev-idp"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { FlexibilityState } from "./support/FakeFlexibility.js"
import * as FakeFlexibility from "./support/FakeFlexibility.js"
import { NudgingState } from "./support/FakeNudging.js"
import * as FakeNudging from "./support/FakeNudging.js"
import { TwinState } from "./support/FakeTwin.js"
import { call, gatewayLayer, token, users } from "./support/Harness.js"

const twin = new TwinState()
const clients = Layer.mergeAll(twin.layer(), FakeNudging.clientLayer(new NudgingState()), FakeFlexibility.clientLayer(new FlexibilityState()))

layer(gatewayLayer(() => Effect.succeed({ clients, env: { TERMS_VERSION: "2026-03-01" } })), {
  excludeTestServices: true,
  timeout: "60 seconds"
})("profile", (it) => {
  it.effect("is the token's identity, groups without realm roles, terms not yet accepted", () =>
    Effect.gen(function*() {
      const reply = yield* call("GET", "/api/me", { token: yield* token("participant") })
      expect(reply.status).toBe(200)
      expect(reply.body).toEqual({
        sub: users.participant,
        email: "giulia.romano@rec.example",
        name: "Giulia Romano",
        groups: [],
        terms_accepted: false,
        terms_version: "2026-03-01",
        terms_accepted_at: null
      })
      const admin = yield* call("GET", "/api/me", { token: yield* token("admin") })
      expect((admin.body as { groups: Array<string> }).groups).toEqual(["admins"])
    }))

  it.effect("accepting the terms is recorded once, with its version and first time", () =>
    Effect.gen(function*() {
      const t = yield* token("participant-consumer")
      const first = yield* call("POST", "/api/me/terms", { token: t })
      expect(first.status).toBe(200)
      const body = first.body as { terms_accepted: boolean; terms_accepted_at: string; terms_version: string }
      expect(body.terms_accepted).toBe(true)
      expect(body.terms_version).toBe("2026-03-01")
      expect(Date.parse(body.terms_accepted_at)).toBeGreaterThan(Date.now() - 60_000)
      yield* Effect.sleep("20 millis")
      const again = yield* call("POST", "/api/me/terms", { token: t })
      expect(again.body).toEqual(first.body)
      expect((yield* call("GET", "/api/me", { token: t })).body).toEqual(first.body)

      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ userId: string; termsVersion: string }>`SELECT user_id, terms_version FROM terms_acceptances
        WHERE user_id = ${users.consumer}`
      expect(rows).toEqual([{ userId: users.consumer, termsVersion: "2026-03-01" }])
    }))

  it.effect("an acceptance of another version of the terms does not count", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO terms_acceptances (user_id, terms_version, accepted_at)
        VALUES (${users.nogroup}, '2024-01-01', now())`
      const reply = yield* call("GET", "/api/me", { token: yield* token("nogroup") })
      expect(reply.body).toMatchObject({ terms_accepted: false, terms_accepted_at: null })
    }))

  it.effect("the token may come as a bearer token too; the proxy's header wins", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      const bearer = yield* call("GET", "/api/me", { headers: { authorization: `Bearer ${t}` } })
      expect(bearer.status).toBe(200)
      const both = yield* call("GET", "/api/me", { token: t, headers: { authorization: "Bearer not-a-token" } })
      expect(both.status).toBe(200)
    }))

  it.effect("no token, a bad or an expired token is a 401 with a challenge", () =>
    Effect.gen(function*() {
      const none = yield* call("GET", "/api/me")
      expect(none.status).toBe(401)
      expect(none.body).toEqual({ detail: "Missing bearer token" })
      expect(none.headers["www-authenticate"]).toBe("Bearer")

      const idp = yield* DevIdp
      const forged = (yield* token("participant")).slice(0, -4) + "AAAA"
      const bad = yield* call("GET", "/api/me", { token: forged })
      expect(bad.status).toBe(401)
      expect(bad.body).toEqual({ detail: "Token signature is invalid" })

      const expired = yield* Effect.orDie(idp.mint("participant", { expired: true }))
      const old = yield* call("GET", "/api/me", { token: expired })
      expect(old.status).toBe(401)
      expect(old.body).toEqual({ detail: "Token has expired" })
      expect(old.headers["www-authenticate"]).toContain("invalid_token")

      const idToken = yield* Effect.orDie(idp.mint("participant", { kind: "id" }))
      expect((yield* call("GET", "/api/me", { token: idToken })).status).toBe(401)
    }))

  it.effect("service accounts are refused by the gateway's policy", () =>
    Effect.gen(function*() {
      const reply = yield* call("GET", "/api/me", { token: yield* token("svc-participant-gateway") })
      expect(reply.status).toBe(403)
      expect(reply.body).toEqual({
        detail: "Not allowed: service accounts call the platform's services directly, not the participant gateway"
      })
      expect((yield* call("POST", "/api/me/terms", { token: yield* token("svc-nudging") })).status).toBe(403)
    }))

  it.effect("the API is documented under /api", () =>
    Effect.gen(function*() {
      const spec = yield* call("GET", "/api/openapi.json")
      expect(spec.status).toBe(200)
      expect(Object.keys((spec.body as { paths: object }).paths)).toContain("/api/assistant/{path}")
      const docs = yield* call("GET", "/api/docs")
      expect(docs.status).toBe(200)
      expect(String(docs.body)).toContain("swagger")
      expect((yield* call("GET", "/health")).body).toMatchObject({ status: "ok", service: "participant-gateway" })
      expect((yield* call("GET", "/ready")).body).toEqual({ status: "ready", checks: { database: "ok", policies: "ok" } })
    }))
})

const fromEnv = gatewayLayer((idp) =>
  Effect.succeed({
    clients,
    verifierFromEnv: true,
    env: { PLATFORM_OIDC_BASE_URL: idp.issuer, PLATFORM_OIDC_AUDIENCE: idp.audience, JWT_HEADER_NAME: "X-Forwarded-Access-Token" }
  })
)

layer(fromEnv, {
  excludeTestServices: true,
  timeout: "60 seconds"
})("another proxy header", (it) => {
  it.effect("JWT_HEADER_NAME names the header the token comes in", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      const reply = yield* call("GET", "/api/me", { headers: { "x-forwarded-access-token": t } })
      expect(reply.status).toBe(200)
      expect((reply.body as { sub: string }).sub).toBe(users.participant)
      // The default header is then an ordinary header: no token.
      expect((yield* call("GET", "/api/me", { token: t })).status).toBe(401)
    }))
})
