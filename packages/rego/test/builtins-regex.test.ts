// regex.*, glob.match and json.match_schema patterns on the linear-time RE2 engine: Go's syntax
// where JavaScript differs, hostile patterns and inputs, and the step limit reaching into a
// running match.
import { describe, expect, it } from "vitest"
import { RegoEvalError } from "@rec/rego"
import type { EvalOptions } from "@rec/rego/rego"
import { ruleValue as evaluate, thrown } from "./helpers.js"

const evalError = (expr: string, input?: unknown, options?: EvalOptions): RegoEvalError => thrown(RegoEvalError, () => evaluate(expr, input, options))

const elapsed = (f: () => unknown): number => {
  const t0 = performance.now()
  f()
  return performance.now() - t0
}

describe("regex builtins", () => {
  it("accept Go's syntax and reject what Go rejects", () => {
    for (const p of ["(?P<name>x)", "(?<name>x)", "\\pL+", "\\p{Greek}", "[[:^alpha:]]", "\\Qa.b\\E", "\\A\\z", "(?i)a(?-i)b", "(?U)a+", "x{2,}"]) {
      expect(evaluate(`regex.is_valid(${JSON.stringify(p)})`), p).toBe(true)
    }
    for (const p of ["(?=x)", "(?!x)", "(?<=x)", "(a)\\1", "a**", "x{1001}", "[z-a]", "\\p{Klingon}", "++"]) {
      expect(evaluate(`regex.is_valid(${JSON.stringify(p)})`), p).toBe(false)
    }
  })

  it("raise Go's parse errors", () => {
    expect(evalError(`regex.match("(?=x)", "x")`).message).toContain("regex.match: error parsing regexp: invalid or unsupported Perl syntax: `(?=`")
    expect(evalError(`regex.replace("x", "[", "y")`).message).toContain("regex.replace: error parsing regexp: missing closing ]: `[`")
  })

  it("match, find, split and replace with Go's semantics", () => {
    expect(evaluate(`regex.match("^\\\\p{Lu}\\\\pL*$", "Élan")`)).toBe(true)
    expect(evaluate(`regex.find_n("(?i)k", "k K \u212a", -1)`)).toEqual(["k", "K", "\u212a"])
    expect(evaluate(`regex.find_all_string_submatch_n("(?P<k>\\\\w+)=(\\\\w+)?", "a=1 b=", -1)`)).toEqual([
      ["a=1", "a", "1"],
      ["b=", "b", ""]
    ])
    expect(evaluate(`regex.split("a*", "baaac")`)).toEqual(["b", "c"])
    expect(evaluate(`regex.replace("2026-11-22", "(?P<y>\\\\d+)-(?P<m>\\\\d+)-(?P<d>\\\\d+)", "\${d}/\${m}/\${y}")`)).toBe("22/11/2026")
  })

  it("match templates, measuring delimiters in bytes as Go does", () => {
    expect(evaluate(`regex.template_match("urn:foo:{[a-z]+}:{\\\\d+}", "urn:foo:bar:42", "{", "}")`)).toBe(true)
    expect(evaluate(`regex.template_match("urn:foo:{[a-z]+}", "urn:foo:BAR", "{", "}")`)).toBe(false)
    expect(evalError(`regex.template_match("a{b", "ab", "{", "}")`).message).toContain('unbalanced braces in "a{b"')
    expect(evalError(`regex.template_match("aéxé", "ax", "é", "é")`).message).toContain("start delimiter has to be exactly one character long but is 2 long")
  })

  it("answer a catastrophic pattern in milliseconds", () => {
    const input = { s: "a".repeat(30) + "!" }
    expect(elapsed(() => expect(evaluate(`regex.match("(a+)+$", input.s)`, input)).toBe(false))).toBeLessThan(100)
    const long = { s: "a".repeat(100_000) + "!" }
    expect(elapsed(() => expect(evaluate(`regex.match("(a+)+$", input.s)`, long)).toBe(false))).toBeLessThan(2_000)
  })

  it("stop a long match at the step limit", () => {
    const input = { s: "a".repeat(2_000_000) }
    const e = evalError(`regex.match("[a-q][^u-z]{13}x", input.s)`, input, { limits: { maxSteps: 100_000 } })
    expect(e.code).toBe("eval_cancel_error")
  })

  it("stop a replacement whose output outgrows the step limit", () => {
    const input = { s: "x".repeat(100_000), r: "y".repeat(1_000) }
    const e = evalError(`regex.replace(input.s, "", input.r)`, input, { limits: { maxSteps: 1_000_000 } })
    expect(e.code).toBe("eval_cancel_error")
  })
})

describe("glob.match", () => {
  it("is linear in the input whatever the number of stars", () => {
    const input = { s: "a".repeat(5_000) }
    const pattern = "*a".repeat(20) + "b"
    expect(elapsed(() => expect(evaluate(`glob.match(${JSON.stringify(pattern)}, [], input.s)`, input)).toBe(false))).toBeLessThan(1_000)
  })

  it("keeps its semantics: segments, classes, alternatives, escapes", () => {
    expect(evaluate(`glob.match("/api/*/items", ["/"], "/api/v1/items")`)).toBe(true)
    expect(evaluate(`glob.match("/api/*/items", ["/"], "/api/v1/x/items")`)).toBe(false)
    expect(evaluate(`glob.match("/api/**", ["/"], "/api/v1/x/items")`)).toBe(true)
    expect(evaluate(`glob.match("{a,b}[!x]?.\\\\*", [], "bz1.*")`)).toBe(true)
    expect(evaluate(`glob.match("[😀-😂]", [], "😁")`)).toBe(true)
  })
})

describe("json.match_schema", () => {
  it("matches pattern keywords with RE2, in linear time", () => {
    const schema = { type: "object", properties: { name: { type: "string", pattern: "^(a+)+$" } }, patternProperties: { "^(x+x+)+y$": { type: "number" } } }
    const input = { doc: { name: "a".repeat(40) + "!", ["x".repeat(40)]: "s" }, schema }
    const t = elapsed(() => {
      const [ok, errors] = evaluate("json.match_schema(input.doc, input.schema)", input) as [boolean, Array<{ field: string }>]
      expect(ok).toBe(false)
      expect(errors.map((e) => e.field)).toEqual(["name"])
    })
    expect(t).toBeLessThan(500)
  })

  it("checks the uri-template format in linear time", () => {
    // A string document is JSON text.
    const input = { doc: JSON.stringify("a".repeat(60) + "{"), schema: { type: "string", format: "uri-template" } }
    const t = elapsed(() => expect((evaluate("json.match_schema(input.doc, input.schema)", input) as unknown[])[0]).toBe(false))
    expect(t).toBeLessThan(500)
    expect((evaluate("json.match_schema(input.doc, input.schema)", { ...input, doc: JSON.stringify("/a/{b}/c{d}") }) as unknown[])[0]).toBe(true)
  })
})
