/**
 * One fresh database on the test PostgreSQL server, dropped afterwards: several service
 * instances each open their own pool on it (replica tests).
 */
import { DatabaseConfig, DatabaseUrl, Testing } from "@rec/db"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as crypto from "node:crypto"
import * as Pg from "pg"

export class SharedDatabase extends Context.Tag("test/SharedDatabase")<SharedDatabase, DatabaseConfig.DatabaseConfig>() {}

const admin = (sql: string) =>
  Effect.promise(async () => {
    const client = new Pg.Client({ connectionString: Testing.testDatabaseUrl() })
    await client.connect()
    try {
      await client.query(sql)
    } finally {
      await client.end()
    }
  })

/** `label` names the database (which test made it); `poolMax` is each instance's pool size. */
export const sharedDatabase = (label: string, poolMax: number) =>
  Layer.scoped(
    SharedDatabase,
    Effect.gen(function*() {
      const target = Either.getOrThrow(DatabaseUrl.parse(Testing.testDatabaseUrl(), "unused"))
      if (target._tag !== "Postgres") return yield* Effect.die(new Error("TEST_DATABASE_URL must be PostgreSQL"))
      const name = `rec_test_${Date.now().toString(36)}_flexibility_${label}_${crypto.randomBytes(3).toString("hex")}`
      yield* Effect.acquireRelease(admin(`CREATE DATABASE ${name} TEMPLATE template0`), () =>
        admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.orDie))
      return DatabaseConfig.make("flexibility", {
        target: DatabaseUrl.withDatabase(target, name),
        pool: { max: poolMax },
        startupTimeout: Duration.seconds(5)
      })
    })
  )
