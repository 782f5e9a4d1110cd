// graphql.* beyond OPA's conformance suite: lexer edge cases and positions, gqlparser's
// block-string quirk, schema validation rules, query validation messages, and the AST-object
// round trip (including OPA's decoding quirks).
import { describe, expect, it } from "vitest"
import { Rego } from "@rec/rego/rego"
import type { Value } from "@rec/rego/value"
import { builtinFailure, callBuiltinJSON } from "./helpers.js"

/** Calls a builtin; returns its result as JSON, or throws its BuiltinError. */
const call = (name: string, ...args: Value[]): unknown => callBuiltinJSON(name, args)

/** The message of the builtin error a call raises. */
const failure = (name: string, ...args: Value[]): string => builtinFailure(() => call(name, ...args))

const value = (raw: string, kind: number): unknown => ({ Raw: raw, Kind: kind, ExpectedTypeHasDefault: false })

/** The value of the argument of the first field of the first operation. */
const firstArgument = (query: string): unknown => {
  const ast = call("graphql.parse_query", query) as { Operations: Array<{ SelectionSet: Array<{ Arguments: Array<{ Value: unknown }> }> }> }
  return ast.Operations[0].SelectionSet[0].Arguments[0].Value
}

const SCHEMA = `
  type Query {
    user(id: ID!): User
    users(first: Int = 10, role: Role): [User!]!
  }
  type User { id: ID!, name: String, friends: [User] }
  enum Role { ADMIN MEMBER }
`

describe("graphql.parse_query", () => {
  it("reads escapes, block strings and numbers as gqlparser does", () => {
    expect(firstArgument(`{ f(a: "\\u00e9\\n\\"") }`)).toEqual(value('é\n"', 3))
    expect(firstArgument('{ f(a: """\n    first\n      second\n    """) }')).toEqual(value("first\n  second", 4))
    // gqlparser counts the first line when computing the common indentation (the spec does not).
    expect(firstArgument('{ f(a: """  first\n      second""") }')).toEqual(value("  first\n    second", 4))
    expect(firstArgument("{ f(a: -1.5e3) }")).toEqual(value("-1.5e3", 2))
  })

  it("keeps the Go structs' zero values and drops what OPA prunes", () => {
    expect(call("graphql.parse_query", "query Q($v: [Int!]! = [1]) @dir { ...F }")).toEqual({
      Operations: [
        {
          Operation: "query",
          Name: "Q",
          VariableDefinitions: [
            {
              Variable: "v",
              Type: { NamedType: "", Elem: { NamedType: "Int", NonNull: true }, NonNull: true },
              DefaultValue: { Raw: "", Kind: 8, ExpectedTypeHasDefault: false, Children: [{ Name: "", Value: value("1", 1) }] },
              Used: false
            }
          ],
          Directives: [{ Name: "dir", Location: "" }],
          SelectionSet: [{ Name: "F" }]
        }
      ]
    })
  })

  it("reports positions in code points, at the token gqlparser blames", () => {
    expect(failure("graphql.parse_query", '{ f(a: "ਊ") x: }')).toBe("eval_builtin_error: Expected Name, found } in GraphQL string at location 1:16")
    // An invalid token seen through peek() is reported as <Invalid>, at the lexer's error column.
    expect(failure("graphql.parse_query", '{ f(a: "abc\n") }')).toBe("eval_builtin_error: Unexpected <Invalid> in GraphQL string at location 1:12")
    expect(failure("graphql.parse_query", "{ f(a: 01) }")).toBe("eval_builtin_error: Unexpected <Invalid> in GraphQL string at location 1:9")
    expect(failure("graphql.parse_query", "{ f ^ }")).toBe("eval_builtin_error: Expected Name, found <Invalid> in GraphQL string at location 1:5")
    expect(failure("graphql.parse_query", "query {\n  a\n  b(\n}")).toBe("eval_builtin_error: Expected Name, found } in GraphQL string at location 4:1")
  })

  it("reports the lexer's own message when the parser consumes the bad token", () => {
    expect(failure("graphql.parse_query", "'x'")).toBe("eval_builtin_error: Unexpected <Invalid> in GraphQL string at location 1:1")
    // parseOperationType reads its token with next(), which surfaces the lexer's error.
    expect(failure("graphql.parse_schema", "schema { 'x' }")).toBe(
      "eval_builtin_error: Unexpected single quote character ('), did you mean to use a double quote (\")? in GraphQL string at location 1:10"
    )
  })

  it("wants a string", () => {
    expect(failure("graphql.parse_query", 1)).toBe("eval_type_error: operand 1 must be string but got number")
  })
})

describe("graphql.parse_schema", () => {
  it("parses descriptions, directives, default values and schema extensions", () => {
    const ast = call(
      "graphql.parse_schema",
      '"""\n  A user.\n  """\ntype User implements Node @key(fields: "id") {\n  "The id" id("arg doc" format: Format = HEX): ID!\n}\nextend schema @link(url: "x") { query: Q }\ndirective @key(fields: String!) repeatable on OBJECT | INTERFACE'
    )
    expect(ast).toEqual({
      Definitions: [
        {
          Kind: "OBJECT",
          Description: "A user.",
          Name: "User",
          Directives: [{ Name: "key", Arguments: [{ Name: "fields", Value: value("id", 3) }], Location: "" }],
          Interfaces: ["Node"],
          Fields: [
            {
              Description: "The id",
              Name: "id",
              Arguments: [{ Description: "arg doc", Name: "format", DefaultValue: value("HEX", 7), Type: { NamedType: "Format", NonNull: false } }],
              Type: { NamedType: "ID", NonNull: true }
            }
          ],
          BuiltIn: false
        }
      ],
      SchemaExtension: [{ Description: "", Directives: [{ Name: "link", Arguments: [{ Name: "url", Value: value("x", 3) }], Location: "" }], OperationTypes: [{ Operation: "query", Type: "Q" }] }],
      Directives: [{ Description: "", Name: "key", Arguments: [{ Description: "", Name: "fields", Type: { NamedType: "String", NonNull: true } }], Locations: ["OBJECT", "INTERFACE"], IsRepeatable: true }]
    })
  })

  it("rejects variables in constant positions", () => {
    expect(failure("graphql.parse_schema", "type Q { f(a: Int = $x): Int }")).toBe("eval_builtin_error: Unexpected $ in GraphQL string at location 1:21")
  })
})

describe("graphql.schema_is_valid", () => {
  const valid = (schema: Value): unknown => call("graphql.schema_is_valid", schema)

  it("follows gqlparser's schema rules", () => {
    expect(valid(SCHEMA)).toBe(true)
    // A schema needs no query root, and extending a missing type creates it.
    expect(valid("type User { id: ID }")).toBe(true)
    expect(valid("extend type Query { a: Int }")).toBe(true)
    expect(valid("type Query { a: Int } type Query { b: Int }")).toBe(false)
    expect(valid("type Query { users: [User] }")).toBe(false)
    expect(valid("interface Node { id: ID! } type User implements Node { name: String }")).toBe(false)
    expect(valid("interface Node { id: ID! } type User implements Node { id: ID! }")).toBe(true)
    expect(valid("input In { a: Int } type Query { f(x: In): In }")).toBe(false)
    expect(valid("type Query { __secret: Int }")).toBe(false)
    expect(valid("type Query { a: Int @unknown }")).toBe(false)
    expect(valid("scalar String")).toBe(false)
    expect(valid(1)).toBe(false)
  })

  it("explains an invalid schema through graphql.parse", () => {
    expect(failure("graphql.parse", "{ a }", "type Query { a: Int } type Query { b: Int }")).toBe(
      "eval_builtin_error: Error in gqlparser SchemaDocument to Schema conversion: input:1:28: Cannot redeclare type Query."
    )
    expect(failure("graphql.parse", "{ a }", "type Query {\n  a: [Missing]\n}")).toBe(
      "eval_builtin_error: Error in gqlparser SchemaDocument to Schema conversion: input:2:7: Undefined type Missing."
    )
  })
})

describe("query validation", () => {
  const parseError = (query: string, schema = SCHEMA): string => failure("graphql.parse", query, schema)

  it("reports the first error as OPA formats it", () => {
    expect(parseError("{ nope }")).toBe('eval_builtin_error: Cannot query field "nope" on type "Query" in GraphQL string at location 1:3')
    expect(parseError("{ user { id } }")).toBe('eval_builtin_error: Field "user" argument "id" of type "ID!" is required, but it was not provided in GraphQL string at location 1:3')
    expect(parseError("{ users(role: GUEST) { id } }")).toBe('eval_builtin_error: Value "GUEST" does not exist in "Role" enum in GraphQL string at location 1:15')
    expect(parseError("query Q($r: Role) { users(role: $r) { id } } fragment Unused on User { id }")).toBe(
      'eval_builtin_error: Fragment "Unused" is never used in GraphQL string at location 1:46'
    )
    expect(parseError("{ users { ...A } } fragment A on User { friends { ...A } }")).toBe('eval_builtin_error: Cannot spread fragment "A" within itself in GraphQL string at location 1:54')
    expect(parseError("query ($x: Int) { users { id } }")).toBe('eval_builtin_error: Variable "$x" is never used in GraphQL string at location 1:8')
  })

  it("keeps the newline OPA leaves when a message has no final period", () => {
    expect(parseError("mutation { x }")).toBe('eval_builtin_error: Schema does not support operation type "mutation"\n in GraphQL string at location 1:1')
  })

  it("accepts valid queries, with variables, fragments and introspection", () => {
    const ok = (query: string): unknown => call("graphql.is_valid", query, SCHEMA)
    expect(ok("query Q($id: ID!) { user(id: $id) { ...U friends { name } } } fragment U on User { id name }")).toBe(true)
    expect(ok("{ users(first: 2, role: ADMIN) { id } __schema { queryType { name } } __typename }")).toBe(true)
    expect(ok("{ users(first: \"two\") { id } }")).toBe(false)
    expect(ok("{ user(id: 1) }")).toBe(false)
  })

  it("validates against the same schema repeatedly (cached by its text)", () => {
    for (let i = 0; i < 3; i++) expect(call("graphql.is_valid", `{ users(first: ${i}) { id } }`, SCHEMA)).toBe(true)
  })
})

describe("operands and results", () => {
  it("returns both ASTs from graphql.parse and graphql.parse_and_verify", () => {
    const query = "{ user(id: 1) { id } }"
    const [q, s] = call("graphql.parse", query, SCHEMA) as unknown[]
    expect(q).toEqual(call("graphql.parse_query", query))
    expect(s).toEqual(call("graphql.parse_schema", SCHEMA))
    expect(call("graphql.parse_and_verify", query, SCHEMA)).toEqual([true, q, s])
    expect(call("graphql.parse_and_verify", "{ nope }", SCHEMA)).toEqual([false, {}, {}])
    expect(call("graphql.parse_and_verify", 1, SCHEMA)).toEqual([false, {}, {}])
  })

  it("takes AST objects back, decoding them as Go's encoding/json would", () => {
    const schemaAst = call("graphql.parse_schema", SCHEMA) as Value
    const queryAst = call("graphql.parse_query", "query { user(id: 7) { name } }") as Value
    expect(call("graphql.is_valid", queryAst, schemaAst)).toBe(true)
    expect(call("graphql.parse", queryAst, schemaAst)).toEqual([queryAst, schemaAst])
    // Go matches struct fields case-insensitively, except in gqlparser's own decoders (OperationDefinition...).
    expect(call("graphql.parse", { operations: [{ operation: "query" }] }, schemaAst)).toEqual([{ Operations: [{ Operation: "", Name: "" }] }, schemaAst])
    expect(failure("graphql.parse", { Operations: "x" }, SCHEMA)).toBe(
      "eval_builtin_error: json: cannot unmarshal string into Go struct field QueryDocument.Operations of type []*ast.OperationDefinition"
    )
  })

  it("decodes every selection of an AST object as a field first, as OPA does", () => {
    const ast = call("graphql.parse_query", "{ user(id: 1) { ... on User { name } } }") as Value
    // The inline fragment comes back as a field named "", which the schema does not have.
    expect(call("graphql.is_valid", ast, SCHEMA)).toBe(false)
    expect(call("graphql.is_valid", "{ user(id: 1) { ... on User { name } } }", SCHEMA)).toBe(true)
  })

  it("names the operand position as OPA does for wrong types", () => {
    expect(failure("graphql.parse", 1, SCHEMA)).toBe("eval_type_error: operand 0 must be one of {string, object} but got number")
    expect(failure("graphql.parse", "{ a }", [])).toBe("eval_type_error: operand 1 must be one of {string, object} but got array")
    expect(call("graphql.is_valid", 1, SCHEMA)).toBe(false)
  })
})

describe("in a policy", () => {
  const policy = Rego.compile({
    modules: {
      "gql.rego": `package gql
        schema := ${JSON.stringify(SCHEMA)}
        allow if graphql.is_valid(input.query, schema)
        fields contains f.Name if {
          [_, ast, _] := graphql.parse_and_verify(input.query, schema)
          some f in ast.Operations[_].SelectionSet
        }`
    }
  })

  it("evaluates validity and walks the AST", () => {
    expect(policy.prepare("x := data.gql.allow").evaluate({ query: "{ users { id } }" })).toEqual([{ x: true }])
    expect(policy.prepare("x := data.gql.fields").evaluate({ query: "{ users { id } a: user(id: 1) { id } }" })).toEqual([{ x: ["user", "users"] }])
  })

  it("raises parse errors only with strict builtin errors", () => {
    const q = policy.prepare("x := graphql.parse_query(input.query)")
    expect(q.evaluate({ query: "{" })).toEqual([])
    expect(() => q.evaluate({ query: "{" }, { strictBuiltinErrors: true })).toThrow("graphql.parse_query: Expected Name, found <EOF> in GraphQL string at location 1:2")
  })
})
