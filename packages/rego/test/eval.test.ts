// The evaluation API: prepared rules and queries, inputs, with, conflicts, limits, strict
// builtin errors, print, numbers.
import { describe, expect, it } from "vitest"
import { Rego, RegoEvalError, RegoSet, type Json } from "@rec/rego"

const policy = `package authz

import rego.v1

default allow := false

allow if {
	some role in data.roles[input.user]
	role == "admin"
}

allow if input.method == "GET"

reason := "admin" if allow
reason := "denied" if not allow

filters contains {"column": "owner", "value": input.user} if not allow

double(x) := x * 2

big := 9007199254740993 + 1

ratio := 1 / 3
`

const rego = Rego.compile({ modules: { "authz.rego": policy }, data: { roles: { alice: ["admin"], bob: ["viewer"] } } })

describe("prepared rules", () => {
  const allow = rego.prepareRule("data.authz.allow")

  it("evaluates one prepared rule against many inputs", () => {
    expect(allow.evaluate({ user: "alice", method: "POST" })).toBe(true)
    expect(allow.evaluate({ user: "bob", method: "POST" })).toBe(false)
    expect(allow.evaluate({ user: "bob", method: "GET" })).toBe(true)
    expect(allow.evaluate({})).toBe(false)
  })

  it("returns undefined for undefined documents", () => {
    expect(rego.prepareRule("authz.nothing").evaluate({})).toBeUndefined()
  })

  it("returns sets as sorted arrays in JSON, or as sets with evaluateValue", () => {
    const filters = rego.prepareRule(["authz", "filters"])
    expect(filters.evaluate({ user: "bob" })).toEqual([{ column: "owner", value: "bob" }])
    expect(filters.evaluateValue({ user: "bob" })).toBeInstanceOf(RegoSet)
  })

  it("evaluates whole packages", () => {
    const doc = rego.prepareRule("data.authz").evaluate({ user: "alice" }) as Record<string, Json>
    expect(doc.allow).toBe(true)
    expect(doc.reason).toBe("admin")
  })

  it("keeps integers exact beyond 2^53", () => {
    expect(rego.prepareRule("data.authz.big").evaluate()).toBe(9007199254740994n)
    expect(rego.prepareRule("data.authz.ratio").evaluate()).toBeCloseTo(1 / 3)
  })

  it("evaluates several documents in one evaluation", () => {
    const decision = rego.prepareRules(["data.authz.allow", "data.authz.reason", "data.authz.filters"])
    expect(decision.evaluate({ user: "alice" })).toEqual([true, "admin", []])
    expect(decision.evaluate({ user: "bob" })).toEqual([false, "denied", [{ column: "owner", value: "bob" }]])
  })

  it("lists packages and finds rules", () => {
    expect(rego.packages()).toEqual(["authz"])
    expect(rego.node(["authz", "allow"])).toBeDefined()
    expect(rego.node(["authz", "missing"])).toBeUndefined()
  })
})

describe("input", () => {
  const r = Rego.compile({ modules: { "i.rego": "package i\nkeys := [k | some k, _ in input]\nsubject_missing if not input.subject\nwhen := input.when\nscore := input.score" } })

  it("reads input as JSON would carry it: undefined members are absent, Dates are strings", () => {
    const input = { subject: undefined, when: new Date("2026-01-02T03:04:05Z"), score: Number.NaN, fn: () => 1 }
    expect(r.prepareRule("data.i.keys").evaluate(input)).toEqual(["score", "when"])
    expect(r.prepareRule("data.i.subject_missing").evaluate(input)).toBe(true)
    expect(r.prepareRule("data.i.when").evaluate(input)).toBe("2026-01-02T03:04:05.000Z")
    expect(r.prepareRule("data.i.score").evaluate(input)).toBeNull()
  })

  it("does not modify the caller's input", () => {
    const input = { subject: undefined, a: 1 }
    r.prepareRule("data.i.keys").evaluate(input)
    expect(Object.keys(input)).toEqual(["subject", "a"])
  })
})

describe("prepared queries", () => {
  it("returns the bindings of every solution", () => {
    const q = rego.prepare("some user, roles in data.roles; some r in roles")
    expect(q.evaluate()).toEqual([
      { user: "alice", roles: ["admin"], r: "admin" },
      { user: "bob", roles: ["viewer"], r: "viewer" }
    ])
  })

  it("is undefined (no solutions) rather than false", () => {
    expect(rego.query("data.authz.allow == true", { user: "bob" })).toEqual([])
    expect(rego.query("data.authz.allow == false", { user: "bob" })).toEqual([{}])
  })

  it("calls functions and replaces input, data and functions with `with`", () => {
    expect(rego.query("x := data.authz.double(21)")).toEqual([{ x: 42 }])
    expect(rego.query('x := data.authz.allow with input as {"user": "bob", "method": "GET"}')).toEqual([{ x: true }])
    expect(rego.query('x := data.authz.allow with data.roles.bob as ["admin"] with input.user as "bob"')).toEqual([{ x: true }])
    expect(rego.query("x := data.authz.double(2) with data.authz.double as 7")).toEqual([{ x: 7 }])
  })

  it("uses other data without recompiling", () => {
    const other = rego.withData({ roles: { bob: ["admin"] } })
    expect(other.prepareRule("data.authz.allow").evaluate({ user: "bob" })).toBe(true)
    expect(rego.prepareRule("data.authz.allow").evaluate({ user: "bob" })).toBe(false)
  })
})

describe("evaluation errors", () => {
  const errorOf = (f: () => unknown): RegoEvalError => {
    try {
      f()
    } catch (e) {
      if (e instanceof RegoEvalError) return e
      throw e
    }
    throw new Error("no error")
  }

  it("conflicting outputs of a complete rule", () => {
    const r = Rego.compile({ modules: { "c.rego": "package c\np := 1 if input.a\np := 2 if input.b" } })
    expect(r.prepareRule("c.p").evaluate({ a: true })).toBe(1)
    const e = errorOf(() => r.prepareRule("c.p").evaluate({ a: true, b: true }))
    expect(e.code).toBe("eval_conflict_error")
    expect(e.format()).toBe("c.rego:3:1: eval_conflict_error: complete rules must not produce multiple outputs")
  })

  it("builtin errors are undefined unless strict", () => {
    const r = Rego.compile({ modules: { "s.rego": "package s\np := x if x := 1 / input.d" } })
    expect(r.prepareRule("s.p").evaluate({ d: 0 })).toBeUndefined()
    const e = errorOf(() => r.prepareRule("s.p").evaluate({ d: 0 }, { strictBuiltinErrors: true }))
    expect(e.code).toBe("eval_builtin_error")
    expect(e.message).toContain("div: divide by zero")
  })

  it("stops a runaway evaluation at the step limit", () => {
    const r = Rego.compile({ modules: { "l.rego": "package l\np := count([x | some x in numbers.range(1, 1000000)])" } })
    const e = errorOf(() => r.prepareRule("l.p").evaluate({}, { limits: { maxSteps: 10_000 } }))
    expect(e.code).toBe("eval_cancel_error")
    expect(e.message).toContain("10000 steps")
  })

  it("stops a slow evaluation at the time limit", () => {
    const r = Rego.compile({ modules: { "t.rego": "package t\np := count({[x, y] | some x in numbers.range(1, 3000); some y in numbers.range(1, 3000)})" } })
    const start = Date.now()
    const e = errorOf(() => r.prepareRule("t.p").evaluate({}, { limits: { timeoutMs: 50, maxSteps: 1e12 } }))
    expect(e.code).toBe("eval_cancel_error")
    expect(e.message).toContain("time limit")
    expect(Date.now() - start).toBeLessThan(2_000)
  })

  it("turns unbounded recursion through data into an error, not a crash", () => {
    const deep: Record<string, unknown> = {}
    let cur = deep
    for (let i = 0; i < 200_000; i++) cur = (cur.a = {}) as Record<string, unknown>
    const r = Rego.compile({ modules: { "w.rego": "package w\np := count([x | walk(input, x)])" } })
    expect(() => r.prepareRule("w.p").evaluate(deep)).toThrow(RegoEvalError)
  })
})

describe("print", () => {
  it("writes to the configured sink, with undefined operands shown", () => {
    const lines: string[] = []
    const r = Rego.compile({ modules: { "p.rego": 'package p\nq if { print("user", input.user, input.missing); true }' } })
    expect(r.prepareRule("p.q").evaluate({ user: "alice" }, { print: (m) => lines.push(m) })).toBe(true)
    expect(lines).toEqual(["user alice <undefined>"])
  })
})

describe("number semantics", () => {
  const r = Rego.compile({ modules: { "n.rego": "package n\neq if 1 == 1.0\nset_size := count({1, 1.0, 2})\nbig := 123456789012345678901234567890 * 10\nsorted := sort([3, 1.5, 2])" } })
  it("treats 1 and 1.0 as equal", () => {
    expect(r.prepareRule("n.eq").evaluate()).toBe(true)
    expect(r.prepareRule("n.set_size").evaluate()).toBe(2)
  })
  it("computes with arbitrary precision integers", () => {
    expect(r.prepareRule("n.big").evaluate()).toBe(1234567890123456789012345678900n)
    expect(r.prepareRule("n.sorted").evaluate()).toEqual([1.5, 2, 3])
  })
})
