// regex.globs_match beyond OPA's conformance suite: the intersection is decided exactly
// (repetitions on both sides, classes, escapes), and syntax errors carry the messages and
// positions of the glob-intersection library OPA uses.
import { describe, expect, it } from "vitest"
import type { Value } from "@rec/rego/value"
import { builtinFailure, callBuiltin } from "./helpers.js"

const match = (a: Value, b: Value): Value | undefined => callBuiltin("regex.globs_match", [a, b])
const failure = (a: Value, b: Value): string => builtinFailure(() => match(a, b))

describe("regex.globs_match", () => {
  it.each([
    ["a.a.[0-9]+z", ".b.b2359825792*594823z", true],
    ["[a-z]+", "[0-9]*", false],
    ["b.*", "bar", true],
    [".*x", "y.*", true],
    ["a+b", "a*ab", true],
    ["a*b", "a+c", false],
    ["[a-c]+", "b.*d", false],
    ["abc", "abc", true],
    ["abc", "abd", false],
    ["a.c", "a[xyz]c", true],
    ["[^]", "^", true],
    ["\\.", "x", false],
    ["\\.", ".", true],
    ["x\\*", "x*", false],
    ["x\\*", "x.", true],
    ["x\\*", "xx", false],
    ["[]", ".*", false]
  ])("%s and %s intersect: %s", (a, b, expected) => {
    expect(match(a, b)).toBe(expected)
    expect(match(b, a)).toBe(expected)
  })

  it("needs a common non-empty string", () => {
    // Both accept only the empty string in common.
    expect(match("a*", "b*")).toBe(false)
    expect(match("a*", "a*")).toBe(true)
    expect(match("a*", "")).toBe(false)
    // ...except that two empty patterns match, as in OPA.
    expect(match("", "")).toBe(true)
  })

  it("explores every way the repetitions can line up", () => {
    // The only common string is "aab": the star must give up its last "a" to the literal.
    expect(match("a*ab", "aa.")).toBe(true)
    expect(match("[ab]*c[ab]*", "a+cb+")).toBe(true)
    expect(match("[ab]*c[ab]*", "a+cd")).toBe(false)
    expect(match("(x)", "[()]x[()]")).toBe(true)
  })

  it("reports the library's syntax errors with input and position", () => {
    expect(failure("pqrs]", "[a-b]+")).toBe("eval_builtin_error: input:pqrs], pos:5, set-close ']' with no preceding '[': the input provided is invalid")
    expect(failure("a", "[")).toBe("eval_builtin_error: input:[, pos:1, found [ without matching ]: the input provided is invalid")
    expect(failure("*a", "a")).toBe("eval_builtin_error: input:*a, pos:1, flag '*' must be preceded by a non-flag: the input provided is invalid")
    expect(failure("a++", "a")).toBe("eval_builtin_error: input:a++, pos:3, flag '+' must be preceded by a non-flag: the input provided is invalid")
    expect(failure("[z-a]", "a")).toBe("eval_builtin_error: input:[z-a], pos:4, range is out of order: 'a' comes before 'z' in Unicode: the input provided is invalid")
    expect(failure("[-a]", "a")).toBe("eval_builtin_error: input:[-a], pos:2, range character '-' must be preceded by a Unicode character: the input provided is invalid")
    expect(failure("[a-]", "a")).toBe("eval_builtin_error: input:[a-], pos:3, range character '-' must be followed by a Unicode character: the input provided is invalid")
    expect(failure("a\\", "a")).toBe("eval_builtin_error: input:a\\, pos:1, input ends with a \\ (escape) character: the input provided is invalid")
    expect(failure(1, "a")).toBe("eval_type_error: operand 1 must be string but got number")
  })
})
