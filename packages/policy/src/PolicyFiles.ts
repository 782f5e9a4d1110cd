/**
 * Reads a policy directory the way OPA reads a bundle directory:
 *
 * - every `*.rego` file below the directory is a module, except `*_test.rego` (unit tests are
 *   run by `rego test`, never served, so a broken test cannot take decisions down);
 * - every `data.json`, `data.yaml` or `data.yml` is placed at its directory's path below
 *   `data` (`policies/data.json` is the root, `policies/rec/mqtt/data.json` is `data.rec.mqtt`),
 *   and the documents are merged; two files setting the same non-object value is an error;
 * - entries whose name starts with `.` are skipped (editor swap files, `.git`, and the `..data`
 *   directory Kubernetes uses to swap ConfigMap volumes atomically); symbolic links are followed.
 *
 * Files are read in sorted order so that load errors and module order are deterministic.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Yaml from "yaml"
import { type LoadProblem, PolicyLoadError } from "./Decision.js"
import type { PolicyModule, PolicySources } from "./PolicyCompiler.js"

const dataFileNames = new Set(["data.json", "data.yaml", "data.yml"])

export const isTestFile = (name: string): boolean => name.endsWith("_test.rego")

interface Listing {
  readonly rego: Array<string>
  readonly data: Array<string>
}

const walk = async (root: string, relative: string, out: Listing): Promise<void> => {
  const entries = await fs.readdir(path.join(root, relative), { withFileTypes: true })
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const entry of entries) {
    if (entry.name.startsWith(".")) continue
    const rel = relative === "" ? entry.name : `${relative}/${entry.name}`
    const stat = entry.isSymbolicLink() ? await fs.stat(path.join(root, rel)) : entry
    if (stat.isDirectory()) {
      await walk(root, rel, out)
    } else if (stat.isFile()) {
      if (entry.name.endsWith(".rego") && !isTestFile(entry.name)) out.rego.push(rel)
      else if (dataFileNames.has(entry.name)) out.data.push(rel)
    }
  }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** Merges `value` into `target` at `at`; returns the path of a conflict, if any. */
const mergeInto = (target: Record<string, unknown>, value: Record<string, unknown>, at: string): string | undefined => {
  for (const [key, v] of Object.entries(value)) {
    const here = at === "" ? key : `${at}.${key}`
    const existing = target[key]
    if (existing === undefined) {
      target[key] = v
    } else if (isRecord(existing) && isRecord(v)) {
      const copy = { ...existing }
      const conflict = mergeInto(copy, v, here)
      if (conflict !== undefined) return conflict
      target[key] = copy
    } else {
      return here
    }
  }
  return undefined
}

const nest = (segments: ReadonlyArray<string>, value: unknown): Record<string, unknown> =>
  segments.reduceRight<Record<string, unknown>>((inner, key) => ({ [key]: inner }), value as Record<string, unknown>)

const loadError = (message: string, problems: ReadonlyArray<LoadProblem>) => new PolicyLoadError({ message, problems })

const describe = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

/** Reads the modules and data of a policy directory. */
export const read = (directory: string): Effect.Effect<PolicySources, PolicyLoadError> =>
  Effect.tryPromise({
    try: async () => {
      const listing: Listing = { rego: [], data: [] }
      await walk(directory, "", listing)
      const modules: Array<PolicyModule> = []
      for (const rel of listing.rego) {
        modules.push({ path: rel, source: await fs.readFile(path.join(directory, rel), "utf8") })
      }
      const data: Record<string, unknown> = {}
      const problems: Array<LoadProblem> = []
      for (const rel of listing.data) {
        const text = await fs.readFile(path.join(directory, rel), "utf8")
        let document: unknown
        try {
          document = rel.endsWith(".json") ? JSON.parse(text) : Yaml.parse(text)
        } catch (cause) {
          problems.push({ file: rel, message: `cannot parse ${rel}: ${describe(cause)}` })
          continue
        }
        const segments = path.posix.dirname(rel) === "." ? [] : path.posix.dirname(rel).split("/")
        if (segments.length === 0 && !isRecord(document)) {
          problems.push({ file: rel, message: `${rel} must hold an object (it is the root of data)` })
          continue
        }
        const conflict = mergeInto(data, nest(segments, document), "")
        if (conflict !== undefined) problems.push({ file: rel, message: `${rel} sets data.${conflict}, which another data file sets too` })
      }
      return { modules, data, problems }
    },
    catch: (cause) => loadError(`cannot read the policy directory ${directory}: ${describe(cause)}`, [])
  }).pipe(
    Effect.flatMap(({ modules, data, problems }) =>
      problems.length > 0
        ? Effect.fail(loadError(problems.map((p) => p.message).join("; "), problems))
        : modules.length === 0
        ? Effect.fail(loadError(`the policy directory ${directory} has no policy (*.rego) files`, []))
        : Effect.succeed<PolicySources>({ modules, data })
    )
  )
