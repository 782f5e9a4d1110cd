#!/usr/bin/env node
// Entry point of the README's two commands, so a fresh machine needs nothing but Node:
//   npm start   install (pnpm via npx, from the lockfile), build, start the platform
//   npm run demo  install, build, play the pipelines against the platform `npm start` runs
//   npm test    install, build, start local PostgreSQL/Mosquitto when installed, run every test
// It never assumes a global pnpm, a running database or a running broker.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { root } from "./workspace.mjs"

const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))
const pnpmSpec = manifest.packageManager // e.g. pnpm@10.34.8

const run = (cmd, args, opts = {}) => {
  const res = spawnSync(cmd, args, { cwd: root, stdio: "inherit", ...opts })
  if (res.error) throw res.error
  return res.status ?? 1
}
const must = (cmd, args, opts) => {
  const status = run(cmd, args, opts)
  if (status !== 0) {
    console.error(`\n${cmd} ${args.join(" ")} failed with exit code ${status}`)
    process.exit(status)
  }
}

export const pnpm = (args) => must("npx", ["--yes", pnpmSpec, ...args])

const installed = () => {
  const marker = path.join(root, "node_modules", ".modules.yaml")
  if (!fs.existsSync(marker)) return false
  return fs.statSync(marker).mtimeMs >= fs.statSync(path.join(root, "pnpm-lock.yaml")).mtimeMs
}

const ensureInstalled = () => {
  if (!installed()) pnpm(["install", "--frozen-lockfile"])
}

const build = () => must(path.join(root, "node_modules", ".bin", "tsc"), ["-b", "tsconfig.build.json"])

const testCommand = () => {
  // Start the machine's PostgreSQL and Mosquitto when they are installed but stopped;
  // tests that need them say so and skip with a reason when neither is available.
  run("bash", [path.join(root, "scripts", "services.sh")])
  const results = path.join(root, ".vitest-results.json")
  fs.rmSync(results, { force: true })
  const status = run(path.join(root, "node_modules", ".bin", "vitest"), [
    "run",
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=${results}`,
    // The durations the suite's order is planned from (vitest.sequencer.ts).
    ...(process.env["REC_RECORD_TEST_DURATIONS"] ? ["--reporter=./vitest.durations.ts"] : []),
    ...process.argv.slice(3)
  ])
  let passed = 0
  let failed = 0
  if (fs.existsSync(results)) {
    const report = JSON.parse(fs.readFileSync(results, "utf8"))
    passed = report.numPassedTests
    failed = report.numFailedTests
    // A file that fails to load has no assertions but is still a failure.
    failed += report.testResults.filter((r) => r.status === "failed" && r.assertionResults.length === 0).length
  } else {
    failed = 1
  }
  if (status !== 0 && failed === 0) failed = 1

  // The Rego unit tests of policies/ (`*_test.rego`), run like `opa test`.
  const policies = policyTests()
  passed += policies.passed
  failed += policies.failed
  console.log(`\n${passed} passed, ${failed} failed`)
  process.exit(failed > 0 ? 1 : 0)
}

const policyTests = () => {
  console.log("\n::: rego test policies")
  const res = spawnSync("node", [path.join(root, "packages", "rego", "bin", "rego.js"), "test", "policies"], {
    cwd: root,
    encoding: "utf8"
  })
  const out = `${res.stdout ?? ""}${res.stderr ?? ""}`
  // Failures in full, passes summarised: 700 lines of PASS would drown the rest.
  process.stdout.write(out.split("\n").filter((l) => !/: PASS \(/.test(l)).join("\n"))
  const count = (label) => Number(new RegExp(`^${label}: (\\d+)/\\d+$`, "m").exec(out)?.[1] ?? 0)
  const passed = count("PASS")
  const failed = count("FAIL") + count("ERROR") + (res.status !== 0 && count("FAIL") + count("ERROR") === 0 ? 1 : 0)
  return { passed, failed }
}

const command = process.argv[2]
if (command === "start") {
  ensureInstalled()
  build()
  const status = run("node", [path.join(root, "services", "platform", "dist", "main.js"), ...process.argv.slice(3)])
  process.exit(status)
} else if (command === "demo") {
  ensureInstalled()
  build()
  const status = run("node", [path.join(root, "services", "platform", "dist", "demo-main.js"), ...process.argv.slice(3)])
  process.exit(status)
} else if (command === "test") {
  ensureInstalled()
  build()
  testCommand()
} else {
  console.error("usage: node scripts/run.mjs start|demo|test [args]")
  process.exit(2)
}
