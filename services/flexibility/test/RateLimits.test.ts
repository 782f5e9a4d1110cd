/**
 * Rate limits of the write routes (`Config.rateLimits`, docs/decisions.md "Rate limits across
 * services"): over a low configured limit a client gets 429 with `Retry-After` and a `{detail}`,
 * other clients keep their own budget, the contract lists the 429, and two instances on one
 * PostgreSQL database count one budget (the shared counter), not one each.
 *
 * Windows are a day long: the shared counter is a fixed window, and a short one could roll over
 * between two requests of a test.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { describe, expect, layer } from "@effect/vitest"
import { Database, Testing } from "@rec/db"
import { DevIdp } from "@rec/dev-idp"
import { DigitalTwinClient } from "@rec/digital-twin"
import { Engines } from "@rec/policy"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Http from "../src/Http.js"
import { migrations } from "../src/migrations/index.js"
import { Nudges } from "../src/Nudges.js"
import {
  call,
  fixedCommunities,
  hourMs,
  iso,
  recordingNudges,
  repoPolicies,
  serviceLayer,
  simulator,
  token,
  userToken,
  verifierFor
} from "./support/Harness.js"
import { SharedDatabase, sharedDatabase } from "./support/SharedDatabase.js"

const commitment = (suggestion: string) => ({
  suggestion_id: suggestion,
  period_start: iso(Date.now() + 2 * hourMs),
  period_end: iso(Date.now() + 3 * hourMs)
})

const expectLimited = (reply: { status: number; body: unknown; headers: Readonly<Record<string, string>> }) => {
  expect(reply.status, JSON.stringify(reply.body)).toBe(429)
  expect(Number(reply.headers["retry-after"])).toBeGreaterThan(0)
  expect((reply.body as { detail: string }).detail).toMatch(/^Too many requests: at most 2 per 1d for this client/)
}

layer(serviceLayer({ env: { RATE_LIMIT_COMMITMENTS: "2/24h" } }), { excludeTestServices: true, timeout: "60 seconds" })(
  "rate limits",
  (it) => {
    it.effect("a user's third commitment write in the window is a 429 with Retry-After; another user is not limited", () =>
      Effect.gen(function*() {
        const participant = yield* userToken("participant")
        const first = yield* call("POST", "/api/commitments", { token: participant, json: commitment("s-limit-1") })
        expect(first.status, JSON.stringify(first.body)).toBe(201)
        // A refused write counts too: the limit is on requests, not on successes.
        const second = yield* call("POST", "/api/commitments", { token: participant, json: { suggestion_id: 1 } })
        expect(second.status).toBe(400)
        expectLimited(yield* call("POST", "/api/commitments", { token: participant, json: commitment("s-limit-3") }))
        // The same budget covers the other commitment writes of the rule (cancel).
        const id = (first.body as { id: string }).id
        expectLimited(yield* call("DELETE", `/api/commitments/${id}`, { token: participant }))
        // Reads are not limited.
        expect((yield* call("GET", "/api/commitments", { token: participant })).status).toBe(200)
        const consumer = yield* userToken("participant-consumer")
        const other = yield* call("POST", "/api/commitments", { token: consumer, json: commitment("s-limit-other") })
        expect(other.status, JSON.stringify(other.body)).not.toBe(429)
      }))

    it.effect("the contract lists the 429 on the limited operations only", () =>
      Effect.gen(function*() {
        const doc = (yield* call("GET", "/api/openapi.json")).body as {
          paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
        }
        expect(doc.paths["/api/commitments"]!.post!.responses["429"]).toBeDefined()
        expect(doc.paths["/api/commitments"]!.get!.responses["429"]).toBeUndefined()
      }))
  }
)

// ---------------------------------------------------------------------------------------------
// Two instances on one PostgreSQL database

const skip = await Testing.postgresSkipReason()


const Shared = Layer.mergeAll(simulator(), recordingNudges, sharedDatabase("limits", 3)).pipe(
  Layer.provideMerge(DevIdp.layerTest),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

/** One instance with its own pool and server on the shared database, limited to 3 writes a day. */
const instance = Effect.gen(function*() {
  const idp = yield* DevIdp
  const config = yield* SharedDatabase
  const context = yield* Layer.build(
    Http.makeTest({
      verifier: verifierFor(idp.issuer),
      engine: Engines.embeddedWith({ directory: repoPolicies, watch: false }),
      database: Database.layerWith({ service: "flexibility", migrations, transformNames: false }, config),
      digitalTwin: Layer.succeed(DigitalTwinClient, yield* DigitalTwinClient),
      nudges: Layer.succeed(Nudges, yield* Nudges),
      communities: fixedCommunities({}),
      mqtt: false
    }).pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["RATE_LIMIT_COMMITMENTS", "3/24h"]])))))
  )
  const client = Context.get(context, HttpClient.HttpClient)
  return (bearer: string, json: unknown) =>
    Effect.gen(function*() {
      const request = yield* HttpClientRequest.bodyJson(HttpClientRequest.bearerToken(HttpClientRequest.post("/api/commitments"), bearer), json)
      const response = yield* client.execute(request)
      return { status: response.status, retryAfter: response.headers["retry-after"] }
    }).pipe(Effect.scoped, Effect.orDie)
})

describe.skipIf(skip !== undefined)(`rate limits across replicas on PostgreSQL${skip ? ` (skipped: ${skip})` : ""}`, () => {
  layer(Shared, { excludeTestServices: true, timeout: "90 seconds" })((it) => {
    it.scoped("two instances on one database admit 3 writes of one client in all, not 3 each", () =>
      Effect.gen(function*() {
        const [a, b] = yield* Effect.all([instance, instance], { concurrency: 2 })
        const admin = yield* token("svc-flexibility")
        const statuses: Array<number> = []
        for (let i = 0; i < 6; i++) {
          const reply = yield* (i % 2 === 0 ? a : b)(admin, { ...commitment(`s-replica-limit-${i}`), user_id: `limit-user-${i}` })
          statuses.push(reply.status)
          if (reply.status === 429) expect(Number(reply.retryAfter)).toBeGreaterThan(0)
        }
        expect(statuses).toEqual([201, 201, 201, 429, 429, 429])
      }))
  })
})
