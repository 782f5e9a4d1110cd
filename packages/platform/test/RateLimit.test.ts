/**
 * Rate limits: the GCRA bucket, overrides, the client key, the kit's 429 with `Retry-After`
 * (fast routes included), and the shared counter that holds one limit across two servers on
 * one PostgreSQL.
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { describe, expect, it, layer } from "@effect/vitest"
import { Testing as DbTesting } from "@rec/db"
import { FastRoutes, RateLimit, ServiceKit } from "@rec/platform"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ExampleApi, ItemsLive } from "./fixtures/ExampleApi.js"
import { body, get, send } from "./fixtures/http.js"

const service = { name: "example", version: "1.2.3" }

// The shared counter needs the machine's PostgreSQL; under REC_REQUIRE_SERVICES=1 its absence fails.
const skip = await DbTesting.postgresSkipReason()

const token = (claims: Record<string, unknown>) =>
  `${Buffer.from(JSON.stringify({ alg: "RS256" })).toString("base64url")}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.sig`

describe("RateLimit", () => {
  it("GCRA admits a burst of `limit`, then one per window/limit, per key", () => {
    const store = new RateLimit.MemoryStore()
    const t0 = 1_000_000
    const outcomes = Array.from({ length: 6 }, () => store.take("a", 5, 1000, t0).allowed)
    expect(outcomes).toEqual([true, true, true, true, true, false])
    expect(store.take("a", 5, 1000, t0).retryAfterMs).toBe(200)
    expect(store.take("b", 5, 1000, t0).allowed).toBe(true)
    expect(store.take("a", 5, 1000, t0 + 199).allowed).toBe(false)
    expect(store.take("a", 5, 1000, t0 + 200).allowed).toBe(true)
    expect(store.take("a", 5, 1000, t0 + 200).allowed).toBe(false)
    // A long pause refills the bucket, never above the burst.
    expect(Array.from({ length: 6 }, () => store.take("a", 5, 1000, t0 + 60_000).allowed)).toEqual([true, true, true, true, true, false])
  })

  it("remembers at most maxKeys clients, the longest idle dropped first", () => {
    const store = new RateLimit.MemoryStore(3)
    for (const key of ["a", "b", "c", "d"]) store.take(key, 1, 1000, 0)
    expect(store.size).toBe(3)
    expect(store.take("a", 1, 1000, 0).allowed).toBe(true) // "a" was forgotten
    expect(store.take("d", 1, 1000, 0).allowed).toBe(false)
  })

  it("overrides parse <requests>/<window> and off; nonsense is an error naming the value", () => {
    expect(RateLimit.parseOverride("100/1s")).toEqual({ limit: 100, window: Duration.millis(1000) })
    expect(RateLimit.parseOverride("60/m")).toEqual({ limit: 60, window: Duration.millis(60_000) })
    expect(RateLimit.parseOverride(" 5 / 10 minutes ")).toEqual({ limit: 5, window: Duration.millis(600_000) })
    expect(RateLimit.parseOverride("OFF")).toBe("off")
    expect(() => RateLimit.parseOverride("lots")).toThrow('"lots" is not a rate limit')
    expect(() => RateLimit.parseOverride("0/1s")).toThrow("admits nothing")
    const rules: ReadonlyArray<RateLimit.Rule> = [
      { name: "authorize", path: "/authorize", limit: 1000, window: "1 second" },
      { name: "reload-admin", path: "/reload", limit: 1, window: "1 minute" }
    ]
    expect(RateLimit.envName(rules[1]!)).toBe("RATE_LIMIT_RELOAD_ADMIN")
    expect(RateLimit.overrides(rules, { RATE_LIMIT_AUTHORIZE: "off", RATE_LIMIT_RELOAD_ADMIN: "2/1m" }))
      .toEqual([{ ...rules[1], limit: 2, window: Duration.millis(60_000) }])
  })

  it("keys a request by its token's client and subject, else its address", () => {
    const service = token({ azp: "svc-grid", sub: "svc-grid" })
    expect(RateLimit.clientKey({ authorization: `Bearer ${service}` }, "x-auth", "1.2.3.4")).toBe("token:svc-grid")
    const user = token({ azp: "webapp", sub: "alice" })
    expect(RateLimit.clientKey({ "x-auth": user }, "x-auth", "1.2.3.4")).toBe("token:webapp/alice")
    expect(RateLimit.clientKey({ authorization: "Bearer garbage" }, "x-auth", "1.2.3.4")).toBe("address:1.2.3.4")
    expect(RateLimit.clientKey({}, "x-auth", undefined)).toBe("address:unknown")
  })
})

const rules: ReadonlyArray<RateLimit.Rule> = [
  { name: "items-write", method: "POST", path: "/items", limit: 3, window: "1 minute" },
  { name: "health", path: "/health", limit: 2, window: "1 minute" }
]

const Fast = FastRoutes.layer(Effect.succeed([
  FastRoutes.endpoint(ExampleApi, "items", "create", () =>
    Effect.succeed(HttpServerResponse.unsafeJson({ id: 1, name: "fast" }, { status: 201 })))
]))

const create = (bearer?: string) =>
  send(
    HttpClientRequest.post("/items").pipe(
      HttpClientRequest.bodyUnsafeJson({ name: "x", quantity: 1 }),
      HttpClientRequest.setHeaders(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` })
    )
  )

describe("the kit's rate limits", () => {
  layer(
    ServiceKit.serveTest(ExampleApi, { service, port: 0, rateLimits: rules }).pipe(
      Layer.provide([ItemsLive, Fast]),
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["RATE_LIMIT_HEALTH", "1/1m"]]))))
    ),
    { excludeTestServices: true }
  )("in memory", (it) => {
    it.effect("429 with Retry-After past the limit, per client, before fast routes; overrides apply", () =>
      Effect.gen(function*() {
        const alice = token({ azp: "app", sub: "alice" })
        const bob = token({ azp: "app", sub: "bob" })
        const statuses = []
        for (let i = 0; i < 4; i++) statuses.push((yield* create(alice)).status)
        expect(statuses).toEqual([201, 201, 201, 429])
        const refused = yield* create(alice)
        expect(refused.status).toBe(429)
        expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1)
        expect(body(refused).detail).toMatch(/^Too many requests: at most 3 per 1m for this client; try again in \d+ s$/)
        // Another client has its own bucket; other routes are not limited by this rule.
        expect((yield* create(bob)).status).toBe(201)
        expect((yield* get("/items/1")).status).toBe(200)
        // RATE_LIMIT_HEALTH=1/1m replaced the rule's 2 per minute.
        expect((yield* get("/health")).status).toBe(200)
        expect((yield* get("/health")).status).toBe(429)
      }))
  })

  describe.skipIf(skip !== undefined)(`shared across two servers on one PostgreSQL${skip === undefined ? "" : ` (skipped: ${skip})`}`, () => {
    it.live("one limit for both replicas", () =>
      Effect.gen(function*() {
        const shared: ReadonlyArray<RateLimit.Rule> = [{ ...rules[0]!, limit: 5, store: "shared" }]
        const database = DbTesting.layerPostgres({ service: "ratelimit", migrations: {} })
        const replica = ServiceKit.serveTest(ExampleApi, { service, port: 0, rateLimits: shared }).pipe(
          Layer.provide(ItemsLive),
          Layer.provide(RateLimit.sharedStoreLayer("ratelimit"))
        )
        const statuses: Array<number> = []
        yield* Effect.gen(function*() {
          const a = yield* Layer.build(replica)
          const b = yield* Layer.build(replica)
          const alice = token({ azp: "app", sub: "alice" })
          for (let i = 0; i < 8; i++) {
            const context = i % 2 === 0 ? a : b
            statuses.push((yield* Effect.provide(create(alice), context)).status)
          }
        }).pipe(Effect.provide(database), Effect.scoped)
        expect(statuses.filter((s) => s === 201)).toHaveLength(5)
        expect(statuses.slice(5)).toEqual([429, 429, 429])
      }))
  })
})
