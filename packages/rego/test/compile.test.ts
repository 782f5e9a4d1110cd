// Compile errors OPA 1.x always enforces, with their codes and locations.
import { describe, expect, it } from "vitest"
import { Rego, RegoCompileError } from "@rec/rego"

const compileErrors = (...sources: string[]): string[] => {
  try {
    Rego.compile({ modules: sources.map((source, i) => ({ file: `m${i}.rego`, source })) })
  } catch (e) {
    if (e instanceof RegoCompileError) return e.errors.map((x) => x.format())
    throw e
  }
  return []
}

describe("compiler", () => {
  it("accepts a valid policy spread over several modules of one package", () => {
    expect(compileErrors("package a\np if q", "package a\nq if input.x == 1")).toEqual([])
  })

  describe("unsafe variables", () => {
    it("in a body", () => {
      expect(compileErrors("package a\np if { x }")).toEqual(["m0.rego:2:8: rego_unsafe_var_error: var x is unsafe"])
    })
    it("declared with `some` but never bound", () => {
      expect(compileErrors("package a\np if { some x; x == 1 }")).toEqual(["m0.rego:2:16: rego_unsafe_var_error: var x is unsafe"])
    })
    it("in a rule head", () => {
      expect(compileErrors("package a\np contains x if { true }")).toEqual(["m0.rego:2:1: rego_unsafe_var_error: var x is unsafe"])
    })
    it("in a comprehension head", () => {
      expect(compileErrors("package a\np := [x | true]")).toEqual(["m0.rego:2:6: rego_unsafe_var_error: var x is unsafe"])
    })
    it("only under negation", () => {
      expect(compileErrors("package a\np if { not q[x] }\nq contains 1")).toEqual(["m0.rego:2:8: rego_unsafe_var_error: var x is unsafe"])
    })
    it("every one of them, sorted by location", () => {
      expect(compileErrors("package a\np if { y; x }")).toEqual(["m0.rego:2:8: rego_unsafe_var_error: var y is unsafe", "m0.rego:2:11: rego_unsafe_var_error: var x is unsafe"])
    })
  })

  describe("recursion", () => {
    it("direct", () => {
      expect(compileErrors("package a\np if p")).toEqual(["m0.rego:2:1: rego_recursion_error: rule p is recursive: p -> p"])
    })
    it("through other rules, reported for each rule in the cycle", () => {
      expect(compileErrors("package a\np if q\nq if p")).toEqual([
        "m0.rego:2:1: rego_recursion_error: rule p is recursive: p -> q -> p",
        "m0.rego:3:1: rego_recursion_error: rule q is recursive: q -> p -> q"
      ])
    })
    it("through functions and across packages", () => {
      const errs = compileErrors("package a\nf(x) := y if y := data.b.g(x)", "package b\ng(x) := y if y := data.a.f(x)")
      expect(errs.length).toBe(2)
      for (const e of errs) expect(e).toContain("rego_recursion_error")
    })
  })

  describe("imports", () => {
    it("duplicate imports", () => {
      expect(compileErrors("package a\nimport data.x\nimport data.x\np := x")).toEqual(["m0.rego:3:1: rego_compile_error: import must not shadow import data.x"])
    })
    it("two imports under the same alias", () => {
      expect(compileErrors("package a\nimport input.foo as bar\nimport data.baz as bar\np := bar")).toEqual(["m0.rego:3:1: rego_compile_error: import must not shadow import input.foo as bar"])
    })
  })

  describe("shadowing the root documents", () => {
    it("a rule named input", () => {
      expect(compileErrors("package a\ninput := 1")).toEqual(["m0.rego:2:1: rego_compile_error: rules must not shadow input (use a different rule name)"])
    })
    it("a rule named data", () => {
      expect(compileErrors("package a\ndata if true")).toEqual(["m0.rego:2:1: rego_compile_error: rules must not shadow data (use a different rule name)"])
    })
    it("a local variable named input", () => {
      expect(compileErrors("package a\np if { input := 1 }")[0]).toMatch(/^m0\.rego:2:8: rego_compile_error: .*input/)
    })
  })

  describe("other checks", () => {
    it("a variable assigned twice", () => {
      expect(compileErrors("package a\np if { x := 1; x := 2 }")).toEqual(["m0.rego:2:16: rego_compile_error: var x assigned above"])
    })
    it("calls with the wrong number of arguments", () => {
      expect(compileErrors("package a\nf(x) := x\np := f(1, 2)")).toEqual(["m0.rego:3:6: rego_type_error: function data.a.f has arity 1, got 2 arguments"])
      expect(compileErrors("package a\np := count(1, 2, 3)")[0]).toBe("m0.rego:2:6: rego_type_error: count: arity mismatch")
    })
    it("unknown functions", () => {
      expect(compileErrors("package a\np if { foo.bar(1) }")).toEqual(["m0.rego:2:8: rego_type_error: undefined function foo.bar"])
    })
    it("complete and multi-value rules of the same name", () => {
      expect(compileErrors("package a\np contains 1\np := 2")).toEqual(["m0.rego:2:1: rego_type_error: conflicting rules data.a.p found"])
    })
    it("builtins removed in Rego v1", () => {
      expect(compileErrors("package a\np := any([true])")[0]).toMatch(/^m0\.rego:2:6: rego_type_error: deprecated built-in function calls in expression: any/)
    })
    it("errors of several modules together", () => {
      const errs = compileErrors("package a\np if { x }", "package b\nq := ")
      expect(errs.some((e) => e.startsWith("m1.rego:2:"))).toBe(true)
    })
  })
})
