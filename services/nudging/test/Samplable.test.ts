/**
 * Every schema of the contract can be sampled by fast-check (`Arbitrary.make`), as the kit's
 * `ContractFuzz` does for its valid requests, in bounded time.
 *
 * Regression: `trigger_at` of `POST /scheduled-events` (`Domain.IsoDateTime`) was a string
 * filter without an `arbitrary` annotation. fast-check drew random strings and retried,
 * synchronously and forever, until one was an ISO date-time: packages/hardening's fuzz of the
 * nudging service froze the whole process (every server in it) right after the ingest
 * endpoints. A synchronous endless loop cannot be timed out from inside the process, so the
 * samples are drawn in a child process (the built `dist/`, as `pnpm build` leaves it before the
 * tests) that is killed when it does not finish in time.
 */
import { expect, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const serviceDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

/** Draws the samples `ContractFuzz.run` draws (same seeds), prints one line per schema. */
const script = `
import { Api, Domain } from "@rec/nudging-service"
import { ContractFuzz } from "@rec/platform"
import * as Arbitrary from "effect/Arbitrary"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
for (const seed of [1, 19]) {
  for (const endpoint of ContractFuzz.endpointsOf(Api)) {
    for (const [part, offset] of [["path", 0], ["query", 1000], ["payload", 2000]]) {
      const schema = endpoint.schemas[part]
      if (schema === undefined) continue
      const started = Date.now()
      const samples = FastCheck.sample(Arbitrary.make(schema), { seed: seed + offset, numRuns: 3 })
      console.log(JSON.stringify({ endpoint: endpoint.method + " " + endpoint.path, part, ms: Date.now() - started, samples: samples.length }))
    }
  }
}
const triggers = FastCheck.sample(Arbitrary.make(Domain.IsoDateTime), { seed: 7, numRuns: 50 })
console.log(JSON.stringify({ triggers: triggers.filter((t) => Schema.is(Domain.IsoDateTime)(t)).length }))
`

const sampleInChild = (timeoutMs: number) =>
  new Promise<{ readonly lines: ReadonlyArray<Record<string, unknown>>; readonly timedOut: boolean; readonly stderr: string }>((resolve) => {
    const child = ChildProcess.spawn(process.execPath, ["--input-type=module", "-e", script], { cwd: serviceDir, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    let timedOut = false
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()))
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()))
    const timer = setTimeout(() => {
      timedOut = true
      child.kill("SIGKILL")
    }, timeoutMs)
    child.on("exit", () => {
      clearTimeout(timer)
      const lines = stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>)
      resolve({ lines, timedOut, stderr })
    })
  })

it("every path, query and body schema of the contract is sampled in bounded time (the fuzzer's valid requests)", async () => {
  // Generous: the whole run takes about a second; the bug was an endless loop.
  const result = await sampleInChild(60_000)
  const last = result.lines.filter((l) => "endpoint" in l).at(-1)
  expect(result.timedOut, `sampling never finished; last schema sampled: ${JSON.stringify(last)}\n${result.stderr}`).toBe(false)
  expect(result.stderr).toBe("")
  const sampled = result.lines.filter((l) => "endpoint" in l)
  // 18 endpoints, 17 with a schema (the VAPID key has none), some with two; both seeds.
  expect(sampled.map((l) => `${String(l.endpoint)} ${String(l.part)}`)).toContain("POST /scheduled-events payload")
  expect(sampled.map((l) => `${String(l.endpoint)} ${String(l.part)}`)).toContain("POST /admin/scheduled-events payload")
  expect(sampled.every((l) => l.samples === 3)).toBe(true)
  // The drawn date-times are valid ones, so the fuzzer's valid requests are valid.
  expect(result.lines.at(-1)).toEqual({ triggers: 50 })
}, 90_000)
