/**
 * The repository suite every backend must pass: the same migrations, SQL and assertions run on
 * PGlite and on PostgreSQL.
 */
import type { Vitest } from "@effect/vitest"
import { assert, expect } from "@effect/vitest"
import { SqlClient } from "@effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { Database } from "@rec/db"
import { BigDecimal, Chunk, DateTime, Effect, Either, Fiber, Stream } from "effect"
import { Ledger, type NewAccount } from "./Ledger.js"

export type SuiteServices = Ledger | Database.Database | SqlClient | PgClient.PgClient

const dec = BigDecimal.unsafeFromString

const account = (name: string, balance: string, extra: Partial<NewAccount> = {}): NewAccount => ({
  name,
  balance: dec(balance),
  tags: [],
  metadata: {},
  openedOn: "2024-02-29" as NewAccount["openedOn"],
  ...extra
})

const balances = Effect.map(Effect.flatMap(Ledger, (ledger) => ledger.list), (accounts) =>
  Object.fromEntries(accounts.map((a) => [a.name, BigDecimal.format(a.balance)])))

const reset = Effect.flatMap(SqlClient, (sql) => sql`TRUNCATE transfers, accounts RESTART IDENTITY CASCADE`)

export const backendSuite = (it: Vitest.MethodsNonLive<SuiteServices, true>, schema: string) => {
  it.effect("applies the migrations in the service's schema", () =>
    Effect.gen(function*() {
      const db = yield* Database.Database
      const sql = yield* SqlClient
      expect(db.schema).toBe(schema)
      expect(db.appliedMigrations).toEqual([[1, "create_accounts"], [2, "create_transfers"]])
      const tables = yield* sql<{ tableName: string }>`
        SELECT table_name FROM information_schema.tables WHERE table_schema = ${schema} ORDER BY table_name`
      expect(tables.map((t) => t.tableName)).toEqual(["accounts", "effect_sql_migrations", "transfers"])
      const [{ searchPath }] = (yield* sql<{ searchPath: string }>`SHOW search_path`) as unknown as [{ searchPath: string }]
      expect(searchPath.replace(/[\s"]/g, "")).toBe(`${schema},public`)
      yield* db.check
    }))

  it.effect("writes many rows in one statement and decodes every column convention", () =>
    Effect.gen(function*() {
      yield* reset
      const ledger = yield* Ledger
      const before = yield* DateTime.now
      const created = yield* ledger.openMany([
        account("alice", "100.50", { tags: ["solar", "member"], metadata: { panelCount: 12, nested: { kWp: 4.2 } } }),
        account("bob", "0"),
        account("carol", "12345678901.99", { openedOn: "1999-12-31" as NewAccount["openedOn"] })
      ])
      expect(created.map((a) => a.name)).toEqual(["alice", "bob", "carol"])
      const [alice, , carol] = yield* ledger.list
      assert(alice !== undefined && carol !== undefined)
      expect(alice.id).toBe(1)
      expect(BigDecimal.format(alice.balance)).toBe("100.5")
      expect(BigDecimal.format(carol.balance)).toBe("12345678901.99")
      expect(alice.tags).toEqual(["solar", "member"])
      // JSON keys are stored as given: no camel/snake conversion inside documents.
      expect(alice.metadata).toEqual({ panelCount: 12, nested: { kWp: 4.2 } })
      // `date` comes back as the same calendar day, whatever the process time zone.
      expect(alice.openedOn).toBe("2024-02-29")
      expect(carol.openedOn).toBe("1999-12-31")
      // `timestamptz` is decoded from an ISO string into a UTC DateTime close to now.
      const skew = Math.abs(DateTime.toEpochMillis(alice.createdAt) - DateTime.toEpochMillis(before))
      expect(skew).toBeLessThan(60_000)
    }))

  it.effect("a multi-row write is all or nothing", () =>
    Effect.gen(function*() {
      yield* reset
      const ledger = yield* Ledger
      yield* ledger.openMany([account("alice", "1")])
      const result = yield* ledger.openMany([account("dave", "1"), account("alice", "2"), account("erin", "3")]).pipe(
        Effect.either
      )
      assert(Either.isLeft(result))
      expect(result.left._tag).toBe("SqlError")
      expect(String((result.left.cause as { code?: string }).code)).toBe("23505")
      expect(Object.keys(yield* balances)).toEqual(["alice"])
    }))

  it.effect("a transaction commits every change together", () =>
    Effect.gen(function*() {
      yield* reset
      const ledger = yield* Ledger
      yield* ledger.openMany([account("alice", "100"), account("bob", "5")])
      yield* ledger.transfer("alice", "bob", dec("30.25"))
      expect(yield* balances).toEqual({ alice: "69.75", bob: "35.25" })
      const history = yield* ledger.history
      expect(history).toHaveLength(1)
      expect(BigDecimal.format(history[0]!.amount)).toBe("30.25")
    }))

  it.effect("a failed transaction leaves no trace", () =>
    Effect.gen(function*() {
      yield* reset
      const ledger = yield* Ledger
      yield* ledger.openMany([account("alice", "10"), account("bob", "0")])
      const refused = yield* ledger.transfer("alice", "bob", dec("10.01")).pipe(Effect.flip)
      expect(refused._tag).toBe("InsufficientFunds")
      const unknown = yield* ledger.transfer("alice", "zed", dec("1")).pipe(Effect.flip)
      expect(unknown._tag).toBe("UnknownAccount")
      expect(yield* balances).toEqual({ alice: "10", bob: "0" })
      expect(yield* ledger.history).toHaveLength(0)
      // A failure inside the transaction body after a write rolls the write back too.
      const sql = yield* SqlClient
      const failed = yield* sql.withTransaction(
        Effect.zipRight(sql`UPDATE accounts SET balance = 0`, Effect.fail("abort" as const))
      ).pipe(Effect.flip)
      expect(failed).toBe("abort")
      expect(yield* balances).toEqual({ alice: "10", bob: "0" })
    }))

  it.effect("concurrent transactions keep the books balanced", () =>
    Effect.gen(function*() {
      yield* reset
      const ledger = yield* Ledger
      yield* ledger.openMany([account("alice", "20"), account("bob", "20")])
      const moves = Array.from({ length: 24 }, (_, i) => i % 2 === 0 ? (["alice", "bob"] as const) : (["bob", "alice"] as const))
      const results = yield* Effect.forEach(
        moves,
        ([from, to]) => Effect.either(ledger.transfer(from, to, dec("1"))),
        { concurrency: 8 }
      )
      expect(results.every(Either.isRight)).toBe(true)
      expect(yield* balances).toEqual({ alice: "20", bob: "20" })
      expect(yield* ledger.history).toHaveLength(24)
    }))

  it.effect("maps PostgreSQL types by the repository convention", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const [row] = yield* sql<Record<string, unknown>>`SELECT
        '2024-03-31 01:30:00.123+02'::timestamptz AS ts,
        ARRAY['2024-01-01 00:00:00+00'::timestamptz] AS ts_list,
        'infinity'::timestamptz AS ts_inf,
        '2024-02-29'::date AS day,
        '2024-02-29 10:00:00'::timestamp AS local_ts,
        '1 day 02:00:00'::interval AS span,
        9007199254740993::int8 AS big,
        count(*) AS counted,
        12.340::numeric AS exact,
        42::int4 AS small,
        0.5::float8 AS ratio,
        '{"aB": [1, 2]}'::jsonb AS doc,
        true AS flag`
      expect(row).toEqual({
        ts: "2024-03-30T23:30:00.123Z",
        tsList: ["2024-01-01T00:00:00.000Z"],
        tsInf: "infinity",
        day: "2024-02-29",
        localTs: "2024-02-29 10:00:00",
        span: "1 day 02:00:00",
        big: "9007199254740993",
        counted: "1",
        exact: "12.340",
        small: 42,
        ratio: 0.5,
        doc: { aB: [1, 2] },
        flag: true
      })
    }))

  it.effect("a failing statement does not poison the connection", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const error = yield* sql`SELECT 1 / 0`.pipe(Effect.flip)
      expect(error._tag).toBe("SqlError")
      expect((error.cause as { code?: string }).code).toBe("22012")
      expect(yield* sql<{ ok: number }>`SELECT 1 AS ok`).toEqual([{ ok: 1 }])
    }))

  it.effect("streams large results with a cursor", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const rows = yield* Stream.runCollect(sql<{ n: number }>`SELECT generate_series(1, 1000) AS n`.stream)
      expect(Chunk.size(rows)).toBe(1000)
      expect(Chunk.unsafeLast(rows).n).toBe(1000)
    }))

  it.effect("LISTEN / NOTIFY delivers payloads", () =>
    Effect.gen(function*() {
      const pg = yield* PgClient.PgClient
      const received = yield* pg.listen("Ledger_Events").pipe(Stream.take(2), Stream.runCollect, Effect.fork)
      // Let the LISTEN reach the server before notifying.
      yield* Effect.sleep("200 millis")
      yield* pg.notify("Ledger_Events", "first")
      yield* pg.notify("Ledger_Events", "second")
      const payloads = yield* Fiber.join(received).pipe(Effect.timeout("5 seconds"))
      expect(Chunk.toReadonlyArray(payloads)).toEqual(["first", "second"])
    }))
}
