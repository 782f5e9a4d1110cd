/**
 * Issue 19 points 1 and 3 against every service at once: one stack (`support/Stack.ts`), started
 * once, then contract fuzzing, the JWT attack set, cross-user access, SSRF, upload and YAML
 * bombs, and last the search of every log line of the run for credentials. The figures of each
 * part are printed at the end (and written to `HARDENING_REPORT` when set; `bench/fuzz/run.mjs`
 * and docs/reliability.md use them).
 */
import { describe, expect, layer } from "@effect/vitest"
import { Testing } from "@rec/db"
import * as fs from "node:fs"
import { bombOutcomes, bombTests } from "./Bombs.js"
import { crossUserOutcomes, crossUserTests } from "./CrossUser.js"
import { fuzzRuns, fuzzTests } from "./Fuzz.js"
import { jwtOutcomes, jwtTests } from "./Jwt.js"
import { logScans, logTests } from "./Logs.js"
import { ssrfOutcomes, ssrfTests } from "./Ssrf.js"
import { stackLayer } from "./support/Stack.js"
import { FuzzReport } from "../src/index.js"

// The nudging service on the machine's PostgreSQL (a password in its URL for the log search);
// PGlite when there is no server (CI has one: REC_REQUIRE_SERVICES=1 makes its absence a failure).
const postgresSkip = process.env["HARDENING_POSTGRES"] === "0" ? "HARDENING_POSTGRES=0" : await Testing.postgresSkipReason()

layer(stackLayer({ postgres: postgresSkip === undefined }), { excludeTestServices: true, timeout: "300 seconds" })("every service", (it) => {
  describe("JWT attacks", () => jwtTests(it))
  describe("cross-user access", () => crossUserTests(it))
  describe("SSRF", () => ssrfTests(it))
  describe("bombs", () => bombTests(it))
  describe("contract fuzzing", () => fuzzTests(it))
  describe("logs", () => logTests(it))

  it("the figures", () => {
    const report = { fuzz: fuzzRuns, jwt: jwtOutcomes, crossUser: crossUserOutcomes, ssrf: ssrfOutcomes, bombs: bombOutcomes, logs: logScans }
    const output = process.env["HARDENING_REPORT"]
    if (output !== undefined) fs.writeFileSync(output, JSON.stringify(report, null, 2))
    console.log(FuzzReport.markdown(fuzzRuns))
    console.log(JSON.stringify({ bombs: bombOutcomes, logs: logScans }, null, 1))
    expect(jwtOutcomes.length).toBeGreaterThan(100)
  })
})
