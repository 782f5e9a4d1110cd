/**
 * The create endpoint's fast route (`Fast`) against the contract's handler: the first call with a
 * new token goes through the contract's handler (the token is verified there), the next ones
 * through the fast route (the token is known); both answer the same statuses and bodies, success
 * and every error. What the fast route declines (bodies that do not decode, unknown tokens) is
 * the contract's answer. The other test files exercise the endpoint with the fast route on, as in
 * production.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import type { DevIdp } from "@rec/dev-idp"
import * as Either from "effect/Either"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Schema from "effect/Schema"
import * as Domain from "../src/Domain.js"
import { decodeCreate } from "../src/Fast.js"
import { call, giulia, hourMs, iso, luca, serviceLayer, token, userToken } from "./support/Harness.js"

interface LogRecord {
  readonly message: unknown
  readonly fields: Readonly<Record<string, unknown>>
}

const logs: Array<LogRecord> = []

const collectLogs = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ annotations, message }) => {
    logs.push({
      message: Array.isArray(message) && message.length === 1 ? message[0] : message,
      fields: Object.fromEntries(HashMap.toEntries(annotations))
    })
  })
)

/** Whether each access log line since `from` of `POST /api/commitments` says it was answered by the fast route. */
const fastSince = (from: number) =>
  logs.slice(from)
    .filter((r) => r.fields["http.status"] !== undefined && r.fields["http.path"] === "/api/commitments")
    .map((r) => r.fields["http.fast_route"] === true)

/** One window for every body of the file (at the hour, two hours from now), so two answers compare equal. */
const base = Math.ceil(Date.now() / hourMs) * hourMs + hourMs

const body = (suggestion: string, extra: Record<string, unknown> = {}, fromBaseMs = 0) => ({
  suggestion_id: suggestion,
  period_start: iso(base + fromBaseMs),
  period_end: iso(base + fromBaseMs + hourMs),
  ...extra
})

/** The same request twice with one fresh token: through the contract's handler, then the fast route. */
const twice = (tokenOf: Effect.Effect<string, never, DevIdp>, payload: unknown, second: unknown = payload) =>
  Effect.gen(function*() {
    const t = yield* tokenOf
    const from = logs.length
    const first = yield* call("POST", "/api/commitments", { token: t, json: payload })
    const again = yield* call("POST", "/api/commitments", { token: t, json: second })
    return { first, again, fast: fastSince(from) }
  })

/** A commitment without what differs between two made ones. */
const stable = (row: unknown) => {
  const { committed_at: _at, id: _id, suggestion_id: _s, ...rest } = row as Record<string, unknown>
  return rest
}

const admin = token("svc-flexibility")

layer(serviceLayer({ logLevel: "Info" }).pipe(Layer.provide(collectLogs)), { excludeTestServices: true, timeout: "90 seconds" })(
  "the create endpoint's fast route",
  (it) => {
    describe("answers as the contract's handler", () => {
      it.effect("201: a service account's and a user's commitment, the same row shape", () =>
        Effect.gen(function*() {
          const service = yield* twice(admin, body("fast-svc-1", { user_id: luca, community_id: "c", device_id: "m" }), body("fast-svc-2", {
            user_id: luca,
            community_id: "c",
            device_id: "m"
          }))
          expect([service.first.status, service.again.status]).toEqual([201, 201])
          expect(service.fast).toEqual([false, true])
          expect(stable(service.again.body)).toEqual(stable(service.first.body))
          expect(service.again.headers["content-type"]).toBe(service.first.headers["content-type"])

          const user = yield* twice(userToken("participant"), body("fast-user-1", { user_id: giulia }), body("fast-user-2", { user_id: giulia }))
          expect([user.first.status, user.again.status]).toEqual([201, 201])
          expect(user.fast).toEqual([false, true])
          expect(stable(user.again.body)).toEqual(stable(user.first.body))
        }))

      it.effect("409, 403, 422, 400 (a service naming no user): the same bodies", () =>
        Effect.gen(function*() {
          // 409: made through the contract, then the second answer through the fast route, and
          // the same through the contract with another fresh token.
          const made = yield* twice(admin, body("fast-409", { user_id: luca }))
          expect([made.first.status, made.again.status]).toEqual([201, 409])
          expect(made.fast).toEqual([false, true])
          const viaContract = yield* call("POST", "/api/commitments", { token: yield* admin, json: body("fast-409", { user_id: luca }) })
          expect(viaContract.status).toBe(409)
          expect(made.again.body).toEqual(viaContract.body)

          const cases: ReadonlyArray<readonly [Effect.Effect<string, never, DevIdp>, unknown, number]> = [
            // A user committing for another user.
            [userToken("participant"), body("fast-403", { user_id: luca }), 403],
            // A window that has ended, for a user.
            [userToken("participant"), body("fast-422", { user_id: giulia }, -5 * hourMs), 422],
            // A service account must name the user.
            [admin, body("fast-400"), 400],
            // A device that is not the user's meter.
            [userToken("participant"), body("fast-422-device", { device_id: "not-mine" }), 422]
          ]
          for (const [tokenOf, payload, status] of cases) {
            const { again, fast, first } = yield* twice(tokenOf, payload)
            expect([first.status, again.status], JSON.stringify(payload)).toEqual([status, status])
            expect(again.body, JSON.stringify(payload)).toEqual(first.body)
            expect(fast, JSON.stringify(payload)).toEqual([false, true])
          }
        }))
    })

    it.effect("declined: bodies that do not decode, other content types and unknown tokens are the contract's answers", () =>
      Effect.gen(function*() {
        const invalid = yield* twice(admin, { suggestion_id: "", period_start: "yesterday" })
        expect([invalid.first.status, invalid.again.status]).toEqual([400, 400])
        expect(invalid.again.body).toEqual(invalid.first.body)
        expect(invalid.fast).toEqual([false, false])

        const t = yield* admin
        const from = logs.length
        const text = yield* call("POST", "/api/commitments", {
          token: t,
          text: { body: JSON.stringify(body("fast-text", { user_id: luca })), contentType: "text/plain" }
        })
        const forged = yield* call("POST", "/api/commitments", { headers: { authorization: "Bearer a.b.c" }, json: body("fast-forged", { user_id: luca }) })
        const anonymous = yield* call("POST", "/api/commitments", { json: body("fast-anonymous", { user_id: luca }) })
        expect([forged.status, anonymous.status]).toEqual([401, 401])
        expect(text.status).toBeGreaterThanOrEqual(400)
        expect(fastSince(from)).toEqual([false, false, false])
      }))
  }
)

describe("decodeCreate, the create body's hand-written decoder", () => {
  const decodeSchema = Schema.decodeUnknownEither(Domain.CreateCommitment)
  const start = Date.UTC(2026, 7, 17, 10)
  const text = (max: number) =>
    FastCheck.oneof(
      FastCheck.string({ minLength: 0, maxLength: 4 }),
      FastCheck.string({ minLength: max - 1, maxLength: max + 1 }),
      FastCheck.constantFrom("a", "meter-1", "shift-consumption")
    )
  const date = FastCheck.oneof(
    FastCheck.integer({ min: -2 * 3_600_000, max: 26 * 3_600_000 }).map((ms) => new Date(start + ms).toISOString()),
    FastCheck.integer({ min: 0, max: 25 * 3_600_000 }).map((ms) => new Date(start + ms).toISOString().replace(".000Z", "Z")),
    FastCheck.constantFrom("2026-08-17T12:00:00+02:00", "2026-08-17T11:30+01:00", "2026-08-17T11:00:00", "2026-02-30T10:00:00Z", "2026-08-17 11:00:00Z", "x"),
    FastCheck.integer()
  )
  const nullableText = (max: number) => FastCheck.oneof(text(max), FastCheck.constant(null), FastCheck.integer())
  const points = FastCheck.oneof(
    FastCheck.integer({ min: -2, max: 1_000_002 }),
    FastCheck.constantFrom(0.5, 1e6, 1e6 + 1, -0, Number.MAX_SAFE_INTEGER + 2),
    FastCheck.string()
  )
  const body = FastCheck.record(
    {
      user_id: FastCheck.oneof(text(255), FastCheck.constant(null)),
      suggestion_id: FastCheck.oneof(text(255), FastCheck.integer()),
      suggestion_type: text(50),
      community_id: nullableText(255),
      device_id: nullableText(255),
      period_start: date,
      period_end: date,
      reward_points_estimated: points,
      other: FastCheck.anything()
    },
    { requiredKeys: [] }
  )
  // Mostly valid bodies with near misses at the bounds, so the decoder's answers are reached too.
  const likely = FastCheck.record(
    {
      user_id: FastCheck.oneof(FastCheck.string({ minLength: 1, maxLength: 8 }), text(255)),
      suggestion_id: FastCheck.oneof(FastCheck.string({ minLength: 1, maxLength: 8 }), text(255)),
      suggestion_type: FastCheck.oneof(FastCheck.constant("shift-consumption"), text(50)),
      community_id: FastCheck.oneof(FastCheck.constant(null), FastCheck.string({ minLength: 1, maxLength: 8 }), text(255)),
      device_id: FastCheck.oneof(FastCheck.constant(null), FastCheck.string({ minLength: 1, maxLength: 8 }), text(255)),
      period_start: FastCheck.integer({ min: 0, max: 3_600_000 }).map((ms) => new Date(start + ms).toISOString()),
      period_end: FastCheck.oneof(
        FastCheck.integer({ min: 3_600_000, max: 25 * 3_600_000 }).map((ms) => new Date(start + ms).toISOString()),
        FastCheck.constantFrom("2026-08-17T12:00:00+02:00", "2026-08-17T12:00Z", "2026-08-18T11:00:00.000000001Z")
      ),
      reward_points_estimated: points
    },
    { requiredKeys: ["suggestion_id", "period_start", "period_end"] }
  )

  it("returns the schema's value whenever it returns one", () => {
    let decided = 0
    FastCheck.assert(
      FastCheck.property(FastCheck.oneof(likely, body), (json) => {
        const fast = decodeCreate(json)
        if (fast === undefined) return
        decided++
        const schema = decodeSchema(json)
        expect(Either.isRight(schema), JSON.stringify(json)).toBe(true)
        expect(fast).toEqual(Either.getOrThrow(schema))
      }),
      { numRuns: 20_000 }
    )
    // The generator reaches the decoder's answers, not only its refusals.
    expect(decided).toBeGreaterThan(1_000)
  })

  it("decides the usual bodies (a service account's and a user's)", () => {
    const window = { period_start: "2026-08-17T10:00:00.000Z", period_end: "2026-08-17T11:00:00.000Z" }
    for (
      const json of [
        { user_id: "u", suggestion_id: "s", community_id: "c", device_id: "m", reward_points_estimated: 5, ...window },
        { suggestion_id: "s", ...window },
        { suggestion_id: "s", suggestion_type: "shift-consumption", device_id: null, community_id: null, ...window }
      ]
    ) {
      expect(decodeCreate(json)).toEqual(Either.getOrThrow(decodeSchema(json)))
    }
    expect(decodeCreate({ suggestion_id: "s", ...window, extra: 1 })).toBeUndefined()
    expect(decodeCreate({ suggestion_id: "s", period_start: window.period_end, period_end: window.period_start })).toBeUndefined()
  })
})
