/**
 * Running migrations on their own (a deploy step before the service replicas start with
 * `DATABASE_MIGRATE=false`), configured by the same environment variables as the service.
 *
 * A service can expose it in one line (`src/migrate.ts`):
 *
 * ```ts
 * NodeRuntime.runMain(Cli.main({ service: "grid-gateway", migrations }))
 * ```
 *
 * or use the generic entry point: `node packages/db/dist/bin/migrate.js --module
 * services/grid-gateway/dist/migrations/index.js --service grid-gateway [up|status]`.
 */
import { Console, Effect, Layer } from "effect"
import * as Database from "./Database.js"
import * as DatabaseConfig from "./DatabaseConfig.js"
import { InvalidDatabaseConfig } from "./Errors.js"
import * as Migrations from "./Migrations.js"

export interface CliOptions {
  readonly service: string
  readonly migrations: Migrations.MigrationRecord
}

export type Command = "up" | "status"

export const usage = "usage: migrate [up|status]   (configured by DATABASE_URL, DATABASE_SCHEMA, ...)"

export const parseCommand = (args: ReadonlyArray<string>): Command | undefined => {
  const [command, ...rest] = args
  if (rest.length > 0) return undefined
  if (command === undefined || command === "up") return "up"
  if (command === "status") return "status"
  return undefined
}

const format = (rows: ReadonlyArray<readonly [number, string]>) =>
  rows.length === 0 ? "  (none)" : rows.map(([id, name]) => `  ${String(id).padStart(4, "0")}_${name}`).join("\n")

/** Runs `command` and returns the text it printed. */
export const run = (options: CliOptions, command: Command, config: DatabaseConfig.DatabaseConfig) =>
  Effect.gen(function*() {
    const info = yield* Database.Database
    if (command === "up") {
      const lines = `${info.target} schema ${info.schema}: applied\n${format(info.appliedMigrations)}`
      yield* Console.log(lines)
      return lines
    }
    const status = yield* Migrations.status({ schema: info.schema, migrations: options.migrations })
    const lines = `${info.target} schema ${info.schema}\napplied:\n${format(status.applied)}\npending:\n${format(status.pending)}`
    yield* Console.log(lines)
    return lines
  }).pipe(
    Effect.provide(
      Layer.fresh(
        Database.layerWith(
          { service: options.service, migrations: options.migrations },
          { ...config, migrate: command === "up" }
        )
      )
    ),
    Effect.withSpan("Cli.run", { attributes: { command } })
  )

/** The whole command line: reads the environment and `process.argv`. */
export const main = (options: CliOptions, args: ReadonlyArray<string> = process.argv.slice(2)) =>
  Effect.gen(function*() {
    const command = parseCommand(args)
    if (command === undefined) return yield* new InvalidDatabaseConfig({ message: usage })
    const config = yield* DatabaseConfig.fromEnv(options.service)
    yield* run(options, command, config)
  })
