// The conformance runner: runs the suite, applies the skip list, compares against the checked-in
// list of passing cases and reports per folder.

import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { type Case, loadSuite, type Outcome, runCase } from "./suite.js"

const here = path.dirname(fileURLToPath(import.meta.url))
/** packages/rego/conformance (this module lives in packages/rego/{src,dist}/conformance). */
export const conformanceDir = path.resolve(here, "..", "..", "conformance")
export const skipFile = path.join(conformanceDir, "skip.json")
export const passingFile = path.join(conformanceDir, "passing.txt")

/** The core-language folders ("Tier 1" in the reference): every case must pass. */
export const TIER1_FOLDERS: ReadonlySet<string> = new Set(
  "keywordrefs withkeyword virtualdocs stringinterpolation eqexpr refheads every functions arithmetic disjunction comprehensions evaltermexpr nestedreferences varreferences comparisonexpr completedoc compositereferences partialobjectdoc elsekeyword planner-ir baseandvirtualdocs partialsetdoc defaultkeyword undos negation functionerrors inputvalues partialdocconstants sets assignments containskeyword indirectreferences compositebasedereference dataderef example fix1863 partialiter type helloworld embeddedvirtualdoc indexing topdowndynamicdispatch".split(
    " "
  )
)

export interface SkipList {
  /** Folder name to the reason every case in it is skipped. */
  readonly folders: Readonly<Record<string, string>>
  /** Case id to the reason it is skipped. */
  readonly cases: Readonly<Record<string, string>>
}

export const loadSkipList = (file = skipFile): SkipList => {
  if (!fs.existsSync(file)) return { folders: {}, cases: {} }
  const raw = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<SkipList>
  return { folders: raw.folders ?? {}, cases: raw.cases ?? {} }
}

export const loadPassing = (file = passingFile): Set<string> => {
  if (!fs.existsSync(file)) return new Set()
  return new Set(
    fs
      .readFileSync(file, "utf8")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "" && !l.startsWith("#"))
  )
}

export interface CaseResult {
  readonly c: Case
  readonly outcome: Outcome
}

export interface SuiteReport {
  readonly results: readonly CaseResult[]
  readonly passed: number
  readonly failed: number
  readonly skipped: number
  /** Cases in the passing list that did not pass (regressions). */
  readonly regressions: readonly CaseResult[]
}

export interface RunOptions {
  readonly folders?: readonly string[]
  readonly skip?: SkipList
  readonly passing?: ReadonlySet<string>
}

export const runSuite = (dir: string, o: RunOptions = {}): SuiteReport => {
  const skip = o.skip ?? loadSkipList()
  const passing = o.passing ?? loadPassing()
  const only = o.folders !== undefined && o.folders.length > 0 ? new Set(o.folders) : undefined
  const cases = loadSuite(dir).filter((c) => only === undefined || only.has(c.folder))
  const results: CaseResult[] = []
  let passed = 0
  let failed = 0
  let skipped = 0
  const regressions: CaseResult[] = []
  for (const c of cases) {
    const reason = skip.cases[c.id] ?? skip.folders[c.folder]
    const outcome: Outcome = reason !== undefined ? { status: "skip", reason } : runCase(c)
    results.push({ c, outcome })
    if (outcome.status === "pass") passed++
    else if (outcome.status === "fail") failed++
    else skipped++
    if (outcome.status !== "pass" && passing.has(c.id)) regressions.push({ c, outcome })
  }
  return { results, passed, failed, skipped, regressions }
}

/** Per-folder lines and the final `N passed, N failed, N skipped` line. */
export const formatReport = (r: SuiteReport, verbose = false): string => {
  const byFolder = new Map<string, { p: number; f: number; s: number }>()
  for (const { c, outcome } of r.results) {
    let e = byFolder.get(c.folder)
    if (e === undefined) byFolder.set(c.folder, (e = { p: 0, f: 0, s: 0 }))
    if (outcome.status === "pass") e.p++
    else if (outcome.status === "fail") e.f++
    else e.s++
  }
  const lines: string[] = []
  for (const [folder, e] of [...byFolder].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    lines.push(`${folder.padEnd(40)} ${String(e.p).padStart(4)} passed ${String(e.f).padStart(4)} failed ${String(e.s).padStart(4)} skipped`)
  }
  if (verbose) {
    for (const { c, outcome } of r.results) {
      if (outcome.status === "fail") lines.push(`FAIL ${c.id} (${c.note}): ${outcome.reason.split("\n")[0].slice(0, 400)}`)
    }
  }
  for (const { c } of r.regressions) lines.push(`REGRESSION ${c.id} (${c.note})`)
  const t1 = r.results.filter((x) => TIER1_FOLDERS.has(x.c.folder))
  if (t1.length > 0) lines.push(`tier 1 (core language): ${t1.filter((x) => x.outcome.status === "pass").length}/${t1.length} passed`)
  lines.push(`${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped`)
  return lines.join("\n")
}

/** Writes the ids of passing cases (sorted) to the checked-in list. */
export const writePassing = (r: SuiteReport, file = passingFile): void => {
  const ids = r.results.filter((x) => x.outcome.status === "pass").map((x) => x.c.id)
  ids.sort()
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, "# Conformance cases that pass; CI fails if one of them stops passing.\n# Regenerate with: rego conformance --write-passing\n" + ids.join("\n") + "\n")
}
