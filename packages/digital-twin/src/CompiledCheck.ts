/**
 * A faster decoder for the large answers of the digital twin (a month of 15-minute readings is
 * about 2,900 rows per fetcher), with the same result as `Schema.decodeUnknown`.
 *
 * Effect's parser is general: every row of `Schema.Array(Schema.Struct(...))` becomes a new
 * object built field by field, each field's result wrapped in an `Either`, so checking a month of
 * readings costs 2 – 4 ms of CPU and as much garbage per answer, more than parsing its JSON. The
 * readings' schemas have no transformations (what the twin sends is what the client gets), so the
 * check can be compiled once into plain JavaScript: `typeof` tests, the refinements' own filters
 * (`Schema.Int`, `Schema.pattern`, ...), no copying.
 *
 * The compiled check only says "valid, and exactly what decoding would produce": it accepts a
 * value only if every property is declared and valid (an undeclared key, which decoding would
 * strip, is not accepted). Whatever it does not accept goes through `Schema.decodeUnknown` of the
 * same schema, so a malformed answer fails with Effect's own message naming the field, and a
 * valid value the check is too strict for (an extra key) is decoded as before. Schemas it cannot
 * compile (transformations, declarations, suspensions, index signatures, ...) keep the ordinary
 * decoding.
 */
import { Option, ParseResult, Schema, SchemaAST as AST } from "effect"

type Check = (input: unknown) => boolean

const hasOwn = Object.prototype.hasOwnProperty

/** A plain-JavaScript check of `ast`, or `undefined` when `ast` has parts it does not handle. */
export const compile = (ast: AST.AST): Check | undefined => {
  switch (ast._tag) {
    case "StringKeyword":
      return (u) => typeof u === "string"
    case "NumberKeyword":
      return (u) => typeof u === "number"
    case "BooleanKeyword":
      return (u) => typeof u === "boolean"
    case "UndefinedKeyword":
      return (u) => u === undefined
    case "UnknownKeyword":
    case "AnyKeyword":
      return () => true
    case "Literal": {
      const literal = ast.literal
      return (u) => u === literal
    }
    case "Refinement": {
      const from = compile(ast.from)
      if (from === undefined) return undefined
      const filter = ast.filter
      return (u) => from(u) && filter(u, AST.defaultParseOption, ast)._tag === "None"
    }
    case "Union": {
      const members: Array<Check> = []
      for (const member of ast.types) {
        const check = compile(member)
        if (check === undefined) return undefined
        members.push(check)
      }
      return (u) => {
        for (let i = 0; i < members.length; i++) if (members[i](u)) return true
        return false
      }
    }
    case "TupleType": {
      // Arrays only (`Schema.Array(item)`): no fixed elements, one rest element.
      if (ast.elements.length !== 0 || ast.rest.length !== 1) return undefined
      const item = compile(ast.rest[0].type)
      if (item === undefined) return undefined
      return (u) => {
        if (!Array.isArray(u)) return false
        for (let i = 0; i < u.length; i++) if (!item(u[i])) return false
        return true
      }
    }
    case "TypeLiteral": {
      if (ast.indexSignatures.length === 1 && ast.propertySignatures.length === 0) {
        // `Schema.Record({ key: Schema.String, value })`: every own key is a string (as in any
        // parsed JSON) and its value passes; decoding copies such an object key by key.
        const signature = ast.indexSignatures[0]
        if (signature.parameter._tag !== "StringKeyword") return undefined
        const value = compile(signature.type)
        if (value === undefined) return undefined
        return (u) => {
          if (typeof u !== "object" || u === null || Array.isArray(u)) return false
          if (Object.getOwnPropertySymbols(u).length !== 0) return false
          const record = u as Record<string, unknown>
          for (const key in record) if (hasOwn.call(record, key) && !value(record[key])) return false
          return true
        }
      }
      if (ast.indexSignatures.length !== 0) return undefined
      const names: Array<string> = []
      const optional: Array<boolean> = []
      const checks: Array<Check> = []
      for (const property of ast.propertySignatures) {
        const check = compile(property.type)
        if (check === undefined || typeof property.name !== "string") return undefined
        names.push(property.name)
        optional.push(property.isOptional)
        checks.push(check)
      }
      return structCheck(names, optional, checks, ast.propertySignatures.map((p) => inlineTest(p.type)))
    }
    default:
      return undefined
  }
}

/** A check of a keyword written out as an expression on `v`, for the generated struct checks. */
const inlineTest = (ast: AST.AST): string | undefined => {
  switch (ast._tag) {
    case "StringKeyword":
      return `typeof v === "string"`
    case "NumberKeyword":
      return `typeof v === "number"`
    case "BooleanKeyword":
      return `typeof v === "boolean"`
    default:
      return undefined
  }
}

/**
 * The check of a struct, generated once per schema: a row of readings is checked by reading each
 * declared property by its name (a named property read keeps one inline cache per property, fast
 * over thousands of rows of the same shape, where a read by a variable name goes through V8's
 * generic keyed lookup every time), with the plain `typeof` tests written inline. Same verdict as
 * the loop it replaces: every declared property present (or optional and absent) and valid, and
 * no own enumerable key beyond them (`Object.keys`, as the loop's `for in` + `hasOwnProperty`).
 */
const structCheck = (
  names: ReadonlyArray<string>,
  optional: ReadonlyArray<boolean>,
  checks: ReadonlyArray<Check>,
  inline: ReadonlyArray<string | undefined>
): Check => {
  let body = `if (typeof u !== "object" || u === null || Array.isArray(u)) return false\nlet present = 0\nlet v\n`
  for (let i = 0; i < names.length; i++) {
    const key = JSON.stringify(names[i])
    const test = inline[i] ?? `checks[${i}](v)`
    body += `v = u[${key}]\n`
    body += optional[i]
      ? `if (v !== undefined || hasOwn.call(u, ${key})) {\npresent++\nif (!(${test})) return false\n}\n`
      : `if (v === undefined && !hasOwn.call(u, ${key})) return false\npresent++\nif (!(${test})) return false\n`
  }
  // Any key beyond the declared ones: decoding would drop it, so this is not "as decoded".
  body += `return Object.keys(u).length === present\n`
  // The code is built above from the schema's own names, quoted by JSON.stringify.
  const factory = new Function("hasOwn", "checks", `"use strict"\nreturn (u) => {\n${body}}`) as (
    own: typeof hasOwn,
    all: ReadonlyArray<Check>
  ) => Check
  return factory(hasOwn, checks)
}

/**
 * `schema`, decoded through its compiled check when it has one (see the module); the same type,
 * encoded as before. Meant for the client's side of a contract, where only decoding is used.
 */
export const withCompiledCheck = <A, I>(schema: Schema.Schema<A, I>): Schema.Schema<A, I> => {
  const check = compile(schema.ast)
  if (check === undefined) return schema
  const decode = ParseResult.decodeUnknown(schema)
  const encode = ParseResult.encodeUnknown(schema)
  return Schema.declare([], {
    decode: () => (input, options) => check(input) ? ParseResult.succeed(input as A) : decode(input, options),
    encode: () => (input, options) => encode(input, options)
  }, { identifier: Option.getOrElse(AST.getIdentifierAnnotation(schema.ast), () => "CompiledCheck") })
}
