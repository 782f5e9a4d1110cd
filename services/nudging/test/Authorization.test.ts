/**
 * Authorization of every route, with the dev identity provider's real tokens and the
 * repository's policies: anonymous callers (401), the owner, another user (403, or 404 for a
 * notification by id), services with nudging.ingest, nudging.admin, or neither, and admins
 * (group and client scope both needed).
 */
import { expect, layer } from "@effect/vitest"
import type { Domain } from "@rec/nudging-service"
import * as Effect from "effect/Effect"
import { call, freshUser, ingest, Push, type Reply, serviceLayer, token, userId } from "./support/Service.js"

const community = "it-energy-community"

type Method = "GET" | "POST" | "PUT" | "DELETE"

interface Route {
  readonly method: Method
  readonly path: (owner: string, notification: string) => string
  readonly body?: (owner: string) => unknown
}

/** Every route that acts on a user's data, with the user as owner. */
const userRoutes: Record<string, Route> = {
  "GET /notifications": { method: "GET", path: (o) => `/notifications?user_id=${o}&community_id=${community}` },
  "GET /notifications/{id}": { method: "GET", path: (_, n) => `/notifications/${n}` },
  "POST /notifications/{id}/read": { method: "POST", path: (_, n) => `/notifications/${n}/read` },
  "GET /preferences": { method: "GET", path: (o) => `/preferences?user_id=${o}&community_id=${community}` },
  "PUT /preferences": { method: "PUT", path: () => "/preferences", body: (o) => ({ user_id: o, community_id: community, language: "it" }) },
  "POST /webpush/unsubscribe": { method: "POST", path: () => "/webpush/unsubscribe", body: (o) => ({ user_id: o, community_id: community }) },
  "POST /webpush/send-test": { method: "POST", path: () => "/webpush/send-test", body: (o) => ({ user_id: o, community_id: community }) }
}

const request = (route: Route, owner: string, notification: string, as: string | undefined) =>
  Effect.gen(function*() {
    const t = as === undefined ? undefined : as.includes(" via ") ? yield* token(as.split(" via ")[0]!, { client: as.split(" via ")[1]! }) : yield* token(as)
    return yield* call(route.method, route.path(owner, notification), {
      token: t,
      ...(route.body === undefined ? {} : { json: route.body(owner) })
    })
  })

const expectStatus = (reply: Reply, status: number, label: string) => expect(reply.status, `${label}: ${JSON.stringify(reply.body)}`).toBe(status)

layer(serviceLayer(), { excludeTestServices: true, timeout: "180 seconds" })("authorization", (it) => {
  it.effect("user routes: the owner and admins yes; other users, ingest-only services and anonymous callers no", () =>
    Effect.gen(function*() {
      const participant = yield* userId("participant")
      const created = yield* ingest({
        event_type: "price_up",
        user_id: participant,
        community_id: community,
        facts: { facts_version: "1.0", scenario: "price_up", delta_pct: 20 }
      })
      expect(created.status).toBe(200)
      const notification = (created.body as Domain.IngestDispatched).outcomes[0]!.notification_id!

      for (const [name, route] of Object.entries(userRoutes)) {
        const byId = name.includes("{id}")
        expectStatus(yield* request(route, participant, notification, undefined), 401, `${name} anonymous`)
        expectStatus(yield* request(route, participant, notification, "participant via rec-frontend"), 200, `${name} owner`)
        expectStatus(yield* request(route, participant, notification, "admin via rec-cli"), 200, `${name} admin with nudging.admin`)
        expectStatus(yield* request(route, participant, notification, "svc-nudging"), 200, `${name} service with nudging.admin`)
        // Another user's notification by id does not exist for them; elsewhere they are told no.
        const denied = byId ? 404 : 403
        expectStatus(yield* request(route, participant, notification, "participant-consumer via rec-frontend"), denied, `${name} other user`)
        expectStatus(yield* request(route, participant, notification, "admin via rec-frontend"), denied, `${name} admin without the scope`)
        expectStatus(yield* request(route, participant, notification, "svc-grid"), denied, `${name} ingest-only service`)
        expectStatus(yield* request(route, participant, notification, "svc-no-scopes"), denied, `${name} service without scopes`)
      }
      const forbidden = yield* request(userRoutes["GET /preferences"]!, participant, notification, "participant-consumer via rec-frontend")
      expect(forbidden.body).toEqual({ detail: "Not allowed: not the owner of this data" })
      const hidden = yield* request(userRoutes["GET /notifications/{id}"]!, participant, notification, "participant-consumer via rec-frontend")
      expect(hidden.body).toEqual({ detail: `No notification ${notification} for this user` })
    }))

  it.effect("subscribe and delete: the owner and admins yes, others no", () =>
    Effect.gen(function*() {
      const participant = yield* userId("participant")
      const { endpoint, keys } = (yield* Push).subscriber()
      const subscription = { endpoint, keys }
      const body = { user_id: participant, community_id: community, subscription }
      for (const [as, status] of [
        [undefined, 401],
        ["participant-consumer via rec-frontend", 403],
        ["svc-flexibility", 403],
        ["participant via rec-frontend", 200],
        ["svc-nudging", 200]
      ] as const) {
        const t = as === undefined ? undefined : yield* token(as.split(" via ")[0]!, as.includes(" via ") ? { client: as.split(" via ")[1]! } : {})
        expectStatus(yield* call("POST", "/webpush/subscribe", { token: t, json: body }), status, `subscribe ${as}`)
      }
      const mine = (yield* ingest({
        event_type: "price_down",
        user_id: participant,
        community_id: community,
        facts: { facts_version: "1.0", scenario: "price_down", delta_pct: -20 }
      })).body as Domain.IngestDispatched
      const id = mine.outcomes[0]!.notification_id!
      const other = yield* token("participant-consumer", { client: "rec-frontend" })
      expect((yield* call("DELETE", `/notifications/${id}`, { token: other })).status).toBe(404)
      const owner = yield* token("participant", { client: "rec-frontend" })
      expect((yield* call("DELETE", `/notifications/${id}`, { token: owner })).status).toBe(204)
      expect((yield* call("GET", `/notifications/${id}`, { token: owner })).status).toBe(404)
    }))

  it.effect("ingest and scheduled events: services with nudging.ingest or nudging.admin only", () =>
    Effect.gen(function*() {
      const event = {
        event_type: "price_up",
        user_id: freshUser(),
        community_id: community,
        facts: { facts_version: "1.0", scenario: "price_up", delta_pct: 15 }
      }
      expect((yield* call("POST", "/ingest-event", { json: event })).status).toBe(401)
      for (const [as, status] of [
        ["svc-grid", 200],
        ["svc-flexibility", 409],
        ["svc-nudging", 409],
        ["svc-no-scopes", 403],
        ["svc-assistant", 403],
        ["admin", 403],
        ["participant", 403]
      ] as const) {
        expectStatus(yield* ingest(event, as), status, `ingest as ${as}`)
      }
      const t = yield* token("svc-assistant")
      const scheduled = yield* call("POST", "/scheduled-events", {
        token: t,
        json: { ...event, external_key: "x", trigger_at: "2030-01-01T00:00:00Z" }
      })
      expect(scheduled).toMatchObject({ status: 403, body: { detail: "Not allowed: missing nudging.ingest scope" } })
      const read = yield* call("GET", "/scheduled-events/x", { token: yield* token("participant") })
      expect(read.status).toBe(403)
    }))

  it.effect("the VAPID key and the kinds are readable; click tracking needs no token but a signed one", () =>
    Effect.gen(function*() {
      expect((yield* call("GET", "/webpush/vapid-public-key")).status).toBe(200)
      expect((yield* call("GET", "/preferences/kinds")).status).toBe(401)
      expect((yield* call("GET", "/preferences/kinds", { token: yield* token("participant", { client: "rec-frontend" }) })).status).toBe(200)
      expect((yield* call("GET", "/track/click?token=x.y")).status).toBe(400)
    }))

  it.effect("tokens that are not valid access tokens are refused", () =>
    Effect.gen(function*() {
      const expired = yield* token("svc-grid", { expired: true })
      expect(yield* call("GET", `/notifications?user_id=x&community_id=`, { token: expired })).toMatchObject({
        status: 401,
        body: { detail: "Token has expired" }
      })
      const idToken = yield* token("participant", { kind: "id" })
      expect((yield* call("GET", `/notifications?user_id=x&community_id=`, { token: idToken })).status).toBe(401)
      const otherAudience = yield* token("svc-grid", { audience: "someone-else" })
      expect((yield* ingest({ event_type: "x", facts: {} }, "svc-grid")).status).not.toBe(401)
      expect((yield* call("POST", "/ingest-event", { token: otherAudience, json: { event_type: "x", facts: {} } })).status).toBe(401)
    }))
})
