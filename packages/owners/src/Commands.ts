/**
 * The `owners` command: validate registry files, resolve an owner to JSON-LD, provision
 * identity-provider organizations. `runCli` returns the exit code instead of exiting, so tests
 * run it in-process with their own output, environment and HTTP client.
 *
 * Exit codes: 0 success; 1 invalid registry, owner not found or a failed sync; 2 usage or
 * configuration error.
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as HttpClient from "@effect/platform/HttpClient"
import { Context, Effect, Either, Layer, Option } from "effect"
import { parseArgs } from "node:util"
import { OwnersFileConfig, PlatformBaseUrl } from "./Config.js"
import { KeycloakOrganizations } from "./KeycloakOrganizations.js"
import { keycloakSettings } from "./KeycloakSettings.js"
import { toAgentNode } from "./JsonLd.js"
import { loadRegistry, registryFilesFor } from "./Loader.js"
import { type SyncReport, type SyncResult, syncOrganizations } from "./OrganizationSync.js"
import type { OwnersInvalid } from "./Problem.js"
import type { OwnerRegistry } from "./Registry.js"

/** Where the command writes: standard output for results, standard error for problems. */
export class CliOutput extends Context.Tag("@rec/owners/CliOutput")<CliOutput, {
  readonly out: (text: string) => Effect.Effect<void>
  readonly err: (text: string) => Effect.Effect<void>
}>() {
  static readonly process = Layer.succeed(CliOutput, {
    out: (text) => Effect.sync(() => void process.stdout.write(`${text}\n`)),
    err: (text) => Effect.sync(() => void process.stderr.write(`${text}\n`))
  })
}

export const USAGE = `Usage: owners <command> [options] [FILE...]

Commands:
  validate [FILE...]             check registry files (later files overlay earlier ones)
  resolve REFERENCE [FILE...]    print the owner an id, alias, DID or URL names, as JSON-LD
  sync-orgs [options] [FILE...]  ensure an identity-provider organization for every owner
                                 with organization.create: true

FILE... defaults to $OWNERS_FILE and its .local overlay when present.

resolve options:
  --platform-base-url URL        base of minted owner IRIs (env PLATFORM_BASE_URL,
                                 default http://localhost:8004)

sync-orgs options (each overrides its environment variable):
  -n, --dry-run                  print the plan, write nothing
  --base-url URL                 KEYCLOAK_BASE_URL
  --realm NAME                   KEYCLOAK_REALM
  --admin-realm NAME             KEYCLOAK_ADMIN_REALM
  --admin-client-id ID           KEYCLOAK_ADMIN_CLIENT_ID
  --admin-client-secret SECRET   KEYCLOAK_ADMIN_CLIENT_SECRET (prefer the env var)
  --admin-user NAME              KEYCLOAK_ADMIN_USER
  --admin-password PASSWORD      KEYCLOAK_ADMIN_PASSWORD (prefer the env var)

Exit status: 0 success, 1 invalid registry / not found / failed sync, 2 usage error.`

export const ExitCode = { ok: 0, failed: 1, usage: 2 } as const

type Requirements = CliOutput | FileSystem.FileSystem | HttpClient.HttpClient

export const runCli = (argv: ReadonlyArray<string>): Effect.Effect<number, never, Requirements> =>
  Effect.gen(function*() {
    const output = yield* CliOutput
    const [command, ...rest] = argv
    switch (command) {
      case "validate":
        return yield* withArgs(rest, {}, (args) => validate(args.positionals))
      case "resolve":
        return yield* withArgs(
          rest,
          { "platform-base-url": { type: "string" } },
          (args) => resolve(args.positionals, args.values["platform-base-url"])
        )
      case "sync-orgs":
        return yield* withArgs(rest, syncOptions, (args) => syncOrgs(args.positionals, args.values))
      case undefined:
      case "help":
      case "--help":
      case "-h":
        yield* (command === undefined ? output.err(USAGE) : output.out(USAGE))
        return command === undefined ? ExitCode.usage : ExitCode.ok
      default:
        return yield* usageError(`unknown command ${JSON.stringify(command)}`)
    }
  }).pipe(
    Effect.catchAllDefect((defect) =>
      Effect.flatMap(CliOutput, (output) => output.err(`owners: internal error: ${String(defect)}`)).pipe(
        Effect.as(ExitCode.failed)
      )
    )
  )

const syncOptions = {
  "dry-run": { type: "boolean", short: "n" },
  "base-url": { type: "string" },
  realm: { type: "string" },
  "admin-realm": { type: "string" },
  "admin-client-id": { type: "string" },
  "admin-client-secret": { type: "string" },
  "admin-user": { type: "string" },
  "admin-password": { type: "string" }
} as const

type OptionSpec = Record<string, { readonly type: "string" | "boolean"; readonly short?: string }>

interface ParsedArgs<O extends OptionSpec> {
  readonly positionals: ReadonlyArray<string>
  readonly values: { readonly [K in keyof O]?: O[K]["type"] extends "boolean" ? boolean : string }
}

const withArgs = <O extends OptionSpec, R>(
  argv: ReadonlyArray<string>,
  options: O,
  run: (args: ParsedArgs<O>) => Effect.Effect<number, never, R>
): Effect.Effect<number, never, R | CliOutput> => {
  const parsed = Either.try(() =>
    parseArgs({
      args: [...argv],
      options: { ...options, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true
    })
  )
  if (Either.isLeft(parsed)) {
    return usageError(parsed.left instanceof Error ? parsed.left.message : String(parsed.left))
  }
  const { positionals, values } = parsed.right
  if ((values as { help?: boolean }).help === true) {
    return Effect.flatMap(CliOutput, (output) => output.out(USAGE)).pipe(Effect.as(ExitCode.ok))
  }
  // parseArgs' result type cannot follow a generic option spec; `strict` has checked the
  // values against `options`.
  return run({ positionals, values: values as ParsedArgs<O>["values"] })
}

const usageError = (message: string) =>
  Effect.flatMap(CliOutput, (output) => output.err(`owners: ${message}\nRun "owners help" for usage.`)).pipe(
    Effect.as(ExitCode.usage)
  )

/** The files named on the command line, else `$OWNERS_FILE` and its overlay. */
const registryFiles = (positionals: ReadonlyArray<string>) =>
  positionals.length > 0
    ? Effect.succeed(Option.some([...positionals]))
    : OwnersFileConfig.pipe(
      Effect.orElseSucceed(() => Option.none<string>()),
      Effect.flatMap(Option.match({
        onNone: () => Effect.succeed(Option.none<Array<string>>()),
        onSome: (file) => Effect.map(registryFilesFor(file), Option.some)
      }))
    )

/** Loads the registry, printing every problem when it is invalid. */
const withRegistry = <R>(
  positionals: ReadonlyArray<string>,
  run: (registry: OwnerRegistry, files: ReadonlyArray<string>) => Effect.Effect<number, never, R>
): Effect.Effect<number, never, R | CliOutput | FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const files = yield* registryFiles(positionals)
    if (Option.isNone(files)) return yield* usageError("no registry files given (and OWNERS_FILE is not set)")
    const loaded = yield* Effect.either(loadRegistry(files.value))
    if (Either.isLeft(loaded)) {
      yield* reportInvalid(loaded.left, files.value)
      return ExitCode.failed
    }
    return yield* run(loaded.right, files.value)
  })

const reportInvalid = (error: OwnersInvalid, files: ReadonlyArray<string>) =>
  Effect.flatMap(CliOutput, (output) => {
    const count = error.problems.length
    const inFiles = new Set(error.problems.map((problem) => problem.file)).size
    return output.err([
      ...error.problems.map((problem) => problem.format()),
      `${count} problem${count === 1 ? "" : "s"} in ${inFiles} of ${files.length} file${files.length === 1 ? "" : "s"}`
    ].join("\n"))
  })

const validate = (positionals: ReadonlyArray<string>) =>
  withRegistry(positionals, (registry, files) =>
    Effect.gen(function*() {
      const output = yield* CliOutput
      const replaced = registry.entries.filter((entry) => entry.replaces.length > 0).length
      const added = files.length > 1
        ? registry.entries.filter((entry) => entry.source.file !== files[0] && entry.replaces.length === 0).length
        : 0
      const overlay = files.length > 1 ? `; overlays replaced ${replaced} and added ${added}` : ""
      yield* output.out(
        `ok: ${registry.size} owner${registry.size === 1 ? "" : "s"} from ${files.join(", ")}${overlay}; ` +
          `${registry.provisioned.length} with organization.create`
      )
      return ExitCode.ok
    }))

const resolve = (positionals: ReadonlyArray<string>, baseUrlFlag: string | undefined) =>
  Effect.gen(function*() {
    const output = yield* CliOutput
    const [reference, ...files] = positionals
    if (reference === undefined) return yield* usageError("resolve needs a REFERENCE (id, alias, DID or URL)")
    const configured = baseUrlFlag === undefined
      ? yield* Effect.either(PlatformBaseUrl)
      : Either.right<string>(baseUrlFlag)
    if (Either.isLeft(configured)) return yield* usageError(String(configured.left))
    const base = configured.right
    if (!URL.canParse(base)) return yield* usageError(`--platform-base-url must be an absolute URL, got ${base}`)
    return yield* withRegistry(files, (registry) =>
      Option.match(registry.lookup(reference), {
        onNone: () =>
          output.err(`owners: no owner with id, alias, DID or URL ${JSON.stringify(reference)}`).pipe(
            Effect.as(ExitCode.failed)
          ),
        onSome: (owner) =>
          output.out(JSON.stringify(toAgentNode(owner, { baseUrl: base }), null, 2)).pipe(Effect.as(ExitCode.ok))
      }))
  })

const syncOrgs = (
  positionals: ReadonlyArray<string>,
  flags: ParsedArgs<typeof syncOptions>["values"]
) =>
  withRegistry(positionals, (registry) =>
    Effect.gen(function*() {
      const output = yield* CliOutput
      const dryRun = flags["dry-run"] === true
      if (registry.provisioned.length === 0) {
        yield* output.out(`nothing to sync: no owner has organization.create: true`)
        return ExitCode.ok
      }
      const settings = yield* Effect.either(keycloakSettings({
        baseUrl: flags["base-url"],
        realm: flags.realm,
        adminRealm: flags["admin-realm"],
        adminClientId: flags["admin-client-id"],
        adminClientSecret: flags["admin-client-secret"],
        adminUser: flags["admin-user"],
        adminPassword: flags["admin-password"]
      }))
      if (Either.isLeft(settings)) return yield* usageError(settings.left.message)
      const report = yield* syncOrganizations(registry.owners, { dryRun }).pipe(
        Effect.provide(KeycloakOrganizations.layer(settings.right)),
        Effect.either
      )
      if (Either.isLeft(report)) {
        yield* output.err(`owners: sync-orgs: ${report.left.message}`)
        return ExitCode.failed
      }
      yield* printReport(report.right, settings.right.realm)
      return report.right.counts.failed > 0 ? ExitCode.failed : ExitCode.ok
    }))

const printReport = (report: SyncReport, realm: string) =>
  Effect.gen(function*() {
    const output = yield* CliOutput
    const width = Math.max(...report.results.map((result) => result.alias.length))
    if (report.dryRun) yield* output.out(`dry run: plan for realm ${realm}, nothing is written`)
    for (const result of report.results) {
      const line = `${label(result, report.dryRun).padEnd(13)} ${result.alias.padEnd(width)}  ${detail(result)}`
      yield* (result.outcome === "failed" ? output.err(line) : output.out(line))
    }
    if (report.notProvisioned.length > 0) {
      yield* output.out(`not provisioned (no organization.create): ${report.notProvisioned.join(", ")}`)
    }
    const { created, updated, skipped, failed } = report.counts
    yield* output.out(
      report.dryRun
        ? `summary (dry run): ${created} to create, ${updated} to update, ${skipped} unchanged`
        : `summary: ${created} created, ${updated} updated, ${skipped} skipped, ${failed} failed`
    )
  })

const label = (result: SyncResult, dryRun: boolean) =>
  dryRun
    ? { created: "would create", updated: "would update", skipped: "unchanged", failed: "failed" }[result.outcome]
    : result.outcome

const detail = (result: SyncResult): string => {
  if (result.error !== undefined) return result.error.message
  if (result.created !== undefined) {
    const attributes = Object.entries(result.created.attributes).map(([key, values]) => `${key}=${values.join(",")}`)
    return `name ${JSON.stringify(result.created.name)}; ${attributes.join(" ")}`
  }
  if (result.changes.length > 0) {
    return result.changes.map((change) => `${change.field}: ${change.from} -> ${change.to}`).join("; ")
  }
  return "up to date"
}
