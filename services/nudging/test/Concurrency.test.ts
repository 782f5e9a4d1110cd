/**
 * The cap and deduplication hold under concurrency, on PGlite and on PostgreSQL, and with two
 * instances of the service (each with its own pool) on one PostgreSQL: 20 concurrent ingests
 * never exceed `max_per_day`, and 20 concurrent copies of one event make one notification.
 * Replicas starting together migrate and seed once; they generate one VAPID key pair.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import { Database, Testing } from "@rec/db"
import { migrations } from "@rec/nudging-service"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { freshUser, instance, support, token } from "./support/Service.js"

const community = "it-energy-community"

const answer = (user: string) => ({
  event_type: "botanswer",
  user_id: user,
  community_id: community,
  facts: { facts_version: "1.0", scenario: "botanswer", status: "answered" }
})

const importedUp = (user: string) => ({
  event_type: "imported_up",
  user_id: user,
  community_id: community,
  facts: { facts_version: "1.0", scenario: "imported_up", delta_pct: 40, cur: 2, prev: 1 }
})

/** POSTs with the client of one instance; the status. */
const post = (client: HttpClient.HttpClient, path: string, t: string, json: unknown) =>
  Effect.flatMap(HttpClientRequest.bodyJson(HttpClientRequest.bearerToken(HttpClientRequest.post(path), t), json), (request) =>
    Effect.map(client.execute(request), (response) => response.status)).pipe(Effect.scoped, Effect.orDie)

const put = (client: HttpClient.HttpClient, path: string, t: string, json: unknown) =>
  Effect.flatMap(HttpClientRequest.bodyJson(HttpClientRequest.bearerToken(HttpClientRequest.put(path), t), json), (request) =>
    Effect.map(client.execute(request), (response) => response.status)).pipe(Effect.scoped, Effect.orDie)

const count = (statuses: ReadonlyArray<number>) =>
  statuses.reduce<Record<number, number>>((out, s) => ({ ...out, [s]: (out[s] ?? 0) + 1 }), {})

/**
 * The checks, against the given instances (one or two; requests alternate between them).
 */
const concurrencyChecks = (clients: ReadonlyArray<HttpClient.HttpClient>) =>
  Effect.gen(function*() {
    const grid = yield* token("svc-grid")
    const admin = yield* token("svc-nudging")
    const sql = yield* SqlClient.SqlClient
    const pick = (i: number) => clients[i % clients.length]!

    // The cap: 20 concurrent notifications of a rule without deduplication, max_per_day 3.
    const capped = freshUser()
    expect(yield* put(pick(0), "/preferences", admin, { user_id: capped, community_id: community, max_per_day: 3 })).toBe(200)
    const capStatuses = yield* Effect.forEach(Array.from({ length: 20 }, (_, i) => i), (i) =>
      post(pick(i), "/ingest-event", grid, answer(capped)), { concurrency: "unbounded" })
    expect(count(capStatuses)).toEqual({ 200: 3, 202: 17 })
    const rows = yield* sql<{ status: string; reason: string | null; n: number }>`
      SELECT status, reason, count(*)::int AS n FROM notifications WHERE user_id = ${capped} GROUP BY status, reason ORDER BY status`
    expect(rows).toEqual([
      { status: "dispatched", reason: null, n: 3 },
      { status: "suppressed", reason: "daily_cap_reached", n: 17 }
    ])

    // Deduplication: 20 concurrent copies of one event.
    const duplicated = freshUser()
    const dedupStatuses = yield* Effect.forEach(Array.from({ length: 20 }, (_, i) => i), (i) =>
      post(pick(i), "/ingest-event", grid, importedUp(duplicated)), { concurrency: "unbounded" })
    expect(count(dedupStatuses)).toEqual({ 200: 1, 409: 19 })
    const original = yield* sql<{ id: string }>`SELECT id FROM notifications WHERE user_id = ${duplicated} AND status = 'dispatched'`
    expect(original).toHaveLength(1)
    const duplicates = yield* sql<{ duplicateOf: string }>`
      SELECT duplicate_of FROM notifications WHERE user_id = ${duplicated} AND status = 'deduplicated'`
    expect(duplicates).toHaveLength(19)
    expect(new Set(duplicates.map((d) => d.duplicateOf))).toEqual(new Set([original[0]!.id]))
  })

describe("on PGlite", () => {
  layer(support, { excludeTestServices: true, timeout: "180 seconds" })("one instance", (it) => {
    it.scoped("20 concurrent ingests: the cap and deduplication hold", () =>
      Effect.gen(function*() {
        const context = yield* Layer.build(instance())
        yield* concurrencyChecks([Context.get(context, HttpClient.HttpClient)]).pipe(
          Effect.provideService(SqlClient.SqlClient, Context.get(context, SqlClient.SqlClient))
        )
      }))
  })
})

const skip = await Testing.postgresSkipReason()

describe.skipIf(skip !== undefined)(`on PostgreSQL${skip === undefined ? "" : ` (skipped: ${skip})`}`, () => {
  layer(support, { excludeTestServices: true, timeout: "180 seconds" })("instances", (it) => {
    it.scoped("one instance: 20 concurrent ingests, the cap and deduplication hold", () =>
      Effect.gen(function*() {
        const context = yield* Layer.build(instance({ database: Testing.layerPostgres({ service: "nudging", migrations }) }))
        yield* concurrencyChecks([Context.get(context, HttpClient.HttpClient)]).pipe(
          Effect.provideService(SqlClient.SqlClient, Context.get(context, SqlClient.SqlClient))
        )
      }))

    it.scoped("two instances on one database, started together: one schema, one seed, one key pair; cap and dedup hold", () =>
      Effect.gen(function*() {
        const options = { service: "nudging", migrations }
        const target = yield* Testing.makePostgresDatabase(options)
        const database = () => Database.layerWith(options, Testing.postgresConfig(options, target))
        const [a, b] = yield* Effect.all([Layer.build(instance({ database: database() })), Layer.build(instance({ database: database() }))], {
          concurrency: 2
        })
        const clients = [Context.get(a!, HttpClient.HttpClient), Context.get(b!, HttpClient.HttpClient)]
        const sql = Context.get(a!, SqlClient.SqlClient)
        expect(Context.get(a!, SqlClient.SqlClient)).not.toBe(Context.get(b!, SqlClient.SqlClient))

        const keys = yield* Effect.forEach(clients, (client) =>
          client.get("/webpush/vapid-public-key").pipe(Effect.flatMap((r) => r.json), Effect.scoped, Effect.orDie))
        expect(keys[0]).toEqual(keys[1])
        const rules = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM rules`
        expect(rules[0]!.n).toBe(37)

        yield* concurrencyChecks(clients).pipe(Effect.provideService(SqlClient.SqlClient, sql))
      }))
  })
})
