// Rule indexing must never change a decision: many `allow` rules keyed on input equalities give
// the same answer as the same conditions checked in plain JS.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Rego } from "@rec/rego"

const PATHS = ["/a", "/b", "/c", "/d"]
const METHODS = ["GET", "POST"]

interface Cond {
  readonly path?: string
  readonly method?: string
  readonly admin?: boolean
}

const cond = fc.record({ path: fc.constantFrom(...PATHS), method: fc.constantFrom(...METHODS), admin: fc.boolean() }, { requiredKeys: [] })

const moduleOf = (rules: readonly Cond[]): string => {
  let s = "package acl\n\ndefault allow := false\n"
  for (const r of rules) {
    const body: string[] = []
    if (r.path !== undefined) body.push(`input.path == "${r.path}"`)
    if (r.method !== undefined) body.push(`"${r.method}" == input.method`)
    if (r.admin !== undefined) body.push(`input.user.admin = ${r.admin}`)
    if (body.length === 0) body.push("true")
    s += `\nallow if {\n\t${body.join("\n\t")}\n}\n`
  }
  return s
}

const matches = (r: Cond, input: { path: string; method: string; user: { admin: boolean } }): boolean =>
  (r.path === undefined || r.path === input.path) && (r.method === undefined || r.method === input.method) && (r.admin === undefined || r.admin === input.user.admin)

describe("rule indexing", () => {
  it("decides as a linear scan would", () => {
    fc.assert(
      fc.property(
        fc.array(cond, { minLength: 4, maxLength: 40 }),
        fc.array(fc.record({ path: fc.constantFrom(...PATHS, "/z"), method: fc.constantFrom(...METHODS), user: fc.record({ admin: fc.boolean() }) }), { minLength: 1, maxLength: 10 }),
        (rules, inputs) => {
          const allow = Rego.compile({ modules: { "acl.rego": moduleOf(rules) } }).prepareRule("data.acl.allow")
          for (const input of inputs) expect(allow.evaluate(input)).toBe(rules.some((r) => matches(r, input)))
        }
      ),
      { numRuns: 100 }
    )
  })

  it("decides glob.match rules as a linear scan would", () => {
    const segment = fc.constantFrom("a", "b", "*", "", "ab")
    const pattern = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join("/"))
    const text = fc.array(fc.constantFrom("a", "b", "", "ab", "c"), { minLength: 1, maxLength: 4 }).map((s) => s.join("/"))
    const probe = Rego.compile({ modules: {} }).prepare('glob.match(input.p, ["/"], input.x)')
    fc.assert(
      fc.property(fc.array(fc.tuple(pattern, fc.option(fc.constantFrom(...METHODS))), { minLength: 4, maxLength: 30 }), fc.array(fc.tuple(text, fc.constantFrom(...METHODS)), { minLength: 1, maxLength: 8 }), (rules, inputs) => {
        let s = "package acl\n\ndefault allow := false\n"
        for (const [p, m] of rules) s += `\nallow if {\n\tglob.match(${JSON.stringify(p)}, ["/"], input.path)${m !== null ? `\n\tinput.method == "${m}"` : ""}\n}\n`
        const allow = Rego.compile({ modules: { "acl.rego": s } }).prepareRule("data.acl.allow")
        for (const [path, method] of inputs) {
          const want = rules.some(([p, m]) => (m === null || m === method) && probe.evaluate({ p, x: path }).length > 0)
          expect(allow.evaluate({ path, method })).toBe(want)
        }
      }),
      { numRuns: 150 }
    )
  })

  it("finds the glob rule among 2,000 without running the others", () => {
    let s = "package acl\n\ndefault allow := false\n"
    for (let i = 0; i < 2000; i++) s += `\nallow if glob.match("/api/v1/r${i}/*/items", ["/"], input.path)\n`
    const allow = Rego.compile({ modules: { "acl.rego": s } }).prepareRule("data.acl.allow")
    const limits = { maxSteps: 100 }
    expect(allow.evaluate({ path: "/api/v1/r1234/x42/items" }, { limits })).toBe(true)
    expect(allow.evaluate({ path: "/api/v1/r1234/x42/other" }, { limits })).toBe(false)
  })

  it("finds the matching rule among 10,000 without running the others", () => {
    const rules: Cond[] = []
    for (let i = 0; i < 10_000; i++) rules.push({ path: `/r/${i}`, method: METHODS[i % 2] })
    let s = "package acl\n\ndefault allow := false\n"
    for (const r of rules) s += `\nallow if {\n\tinput.path == "${r.path}"\n\tinput.method == "${r.method}"\n}\n`
    const allow = Rego.compile({ modules: { "acl.rego": s } }).prepareRule("data.acl.allow")
    // A step limit far below the rule count proves that the rules are not scanned.
    const limits = { maxSteps: 100 }
    expect(allow.evaluate({ path: "/r/5001", method: "POST" }, { limits })).toBe(true)
    expect(allow.evaluate({ path: "/r/5001", method: "GET" }, { limits })).toBe(false)
    expect(allow.evaluate({ path: "/nowhere", method: "GET" }, { limits })).toBe(false)
  })
})
