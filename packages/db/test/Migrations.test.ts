import { describe, expect, it, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql/SqlClient"
import { Cli, Database, DatabaseConfig, DatabaseUrl, Migrations, Testing } from "@rec/db"
import { Effect, Either, HashMap, Layer, Logger, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const create = (table: string) => Effect.flatMap(SqlClient, (sql) => sql.unsafe(`CREATE TABLE ${table} (id int)`))

const tables = (schema: string) =>
  Effect.flatMap(SqlClient, (sql) =>
    sql<{ tableName: string }>`
      SELECT table_name FROM information_schema.tables WHERE table_schema = ${schema} ORDER BY table_name`.pipe(
      Effect.map((rows) => rows.map((r) => r.tableName))
    ))

describe("Migrations.validate", () => {
  it("sorts well-formed migrations by id", () => {
    const { migrations, problems } = Migrations.validate({
      "0010_later": create("b"),
      "2_earlier": create("a")
    })
    expect(problems).toEqual([])
    expect(migrations.map((m) => [m.id, m.name])).toEqual([[2, "earlier"], [10, "later"]])
  })

  it("reports malformed keys, reused ids and values that are not Effects", () => {
    const { problems } = Migrations.validate({
      "0001_create": create("a"),
      "001_again": create("b"),
      "create_things": create("c"),
      "0000_zero": create("d"),
      "0003_factory": (() => create("e")) as never
    })
    expect(problems).toEqual([
      `"001_again" reuses id 1 of "0001_create"`,
      `"create_things" is not of the form NNNN_name (digits, an underscore, letters/digits/underscores)`,
      `"0000_zero" must have a positive id`,
      `"0003_factory" is not an Effect (export the migration Effect itself, not a function)`
    ])
  })

  it("checkOrder flags lower ids added late and renamed migrations", () => {
    const { migrations } = Migrations.validate({ "1_a": create("a"), "2_b": create("b"), "3_c": create("c") })
    const late = Migrations.checkOrder("s", migrations, [{ migration_id: 1, name: "a" }, { migration_id: 3, name: "c" }])
    expect(Option.map(late.error, (e) => e.reason)).toEqual(Option.some("out-of-order"))
    const renamed = Migrations.checkOrder("s", migrations, [{ migration_id: 1, name: "x" }])
    expect(Option.map(renamed.error, (e) => e.reason)).toEqual(Option.some("renamed"))
    const newer = Migrations.checkOrder("s", migrations, [
      { migration_id: 1, name: "a" },
      { migration_id: 2, name: "b" },
      { migration_id: 3, name: "c" },
      { migration_id: 4, name: "from_a_newer_release" }
    ])
    expect(Option.isNone(newer.error)).toBe(true)
    expect(newer.unknownApplied).toEqual([{ migration_id: 4, name: "from_a_newer_release" }])
  })
})

describe("Migrations.run on PGlite", () => {
  // One in-memory database; every test works in its own schema.
  layer(Testing.layerPglite({ service: "migrations-test" }), { excludeTestServices: true, timeout: "60 seconds" })(
    (it) => {
      it.effect("creates the schema, runs pending migrations once, and records them there", () =>
        Effect.gen(function*() {
          const first = yield* Migrations.run({ schema: "alpha", migrations: { "0001_one": create("one") } })
          expect(first).toEqual([[1, "one"]])
          const second = yield* Migrations.run({
            schema: "alpha",
            migrations: { "0001_one": create("one"), "0002_two": create("two") }
          })
          expect(second).toEqual([[2, "two"]])
          expect(yield* Migrations.run({ schema: "alpha", migrations: { "0001_one": create("one"), "0002_two": create("two") } }))
            .toEqual([])
          expect(yield* tables("alpha")).toEqual(["effect_sql_migrations", "one", "two"])
          // The connection's own search_path is untouched by migrating another schema.
          expect(yield* tables("migrations_test")).toEqual([])
        }))

      it.effect("refuses a lower id added after a higher one was applied", () =>
        Effect.gen(function*() {
          yield* Migrations.run({ schema: "beta", migrations: { "0001_one": create("one"), "0003_three": create("three") } })
          const error = yield* Migrations.run({
            schema: "beta",
            migrations: { "0001_one": create("one"), "0002_two": create("two"), "0003_three": create("three") }
          }).pipe(Effect.flip)
          expect(error._tag).toBe("MigrationFailed")
          if (error._tag !== "MigrationFailed") return
          expect(error.reason).toBe("out-of-order")
          expect(error.message).toContain("2_two")
          expect(yield* tables("beta")).toEqual(["effect_sql_migrations", "one", "three"])
          const status = yield* Effect.flip(Migrations.status({
            schema: "beta",
            migrations: { "0001_one": create("one"), "0002_two": create("two"), "0003_three": create("three") }
          }))
          expect(status._tag).toBe("MigrationFailed")
        }))

      it.effect("refuses a renamed applied migration", () =>
        Effect.gen(function*() {
          yield* Migrations.run({ schema: "gamma", migrations: { "0001_one": create("one") } })
          const error = yield* Migrations.run({ schema: "gamma", migrations: { "0001_uno": create("uno") } }).pipe(
            Effect.flip
          )
          expect(error._tag === "MigrationFailed" && error.reason).toBe("renamed")
        }))

      it.effect("rolls the whole batch back when a migration fails", () =>
        Effect.gen(function*() {
          const error = yield* Migrations.run({
            schema: "delta",
            migrations: {
              "0001_one": create("one"),
              "0002_broken": Effect.flatMap(SqlClient, (sql) => sql`CREATE TABLE one (id int)`)
            }
          }).pipe(Effect.flip)
          expect(error._tag).toBe("MigrationFailed")
          if (error._tag !== "MigrationFailed") return
          expect(error.reason).toBe("failed")
          expect(error.message).toContain(`Migration "2_broken" failed`)
          expect(error.message).toContain(`relation "one" already exists`)
          expect(yield* tables("delta")).toEqual(["effect_sql_migrations"])
          const sql = yield* SqlClient
          expect(yield* sql`SELECT * FROM delta.effect_sql_migrations`).toEqual([])
        }))

      it.effect("rejects an invalid migration set before touching the database", () =>
        Effect.gen(function*() {
          const error = yield* Migrations.run({ schema: "epsilon", migrations: { "one": create("one") } }).pipe(Effect.flip)
          expect(error._tag === "MigrationFailed" && error.reason).toBe("invalid")
          const badSchema = yield* Migrations.run({ schema: "Bad Schema", migrations: {} }).pipe(Effect.flip)
          expect(badSchema._tag === "MigrationFailed" && badSchema.reason).toBe("invalid")
          const sql = yield* SqlClient
          expect(yield* sql`SELECT 1 FROM pg_namespace WHERE nspname = 'epsilon'`).toEqual([])
        }))

      it.effect("status lists applied and pending migrations without applying them", () =>
        Effect.gen(function*() {
          const migrations = { "0001_one": create("one"), "0002_two": create("two") }
          expect(yield* Migrations.status({ schema: "zeta", migrations })).toEqual({
            applied: [],
            pending: [[1, "one"], [2, "two"]]
          })
          yield* Migrations.run({ schema: "zeta", migrations: { "0001_one": create("one") } })
          expect(yield* Migrations.status({ schema: "zeta", migrations })).toEqual({
            applied: [[1, "one"]],
            pending: [[2, "two"]]
          })
          expect(yield* tables("zeta")).toEqual(["effect_sql_migrations", "one"])
        }))
    }
  )
})

describe("DATABASE_MIGRATE=false and the migration CLI", () => {
  const migrations = { "0001_one": create("one"), "0002_two": create("two") }
  const warnings: Array<string> = []
  const capture = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ annotations, logLevel, message }) => {
      if (logLevel._tag === "Warning") {
        const pending = HashMap.get(annotations, "pending")
        warnings.push(`${String(message)} ${Option.getOrElse(pending, () => "")}`)
      }
    })
  )

  layer(Layer.empty, { excludeTestServices: true, timeout: "120 seconds" })((it) => {
    it.effect("a service started with migrations off warns about pending ones; the CLI applies them", () =>
      Effect.gen(function*() {
        const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), "rec-db-cli-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(tempDir, { recursive: true, force: true })))
        const dataDir = path.join(tempDir, "svc")
        const config = DatabaseConfig.make("svc", {
          target: Either.getOrThrow(DatabaseUrl.parse(`pglite://${dataDir}`, "unused")),
          migrate: false
        })
        const tablesSeen = yield* tables("svc").pipe(
          Effect.provide(Database.layerWith({ service: "svc", migrations }, config).pipe(Layer.provide(capture)))
        )
        expect(tablesSeen).toEqual([])
        expect(warnings.join("\n")).toContain("pending migrations are not applied")
        expect(warnings.join("\n")).toContain("1_one,2_two")

        const before = yield* Cli.run({ service: "svc", migrations }, "status", config)
        expect(before).toContain("pending:\n  0001_one\n  0002_two")
        const up = yield* Cli.run({ service: "svc", migrations }, "up", config)
        expect(up).toContain("applied\n  0001_one\n  0002_two")
        const after = yield* Cli.run({ service: "svc", migrations }, "status", config)
        expect(after).toContain("pending:\n  (none)")
      }).pipe(Effect.scoped), 60_000)

    it("parses its command line", () => {
      expect(Cli.parseCommand([])).toBe("up")
      expect(Cli.parseCommand(["up"])).toBe("up")
      expect(Cli.parseCommand(["status"])).toBe("status")
      expect(Cli.parseCommand(["down"])).toBeUndefined()
      expect(Cli.parseCommand(["up", "extra"])).toBeUndefined()
    })
  })
})
