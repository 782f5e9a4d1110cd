// Hostile policies and inputs: nesting deeper than the stack, builtins whose output outgrows
// their input, and builtins whose work is quadratic. Each must end in a typed error (or OPA's
// own answer) within the evaluation's limits: never a stack overflow, a hang or gigabytes.
import { describe, expect, it } from "vitest"
import { Rego, RegoCompileError, RegoEvalError } from "@rec/rego"
import type { EvalOptions } from "@rec/rego/rego"
import { outcome } from "./helpers.js"

const deepObject = (n: number): unknown => {
  let v: unknown = "leaf"
  for (let i = 0; i < n; i++) v = { a: v }
  return v
}

const deepArray = (n: number): unknown => {
  let v: unknown = 1
  for (let i = 0; i < n; i++) v = [v]
  return v
}

const rule = (expr: string): ReturnType<Rego["prepareRule"]> => Rego.compile({ modules: { "p.rego": `package p\n\nx := ${expr}\n` } }).prepareRule("data.p.x")


// The bound is loose on purpose (CI machines run many suites on two cores): the cancellation
// itself is proved by the error code; the bound only rules out running to completion.
const expectEvalError = (f: () => unknown, code: string, withinMs = 6_000): void => {
  const { error, ms } = outcome(f)
  expect(error).toBeInstanceOf(RegoEvalError)
  expect((error as RegoEvalError).code).toBe(code)
  expect(ms).toBeLessThan(withinMs)
}

const expectCompileError = (f: () => unknown, code: string): void => {
  const { error } = outcome(f)
  expect(error).toBeInstanceOf(RegoCompileError)
  expect((error as RegoCompileError).errors[0].code).toBe(code)
}

describe("nesting deeper than the stack", () => {
  it("in input: an evaluation error, in every builtin that recurses", () => {
    for (const expr of ["input", "count([p | walk(input, [p, _])])", "json.marshal(input)", "object.union(input, input)", "input == input.a", "sprintf(\"%v\", [input])"]) {
      expectEvalError(() => rule(expr).evaluate(deepObject(100_000)), "eval_cancel_error")
    }
    expectEvalError(() => rule("count({input, [input]})").evaluate(deepArray(100_000)), "eval_cancel_error")
  })

  it("in results built during evaluation: an evaluation error", () => {
    const r = Rego.compile({ modules: { "p.rego": "package p\n\nx := y if {\n\ty := object.union({}, input)\n}\n" } })
    expectEvalError(() => r.prepareRule("data.p.x").evaluate(deepObject(100_000)), "eval_cancel_error")
  })

  it("in data, policy source or queries: a compile error", () => {
    expectCompileError(() => Rego.compile({ modules: { "p.rego": "package p\nx := 1" }, data: { d: deepObject(100_000) } }), "rego_compile_error")
    expectCompileError(() => Rego.compile({ modules: { "p.rego": "package p\nx := 1" } }).withData({ d: deepObject(100_000) }), "rego_compile_error")
    expectCompileError(() => rule("[".repeat(100_000) + "]".repeat(100_000)), "rego_parse_error")
    expectCompileError(() => rule("1" + " + 1".repeat(100_000)), "rego_compile_error")
    expectCompileError(() => Rego.compile({}).prepare("x := " + "[".repeat(100_000) + "]".repeat(100_000)), "rego_parse_error")
  })
})

describe("output far larger than the input", () => {
  it("is charged before it is allocated", () => {
    const big = { sep: "x".repeat(100_000), a: Array(10_000).fill(""), s: "a".repeat(100_000), r: "x".repeat(10_000) }
    for (const expr of [
      "concat(input.sep, input.a)",
      'replace(input.s, "", input.r)',
      'strings.replace_n({"a": input.r}, input.s)',
      'regex.replace(input.s, "", input.r)',
      'json.marshal_with_options(input.a, {"indent": input.sep})',
      "numbers.range(0, 1000000000000)",
      'net.cidr_expand("10.0.0.0/2")'
    ]) {
      expectEvalError(() => rule(`count(${expr})`).evaluate(big), "eval_cancel_error", 1_000)
    }
  })

  it("sprintf refuses widths and precisions beyond Go's limit, as Go does", () => {
    expect(rule('sprintf("%200000000d", [1])').evaluate()).toBe("%!(NOVERB)%!(EXTRA int=1)")
    expect(rule('sprintf("%*d|", [20000000, 1])').evaluate()).toBe("%!(BADWIDTH)1|")
    expect(rule('sprintf("%-*d|", [-3, 1])').evaluate()).toBe("1  |")
    expect(rule('sprintf("%.*d|", [-1, 1])').evaluate()).toBe("%!(BADPREC)1|")
    expect(rule('count(sprintf("%5000000d", [1]))').evaluate()).toBe(5_000_000)
  })

  it("big integers stop at a size limit instead of growing to gigabytes", () => {
    const { error, ms } = outcome(() => rule('units.parse("1e999999")').evaluate(undefined, { strictBuiltinErrors: true }))
    expect((error as RegoEvalError).message).toContain("units.parse: exponent too large")
    expect(ms).toBeLessThan(500)
    expectEvalError(() => rule("bits.lsh(1, 4000000000)").evaluate(undefined, { strictBuiltinErrors: true }), "eval_builtin_error")
  })
})

describe("work far larger than one step", () => {
  const limits = (timeoutMs: number): EvalOptions => ({ limits: { timeoutMs, maxSteps: 1e12 } })

  it("keeps the time limit, checked between expensive builtin calls", () => {
    const input = { a: Array.from({ length: 100_000 }, (_, i) => (i * 7919) % 100_003) }
    expectEvalError(() => rule("count([y | some i in numbers.range(1, 1000); y := sort(input.a)])").evaluate(input, limits(200)), "eval_cancel_error", 6_000)
    expectEvalError(() => rule("count([y | some i in numbers.range(1, 10000); y := array.concat(input.a, input.a)])").evaluate(input, limits(200)), "eval_cancel_error", 6_000)
  })

  it("stops quadratic builtins inside their loops", () => {
    const many = { a: Array(20_000).fill("a"), b: Array(20_000).fill("b"), nets: Array(5_000).fill("10.0.0.0/8"), ips: Array(5_000).fill("11.0.0.1") }
    expectEvalError(() => rule("strings.any_prefix_match(input.a, input.b)").evaluate(many), "eval_cancel_error")
    expectEvalError(() => rule("strings.any_suffix_match(input.a, input.b)").evaluate(many), "eval_cancel_error")
    expectEvalError(() => rule("net.cidr_contains_matches(input.nets, input.ips)").evaluate(many, limits(200)), "eval_cancel_error")
    expectEvalError(() => rule("regex.globs_match(input.x, input.y)").evaluate({ x: "a*".repeat(20_000), y: "b*".repeat(20_000) + "c" }), "eval_cancel_error")
    // Membership in an array is a scan: in a comprehension over another array, quadratic.
    expectEvalError(() => rule("count([x | some x in input.a; x in input.b])").evaluate(many), "eval_cancel_error")
  })

  it("graph.reachable_paths does not enumerate the exponentially many paths of a graph", () => {
    const graph: Record<string, string[]> = {}
    // 2^500 paths: an enumeration of paths could never finish; the output itself grows quadratically
    // with the length of the chain, so the chain is kept short enough for a busy CI machine.
    for (let i = 0; i < 500; i++) graph[`n${i}`] = [`n${i + 1}`, `m${i}`]
    for (let i = 0; i < 500; i++) graph[`m${i}`] = [`n${i + 1}`]
    const { error, ms } = outcome(() => expect(rule('count(graph.reachable_paths(input, ["n0"]))').evaluate(graph)).toBeGreaterThan(0))
    expect(error).toBeUndefined()
    // Loose like the bounds above (it took 3.1 s once at load 20): an enumeration would not end.
    expect(ms).toBeLessThan(6_000)
  })
})
