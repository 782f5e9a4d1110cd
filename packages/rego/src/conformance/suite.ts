// Runs OPA's Rego v1 conformance suite (JSON files, read in place) against this engine.
//
// Semantics follow OPA's own runner (v1/topdown/exported_test.go): modules are named
// `test-N.rego`; results are compared as sets of binding objects after JSON conversion
// (`sort_bindings` sorts array bindings first); `want_error_code` must match exactly and
// `want_error` must be a substring of the error text; `strict_error` turns on strict builtin
// errors; any unexpected error fails the case.

import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parse as parseLossless } from "lossless-json"
import { testingBuiltins } from "../builtins/index.js"
import { RegoCompileError, RegoError } from "../errors.js"
import { toJSON } from "../json.js"
import { Rego, parseValue } from "../rego.js"
import { type Value, compare, equals, fromJSON, hashKey, parseNumberLiteral, RegoSet } from "../value.js"

export interface Case {
  /** Stable id: `<folder>/<file without extension>#<index in file>` (notes are not unique). */
  readonly id: string
  readonly folder: string
  readonly file: string
  readonly note: string
  readonly query: string
  readonly modules: readonly string[]
  readonly data?: unknown
  readonly input?: unknown
  readonly input_term?: string
  readonly want_result?: ReadonlyArray<Record<string, unknown>>
  readonly want_error?: string
  readonly want_error_code?: string
  readonly strict_error?: boolean
  readonly sort_bindings?: boolean
  readonly env?: Readonly<Record<string, string>>
}

export type Outcome = { readonly status: "pass" } | { readonly status: "fail"; readonly reason: string } | { readonly status: "skip"; readonly reason: string }

const here = path.dirname(fileURLToPath(import.meta.url))
/** The repository root (packages/rego/{src,dist}/conformance -> four levels up). */
const repoRoot = path.resolve(here, "..", "..", "..", "..")

/** Where the suite is: $REGO_CONFORMANCE_DIR, <repo>/../shared/conformance/opa-v1, /work/shared/conformance/opa-v1. */
export const locateSuite = (): string | undefined => {
  const candidates = [process.env.REGO_CONFORMANCE_DIR, path.resolve(repoRoot, "..", "shared", "conformance", "opa-v1"), "/work/shared/conformance/opa-v1"]
  for (const c of candidates) if (c !== undefined && c !== "" && fs.existsSync(c) && fs.statSync(c).isDirectory()) return c
  return undefined
}

const parseFile = (text: string): { cases?: Array<Record<string, unknown>> } =>
  // Files with long digit runs may hold numbers beyond 2^53: read those exactly.
  /\d{16,}/.test(text)
    ? (parseLossless(text, null, (s: string) => parseNumberLiteral(s) as unknown as number) as { cases?: Array<Record<string, unknown>> })
    : (JSON.parse(text) as { cases?: Array<Record<string, unknown>> })

/** Every case of the suite, in folder and file order. */
export const loadSuite = (dir: string): Case[] => {
  const out: Case[] = []
  for (const folder of fs.readdirSync(dir).sort()) {
    const fdir = path.join(dir, folder)
    if (!fs.statSync(fdir).isDirectory()) continue
    for (const file of fs.readdirSync(fdir).sort()) {
      const doc = parseFile(fs.readFileSync(path.join(fdir, file), "utf8"))
      // Ids drop ".json" only: the suite has both test-casts-0828.json and .yml.
      const base = file.replace(/\.json$/, "")
      for (const [i, c] of (doc.cases ?? []).entries()) {
        out.push({
          id: `${folder}/${base}#${i}`,
          folder,
          file,
          note: String(c.note),
          query: String(c.query),
          modules: (c.modules as string[] | undefined) ?? [],
          data: c.data,
          input: c.input,
          input_term: c.input_term as string | undefined,
          want_result: c.want_result as Array<Record<string, unknown>> | undefined,
          want_error: c.want_error as string | undefined,
          want_error_code: c.want_error_code as string | undefined,
          strict_error: c.strict_error as boolean | undefined,
          sort_bindings: c.sort_bindings as boolean | undefined,
          env: c.env as Record<string, string> | undefined
        })
      }
    }
  }
  return out
}

/** A binding value as OPA's runner sees it: JSON-converted, then read back as a Rego value. */
const normalize = (v: Value, sortArrays: boolean): Value => {
  const j = fromJSON(toJSON(v))
  if (sortArrays && Array.isArray(j)) return [...j].sort(compare)
  return j
}

const bindingsKey = (b: ReadonlyMap<string, Value>): string =>
  hashKey(Object.fromEntries([...b].map(([k, v]) => [k, v])) as unknown as Value)

const describe = (results: ReadonlyArray<ReadonlyMap<string, Value>>): string =>
  JSON.stringify(results.map((r) => Object.fromEntries([...r].map(([k, v]) => [k, toJSON(v)]))), (_k, v) => (typeof v === "bigint" ? v.toString() : v))

/** OPA runs its suite with its test harness's builtins (test.sleep). */
const suiteBuiltins = testingBuiltins()

/** Runs one case. Never throws. */
export const runCase = (c: Case): Outcome => {
  const wantsError = c.want_error !== undefined || c.want_error_code !== undefined
  let got: Array<Map<string, Value>>
  try {
    const rego = Rego.compile({ modules: c.modules.map((source, i) => ({ file: `test-${i}.rego`, source })), data: c.data, builtins: suiteBuiltins })
    const input = c.input_term !== undefined ? parseValue(c.input_term) : c.input === undefined ? undefined : fromJSON(c.input)
    const q = rego.prepare(c.query)
    const results = q.evaluate(input, { strictBuiltinErrors: c.strict_error === true, env: c.env, limits: { maxSteps: 50_000_000, timeoutMs: 20_000 } })
    got = results.map((r) => new Map(Object.entries(r).map(([k, v]) => [k, normalize(fromJSON(v), c.sort_bindings === true)])))
  } catch (e) {
    const err = e instanceof RegoCompileError ? e : e instanceof RegoError ? e : undefined
    if (err === undefined) return { status: "fail", reason: `crash: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}` }
    if (!wantsError) return { status: "fail", reason: `unexpected error: ${err.message}` }
    if (c.want_error_code !== undefined && err.code !== c.want_error_code) return { status: "fail", reason: `want code ${c.want_error_code}, got ${err.message}` }
    if (c.want_error !== undefined && !err.message.includes(c.want_error)) return { status: "fail", reason: `want error containing ${JSON.stringify(c.want_error)}, got ${err.message}` }
    return { status: "pass" }
  }
  if (wantsError) return { status: "fail", reason: `want error ${c.want_error_code ?? ""} ${c.want_error ?? ""}, got results ${describe(got)}` }
  const want = (c.want_result ?? []).map((b) => new Map(Object.entries(b).map(([k, v]) => [k, fromJSON(v)])))
  const wantKeys = new Set(want.map(bindingsKey))
  const gotKeys = new Set(got.map(bindingsKey))
  let same = wantKeys.size === gotKeys.size
  if (same) for (const k of wantKeys) if (!gotKeys.has(k)) same = false
  if (!same && !setsEqual(want, got)) return { status: "fail", reason: `want ${describe(want)}, got ${describe(got)}` }
  return { status: "pass" }
}

/** Structural comparison when hash keys differ only in number spelling (1 vs 1.0). */
const setsEqual = (a: ReadonlyArray<ReadonlyMap<string, Value>>, b: ReadonlyArray<ReadonlyMap<string, Value>>): boolean => {
  const toSet = (xs: ReadonlyArray<ReadonlyMap<string, Value>>): RegoSet => RegoSet.of(xs.map((m) => Object.fromEntries(m) as unknown as Value))
  return equals(toSet(a), toSet(b))
}
