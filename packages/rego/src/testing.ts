// The policy test runner (`rego test`, like `opa test`): every rule named `test_*` in every
// package is a test; it passes when it evaluates to a value other than false. Rules named
// `todo_test_*` are reported as skipped. Each test runs with no input and its own evaluation
// (limits, print output), so one test cannot affect another.

import type { Loc } from "./ast.js"
import { type Location, RegoError } from "./errors.js"
import type { Limits } from "./eval/context.js"
import type { Rego } from "./rego.js"

export type TestStatus = "pass" | "fail" | "error" | "skip"

export interface TestResult {
  /** `data.<package>.<rule>`. */
  readonly name: string
  readonly pkg: string
  readonly rule: string
  readonly location: Location
  readonly status: TestStatus
  /** Why it failed: "undefined", "false", or the error. */
  readonly reason?: string
  readonly error?: RegoError
  readonly durationMs: number
  /** Lines written by print() while the test ran. */
  readonly output: readonly string[]
}

export interface TestOptions {
  /** Only tests whose name (`data.pkg.test_x`) matches (a RegExp, or the `Regexp` of `@rec/rego/re2/regexp`). */
  readonly filter?: { test(name: string): boolean }
  readonly limits?: Limits
}

interface TestRule {
  readonly pkg: readonly string[]
  readonly rule: string
  readonly loc: Loc
}

/** Test rules in source order (one entry per name, at its first definition). */
export const findTests = (rego: Rego): TestRule[] => {
  const out: TestRule[] = []
  const seen = new Set<string>()
  for (const m of rego.modules()) {
    for (const r of m.rules) {
      const head = r.head.ref[0]
      if (r.head.ref.length !== 1 || head.type !== "var" || r.head.args !== undefined) continue
      if (!head.name.startsWith("test_") && !head.name.startsWith("todo_test_")) continue
      const key = [...m.pkg, head.name].join(".")
      if (seen.has(key)) continue
      seen.add(key)
      out.push({ pkg: m.pkg, rule: head.name, loc: r.loc })
    }
  }
  return out
}

export const runTests = (rego: Rego, options: TestOptions = {}): TestResult[] => {
  const results: TestResult[] = []
  for (const t of findTests(rego)) {
    const name = `data.${[...t.pkg, t.rule].join(".")}`
    if (options.filter !== undefined && !options.filter.test(name)) continue
    const location = { file: t.loc.file, row: t.loc.row, col: t.loc.col }
    const base = { name, pkg: t.pkg.join("."), rule: t.rule, location }
    if (t.rule.startsWith("todo_")) {
      results.push({ ...base, status: "skip", durationMs: 0, output: [] })
      continue
    }
    const output: string[] = []
    const start = performance.now()
    try {
      const v = rego.prepareRule([...t.pkg, t.rule]).evaluateValue(undefined, {
        print: (msg, loc) => output.push(loc === undefined ? msg : `${loc.file}:${loc.row}: ${msg}`),
        ...(options.limits !== undefined ? { limits: options.limits } : {})
      })
      const durationMs = performance.now() - start
      if (v === undefined) results.push({ ...base, status: "fail", reason: "undefined", durationMs, output })
      else if (v === false) results.push({ ...base, status: "fail", reason: "false", durationMs, output })
      else results.push({ ...base, status: "pass", durationMs, output })
    } catch (e) {
      const durationMs = performance.now() - start
      if (!(e instanceof RegoError)) throw e
      results.push({ ...base, status: "error", reason: e.format(), error: e, durationMs, output })
    }
  }
  return results
}

const ms = (d: number): string => (d < 1 ? `${(d * 1000).toFixed(0)}µs` : `${d.toFixed(1)}ms`)

/** Text report in the style of `opa test`: failures with details (every test when verbose), then totals. */
export const formatTestReport = (results: readonly TestResult[], verbose = false): string => {
  const lines: string[] = []
  let file = ""
  for (const r of results) {
    if (!verbose && (r.status === "pass" || r.status === "skip")) continue
    if (r.location.file !== file) {
      file = r.location.file
      lines.push(`${file}:`)
    }
    const label = r.status === "pass" ? "PASS" : r.status === "fail" ? "FAIL" : r.status === "error" ? "ERROR" : "SKIPPED"
    lines.push(`${r.name}: ${label} (${ms(r.durationMs)})`)
    if (r.status === "fail") lines.push(`  ${r.location.file}:${r.location.row}: the test is ${r.reason === "false" ? "false" : "undefined"}`)
    if (r.status === "error") lines.push(`  ${r.reason ?? ""}`)
    if (r.status !== "pass" && r.output.length > 0) for (const o of r.output) lines.push(`  ${o}`)
  }
  const count = (s: TestStatus): number => results.filter((r) => r.status === s).length
  const total = results.length
  if (lines.length > 0) lines.push("-".repeat(80))
  const summary: string[] = []
  if (count("pass") > 0) summary.push(`PASS: ${count("pass")}/${total}`)
  if (count("fail") > 0) summary.push(`FAIL: ${count("fail")}/${total}`)
  if (count("error") > 0) summary.push(`ERROR: ${count("error")}/${total}`)
  if (count("skip") > 0) summary.push(`SKIPPED: ${count("skip")}/${total}`)
  if (total === 0) summary.push("no tests found")
  lines.push(...summary)
  return lines.join("\n")
}
