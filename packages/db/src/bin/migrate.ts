#!/usr/bin/env node
/**
 * Generic migration command:
 *
 *   node packages/db/dist/bin/migrate.js --module <migrations module> [--service <name>] [up|status]
 *
 * The module exports `migrations` (or a default export) with the service's migration record
 * and, optionally, `service`. Configuration comes from the environment (`DATABASE_URL`, ...).
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import * as Cli from "../Cli.js"
import { InvalidDatabaseConfig } from "../Errors.js"
import type { MigrationRecord } from "../Migrations.js"

const usage = "usage: migrate.js --module <path> [--service <name>] [up|status]"

const program = Effect.gen(function*() {
  const args = process.argv.slice(2)
  const flag = (name: string) => {
    const i = args.indexOf(name)
    if (i === -1) return undefined
    const value = args[i + 1]
    args.splice(i, 2)
    return value
  }
  const modulePath = flag("--module")
  const serviceFlag = flag("--service")
  if (modulePath === undefined) return yield* new InvalidDatabaseConfig({ message: usage })
  const mod = yield* Effect.tryPromise({
    try: () => import(pathToFileURL(path.resolve(modulePath)).href) as Promise<Record<string, unknown>>,
    catch: (cause) => new InvalidDatabaseConfig({ message: `cannot import ${modulePath}: ${String(cause)}` })
  })
  const migrations = (mod["migrations"] ?? mod["default"]) as MigrationRecord | undefined
  const service = serviceFlag ?? (typeof mod["service"] === "string" ? mod["service"] : undefined)
  if (migrations === undefined || typeof migrations !== "object") {
    return yield* new InvalidDatabaseConfig({ message: `${modulePath} exports no "migrations" record` })
  }
  if (service === undefined) {
    return yield* new InvalidDatabaseConfig({ message: `--service is required (${modulePath} exports no "service")` })
  }
  yield* Cli.main({ service, migrations }, args)
})

NodeRuntime.runMain(program)
