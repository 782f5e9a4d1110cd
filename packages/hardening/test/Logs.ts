/**
 * No log line holds a credential (issue 19 point 3). Every service's log lines (all levels, as
 * the kit's JSON logger writes them) are kept by the stack; this test adds authenticated
 * requests of every kind of outcome (answered, refused as forbidden, bad input, not found, bad
 * tokens) to what the earlier tests did, then searches every line of the whole run for the
 * tokens used, their signatures, the client secrets, the SMTP, click-tracking, OpenAI and
 * database passwords, `Bearer ` and anything shaped like a signed JWT.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { SecretScan } from "../src/index.js"
import { protectedRoutes } from "./Jwt.js"
import { request } from "./support/Http.js"
import { secrets, serviceNames, Stack } from "./support/Stack.js"
import type { It } from "./support/Types.js"

export interface LogScan {
  readonly lines: number
  readonly requests: number
  readonly secrets: number
  readonly leaks: number
  readonly nudgingOnPostgres: boolean
}

export const logScans: Array<LogScan> = []

export const logTests = (it: It) => {
  it.effect("no log line of any service holds a token, a client secret or a password", () =>
    Effect.gen(function*() {
      const stack = yield* Stack
      const used: Array<SecretScan.Secret> = []
      let requests = 0
      for (const service of serviceNames) {
        const route = protectedRoutes[service]
        const client = route.as.startsWith("svc-") ? {} : { client: "rec-frontend" }
        const valid = yield* Effect.orDie(stack.idp.mint(route.as, client))
        const expired = yield* Effect.orDie(stack.idp.mint(route.as, { ...client, expired: true }))
        const otherAudience = yield* Effect.orDie(stack.idp.mint(route.as, { ...client, audience: "some-other-api" }))
        const noScopes = yield* Effect.orDie(stack.idp.mint("svc-no-scopes"))
        const tokens = { valid, expired, otherAudience, noScopes, forged: `${valid.slice(0, -8)}AAAAAAAA` }
        for (const [name, token] of Object.entries(tokens)) used.push(...SecretScan.tokenSecrets(`${service} ${name} token`, token))
        const base = stack.urls[service]
        for (const token of Object.values(tokens)) {
          for (const [method, path, json] of [
            [route.method, route.path, route.json],
            ["POST", route.path, { bad: "x".repeat(50) }],
            ["GET", `${route.path}/does-not-exist`, undefined]
          ] as const) {
            requests++
            yield* Effect.promise(() => request(method, `${base}${path}`, { token, json, headers: { cookie: `session=${token}` } }))
          }
        }
      }
      // Let the deliveries and background work of the run log what they log.
      yield* Effect.sleep("1 second")
      const all: Array<SecretScan.Secret> = [
        ...used,
        { name: "SMTP password", value: secrets.smtpPassword },
        { name: "click-tracking secret", value: secrets.clickSecret },
        { name: "OpenAI key", value: secrets.openAiKey },
        { name: "database password", value: secrets.databasePassword },
        // The client secrets the services use for their own tokens (client credentials).
        { name: "svc-flexibility client secret", value: "dev-only-secret-svc-flexibility" },
        { name: "svc-grid client secret", value: "dev-only-secret-svc-grid" }
      ]
      const leaks = SecretScan.findLeaks(stack.logs, all)
      logScans.push({ lines: stack.logs.length, requests, secrets: all.length, leaks: leaks.length, nudgingOnPostgres: stack.nudgingOnPostgres })
      expect(leaks).toEqual([])
      // The scan saw the refusals: access-log lines of 401s are there (the lines exist, without the tokens).
      expect(stack.logs.filter((line) => line.includes("\"http.status\":401")).length).toBeGreaterThan(20)
      expect(stack.logs.length).toBeGreaterThan(500)
    }), 120_000)

  it("the scanner finds what it looks for (a line with a token, a secret or a Bearer header is a leak)", () => {
    const token = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLXNpZ25hdHVyZS1zaWduYXR1cmU"
    const lines = [
      JSON.stringify({ message: "ok", user: "x" }),
      JSON.stringify({ message: "refused", token }),
      JSON.stringify({ message: "sent", headers: { authorization: "Bearer abcdefghijkl" } }),
      JSON.stringify({ message: "smtp", password: secrets.smtpPassword })
    ]
    const leaks = SecretScan.findLeaks(lines, [...SecretScan.tokenSecrets("t", token), { name: "SMTP password", value: secrets.smtpPassword }])
    expect(leaks.map((l) => l.secret).sort()).toEqual(["SMTP password", "a Bearer credential", "a signed JWT", "t", "t (signature)"])
  })
}
