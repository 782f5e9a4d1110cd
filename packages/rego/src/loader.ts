// Loading a policy directory: every `*.rego` file below it is a module, and every `data.json`,
// `data.yaml` or `data.yml` is placed at its directory's path below `data`
// (`dir/data.json` is the root document, `dir/rec/mqtt/data.json` is `data.rec.mqtt`).
// Modules are named by their path relative to the directory, so errors read `rec/mqtt/acl.rego:3`.

import * as fs from "node:fs"
import * as path from "node:path"
import { parse as parseLossless } from "lossless-json"
import { parse as parseYAML } from "yaml"
import type { ModuleSource } from "./compiler/compile.js"
import { RegoCompileError, RegoError } from "./errors.js"
import { parseNumberLiteral } from "./value.js"

export interface LoadedDirectory {
  readonly modules: ModuleSource[]
  /** The merged data document (plain JSON values; big numbers as bigint). */
  readonly data: Record<string, unknown>
  /** Files read, relative to the directory. */
  readonly files: string[]
}

export interface LoadOptions {
  /** Leave out `*_test.rego` files (a policy service does not load unit tests). */
  readonly skipTests?: boolean
}

const DATA_FILES = new Set(["data.json", "data.yaml", "data.yml"])

export const isTestFile = (name: string): boolean => name.endsWith("_test.rego")

const walk = (root: string, rel: string, out: string[]): void => {
  const entries = fs.readdirSync(path.join(root, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const e of entries) {
    if (e.name.startsWith(".")) continue
    const r = rel === "" ? e.name : `${rel}/${e.name}`
    if (e.isDirectory()) walk(root, r, out)
    else if (e.isFile() && (e.name.endsWith(".rego") || DATA_FILES.has(e.name))) out.push(r)
  }
}

const isPlainObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x)

/** Parses JSON keeping integers beyond 2^53 exact (as bigint). */
export const parseJSONExact = (text: string): unknown =>
  /\d{16,}/.test(text) ? parseLossless(text, null, (s: string) => parseNumberLiteral(s) as unknown as number) : JSON.parse(text)

const merge = (target: Record<string, unknown>, source: Record<string, unknown>, at: string, file: string): void => {
  for (const [k, v] of Object.entries(source)) {
    const existing = target[k]
    if (existing === undefined) target[k] = v
    else if (isPlainObject(existing) && isPlainObject(v)) merge(existing, v, `${at}.${k}`, file)
    else throw new RegoCompileError([new RegoError("rego_compile_error", `data conflict at ${at}.${k}`, { file, row: 1, col: 1 })])
  }
}

const readData = (file: string, rel: string): Record<string, unknown> => {
  const text = fs.readFileSync(file, "utf8")
  let value: unknown
  try {
    value = rel.endsWith(".json") ? parseJSONExact(text) : parseYAML(text)
  } catch (e) {
    throw new RegoCompileError([new RegoError("rego_parse_error", e instanceof Error ? e.message.split("\n")[0] : String(e), { file: rel, row: 1, col: 1 })])
  }
  if (value === null || value === undefined) return {}
  if (!isPlainObject(value)) throw new RegoCompileError([new RegoError("rego_parse_error", "a data file must hold an object", { file: rel, row: 1, col: 1 })])
  return value
}

/** Reads the modules and data of a policy directory (throws RegoCompileError for bad data files). */
export const loadDirectory = (dir: string, options: LoadOptions = {}): LoadedDirectory => {
  const files: string[] = []
  if (fs.statSync(dir).isFile()) {
    const name = path.basename(dir)
    return { modules: [{ file: name, source: fs.readFileSync(dir, "utf8") }], data: {}, files: [name] }
  }
  walk(dir, "", files)
  const modules: ModuleSource[] = []
  const data: Record<string, unknown> = {}
  const used: string[] = []
  for (const rel of files) {
    const abs = path.join(dir, rel)
    if (rel.endsWith(".rego")) {
      if (options.skipTests === true && isTestFile(rel)) continue
      modules.push({ file: rel, source: fs.readFileSync(abs, "utf8") })
    } else {
      const segs = rel.split("/").slice(0, -1)
      let target = data
      for (const s of segs) {
        const next = target[s]
        if (next === undefined) target = target[s] = {}
        else if (isPlainObject(next)) target = next
        else throw new RegoCompileError([new RegoError("rego_compile_error", `data conflict at data.${segs.join(".")}`, { file: rel, row: 1, col: 1 })])
      }
      merge(target, readData(abs, rel), segs.length === 0 ? "data" : `data.${segs.join(".")}`, rel)
    }
    used.push(rel)
  }
  return { modules, data, files: used }
}
