// json.verify_schema / json.match_schema beyond OPA's conformance suite: every keyword family,
// gojsonschema's error texts, types and fields, exact numbers, drafts, references and formats.
import { describe, expect, it } from "vitest"
import { fromJSON } from "@rec/rego/value"
import { builtinFailure, callBuiltinJSON } from "./helpers.js"

const call = (name: string, ...args: unknown[]): unknown => callBuiltinJSON(name, args.map((a) => fromJSON(a)))

/** The `error` texts of a match (none when it succeeds); scalar documents are passed as JSON text. */
const errors = (doc: unknown, schema: unknown): string[] => {
  const document = typeof doc === "object" && doc !== null ? doc : typeof doc === "bigint" ? doc.toString() : JSON.stringify(doc)
  return errorsOfText(document, schema)
}

/** Like errors, with the document given as is (JSON text when it is a string). */
const errorsOfText = (doc: unknown, schema: unknown): string[] => {
  const [ok, errs] = call("json.match_schema", doc, schema) as [boolean, Array<{ error: string }>]
  expect(ok).toBe(errs.length === 0)
  return errs.map((e) => e.error)
}

const verify = (schema: unknown): unknown => call("json.verify_schema", schema)

const failure = (name: string, ...args: unknown[]): string => builtinFailure(() => call(name, ...args))

describe("json.match_schema", () => {
  it("reports each error with its type, field and description", () => {
    const [ok, errs] = call("json.match_schema", { a: { b: "x" } }, { properties: { a: { properties: { b: { type: "integer" } } } } }) as [boolean, unknown[]]
    expect(ok).toBe(false)
    expect(errs).toEqual([{ desc: "Invalid type. Expected: integer, given: string", error: "a.b: Invalid type. Expected: integer, given: string", field: "a.b", type: "invalid_type" }])
  })

  it("validates objects", () => {
    const schema = {
      type: "object",
      required: ["a", "z"],
      additionalProperties: false,
      minProperties: 5,
      properties: { a: { type: "string" }, n: true, z: {} },
      patternProperties: { "^x-": { type: "number" } }
    }
    expect(errors({ a: "s", "x-1": "no", extra: 1 }, schema)).toEqual([
      "(root): Must have at least 5 properties",
      "(root): z is required",
      "(root): Additional property extra is not allowed",
      "x-1: Invalid type. Expected: number, given: string"
    ])
    expect(errors({ a: "s", z: 1, "x-1": 1, n: null, "x-2": 2.5 }, schema)).toEqual([])
    expect(errors({ ab: 1 }, { propertyNames: { maxLength: 1 } })).toEqual(['(root): Property name of "ab" does not match', "(root): String length must be less than or equal to 1"])
    expect(errors({ a: 1 }, { dependencies: { a: ["b"], c: { required: ["d"] } } })).toEqual(["(root): Has a dependency on b"])
    expect(errors({ c: 1 }, { dependencies: { c: { required: ["d"] } } })).toEqual(["(root): d is required"])
  })

  it("validates arrays", () => {
    expect(errors([1, 1, 2], { type: "array", uniqueItems: true, maxItems: 2, items: { type: "integer" } })).toEqual([
      "(root): Array must have at most 2 items",
      "(root): array items[0,1] must be unique"
    ])
    expect(errors([1, "a", null], { items: [{ type: "integer" }, { type: "string" }], additionalItems: false })).toEqual(["(root): No additional items allowed on array"])
    expect(errors([1, "a", null], { items: [{ type: "integer" }], additionalItems: { type: "string" } })).toEqual(["2: Invalid type. Expected: string, given: null"])
    expect(errors([1, 2], { contains: { type: "string" } })).toEqual([
      "(root): At least one of the items must match",
      "0: Invalid type. Expected: string, given: integer"
    ])
    expect(errors([], { minItems: 1 })).toEqual(["(root): Array must have at least 1 items"])
  })

  it("compares numbers exactly", () => {
    expect(errors(0.3, { multipleOf: 0.1 })).toEqual([])
    expect(errors(0.35, { multipleOf: 0.1 })).toEqual(["(root): Must be a multiple of 0.1"])
    expect(errors(1.0, { type: "integer" })).toEqual([])
    expect(errors("1.0", { type: "integer" })).toEqual(["(root): Invalid type. Expected: integer, given: string"])
    expect(errors(1.5, { type: ["integer", "string"] })).toEqual(["(root): Invalid type. Expected: [integer,string], given: number"])
    expect(errors(2000000, { maximum: 1000000 })).toEqual(["(root): Must be less than or equal to 1e+06"])
    expect(errors(5, { exclusiveMaximum: 5 })).toEqual(["(root): Must be less than 5"])
    expect(errors(5, { minimum: 5.5 })).toEqual(["(root): Must be greater than or equal to 5.5"])
    expect(errors(9007199254740993n, { maximum: 9007199254740992 })).toEqual(["(root): Must be less than or equal to 9.007199254740992e+15"])
    // A document given as JSON text keeps its numbers' exact text.
    expect(errorsOfText("0.30000000000000000001", { maximum: 0.3 })).toEqual(["(root): Must be less than or equal to 0.3"])
  })

  it("validates strings by code points and RE2 patterns", () => {
    expect(errors("h\u00e9", { minLength: 3 })).toEqual(["(root): String length must be greater than or equal to 3"])
    expect(errors("ab1", { pattern: "^[a-z]+$" })).toEqual(["(root): Does not match pattern '^[a-z]+$'"])
    expect(errors("xab1", { pattern: "ab" })).toEqual([])
  })

  it("compares enum and const values as JSON", () => {
    expect(errors({ a: [1.0] }, { enum: [{ a: [1] }] })).toEqual([])
    expect(errors("c", { enum: ["a", { "<": 1 }] })).toEqual(['(root): (root) must be one of the following: "a", {"\\u003c":1}'])
    expect(errors({ k: 2 }, { properties: { k: { const: 1 } } })).toEqual(["k: k does not match: 1"])
    expect(errors(1, { enum: [] })).toEqual(["(root): (root) must be one of the following: (none)"])
  })

  it("combines schemas with anyOf, oneOf, allOf, not and if/then/else", () => {
    expect(errors(5, { anyOf: [{ type: "string" }, { type: "integer", maximum: 3 }] })).toEqual([
      "(root): Must validate at least one schema (anyOf)",
      "(root): Must be less than or equal to 3"
    ])
    expect(errors(5, { oneOf: [{ type: "integer" }, { minimum: 1 }] })).toEqual(["(root): Must validate one and only one schema (oneOf)"])
    expect(errors(5, { allOf: [{ type: "integer" }, { maximum: 1 }] })).toEqual(["(root): Must be less than or equal to 1", "(root): Must validate all the schemas (allOf)"])
    expect(errors(5, { not: { type: "integer" } })).toEqual(["(root): Must not validate the schema (not)"])
    const cond = { if: { properties: { kind: { const: "a" } } }, then: { required: ["x"] }, else: { required: ["y"] } }
    expect(errors({ kind: "a" }, cond)).toEqual(['(root): Must validate "then" as "if" was valid', "(root): x is required"])
    expect(errors({ kind: "b" }, cond)).toEqual(['(root): Must validate "else" as "if" was not valid', "(root): y is required"])
    expect(errors(1, "false")).toEqual(["(root): False always fails validation"])
  })

  it("follows references within the schema, including recursive ones", () => {
    const tree = {
      definitions: { node: { type: "object", properties: { value: { type: "integer" }, children: { type: "array", items: { $ref: "#/definitions/node" } } } } },
      $ref: "#/definitions/node"
    }
    expect(errors({ value: 1, children: [{ value: 2, children: [{ value: "x" }] }] }, tree)).toEqual(["children.0.children.0.value: Invalid type. Expected: integer, given: string"])
    const byId = { $id: "http://example.com/root.json", properties: { a: { $ref: "item.json" } }, definitions: { item: { $id: "item.json", type: "string" } } }
    expect(errors({ a: 1 }, byId)).toEqual(["a: Invalid type. Expected: string, given: integer"])
    expect(errors({ "a/b": 1 }, { properties: { "a/b": { $ref: "#/definitions/a~1b" } }, definitions: { "a/b": { type: "string" } } })).toEqual([
      "a/b: Invalid type. Expected: string, given: integer"
    ])
  })

  it("honours the draft named by $schema", () => {
    const draft4 = { $schema: "http://json-schema.org/draft-04/schema#", minimum: 1, exclusiveMinimum: true }
    expect(errors(1, draft4)).toEqual(["(root): Must be greater than 1"])
    expect(verify({ $schema: "http://json-schema.org/draft-07/schema#", exclusiveMinimum: true })).toEqual([false, "jsonschema: Invalid type. Expected: number, given: exclusiveMinimum"])
    // Draft 4 has no boolean schemas and no "const".
    expect(verify({ $schema: "http://json-schema.org/draft-04/schema#", properties: { a: true } })).toEqual([false, "jsonschema: Expected: valid schema, given: Invalid JSON"])
    expect(errors(2, { $schema: "http://json-schema.org/draft-04/schema#", const: 1 })).toEqual([])
  })

  it("checks gojsonschema's formats and passes unknown ones", () => {
    const fmt = (format: string, value: string): boolean => errors(value, { format }).length === 0
    expect(fmt("date", "2024-02-29")).toBe(true)
    expect(fmt("date", "2023-02-29")).toBe(false)
    expect(fmt("date-time", "2024-02-29T10:00:00.5+01:00")).toBe(true)
    expect(fmt("date-time", "2024-02-29 10:00:00")).toBe(false)
    expect(fmt("time", "10:00:00")).toBe(true)
    expect(fmt("email", "Jane Doe <jane@example.com>")).toBe(true)
    expect(fmt("email", "jane@")).toBe(false)
    expect(fmt("ipv4", "10.0.0.1")).toBe(true)
    expect(fmt("ipv4", "10.0.0.01")).toBe(false)
    expect(fmt("ipv6", "fe80::1:2")).toBe(true)
    expect(fmt("ipv6", "10.0.0.1")).toBe(false)
    expect(fmt("hostname", "a-b.example.com")).toBe(true)
    expect(fmt("hostname", "-a.example.com")).toBe(false)
    expect(fmt("uri", "https://example.com/a?b#c")).toBe(true)
    expect(fmt("uri", "/relative")).toBe(false)
    expect(fmt("uri-reference", "/relative/%zz")).toBe(false)
    expect(fmt("uri-template", "/users/{id}")).toBe(true)
    expect(fmt("uuid", "6BEA8EF2-D3D3-3CD1-84E0-9BAB06A52ECE")).toBe(true)
    expect(fmt("regex", "a(b")).toBe(false)
    expect(fmt("json-pointer", "/a/~1b")).toBe(true)
    expect(fmt("json-pointer", "a")).toBe(false)
    expect(fmt("relative-json-pointer", "1/a")).toBe(true)
    expect(fmt("no-such-format", "anything")).toBe(true)
    // Formats only apply to strings.
    expect(errors(5, { format: "email" })).toEqual([])
  })

  it("raises errors for documents or schemas it cannot load", () => {
    expect(failure("json.match_schema", "{", {})).toBe("eval_builtin_error: invalid JSON string")
    expect(failure("json.match_schema", 5, {})).toBe("eval_builtin_error: wrong type, expected string or object")
    expect(failure("json.match_schema", {}, true)).toBe("eval_builtin_error: wrong type, expected string or object")
    expect(failure("json.match_schema", {}, { type: "unknown" })).toBe(
      "eval_builtin_error: has a primitive type that is NOT VALID -- given: /unknown/ Expected valid values are:[array boolean integer number null object string]"
    )
  })
})

describe("json.verify_schema", () => {
  it("accepts valid schemas given as objects or JSON text", () => {
    expect(verify({ type: "boolean" })).toEqual([true, null])
    expect(verify('{"type": ["string", "null"]}')).toEqual([true, null])
    expect(verify("true")).toEqual([true, null])
  })

  it("returns gojsonschema's message for invalid schemas", () => {
    const msg = (schema: unknown): unknown => (verify(schema) as [boolean, string])[1]
    expect(msg({ type: ["string", "string"] })).toBe("jsonschema: string type is duplicated")
    expect(msg({ type: 5 })).toBe("jsonschema: Invalid type. Expected: type, given: string/array of strings")
    expect(msg({ minLength: 3, maxLength: 2 })).toBe("jsonschema: minLength cannot be greater than maxLength")
    expect(msg({ minItems: -1 })).toBe("jsonschema: minItems must be greater than or equal to 0")
    expect(msg({ minItems: 1.5 })).toBe("jsonschema: minItems must be of an integer")
    expect(msg({ multipleOf: 0 })).toBe("jsonschema: multipleOf must be strictly greater than 0")
    expect(msg({ required: ["a", "a"] })).toBe("jsonschema: required items must be unique")
    expect(msg({ required: "a" })).toBe("jsonschema: required must be of an array")
    expect(msg({ enum: [1, 1.0] })).toBe("jsonschema: enum items must be unique")
    expect(msg({ pattern: "a(" })).toBe("jsonschema: pattern must be a valid regex")
    expect(msg({ patternProperties: { "a(": {} } })).toBe("jsonschema: Invalid regex pattern 'a('")
    expect(msg({ properties: 1 })).toBe("jsonschema: properties must be of type object")
    expect(msg({ exclusiveMinimum: true })).toBe("jsonschema: exclusiveMinimum cannot be used without minimum")
    expect(msg({ $ref: "#/definitions/missing" })).toBe("jsonschema: Object has no key 'definitions'")
    expect(msg({ $ref: "http://example.com/other.json" })).toBe(
      'jsonschema: cannot load the referenced schema "http://example.com/other.json": references to other documents are not fetched'
    )
    expect(msg("{")).toBe("jsonschema: invalid JSON string")
    expect(msg(1)).toBe("jsonschema: wrong type, expected string or object")
    expect(msg("[]")).toBe("jsonschema: schema is invalid")
  })
})
