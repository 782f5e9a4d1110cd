import { describe, expect, it } from "@effect/vitest"
import { DatabaseConfig, DatabaseUrl } from "@rec/db"
import { ConfigProvider, Duration, Effect, Either, Option, Redacted } from "effect"

const parse = (raw: string | undefined) => DatabaseUrl.parse(raw, "./data/grid")

describe("DATABASE_URL", () => {
  it("normalises the spec's asyncpg DSN and keeps the credentials redacted", () => {
    const target = Either.getOrThrow(parse("postgresql+asyncpg://grid_user:p%40ss@db.example:15432/grid?ssl=require"))
    expect(target._tag).toBe("Postgres")
    if (target._tag !== "Postgres") return
    expect(Redacted.value(target.url)).toBe("postgresql://grid_user:p%40ss@db.example:15432/grid?sslmode=require")
    expect(target).toMatchObject({ host: "db.example", port: 15432, database: "grid", user: "grid_user" })
    expect(target.display).toBe("postgresql://grid_user@db.example:15432/grid")
    expect(String(target.url)).not.toContain("p%40ss")
    expect(JSON.stringify(target)).not.toContain("p%40ss")
  })

  it("accepts postgres:// and postgresql:// with defaults for port and database", () => {
    const a = Either.getOrThrow(parse("postgres://app@localhost/registry"))
    const b = Either.getOrThrow(parse("postgresql://127.0.0.1"))
    expect(a).toMatchObject({ _tag: "Postgres", port: 5432, database: "registry", display: "postgresql://app@localhost:5432/registry" })
    expect(b).toMatchObject({ _tag: "Postgres", host: "127.0.0.1", database: "postgres", user: undefined })
  })

  it("selects PGlite when unset, for pglite://<dir> and pglite://memory", () => {
    expect(Either.getOrThrow(parse(undefined))).toEqual({ _tag: "Pglite", dataDir: "./data/grid", display: "pglite://./data/grid" })
    expect(Either.getOrThrow(parse("  "))).toMatchObject({ _tag: "Pglite", dataDir: "./data/grid" })
    expect(Either.getOrThrow(parse("pglite://"))).toMatchObject({ dataDir: "./data/grid" })
    expect(Either.getOrThrow(parse("pglite://memory"))).toEqual({ _tag: "Pglite", dataDir: undefined, display: "pglite://memory" })
    expect(Either.getOrThrow(parse("pglite:///var/lib/rec/grid"))).toMatchObject({ dataDir: "/var/lib/rec/grid" })
    expect(Either.getOrThrow(parse("pglite://data/x"))).toMatchObject({ dataDir: "data/x" })
  })

  it("rejects other schemes without echoing the value", () => {
    const error = Either.getOrThrow(Either.flip(parse("mysql://root:hunter2@db/grid")))
    expect(error.message).toContain(`"mysql:"`)
    expect(error.message).not.toContain("hunter2")
    expect(Either.isLeft(parse("not a url"))).toBe(true)
  })

  it("points a target at another database without touching the credentials", () => {
    const target = Either.getOrThrow(parse("postgresql://u:pw@h:5433/postgres"))
    if (target._tag !== "Postgres") throw new Error("expected PostgreSQL")
    const other = DatabaseUrl.withDatabase(target, "rec_test_1")
    expect(Redacted.value(other.url)).toBe("postgresql://u:pw@h:5433/rec_test_1")
    expect(other.display).toBe("postgresql://u@h:5433/rec_test_1")
  })
})

describe("DatabaseConfig", () => {
  const read = (env: Record<string, string>) =>
    DatabaseConfig.fromEnv("grid-gateway").pipe(
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
    )

  it.effect("has documented defaults", () =>
    Effect.gen(function*() {
      const config = yield* read({})
      expect(config.target).toMatchObject({ _tag: "Pglite", dataDir: "./data/grid-gateway" })
      expect(config.schema).toBe("grid_gateway")
      expect(config.migrate).toBe(true)
      expect(config.pool.max).toBe(10)
      expect(Duration.toSeconds(config.pool.connectTimeout)).toBe(10)
      expect(Duration.toSeconds(config.startupTimeout)).toBe(60)
      expect(Option.isNone(config.statementTimeout)).toBe(true)
      expect(config.echo).toBe(false)
    }))

  it.effect("reads every variable", () =>
    Effect.gen(function*() {
      const config = yield* read({
        DATABASE_URL: "postgresql://u:pw@db:5432/grid",
        DATABASE_SCHEMA: "grid",
        DATABASE_MIGRATE: "false",
        DATABASE_POOL_MAX: "4",
        DATABASE_POOL_MIN: "1",
        DATABASE_POOL_IDLE_TIMEOUT_SECONDS: "5",
        DATABASE_POOL_MAX_LIFETIME_SECONDS: "600",
        DATABASE_CONNECT_TIMEOUT_SECONDS: "2.5",
        DATABASE_STATEMENT_TIMEOUT_SECONDS: "30",
        DATABASE_STARTUP_TIMEOUT_SECONDS: "0",
        DATABASE_ECHO: "true"
      })
      expect(config.target._tag).toBe("Postgres")
      expect(config).toMatchObject({ schema: "grid", migrate: false, echo: true, pool: { max: 4, min: 1 } })
      expect(Duration.toMillis(config.pool.connectTimeout)).toBe(2500)
      expect(Option.map(config.pool.maxLifetime, Duration.toSeconds)).toEqual(Option.some(600))
      expect(Option.map(config.statementTimeout, Duration.toSeconds)).toEqual(Option.some(30))
      expect(Duration.toMillis(config.startupTimeout)).toBe(0)
    }))

  it.effect("rejects bad values with the variable's name and never the URL", () =>
    Effect.gen(function*() {
      const badUrl = yield* Effect.flip(read({ DATABASE_URL: "mysql://root:hunter2@db/grid" }))
      expect(String(badUrl)).toContain("DATABASE_URL")
      expect(String(badUrl)).not.toContain("hunter2")
      const badSchema = yield* Effect.flip(read({ DATABASE_SCHEMA: "Grid; DROP TABLE x" }))
      expect(String(badSchema)).toContain("DATABASE_SCHEMA")
      const badPool = yield* Effect.flip(read({ DATABASE_POOL_MAX: "0" }))
      expect(String(badPool)).toContain("DATABASE_POOL_MAX")
    }))

  it("derives a schema from any service name", () => {
    expect(DatabaseConfig.schemaFromService("grid-gateway")).toBe("grid_gateway")
    expect(DatabaseConfig.schemaFromService("Participant Gateway")).toBe("participant_gateway")
    expect(DatabaseConfig.schemaFromService("2fa")).toBe("s_2fa")
    expect(DatabaseConfig.isValidSchemaName(DatabaseConfig.schemaFromService("x".repeat(100)))).toBe(true)
  })
})
