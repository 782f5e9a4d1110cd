/**
 * `policies/flexibility` enforced on every route, per identity (reference A8 with the platform's
 * scopes): users act on their own data with any token, services by scope, and nothing else gets
 * through. Real tokens of the dev identity provider; the reader and writer services are tokens
 * minted with just that scope.
 */
import { expect, layer } from "@effect/vitest"
import type * as HttpClient from "@effect/platform/HttpClient"
import type { DevIdp } from "@rec/dev-idp"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Commitment } from "../src/Domain.js"
import { call, community, giulia, giuliaMeter, hourMs, iso, serviceLayer, token, userToken } from "./support/Harness.js"

type Who = "owner" | "otherUser" | "admin" | "pipelines" | "reader" | "writer" | "noScopes"
const everyone: ReadonlyArray<Who> = ["owner", "otherUser", "admin", "pipelines", "reader", "writer", "noScopes"]

const tokens = Effect.all({
  owner: userToken("participant"),
  otherUser: userToken("participant-consumer"),
  admin: token("svc-flexibility"),
  pipelines: token("svc-pipelines"),
  reader: token("svc-no-scopes", { scopes: ["flexibility.commitments.read"] }),
  writer: token("svc-no-scopes", { scopes: ["flexibility.commitments.write"] }),
  noScopes: token("svc-no-scopes")
})

/** A commitment of the owner (Giulia), made by the admin so every test starts from a fresh one. */
const fresh = (suggestion: string) =>
  Effect.gen(function*() {
    const reply = yield* call("POST", "/api/commitments", {
      token: yield* token("svc-flexibility"),
      json: {
        user_id: giulia,
        suggestion_id: suggestion,
        community_id: community,
        device_id: giuliaMeter,
        period_start: iso(Date.now() + hourMs),
        period_end: iso(Date.now() + 2 * hourMs)
      }
    })
    return (reply.body as Commitment).id
  })

layer(serviceLayer(), { excludeTestServices: true, timeout: "90 seconds" })("authorization per route", (it) => {
  it.effect("each identity gets exactly what the policy grants", () =>
    Effect.gen(function*() {
      const t = yield* tokens
      let n = 0
      const window = () => ({ period_start: iso(Date.now() + hourMs), period_end: iso(Date.now() + 2 * hourMs) })
      const routes: ReadonlyArray<{
        readonly name: string
        readonly request: (
          who: Who
        ) => Effect.Effect<{ method: Parameters<typeof call>[0]; path: string; json?: unknown }, never, DevIdp | HttpClient.HttpClient>
        readonly allowed: Partial<Record<Who, number>>
      }> = [
        {
          name: "list suggestions",
          request: () => Effect.succeed({ method: "GET", path: "/api/suggestions" }),
          allowed: { owner: 200, otherUser: 200 }
        },
        {
          name: "respond",
          request: () => Effect.succeed({ method: "POST", path: `/api/suggestions/fw-auth-${n++}/respond`, json: { response: "declined" } }),
          allowed: { owner: 200, otherUser: 200 }
        },
        {
          name: "create for oneself or a user",
          request: (who) =>
            Effect.succeed({
              method: "POST",
              path: "/api/commitments",
              json: {
                suggestion_id: `s-auth-${n++}`,
                ...window(),
                ...(who === "owner" || who === "otherUser" ? {} : { user_id: giulia, community_id: community, device_id: giuliaMeter })
              }
            }),
          allowed: { owner: 201, otherUser: 201, admin: 201, writer: 201 }
        },
        {
          name: "create for another user",
          request: () => Effect.succeed({ method: "POST", path: "/api/commitments", json: { suggestion_id: `s-auth-${n++}`, user_id: "u-someone", ...window() } }),
          allowed: { admin: 201, writer: 201 }
        },
        { name: "list", request: () => Effect.succeed({ method: "GET", path: "/api/commitments" }), allowed: { owner: 200, otherUser: 200, admin: 200, reader: 200 } },
        {
          name: "list another user's",
          request: () => Effect.succeed({ method: "GET", path: `/api/commitments?user_id=${giulia}` }),
          allowed: { owner: 200, admin: 200, reader: 200 }
        },
        {
          name: "read",
          request: () => Effect.map(fresh(`s-read-${n++}`), (id) => ({ method: "GET" as const, path: `/api/commitments/${id}` })),
          allowed: { owner: 200, admin: 200, reader: 200 }
        },
        {
          name: "cancel",
          request: () => Effect.map(fresh(`s-cancel-${n++}`), (id) => ({ method: "DELETE" as const, path: `/api/commitments/${id}` })),
          allowed: { owner: 204, admin: 204, writer: 204 }
        },
        {
          name: "settle",
          request: () =>
            Effect.map(fresh(`s-settle-${n++}`), (id) => ({ method: "PATCH" as const, path: `/api/commitments/${id}/settle`, json: { reward_points_actual: 3 } })),
          allowed: { admin: 200 }
        },
        { name: "pending", request: () => Effect.succeed({ method: "GET", path: "/api/commitments/pending" }), allowed: { admin: 200 } },
        { name: "export", request: () => Effect.succeed({ method: "GET", path: "/api/commitments/export" }), allowed: { admin: 200, pipelines: 200 } }
      ]
      for (const route of routes) {
        for (const who of everyone) {
          const { json, method, path } = yield* route.request(who)
          const reply = yield* call(method, path, { token: t[who], json })
          const expected = route.allowed[who] ?? (who === "otherUser" && (route.name === "read" || route.name === "cancel") ? 404 : 403)
          expect(reply.status, `${route.name} as ${who}: ${JSON.stringify(reply.body)}`).toBe(expected)
          if (expected === 403) expect((reply.body as { detail: string }).detail).toMatch(/^Not allowed: /)
        }
      }
    }))
})

const noPolicies = fs.mkdtempSync(path.join(os.tmpdir(), "flexibility-no-policies-"))

layer(serviceLayer({ policies: noPolicies }), { excludeTestServices: true, timeout: "90 seconds" })("fail closed", (it) => {
  it.effect("without policies nothing is allowed: 503 (not 200 or 403) for users and services, and readiness says so", () =>
    Effect.gen(function*() {
      const t = yield* tokens
      const attempts: ReadonlyArray<readonly [Who, Parameters<typeof call>[0], string, unknown?]> = [
        ["owner", "GET", "/api/suggestions"],
        ["owner", "GET", "/api/commitments"],
        ["admin", "GET", "/api/commitments"],
        ["admin", "POST", "/api/commitments", {
          user_id: giulia,
          suggestion_id: "no-policies",
          community_id: community,
          device_id: giuliaMeter,
          period_start: iso(Date.now() + hourMs),
          period_end: iso(Date.now() + 2 * hourMs)
        }]
      ]
      for (const [who, method, url, json] of attempts) {
        const reply = yield* call(method, url, { token: t[who], ...(json === undefined ? {} : { json }) })
        expect(reply.status, `${who} ${method} ${url}`).toBe(503)
        expect((reply.body as { detail: string }).detail).toBe("Authorization policies are not available; try again shortly")
      }
      const ready = yield* call("GET", "/ready")
      expect(ready.status).toBe(503)
      expect(ready.body).toMatchObject({ status: "not_ready", checks: { policies: "failed" } })
    }))
})
