import { describe, expect, it } from "@effect/vitest"
import { JsonBody } from "@rec/platform"
import * as fc from "effect/FastCheck"

const thrown = (text: string, depth = 64): unknown => {
  try {
    JsonBody.parse(text, depth)
    return undefined
  } catch (error) {
    return error
  }
}

describe("JsonBody", () => {
  it("counts nesting outside strings only, escapes included", () => {
    expect(JsonBody.exceedsDepth("[[[]]]", 3)).toBe(false)
    expect(JsonBody.exceedsDepth("[[[[]]]]", 3)).toBe(true)
    expect(JsonBody.exceedsDepth(`{"a": "[[[[[[\\"[[[[", "b": [[1]]}`, 3)).toBe(false)
    expect(JsonBody.exceedsDepth(`["\\\\", [[[ ]]]]`, 3)).toBe(true)
  })

  it("parses what JSON.parse parses within the limit, refuses deeper bodies", () => {
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 8 }), (value) => {
      const text = JSON.stringify(value)
      expect(JsonBody.parse(text, 64)).toEqual(JSON.parse(text))
    }))
    expect(JsonBody.parse("", 64)).toBeNull()
    expect(thrown("[".repeat(65) + "]".repeat(65))).toBeInstanceOf(JsonBody.JsonTooDeep)
    expect(thrown("[".repeat(100_000))).toBeInstanceOf(JsonBody.JsonTooDeep)
  })

  it("names where invalid JSON breaks, with a reason", () => {
    const cases: ReadonlyArray<[string, string]> = [
      ["{", "unexpected end of input (expected a property name in double quotes) at line 1, column 2 (offset 1)"],
      ["{\"a\" 1}", "unexpected \"1\" (expected \":\") at line 1, column 6 (offset 5)"],
      ["[1,]", "unexpected \"]\" (expected a value) at line 1, column 4 (offset 3)"],
      ["[1 2]", "unexpected \"2\" (expected \",\" or \"]\") at line 1, column 4 (offset 3)"],
      ["nul", "unexpected end of input (expected null) at line 1, column 4 (offset 3)"],
      ["{\"a\": tru}", "unexpected \"}\" (expected true) at line 1, column 10 (offset 9)"],
      ["\"a\\qb\"", "invalid escape in a string at line 1, column 4 (offset 3)"],
      ["\"a\\u12x4\"", "invalid \\u escape in a string at line 1, column 5 (offset 4)"],
      ["\"a\u0001\"", "control character in a string at line 1, column 3 (offset 2)"],
      ["{} []", "unexpected \"[\" after the value at line 1, column 4 (offset 3)"],
      ["01", "unexpected \"1\" after the value at line 1, column 2 (offset 1)"],
      ["\n\n  \"open", "unterminated string (it starts here) at line 3, column 3 (offset 4)"]
    ]
    for (const [text, where] of cases) {
      const error = thrown(text)
      expect(error, text).toBeInstanceOf(JsonBody.InvalidJson)
      expect((error as Error).message, text).toBe(`The request body is not valid JSON: ${where}`)
    }
  })
})
