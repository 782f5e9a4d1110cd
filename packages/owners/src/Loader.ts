/**
 * Loading the registry: `owners.yaml`, then `owners.local.yaml` (or any list of files, later
 * ones overlaying earlier ones). Each file is checked against the schema; the merged registry
 * is then checked as a whole. Every problem of every file is reported at once, each with its
 * file, line, column and JSON path.
 *
 * Overlay rule: an entry in a later file replaces the earlier entry with the same id as a
 * whole (no field-by-field merge, so an overlay can drop a `did` or withdraw an
 * organization with `create: false`); entries with new ids are appended.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect, Either, Option, Schema } from "effect"
import * as path from "node:path"
import { Owner, OwnersFile } from "./OwnerSchema.js"
import { OwnersInvalid, Problem, type JsonPath, type ProblemRule, sortProblems } from "./Problem.js"
import { OwnerRegistry, type RegistryEntry, normalizeUrl } from "./Registry.js"
import { schemaViolations } from "./SchemaIssues.js"
import { parseYaml, type YamlSource } from "./YamlSource.js"

/** A registry file's name and contents. */
export interface OwnersSource {
  readonly file: string
  readonly text: string
}

/** One file after the schema check: its valid entries, and what is wrong with the rest. */
export interface CheckedFile {
  readonly file: string
  readonly entries: ReadonlyArray<CheckedEntry>
  readonly problems: ReadonlyArray<Problem>
}

/** A schema-valid entry and where it is. */
export interface CheckedEntry {
  readonly owner: Owner
  readonly index: number
  readonly yaml: YamlSource
}

const parseOptions = { errors: "all", onExcessProperty: "error" } as const
const decodeFile = Schema.decodeUnknownEither(OwnersFile, parseOptions)
const decodeOwner = Schema.decodeUnknownOption(Owner, parseOptions)

/** Parses one registry file and checks it against the schema. */
export const checkFile = ({ file, text }: OwnersSource): CheckedFile => {
  const yaml = parseYaml(file, text)
  if (yaml.errors.length > 0) {
    return {
      file,
      entries: [],
      problems: yaml.errors.map((error) =>
        new Problem({ file, ...error.position, path: [], rule: "yaml", message: `invalid YAML: ${error.message}` })
      )
    }
  }
  const decoded = decodeFile(yaml.value)
  if (Either.isRight(decoded)) {
    return {
      file,
      entries: decoded.right.owners.map((owner, index) => ({ owner, index, yaml })),
      problems: []
    }
  }
  const problems = schemaViolations(decoded.left.issue).map(({ path, rule, message }) =>
    problemAt(yaml, path, rule, message, rule === "additionalProperties" ? "key" : "value")
  )
  // Keep the entries that are valid on their own, so the registry-wide checks still run on
  // them and one broken entry does not hide a duplicate id elsewhere.
  const raw = (yaml.value as { owners?: unknown } | null | undefined)?.owners
  const entries = Array.isArray(raw)
    ? raw.flatMap((candidate, index) =>
      Option.match(decodeOwner(candidate), {
        onNone: () => [],
        onSome: (owner) => [{ owner, index, yaml }]
      })
    )
    : []
  return { file, entries, problems }
}

const problemAt = (
  yaml: YamlSource,
  path: JsonPath,
  rule: ProblemRule,
  message: string,
  at: "key" | "value" = "value"
) => new Problem({ file: yaml.file, ...yaml.positionOf(path, at), path, rule, message })

const ownerPath = (entry: CheckedEntry, ...rest: JsonPath): JsonPath => ["owners", entry.index, ...rest]

const where = (entry: CheckedEntry, ...rest: JsonPath): string => {
  const { line } = entry.yaml.positionOf(ownerPath(entry, ...rest))
  return `${entry.yaml.file}:${line}`
}

/**
 * Merges checked files in order (later files replace entries by id) and checks the result:
 * ids unique within each file, ids and aliases unique across the registry, no DID or URL
 * shared by two owners, no organization attribute that would override the role.
 */
export const mergeFiles = (files: ReadonlyArray<CheckedFile>): Either.Either<OwnerRegistry, OwnersInvalid> => {
  const problems: Array<Problem> = files.flatMap((file) => file.problems)
  const merged = new Map<string, { entry: CheckedEntry; replaces: Array<string> }>()

  for (const file of files) {
    const seen = new Map<string, CheckedEntry>()
    for (const entry of file.entries) {
      const first = seen.get(entry.owner.id)
      if (first !== undefined) {
        problems.push(problemAt(
          entry.yaml,
          ownerPath(entry, "id"),
          "duplicate-id",
          `id ${JSON.stringify(entry.owner.id)} is already used by $.owners[${first.index}] (${
            where(first, "id")
          }); to replace an entry, put it in an overlay file`
        ))
        continue
      }
      seen.set(entry.owner.id, entry)
      const previous = merged.get(entry.owner.id)
      merged.set(entry.owner.id, {
        entry,
        replaces: previous === undefined ? [] : [...previous.replaces, previous.entry.yaml.file]
      })
    }
  }
  const entries = [...merged.values()]

  // Ids first, so that an alias is reported as clashing with an id wherever that id is.
  const keys = new Map<string, { entry: CheckedEntry; aliasIndex?: number }>()
  for (const { entry } of entries) keys.set(entry.owner.id, { entry })
  for (const { entry } of entries) {
    entry.owner.aliases.forEach((alias, aliasIndex) => {
      const holder = keys.get(alias)
      if (holder === undefined) {
        keys.set(alias, { entry, aliasIndex })
        return
      }
      const message = holder.entry === entry
        ? holder.aliasIndex === undefined
          ? `alias ${JSON.stringify(alias)} repeats the owner's own id`
          : `alias ${JSON.stringify(alias)} is listed twice`
        : holder.aliasIndex === undefined
        ? `alias ${JSON.stringify(alias)} is already the id of owner ${JSON.stringify(holder.entry.owner.id)} (${
          where(holder.entry, "id")
        })`
        : `alias ${JSON.stringify(alias)} is already an alias of owner ${JSON.stringify(holder.entry.owner.id)} (${
          where(holder.entry, "aliases", holder.aliasIndex)
        })`
      problems.push(problemAt(entry.yaml, ownerPath(entry, "aliases", aliasIndex), "duplicate-alias", message))
    })
  }

  const unique = (field: "did" | "url", rule: ProblemRule, normalize: (value: string) => string) => {
    const holders = new Map<string, CheckedEntry>()
    for (const { entry } of entries) {
      const value = entry.owner[field]
      if (value === undefined) continue
      const holder = holders.get(normalize(value))
      if (holder === undefined) {
        holders.set(normalize(value), entry)
        continue
      }
      problems.push(problemAt(
        entry.yaml,
        ownerPath(entry, field),
        rule,
        `${field} ${JSON.stringify(value)} is already the ${field} of owner ${JSON.stringify(holder.owner.id)} (${
          where(holder, field)
        }); each ${field} identifies one owner`
      ))
    }
  }
  unique("did", "duplicate-did", (did) => did)
  unique("url", "duplicate-url", normalizeUrl)

  for (const { entry } of entries) {
    if (entry.owner.organization?.attributes?.["type"] !== undefined) {
      problems.push(problemAt(
        entry.yaml,
        ownerPath(entry, "organization", "attributes", "type"),
        "reserved-attribute",
        "the organization attribute \"type\" is set from organization.role; set the role instead",
        "key"
      ))
    }
  }

  if (problems.length > 0) {
    return Either.left(new OwnersInvalid({ problems: sortProblems(problems, files.map((file) => file.file)) }))
  }
  return Either.right(
    new OwnerRegistry(entries.map(({ entry, replaces }): RegistryEntry => ({
      owner: entry.owner,
      source: { file: entry.yaml.file, index: entry.index, line: entry.yaml.positionOf(ownerPath(entry)).line },
      replaces
    })))
  )
}

/** Checks and merges registry files given as text, in overlay order. */
export const decodeRegistry = (
  sources: ReadonlyArray<OwnersSource>
): Either.Either<OwnerRegistry, OwnersInvalid> => mergeFiles(sources.map(checkFile))

/**
 * Reads, checks and merges registry files in overlay order. A file that cannot be read is
 * reported like any other problem, next to the problems of the files that could.
 */
export const loadRegistry = Effect.fn("Owners.loadRegistry")(function*(files: ReadonlyArray<string>) {
  const fs = yield* FileSystem.FileSystem
  yield* Effect.annotateCurrentSpan("owners.files", files.join(" "))
  const checked = yield* Effect.forEach(files, (file) =>
    fs.readFileString(file).pipe(
      Effect.map((text) => checkFile({ file, text })),
      Effect.catchAll((error) =>
        Effect.succeed<CheckedFile>({
          file,
          entries: [],
          problems: [
            new Problem({
              file,
              path: [],
              rule: "file",
              message: error._tag === "SystemError" && error.reason === "NotFound"
                ? "file not found"
                : `cannot read file: ${error.message}`
            })
          ]
        })
      )
    ))
  return yield* mergeFiles(checked)
})

/** `config/owners.yaml` -> `config/owners.local.yaml` */
export const overlayPathOf = (file: string): string => {
  const extension = path.extname(file)
  return extension === ""
    ? `${file}.local`
    : `${file.slice(0, -extension.length)}.local${extension}`
}

/**
 * The files to load for a base registry file: the file itself, then its `.local` overlay
 * when one exists next to it.
 */
export const registryFilesFor = Effect.fn("Owners.registryFilesFor")(function*(file: string) {
  const fs = yield* FileSystem.FileSystem
  const overlay = overlayPathOf(file)
  const hasOverlay = yield* fs.exists(overlay).pipe(Effect.orElseSucceed(() => false))
  return hasOverlay ? [file, overlay] : [file]
})
