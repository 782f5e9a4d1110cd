// Parse errors: OPA's messages, with file, row and column.
import { describe, expect, it } from "vitest"
import { parseModule, parseQuery, RegoCompileError } from "@rec/rego"

const errorsOf = (source: string): string[] => {
  try {
    parseModule("policy.rego", source)
  } catch (e) {
    if (e instanceof RegoCompileError) return e.errors.map((x) => x.format())
    throw e
  }
  return []
}

describe("parser", () => {
  it("parses a module with imports, defaults, rules, functions, else chains and every", () => {
    const m = parseModule(
      "authz.rego",
      `package authz.api

import data.roles
import input.user as u

default allow := false

allow if {
	some role in roles[u.name]
	role == "admin"
}

grade(x) := "high" if x > 10
else := "low"

all_positive if every n in input.numbers { n > 0 }

names contains name if some name, _ in input.users

msg := $"hello {u.name}"
`
    )
    expect(m.pkg).toEqual(["authz", "api"])
    expect(m.imports.map((i) => i.alias ?? null)).toEqual([null, "u"])
    expect(m.rules.map((r) => [r.head.ref.map((t) => (t.type === "var" ? t.name : "?")).join("."), r.loc.row])).toEqual([
      ["allow", 6],
      ["allow", 8],
      ["grade", 13],
      ["all_positive", 16],
      ["names", 18],
      ["msg", 20]
    ])
    expect(m.rules[0].default).toBe(true)
    expect(m.rules[2].else).toBeDefined()
  })

  it("requires a package first", () => {
    expect(errorsOf("p := 1")).toEqual(["policy.rego:1:1: rego_parse_error: package expected"])
  })

  it("reports unexpected tokens where they are", () => {
    expect(errorsOf("package a\n\np if { x := 1 x }")).toEqual(["policy.rego:3:15: rego_parse_error: unexpected identifier token: expected \\n or ; or }"])
    expect(errorsOf("package a\np := 1 ==== 2")).toEqual(["policy.rego:2:10: rego_parse_error: unexpected equal token"])
  })

  it("reports a missing value at the end of the file", () => {
    expect(errorsOf("package a\np := ")).toContain("policy.rego:2:6: rego_parse_error: unexpected eof token: expected rule value term (e.g., p := <VALUE> { ... })")
  })

  it("reports unterminated strings and objects", () => {
    expect(errorsOf('package a\np := "abc')[0]).toBe("policy.rego:2:6: rego_parse_error: non-terminated string")
    expect(errorsOf('package a\np := {"a": 1 "b": 2}')[0]).toBe("policy.rego:2:14: rego_parse_error: unexpected string token: non-terminated object")
  })

  it("enforces Rego v1 syntax: `if` before bodies, `contains` for multi-value rules", () => {
    expect(errorsOf("package a\np { true }")).toEqual(["policy.rego:2:1: rego_parse_error: `if` keyword is required before rule body"])
    expect(errorsOf("package a\np[x] { x := 1 }")[0]).toMatch(/^policy\.rego:2:1: rego_parse_error: `(if|contains)` keyword is required/)
  })

  it("rejects default rules whose value is not constant", () => {
    expect(errorsOf("package a\ndefault p := input.x")).toEqual(["policy.rego:2:1: rego_parse_error: illegal default rule (value cannot contain ref)"])
  })

  it("continues an expression after a trailing operator onto the next line", () => {
    expect(errorsOf("package a\np := 1 +\nq := 2\n")[0]).toBe("policy.rego:3:3: rego_parse_error: unexpected assign token")
  })

  it("keeps the column of errors in later lines with tabs and unicode", () => {
    expect(errorsOf('package a\n\np := "é" if {\n\tx := 1 x\n}')).toEqual(["policy.rego:4:9: rego_parse_error: unexpected identifier token: expected \\n or ; or }"])
  })

  it("parses queries with several expressions and `with`", () => {
    const body = parseQuery('x := data.a.p with input.user as "bob"; y := x + 1')
    expect(body.length).toBe(2)
    expect(body[0].with.length).toBe(1)
  })

  it("reads keywords as plain names after a dot (input.in, data.if)", () => {
    const m = parseModule("k.rego", "package a\np if input.in == data.if.every")
    expect(m.rules.length).toBe(1)
  })

  it("parses numbers beyond 2^53 exactly", () => {
    const m = parseModule("n.rego", "package a\np := 123456789012345678901234567890")
    const v = m.rules[0].head.value
    expect(v?.type === "scalar" ? v.value : undefined).toBe(123456789012345678901234567890n)
  })
})
