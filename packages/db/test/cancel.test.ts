import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql/SqlClient"
import { Testing } from "@rec/db"
import { Effect, Fiber } from "effect"

// Cancelling an interrupted statement (internal/cancelSafePool.ts), on the machine's PostgreSQL;
// skipped with the reason when it is not reachable (CI: REC_REQUIRE_SERVICES=1 makes it a failure).
const skip = await Testing.postgresSkipReason()
const title = (name: string) => (skip === undefined ? name : `${name} (skipped: ${skip})`)

describe.skipIf(skip !== undefined)(title("interrupted statements on PostgreSQL"), () => {
  layer(Testing.layerPostgres({ service: "cancels", config: { pool: { max: 2 } } }), { excludeTestServices: true, timeout: "60 seconds" })((it) => {
    it.effect("the cancel of an interrupted statement never stops the next statement on its connection", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        // B holds one of the two connections for a second; A the other for 300 ms; C waits for
        // one and is first in line, so it gets A's connection when A's statement ends.
        const b = yield* Effect.fork(sql`SELECT 'b' AS v FROM pg_sleep(1)`)
        yield* Effect.sleep("30 millis")
        const a = yield* Effect.fork(sql`SELECT 'a' AS v FROM pg_sleep(0.3)`)
        yield* Effect.sleep("30 millis")
        const c = yield* Effect.fork(sql`SELECT 'c' AS v FROM pg_sleep(1)`)
        yield* Effect.sleep("50 millis")
        // A's cancel now waits for a free connection: B's, after C has started on A's.
        yield* Fiber.interruptFork(a)
        expect(yield* Fiber.join(c)).toEqual([{ v: "c" }])
        expect(yield* Fiber.join(b)).toEqual([{ v: "b" }])
      }))

    it.effect("an interrupted statement still running is cancelled, and its connection is not reused", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const pidOf = sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`
        const long = yield* Effect.fork(sql`SELECT 'long' AS v FROM pg_sleep(30)`)
        yield* Effect.sleep("200 millis")
        const [{ pid: cancelled }] = yield* sql<{ pid: number }>`
          SELECT pid FROM pg_stat_activity WHERE query = 'SELECT ''long'' AS v FROM pg_sleep(30)'`
        const started = Date.now()
        yield* Fiber.interrupt(long)
        expect(Date.now() - started).toBeLessThan(10_000)
        const running = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE state = 'active' AND query = 'SELECT ''long'' AS v FROM pg_sleep(30)'`
        expect(running).toEqual([{ n: 0 }])
        // Both connections now answer, and neither is the cancelled one's (it was closed).
        const pids = (yield* Effect.all([pidOf, pidOf], { concurrency: 2 })).map((rows) => rows[0]?.pid)
        expect(pids.every((pid) => typeof pid === "number")).toBe(true)
        expect(pids).not.toContain(cancelled)
      }))
  })
})
