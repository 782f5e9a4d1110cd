/**
 * The JWT attack set against one protected route of every service (issue 19 point 3): a valid
 * token first (the route answers it), then every forged or misused token, each a 401 whose body
 * says why (`{detail}`). A token past Node's 16 KB header limit is refused by the HTTP parser
 * itself (431) before any code of the service runs.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { JwtAttacks } from "../src/index.js"
import { detailOf, request } from "./support/Http.js"
import { type ServiceName, serviceNames, Stack } from "./support/Stack.js"
import type { It } from "./support/Types.js"

interface Route {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly json?: unknown
  /** Whose token: a dev user (through the web frontend) or a service client. */
  readonly as: string
}

const question = { resource: { type: "dataset", id: "d", attributes: { access_level: "open" } }, action: { name: "read" } }

/** One protected route per service, and an identity it answers. */
export const protectedRoutes: Readonly<Record<ServiceName, Route>> = {
  policy: { method: "POST", path: "/authorize", json: question, as: "admin" },
  registry: { method: "GET", path: "/user/communities", as: "participant" },
  assistant: { method: "GET", path: "/attachments", as: "participant" },
  nudging: { method: "GET", path: "/notifications?user_id=52409e36-6d23-45ed-bb1e-d6c564a2f454&community_id=it-energy-community", as: "participant" },
  flexibility: { method: "GET", path: "/api/commitments", as: "participant" },
  "grid-gateway": { method: "GET", path: "/api/alert-rules", as: "dso-operator" },
  "participant-gateway": { method: "GET", path: "/api/me", as: "participant" },
  "digital-twin": { method: "GET", path: "/grid/dso-alto-garda/summary", as: "svc-grid" }
}

export interface Outcome {
  readonly service: ServiceName
  readonly attack: string
  readonly status: number
  readonly detail: string | undefined
}

/** Every attack's outcome, for the figures of docs/reliability.md §3. */
export const jwtOutcomes: Array<Outcome> = []

const oversizedPastHeaderLimit = "oversized (54 KB, past the HTTP header limit)"

export const jwtTests = (it: It) => {
  for (const service of serviceNames) {
    it.effect(`${service}: every forged, expired, misaddressed or misused token is a 401 with a detail`, () =>
      Effect.gen(function*() {
        const stack = yield* Stack
        const route = protectedRoutes[service]
        const url = `${stack.urls[service]}${route.path}`
        const client = route.as.startsWith("svc-") ? {} : { client: "rec-frontend" }
        const mint = (options: Parameters<typeof stack.idp.mint>[1] = {}) => Effect.orDie(stack.idp.mint(route.as, { ...client, ...options }))
        const valid = yield* mint()
        const send = (token: string | undefined, headers: Record<string, string> = {}) =>
          Effect.promise(() => request(route.method, url, { token, json: route.json, headers }))
        // The route answers the valid token: the refusals below are the token's doing.
        const control = yield* send(valid)
        expect(control.status, `${service} valid token: ${control.text.slice(0, 200)}`).toBeLessThan(300)

        const jwks = yield* Effect.promise(() => fetch(stack.idp.jwksUri).then((r) => r.json() as Promise<{ keys: [] }>))
        const now = Math.floor(Date.now() / 1000)
        const attacks: Array<JwtAttacks.Attack> = [
          ...(yield* Effect.promise(() => JwtAttacks.forge(valid, jwks))),
          { name: "expired", token: yield* mint({ expired: true }) },
          { name: "not yet valid (nbf in an hour)", token: yield* mint({ claims: { nbf: now + 3600, iat: now } }) },
          { name: "wrong issuer", token: yield* mint({ claims: { iss: "https://idp.attacker.example/realms/rec" } }) },
          { name: "wrong audience", token: yield* mint({ audience: "some-other-api" }) },
          { name: "ID token used as access token", token: yield* Effect.orDie(stack.idp.mint("participant", { client: "rec-frontend", kind: "id" })) }
        ]
        for (const attack of attacks) {
          const reply = yield* send(attack.token)
          jwtOutcomes.push({ service, attack: attack.name, status: reply.status, detail: detailOf(reply.body) })
          if (attack.name === oversizedPastHeaderLimit) {
            expect(reply.status, `${service} ${attack.name}`).toBe(431)
            continue
          }
          expect(reply.status, `${service} ${attack.name}: ${reply.text.slice(0, 200)}`).toBe(401)
          expect(detailOf(reply.body), `${service} ${attack.name}`).toBeDefined()
        }
        // Without a token, or with another scheme: 401 too.
        for (const [name, headers] of [["no token", {}], ["Basic scheme", { authorization: `Basic ${btoa("admin:admin")}` }], ["empty bearer", { authorization: "Bearer " }]] as const) {
          const reply = yield* send(undefined, headers)
          jwtOutcomes.push({ service, attack: name, status: reply.status, detail: detailOf(reply.body) })
          expect(reply.status, `${service} ${name}`).toBe(401)
          expect(detailOf(reply.body), `${service} ${name}`).toBeDefined()
        }
      }), 120_000)
  }
}
