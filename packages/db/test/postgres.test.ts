import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql/SqlClient"
import { Database, DatabaseConfig, DatabaseUrl, Migrations, Testing } from "@rec/db"
import { Duration, Effect, Either, Layer, Option, Redacted } from "effect"
import * as net from "node:net"
import { backendSuite } from "./support/backendSuite.js"
import { Ledger, migrations } from "./support/Ledger.js"

// Real-PostgreSQL tests need the machine's server (TEST_DATABASE_URL); they are skipped with
// this reason when it does not answer, and fail instead under REC_REQUIRE_SERVICES=1.
const skip = await Testing.postgresSkipReason()
const hasVector = skip === undefined && (await Testing.postgresHasExtension("vector"))
const onPostgres = describe.skipIf(skip !== undefined)
const title = (name: string) => (skip === undefined ? name : `${name} (skipped: ${skip})`)

onPostgres(title("PostgreSQL backend"), () => {
  layer(
    Ledger.Default.pipe(Layer.provideMerge(Testing.layerPostgres({ service: "ledger-service", migrations }))),
    { excludeTestServices: true, timeout: "60 seconds" }
  )((it) => backendSuite(it, "ledger_service"))
})

/** A TCP port on which nothing listens (bound, read, then released). */
const freePort = () =>
  Effect.async<number>((resume) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resume(Effect.succeed(port)))
    })
  })

/** Forwards `port` to the real server, like a PostgreSQL that finishes starting late. */
const forwarder = (port: number, target: DatabaseUrl.PostgresTarget) =>
  Effect.acquireRelease(
    Effect.async<net.Server>((resume) => {
      const sockets = new Set<net.Socket>()
      const server = net.createServer((client) => {
        const upstream = net.connect(target.port, target.host)
        for (const s of [client, upstream]) {
          sockets.add(s)
          s.on("error", () => s.destroy())
          s.on("close", () => sockets.delete(s))
        }
        client.pipe(upstream).pipe(client)
      })
      server.on("close", () => sockets.forEach((s) => s.destroy()))
      server.listen(port, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.emit("close")
      })
  )

/** The same credentials and database, reached through 127.0.0.1:`port`. */
const redirect = (target: DatabaseUrl.PostgresTarget, port: number) => {
  const url = new URL(Redacted.value(target.url))
  url.hostname = "127.0.0.1"
  url.port = String(port)
  return Either.getOrThrow(DatabaseUrl.parse(url.toString(), "unused"))
}

const adminTarget = () => {
  const target = Either.getOrThrow(DatabaseUrl.parse(Testing.testDatabaseUrl(), "unused"))
  if (target._tag !== "Postgres") throw new Error("TEST_DATABASE_URL must be a postgresql:// URL")
  return target
}

onPostgres(title("PostgreSQL start-up"), () => {
  layer(Layer.empty, { excludeTestServices: true, timeout: "60 seconds" })((it) => {
    it.effect("gives up with an error naming host, port and database, never the password", () =>
      Effect.gen(function*() {
        const port = yield* freePort()
        const target = Either.getOrThrow(
          DatabaseUrl.parse(`postgresql+asyncpg://grid:s3cr3t-pw@127.0.0.1:${port}/grid`, "unused")
        )
        const config = DatabaseConfig.make("grid", { target, startupTimeout: Duration.seconds(1) })
        const error = yield* Layer.build(Database.layerWith({ service: "grid" }, config)).pipe(Effect.scoped, Effect.flip)
        expect(error._tag).toBe("DatabaseUnavailable")
        expect(error.message).toContain(`127.0.0.1:${port}`)
        expect(error.message).toContain(`database "grid"`)
        expect(error.message).toMatch(/ECONNREFUSED/)
        expect(JSON.stringify(error)).not.toContain("s3cr3t-pw")
        expect(String(error)).not.toContain("s3cr3t-pw")
      }))

    it.effect("waits for a server that comes up after the service", () =>
      Effect.gen(function*() {
        const admin = adminTarget()
        const port = yield* freePort()
        const target = redirect(admin, port)
        const config = DatabaseConfig.make("late", { target, startupTimeout: Duration.seconds(20) })
        // The server "starts" 1.5 s after the service.
        yield* Effect.sleep("1500 millis").pipe(Effect.zipRight(forwarder(port, admin)), Effect.forkScoped)
        const started = Date.now()
        const db = yield* Database.Database.pipe(Effect.provide(Database.layerWith({ service: "late" }, config)))
        expect(db.backend).toBe("postgres")
        expect(Date.now() - started).toBeGreaterThanOrEqual(1000)
      }).pipe(Effect.scoped))
  })
})

onPostgres(title("PostgreSQL shared by several services"), () => {
  const other = {
    "0001_create_accounts": Effect.flatMap(SqlClient, (sql) => sql`CREATE TABLE accounts (code text PRIMARY KEY)`)
  }
  layer(Testing.layerPostgres({ service: "grid-gateway", migrations }), { excludeTestServices: true, timeout: "60 seconds" })(
    (it) => {
      it.effect("keeps each service's tables in its own schema", () =>
        Effect.gen(function*() {
          const db = yield* Database.Database
          const sql = yield* SqlClient
          const [{ current }] = (yield* sql<{ current: string }>`SELECT current_database() AS current`) as unknown as [
            { current: string }
          ]
          const config = (service: string) =>
            DatabaseConfig.make(service, {
              target: DatabaseUrl.withDatabase(adminTarget(), current)
            })
          // A second service with a table of the same name, migrating in the same database.
          const second = yield* Effect.gen(function*() {
            const sql2 = yield* SqlClient
            yield* sql2`INSERT INTO accounts (code) VALUES ('x')`
            return yield* sql2<{ code: string }>`SELECT code FROM accounts`
          }).pipe(Effect.provide(Database.layerWith({ service: "registry", migrations: other }, config("registry"))))
          expect(second).toEqual([{ code: "x" }])
          expect(db.schema).toBe("grid_gateway")
          const columns = yield* sql<{ tableSchema: string; columnName: string }>`
            SELECT table_schema, column_name FROM information_schema.columns
            WHERE table_name = 'accounts' AND column_name IN ('code', 'balance') ORDER BY table_schema`
          expect(columns).toEqual([
            { tableSchema: "grid_gateway", columnName: "balance" },
            { tableSchema: "registry", columnName: "code" }
          ])
        }))

      it.effect("replicas starting together apply each migration once", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient
          const [{ current }] = (yield* sql<{ current: string }>`SELECT current_database() AS current`) as unknown as [
            { current: string }
          ]
          const config = DatabaseConfig.make("flexibility", { target: DatabaseUrl.withDatabase(adminTarget(), current) })
          const replica = Database.Database.pipe(
            Effect.map((db) => db.appliedMigrations.length),
            Effect.provide(Layer.fresh(Database.layerWith({ service: "flexibility", migrations }, config)))
          )
          const applied = yield* Effect.all([replica, replica, replica], { concurrency: "unbounded" })
          expect(applied.reduce((a, b) => a + b, 0)).toBe(2)
          const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM flexibility.effect_sql_migrations`
          expect(rows).toEqual([{ n: 2 }])
        }))
    }
  )

  layer(
    Testing.layerPostgres({ service: "timeouts", config: { statementTimeout: Option.some(Duration.millis(300)) } }),
    { excludeTestServices: true, timeout: "60 seconds" }
  )((it) => {
    it.effect("DATABASE_STATEMENT_TIMEOUT_SECONDS cancels long statements on the server", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const error = yield* sql`SELECT pg_sleep(2)`.pipe(Effect.flip)
        expect((error.cause as { code?: string }).code).toBe("57014")
        expect(yield* sql<{ ok: number }>`SELECT 1 AS ok`).toEqual([{ ok: 1 }])
      }))
  })
})

describe.skipIf(skip !== undefined || !hasVector)(
  skip !== undefined
    ? `pgvector on PostgreSQL (skipped: ${skip})`
    : hasVector
    ? "pgvector on PostgreSQL"
    : "pgvector on PostgreSQL (skipped: the server has no pgvector extension installed)",
  () => {
    layer(
      Testing.layerPostgres({
        service: "assistant",
        migrations: {
          "0001_enable_vector": Migrations.createExtension("vector"),
          "0002_chunks": Effect.flatMap(SqlClient, (sql) => sql`CREATE TABLE chunks (id int, embedding vector(2))`)
        }
      }),
      { excludeTestServices: true, timeout: "60 seconds" }
    )((it) => {
      it.effect("finds the nearest vector", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient
          yield* sql`INSERT INTO chunks VALUES (1, '[1,0]'), (2, '[0,1]')`
          const rows = yield* sql<{ id: number }>`SELECT id FROM chunks ORDER BY embedding <-> '[0.1,0.9]' LIMIT 1`
          expect(rows).toEqual([{ id: 2 }])
        }))
    })
  }
)
