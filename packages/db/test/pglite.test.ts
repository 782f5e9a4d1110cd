import { afterAll, describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql/SqlClient"
import { Columns, Database, DatabaseConfig, DatabaseUrl, Migrations, Testing } from "@rec/db"
import { Context, Effect, Either, HashMap, Layer, Logger, Option, Schema } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { backendSuite } from "./support/backendSuite.js"
import { Ledger, migrations } from "./support/Ledger.js"

describe("PGlite backend", () => {
  layer(
    Ledger.Default.pipe(
      Layer.provideMerge(Testing.layerPglite({ service: "ledger-service", migrations }))
    ),
    { excludeTestServices: true, timeout: "60 seconds" }
  )((it) => backendSuite(it, "ledger_service"))
})

const tempDirs: Array<string> = []
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rec-db-pglite-"))
  tempDirs.push(dir)
  return dir
}
// A PGlite data directory is about 40 MB.
afterAll(() => tempDirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })))

const lockOwner = (dataDir: string): number => Number(fs.readFileSync(`${dataDir}.lock`, "utf8").trim())

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const waitUntilGone = (pid: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < 300 && isAlive(pid); i++) yield* Effect.sleep("100 millis")
    return !isAlive(pid)
  })

const onDisk = (dataDir: string, service = "ledger", pgliteInProcess = false) =>
  Database.layerWith(
    { service, migrations },
    DatabaseConfig.make(service, {
      target: Either.getOrThrow(DatabaseUrl.parse(`pglite://${dataDir}`, "unused")),
      pgliteInProcess
    })
  )

describe("PGlite on disk, served by a PGlite server process", () => {
  const dataDir = path.join(tempDir(), "suite")
  layer(Ledger.Default.pipe(Layer.provideMerge(onDisk(dataDir, "ledger-service"))), {
    excludeTestServices: true,
    timeout: "120 seconds"
  })((it) => backendSuite(it, "ledger_service"))
})

describe("PGlite on disk", () => {
  layer(Layer.empty, { excludeTestServices: true, timeout: "120 seconds" })((it) => {
    it.effect("keeps data across restarts and applies each migration once", () =>
      Effect.gen(function*() {
        const dataDir = path.join(tempDir(), "nested", "ledger")
        const first = yield* Effect.gen(function*() {
          const sql = yield* SqlClient
          yield* sql`INSERT INTO accounts (name, balance, opened_on) VALUES ('alice', 5, '2024-01-01')`
          return (yield* Database.Database).appliedMigrations
        }).pipe(Effect.provide(onDisk(dataDir)))
        expect(first).toHaveLength(2)
        expect(fs.existsSync(`${dataDir}.lock`)).toBe(false)

        const second = yield* Effect.gen(function*() {
          const sql = yield* SqlClient
          const rows = yield* sql<{ name: string }>`SELECT name FROM accounts`
          return { rows, applied: (yield* Database.Database).appliedMigrations }
        }).pipe(Effect.provide(onDisk(dataDir)))
        expect(second.rows).toEqual([{ name: "alice" }])
        expect(second.applied).toEqual([])
      }), 60_000)

    it.effect("services in one process share a directory, each in its own schema, one transaction at a time", () =>
      Effect.gen(function*() {
        const dataDir = path.join(tempDir(), "shared")
        const registryMigrations = {
          "0001_create_accounts": Effect.flatMap(SqlClient, (sql) => sql`CREATE TABLE accounts (code text PRIMARY KEY)`)
        }
        const registry = Database.layerWith(
          { service: "registry", migrations: registryMigrations },
          DatabaseConfig.make("registry", { target: Either.getOrThrow(DatabaseUrl.parse(`pglite://${dataDir}`, "unused")) })
        )
        const ledgerSql = yield* Layer.build(onDisk(dataDir)).pipe(Effect.map(Context.get(SqlClient)))
        const registrySql = yield* Layer.build(registry).pipe(Effect.map(Context.get(SqlClient)))

        // The ledger's transaction writes, waits, and fails; meanwhile the registry works in its
        // own schema on the same session and must neither see nor disturb that transaction.
        const ledgerTx = ledgerSql.withTransaction(
          Effect.gen(function*() {
            yield* ledgerSql`INSERT INTO accounts (name, balance, opened_on) VALUES ('uncommitted', 1, '2024-01-01')`
            yield* Effect.sleep("150 millis")
            return yield* Effect.fail("rolled back" as const)
          })
        ).pipe(Effect.flip)
        const registryWork = Effect.gen(function*() {
          yield* Effect.sleep("20 millis")
          yield* registrySql`INSERT INTO accounts (code) VALUES ('r-1')`
          return yield* registrySql<{ name: string }>`SELECT name FROM ledger.accounts`
        })
        const [rolledBack, seenByRegistry] = yield* Effect.all([ledgerTx, registryWork], { concurrency: "unbounded" })
        expect(rolledBack).toBe("rolled back")
        expect(seenByRegistry).toEqual([])
        expect(yield* registrySql<{ code: string }>`SELECT code FROM accounts`).toEqual([{ code: "r-1" }])
        expect(yield* ledgerSql<{ n: number }>`SELECT count(*)::int AS n FROM accounts`).toEqual([{ n: 0 }])
        expect(yield* ledgerSql<{ schema: string }>`SELECT current_schema() AS schema`).toEqual([{ schema: "ledger" }])
        expect(yield* registrySql<{ schema: string }>`SELECT current_schema() AS schema`).toEqual([{ schema: "registry" }])
      }).pipe(Effect.scoped), 60_000)

    it.effect("the PGlite server process holds the directory and stops with the service", () =>
      Effect.gen(function*() {
        const dataDir = path.join(tempDir(), "served")
        const server = yield* Effect.gen(function*() {
          const sql = yield* SqlClient
          yield* sql`INSERT INTO accounts (name, balance, opened_on) VALUES ('alice', 5, '2024-01-01')`
          const owner = lockOwner(dataDir)
          expect(owner).not.toBe(process.pid)
          expect(isAlive(owner)).toBe(true)
          return owner
        }).pipe(Effect.provide(onDisk(dataDir)))
        // Closing the layer closed PGlite (flushing the directory) and ended the process.
        expect(isAlive(server)).toBe(false)
        expect(fs.existsSync(`${dataDir}.lock`)).toBe(false)
      }), 60_000)

    it.effect("PGLITE_IN_PROCESS keeps PGlite in the service's own process", () =>
      Effect.gen(function*() {
        const dataDir = path.join(tempDir(), "in-process")
        const owner = yield* Effect.sync(() => lockOwner(dataDir)).pipe(Effect.provide(onDisk(dataDir, "ledger", true)))
        expect(owner).toBe(process.pid)
      }), 60_000)

    it.effect("a PGlite server process that dies fails queries at once as DatabaseUnavailable", () =>
      Effect.gen(function*() {
        const dataDir = path.join(tempDir(), "crash")
        const context = yield* Layer.build(onDisk(dataDir))
        const sql = Context.get(context, SqlClient)
        const db = Context.get(context, Database.Database)
        yield* sql`SELECT 1`
        const server = lockOwner(dataDir)
        process.kill(server, "SIGKILL")
        expect(yield* waitUntilGone(server)).toBe(true)
        // The exit is noticed through the IPC channel; give it a moment.
        yield* Effect.sleep("200 millis")
        const failed = yield* sql`SELECT 1`.pipe(Effect.flip, Effect.timeout("5 seconds"))
        expect(failed._tag).toBe("SqlError")
        const cause = failed.cause as { _tag?: string; message?: string }
        expect(cause._tag).toBe("DatabaseUnavailable")
        expect(cause.message).toContain(`PGlite server process (pid ${server})`)
        expect(cause.message).toContain("killed by SIGKILL")
        const check = yield* db.check.pipe(Effect.flip, Effect.timeout("6 seconds"))
        expect(check._tag).toBe("DatabaseUnavailable")
      }).pipe(Effect.scoped), 60_000)

    it.effect("the PGlite server process closes the directory when its service is killed", () =>
      Effect.gen(function*() {
        const dataDir = path.join(tempDir(), "orphan")
        const script = new URL("./support/orphanService.mjs", import.meta.url).pathname
        const service = spawn(process.execPath, [script, `pglite://${dataDir}`], { stdio: ["ignore", "pipe", "inherit"] })
        yield* Effect.async<void>((resume) => {
          service.stdout.on("data", (chunk: Buffer) => {
            if (chunk.toString().includes("row written")) resume(Effect.void)
          })
        }).pipe(Effect.timeout("60 seconds"))
        const server = lockOwner(dataDir)
        expect(server).not.toBe(service.pid)
        service.kill("SIGKILL")
        expect(yield* waitUntilGone(server)).toBe(true)
        expect(fs.existsSync(`${dataDir}.lock`)).toBe(false)
        const rows = yield* Effect.flatMap(SqlClient, (sql) => sql<{ v: string }>`SELECT v FROM public.kept`).pipe(
          Effect.provide(onDisk(dataDir))
        )
        expect(rows).toEqual([{ v: "before the crash" }])
      }), 90_000)

    it.effect("refuses a data directory another process holds", () =>
      Effect.gen(function*() {
        const dataDir = path.join(tempDir(), "locked")
        // The parent of this test process is alive and is not us.
        fs.writeFileSync(`${dataDir}.lock`, `${process.ppid}\n`)
        const error = yield* Layer.build(onDisk(dataDir)).pipe(Effect.scoped, Effect.flip)
        expect(error._tag).toBe("PgliteDirectoryLocked")
        expect(error.message).toContain(`in use by process ${process.ppid}`)
        expect(fs.existsSync(dataDir)).toBe(false)
      }), 60_000)

    it.effect("takes over a lock left by a dead process", () =>
      Effect.gen(function*() {
        const dataDir = path.join(tempDir(), "stale")
        // No process has pid 2^22 + 1 on Linux (pid_max is at most 2^22).
        fs.writeFileSync(`${dataDir}.lock`, `${2 ** 22 + 1}\n`)
        const db = yield* Database.Database.pipe(Effect.provide(onDisk(dataDir)))
        expect(db.backend).toBe("pglite")
        expect(fs.existsSync(`${dataDir}.lock`)).toBe(false)
      }), 60_000)
  })
})

describe("PGlite extensions and logging", () => {
  const vectorMigrations = {
    "0001_enable_vector": Migrations.createExtension("vector"),
    "0002_create_chunks": Effect.flatMap(SqlClient, (sql) =>
      sql`CREATE TABLE chunks (id int PRIMARY KEY, embedding vector(3) NOT NULL)`)
  }
  const statements: Array<string> = []
  const capture = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ annotations, message }) => {
      const statement = HashMap.get(annotations, "statement")
      if (message !== undefined && Option.isSome(statement) && typeof statement.value === "string") {
        statements.push(statement.value)
      }
    })
  )

  layer(
    Testing.layerPglite({ service: "assistant", migrations: vectorMigrations, config: { echo: true } }).pipe(
      Layer.provide(capture)
    ),
    { excludeTestServices: true, timeout: "60 seconds" }
  )((it) => {
    it.effect("pgvector is available and round-trips through Columns.Vector", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const encode = Schema.encodeSync(Columns.Vector)
        yield* sql`INSERT INTO chunks ${sql.insert([
          { id: 1, embedding: encode([1, 0, 0]) },
          { id: 2, embedding: encode([0, 1, 0]) },
          { id: 3, embedding: encode([0.9, 0.1, 0]) }
        ])}`
        const nearest = yield* sql<{ id: number; embedding: string }>`
          SELECT id, embedding FROM chunks ORDER BY embedding <-> ${encode([1, 0.05, 0])}::vector LIMIT 2`
        expect(nearest.map((r) => r.id)).toEqual([1, 3])
        expect(Schema.decodeUnknownSync(Columns.Vector)(nearest[1]!.embedding)).toEqual([0.9, 0.1, 0])
        const [{ schema }] = (yield* sql<{ schema: string }>`
          SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
          WHERE e.extname = 'vector'`) as unknown as [{ schema: string }]
        expect(schema).toBe("public")
      }))

    it.effect("DATABASE_ECHO logs statement text, never parameters", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        statements.length = 0
        yield* sql`SELECT ${"very-secret-value"}::text AS echoed`
        yield* Effect.sleep("50 millis")
        expect(statements.some((s) => s.includes("AS echoed"))).toBe(true)
        expect(statements.join("\n")).not.toContain("very-secret-value")
      }))
  })
})
