/**
 * `nudging seed validate DIR` and `nudging seed apply DIR`: the seed directory checked (every
 * problem with its file and field), and applied to the database of `DATABASE_URL` (one
 * transaction; applying the same seed again changes nothing). Running services read the new
 * rules within `NUDGING_RULES_REFRESH_SECONDS`.
 */
import { Database, DatabaseConfig } from "@rec/db"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Config from "./Config.js"
import { migrations } from "./migrations/index.js"
import { formatReport, RulesRepo } from "./RulesRepo.js"
import * as Seed from "./Seed.js"

export const usage = "usage: nudging seed validate|apply DIR   (apply: configured by DATABASE_URL, DATABASE_SCHEMA, ...)"

export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

export type Command = { readonly action: "validate" | "apply"; readonly directory: string }

export const parse = (args: ReadonlyArray<string>): Command | undefined => {
  const [group, action, directory, ...rest] = args
  if (group !== "seed" || (action !== "validate" && action !== "apply") || directory === undefined || rest.length > 0) {
    return undefined
  }
  return { action, directory }
}

const summary = (seed: Seed.Seed) =>
  `${seed.rules.length} rules (${seed.rules.filter((r) => r.enabled).length} enabled), ${seed.kinds.length} kinds, ` +
  `languages ${[...new Set(seed.rules.flatMap((r) => Object.keys(r.templates)))].sort().join(", ")}`

/** Runs one command; the lines it printed. */
export const run = (command: Command, config: DatabaseConfig.DatabaseConfig) =>
  Effect.gen(function*() {
    const seed = yield* Seed.load(command.directory)
    if (command.action === "validate") {
      const line = `${command.directory}: valid, ${summary(seed)}`
      yield* Console.log(line)
      return line
    }
    const report = yield* Effect.flatMap(RulesRepo, (repo) => repo.apply(seed, new Date())).pipe(
      Effect.provide(RulesRepo.Default.pipe(
        Layer.provide(Layer.fresh(Database.layerWith({ service: Config.Service.name, migrations }, config)))
      ))
    )
    const line = `${command.directory}: applied to ${config.target.display} schema ${config.schema}: ${formatReport(report)}`
    yield* Console.log(line)
    return line
  })

/** The whole command line: `process.argv` and the environment. */
export const main = (args: ReadonlyArray<string> = process.argv.slice(2)) =>
  Effect.gen(function*() {
    const command = parse(args)
    if (command === undefined) return yield* new UsageError({ message: usage })
    const config = yield* DatabaseConfig.fromEnv(Config.Service.name)
    yield* run(command, config)
  })
