// A service process for pglite.test.ts: opens `DATABASE_URL`-style target argv[2] with the
// compiled @rec/db (the PGlite server script it starts is compiled too), writes a row, prints
// "row written" and waits to be killed.
import { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Either } from "effect"
import { Database, DatabaseConfig, DatabaseUrl } from "../../dist/index.js"

const config = DatabaseConfig.make("orphan", { target: Either.getOrThrow(DatabaseUrl.parse(process.argv[2], "unused")) })

await Effect.runPromise(
  Effect.gen(function*() {
    const sql = yield* SqlClient
    yield* sql`CREATE TABLE public.kept (v text)`
    yield* sql`INSERT INTO public.kept VALUES ('before the crash')`
    console.log("row written")
    yield* Effect.never
  }).pipe(Effect.provide(Database.layerWith({ service: "orphan" }, config)))
)
