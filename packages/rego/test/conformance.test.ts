// OPA's conformance suite, read in place (never copied into the repository). Every case listed
// in conformance/passing.txt must keep passing; every core-language (Tier 1) case must pass.
import { describe, expect, it } from "vitest"
import { loadPassing, runSuite, TIER1_FOLDERS } from "@rec/rego/conformance/runner"
import { locateSuite } from "@rec/rego/conformance/suite"

const dir = locateSuite()

describe("OPA v1 conformance suite", () => {
  if (dir === undefined) {
    // The suite lives outside the repository; without it there is nothing to compare against.
    it.skip("skipped: suite not found (set REGO_CONFORMANCE_DIR, or place it at <repo>/../shared/conformance/opa-v1)", () => {})
    return
  }
  const report = runSuite(dir)
  const failures = (ids: Iterable<string>): string[] => {
    const want = new Set(ids)
    return report.results.filter((r) => want.has(r.c.id) && r.outcome.status !== "pass").map((r) => `${r.c.id} (${r.c.note}): ${r.outcome.status === "pass" ? "" : r.outcome.reason.split("\n")[0]}`)
  }

  it("no case of conformance/passing.txt regresses", () => {
    expect(loadPassing().size).toBeGreaterThan(1200)
    expect(failures(loadPassing())).toEqual([])
  })

  it("every Tier 1 (core language) case passes", () => {
    const tier1 = report.results.filter((r) => TIER1_FOLDERS.has(r.c.folder))
    expect(tier1.length).toBe(839)
    expect(failures(tier1.map((r) => r.c.id))).toEqual([])
  })

  it("passes at least 1,200 of the 2,075 cases", () => {
    expect(report.passed).toBeGreaterThanOrEqual(1200)
  })
})
