// The `rego` command line:
//
//   rego eval -d DIR [-d DIR...] [-i input.json] [--strict] [--steps N] [--timeout MS] QUERY
//   rego test [-v] [--run REGEX] DIR...
//   rego check DIR...
//   rego conformance [--folder NAME...] [--write-passing] [-v]
//
// Exit codes: 0 success; 1 test failures, compile errors, evaluation errors or conformance
// regressions; 2 usage errors or a missing conformance suite.

import * as fs from "node:fs"
import { RegoCompileError, RegoError } from "./errors.js"
import { stringifyJSON, type Json } from "./json.js"
import { loadDirectory, parseJSONExact } from "./loader.js"
import { parseQuery } from "./parser.js"
import { testingBuiltins } from "./builtins/index.js"
import type { BuiltinRegistry } from "./builtins/registry.js"
import { Regexp, RegexpSyntaxError } from "./re2/regexp.js"
import { DEFAULT_LIMITS, Rego } from "./rego.js"
import { formatTestReport, runTests } from "./testing.js"
import { formatReport, runSuite, writePassing } from "./conformance/runner.js"
import { locateSuite } from "./conformance/suite.js"
import type { Limits } from "./eval/context.js"

const USAGE = `usage:
  rego eval -d DIR [-d DIR...] [-i input.json] [--strict] [--steps N] [--timeout MS] QUERY
  rego test [-v] [--run REGEX] DIR...
  rego check DIR...
  rego conformance [--folder NAME...] [--write-passing] [-v]`

class UsageError extends Error {}

interface Args {
  readonly positional: string[]
  readonly flags: Map<string, string[]>
  readonly switches: Set<string>
}

const VALUE_FLAGS = new Set(["-d", "--data", "-i", "--input", "--run", "--steps", "--timeout", "--folder"])

const parseArgs = (argv: readonly string[]): Args => {
  const positional: string[] = []
  const flags = new Map<string, string[]>()
  const switches = new Set<string>()
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === "--") {
      positional.push(...argv.slice(i + 1))
      break
    }
    if (a.startsWith("-") && a.length > 1) {
      const eq = a.indexOf("=")
      const name = eq > 0 ? a.slice(0, eq) : a
      if (VALUE_FLAGS.has(name)) {
        const value = eq > 0 ? a.slice(eq + 1) : argv[++i]
        if (value === undefined) throw new UsageError(`${name} needs a value`)
        flags.set(name, [...(flags.get(name) ?? []), value])
      } else switches.add(name)
    } else positional.push(a)
  }
  return { positional, flags, switches }
}

const flag = (a: Args, ...names: string[]): string[] => names.flatMap((n) => a.flags.get(n) ?? [])

const intFlag = (a: Args, name: string): number | undefined => {
  const v = flag(a, name).at(-1)
  if (v === undefined) return undefined
  const n = Number(v)
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${name} must be a positive integer`)
  return n
}

const limitsOf = (a: Args): Limits => ({
  maxSteps: intFlag(a, "--steps") ?? DEFAULT_LIMITS.maxSteps,
  timeoutMs: intFlag(a, "--timeout") ?? DEFAULT_LIMITS.timeoutMs
})

/** Compiles every directory (or file) given; modules keep paths relative to their directory. */
const compileDirs = (dirs: readonly string[], skipTests = false, builtins?: BuiltinRegistry): Rego => {
  const modules = []
  const data: Record<string, unknown> = {}
  for (const d of dirs) {
    if (!fs.existsSync(d)) throw new UsageError(`${d}: no such file or directory`)
    const loaded = loadDirectory(d, { skipTests })
    modules.push(...(dirs.length > 1 ? loaded.modules.map((m) => ({ file: `${d.replace(/\/$/, "")}/${m.file}`, source: m.source })) : loaded.modules))
    Object.assign(data, loaded.data)
  }
  return Rego.compile({ modules, data, ...(builtins !== undefined ? { builtins } : {}) })
}

const printErrors = (e: unknown, err: (s: string) => void): boolean => {
  if (e instanceof RegoCompileError) {
    for (const x of e.errors) err(x.format())
    err(`${e.errors.length} error${e.errors.length === 1 ? "" : "s"}`)
    return true
  }
  if (e instanceof RegoError) {
    err(e.format())
    return true
  }
  return false
}

const evalCommand = (a: Args, out: (s: string) => void): number => {
  const query = a.positional.join(" ").trim()
  if (query === "") throw new UsageError("eval needs a query")
  const rego = compileDirs(flag(a, "-d", "--data"))
  const inputFile = flag(a, "-i", "--input").at(-1)
  const input = inputFile === undefined ? undefined : parseJSONExact(fs.readFileSync(inputFile, "utf8"))
  const body = parseQuery(query, "query")
  const options = { strictBuiltinErrors: a.switches.has("--strict"), limits: limitsOf(a), print: (m: string) => process.stderr.write(m + "\n") }
  // A query that is a single term reports the term's value, as `opa eval` does.
  const single = body.length === 1 && body[0].body.type === "term" && body[0].with.length === 0 && !body[0].negated
  const result: Json[] = []
  if (single) {
    for (const b of rego.query(`__value__ = ${query}`, input, options)) {
      const { __value__: value, ...bindings } = b
      result.push(Object.keys(bindings).length > 0 ? { expressions: [{ value, text: query }], bindings } : { expressions: [{ value, text: query }] })
    }
  } else {
    for (const b of rego.query(query, input, options)) result.push(Object.keys(b).length > 0 ? { expressions: [{ value: true, text: query }], bindings: b } : { expressions: [{ value: true, text: query }] })
  }
  out(stringifyJSON(result.length === 0 ? {} : { result }, "  "))
  return 0
}

const testCommand = (a: Args, out: (s: string) => void): number => {
  const dirs = a.positional.length > 0 ? a.positional : ["."]
  // Policy tests get the test builtins (test.sleep), as in opa test.
  const rego = compileDirs(dirs, false, testingBuiltins())
  const run = flag(a, "--run").at(-1)
  let filter: { test(name: string): boolean } | undefined
  if (run !== undefined) {
    // --run takes a Go regular expression, as opa test does.
    let re: Regexp
    try {
      re = Regexp.compile(run)
    } catch (e) {
      if (e instanceof RegexpSyntaxError) throw new UsageError(`--run: ${e.message}`)
      throw e
    }
    filter = { test: (name) => re.matchString(name) }
  }
  const results = runTests(rego, { limits: limitsOf(a), ...(filter !== undefined ? { filter } : {}) })
  out(formatTestReport(results, a.switches.has("-v") || a.switches.has("--verbose")))
  return results.some((r) => r.status === "fail" || r.status === "error") ? 1 : 0
}

const checkCommand = (a: Args, out: (s: string) => void): number => {
  const dirs = a.positional.length > 0 ? a.positional : ["."]
  const rego = compileDirs(dirs)
  out(`${rego.modules().length} module${rego.modules().length === 1 ? "" : "s"} checked, no errors`)
  return 0
}

const conformanceCommand = (a: Args, out: (s: string) => void, err: (s: string) => void): number => {
  const dir = locateSuite()
  if (dir === undefined) {
    err("conformance suite not found: set REGO_CONFORMANCE_DIR, or place it at <repo>/../shared/conformance/opa-v1 or /work/shared/conformance/opa-v1")
    return 2
  }
  const folders = flag(a, "--folder")
  const report = runSuite(dir, { folders })
  out(formatReport(report, a.switches.has("-v") || a.switches.has("--verbose")))
  if (a.switches.has("--write-passing")) {
    if (folders.length > 0) throw new UsageError("--write-passing needs the whole suite (no --folder)")
    writePassing(report)
  }
  return report.regressions.length > 0 ? 1 : 0
}

/** Runs the CLI; returns the exit code. */
export const main = (argv: readonly string[], out: (s: string) => void = (s) => process.stdout.write(s + "\n"), err: (s: string) => void = (s) => process.stderr.write(s + "\n")): number => {
  const [command, ...rest] = argv
  try {
    const a = parseArgs(rest)
    switch (command) {
      case "eval":
        return evalCommand(a, out)
      case "test":
        return testCommand(a, out)
      case "check":
        return checkCommand(a, out)
      case "conformance":
        return conformanceCommand(a, out, err)
      case "help":
      case "--help":
      case "-h":
        out(USAGE)
        return 0
      default:
        err(command === undefined ? USAGE : `unknown command ${command}\n${USAGE}`)
        return 2
    }
  } catch (e) {
    if (e instanceof UsageError) {
      err(`${e.message}\n${USAGE}`)
      return 2
    }
    if (printErrors(e, err)) return 1
    throw e
  }
}

const invokedDirectly = process.argv[1] !== undefined && /(?:^|[/\\])(?:rego(?:\.js)?|cli\.js)$/.test(process.argv[1])
if (invokedDirectly) process.exitCode = main(process.argv.slice(2))
