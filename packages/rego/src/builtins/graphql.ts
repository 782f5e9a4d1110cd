// graphql.* builtins: parse GraphQL queries and schemas into OPA's AST shape, validate schemas
// the way gqlparser does and queries with graphql-js's rules.
//
// Errors read as OPA writes them: gqlparser's message, then "in GraphQL string at location
// L:C" (OPA cuts gqlparser's `input:L:C: message` text apart on colons, see `opaMessage`).

import { type Value, isObject } from "../value.js"
import { str } from "./args.js"
import { type QueryDocument, type SchemaDocument, DecodeError, decodeQueryDocument, decodeSchemaDocument, encodeQueryDocument, encodeSchemaDocument } from "./graphql-ast.js"
import { GqlError, parseQuery, parseSchema } from "./graphql-parser.js"
import { type Schema, validateSchemaDocument } from "./graphql-schema.js"
import { type CompiledSchema, ConversionError, compileSchema, validateQuery } from "./graphql-validate.js"
import { asBuiltinError, type BuiltinDef, BuiltinError, builtinError, typeError } from "./registry.js"

/** Go's strings.SplitN. */
const splitN = (s: string, sep: string, n: number): string[] => {
  const out: string[] = []
  let rest = s
  while (out.length < n - 1) {
    const i = rest.indexOf(sep)
    if (i < 0) break
    out.push(rest.slice(0, i))
    rest = rest.slice(i + sep.length)
  }
  out.push(rest)
  return out
}

/**
 * OPA's rewrite of gqlparser's error text `file:line:column: message` into
 * `message in GraphQL string at location line:column`. Validation errors come as a list, one
 * per line, of which OPA trims the final ".\n".
 */
const opaMessage = (errorText: string, trimPeriod: boolean): string => {
  const parts = splitN(errorText, ":", 4)
  // OPA indexes past the end of a shorter split (an error without a location): keep the text.
  if (parts.length < 4) return errorText.trim()
  let message = parts[3].replace(/^ +/, "")
  if (trimPeriod && message.endsWith(".\n")) message = message.slice(0, -2)
  return `${message} in GraphQL string at location ${parts[1]}:${parts[2]}`
}

const parseError = (e: GqlError): BuiltinError => builtinError(opaMessage(e.toString(), false))

const queryFromString = (s: string): QueryDocument => {
  const r = parseQuery(s)
  if ("error" in r) throw parseError(r.error)
  return r.doc
}

const schemaFromString = (s: string): SchemaDocument => {
  const r = parseSchema(s)
  if ("error" in r) throw parseError(r.error)
  return r.doc
}

const decoded = <T>(decode: (v: Value) => T, v: Value): T => asBuiltinError(DecodeError, () => decode(v))

/** A query operand: GraphQL text or an AST object (OPA's objectToQueryDocument). */
const queryOperand = (v: Value, pos: number): QueryDocument => {
  if (typeof v === "string") return queryFromString(v)
  if (isObject(v)) return decoded(decodeQueryDocument, v)
  throw typeError(pos, v, "string", "object")
}

const schemaOperand = (v: Value, pos: number): SchemaDocument => {
  if (typeof v === "string") return schemaFromString(v)
  if (isObject(v)) return decoded(decodeSchemaDocument, v)
  throw typeError(pos, v, "string", "object")
}

// ---------------------------------------------------------------------------------------------
// Validated schemas, cached by their text: policies validate many queries against one schema.

type SchemaEntry = { readonly schema: Schema; compiled?: CompiledSchema } | { readonly error: string }

const MAX_CACHED_SCHEMAS = 32
const schemaCache = new Map<string, SchemaEntry>()

const checkSchema = (doc: SchemaDocument): SchemaEntry => {
  try {
    return { schema: validateSchemaDocument(doc) }
  } catch (e) {
    if (e instanceof GqlError) return { error: `Error in gqlparser SchemaDocument to Schema conversion: ${e.toString()}` }
    throw e
  }
}

/**
 * The validated schema of a schema operand. Schemas given as GraphQL text are cached by their
 * text (a parse error is not cached: it is thrown again); `parsed` saves parsing them twice.
 */
const validatedSchema = (operand: Value, pos: number, parsed?: SchemaDocument): SchemaEntry => {
  if (typeof operand !== "string") return checkSchema(parsed ?? schemaOperand(operand, pos))
  let entry = schemaCache.get(operand)
  if (entry !== undefined) {
    schemaCache.delete(operand)
  } else {
    entry = checkSchema(parsed ?? schemaFromString(operand))
    if (schemaCache.size >= MAX_CACHED_SCHEMAS) schemaCache.delete(schemaCache.keys().next().value as string)
  }
  schemaCache.set(operand, entry)
  return entry
}

/** Validates the schema, then the query against it; throws the first failure as OPA reports it. */
const verify = (query: QueryDocument, schemaOperandValue: Value, parsedSchema?: SchemaDocument): void => {
  const entry = validatedSchema(schemaOperandValue, 1, parsedSchema)
  if ("error" in entry) throw builtinError(entry.error)
  let errors: GqlError[]
  try {
    entry.compiled ??= compileSchema(entry.schema)
    errors = validateQuery(entry.compiled, query)
  } catch (e) {
    // A hand-built AST object that graphql-js cannot take (OPA panics on those).
    if (e instanceof ConversionError) throw builtinError(e.message)
    throw e
  }
  if (errors.length > 0) throw builtinError(opaMessage(errors.map((e) => e.toString() + "\n").join(""), true))
}

/** Parses and verifies both operands; returns their ASTs (taken before validation, as OPA does). */
const parseAndVerify = (q: Value, s: Value): [Value, Value] => {
  const query = queryOperand(q, 0)
  const schema = schemaOperand(s, 1)
  const result: [Value, Value] = [encodeQueryDocument(query), encodeSchemaDocument(schema)]
  verify(query, s, schema)
  return result
}

/** Runs f; a builtin error (bad operand, parse or validation failure) becomes `fallback`. */
const orElse = <T>(f: () => T, fallback: T): T => {
  try {
    return f()
  } catch (e) {
    if (e instanceof BuiltinError) return fallback
    throw e
  }
}

export const graphqlBuiltins: BuiltinDef[] = [
  { name: "graphql.parse_query", arity: 1, fn: ([q]) => encodeQueryDocument(queryFromString(str(q, 1))) },
  { name: "graphql.parse_schema", arity: 1, fn: ([s]) => encodeSchemaDocument(schemaFromString(str(s, 1))) },
  { name: "graphql.parse", arity: 2, fn: ([q, s]) => parseAndVerify(q, s) },
  {
    name: "graphql.parse_and_verify",
    arity: 2,
    fn: ([q, s]) => orElse<Value>(() => [true, ...parseAndVerify(q, s)], [false, {}, {}])
  },
  {
    name: "graphql.is_valid",
    arity: 2,
    fn: ([q, s]) =>
      orElse(() => {
        verify(queryOperand(q, 0), s)
        return true
      }, false)
  },
  {
    name: "graphql.schema_is_valid",
    arity: 1,
    fn: ([s]) => orElse(() => !("error" in validatedSchema(s, 0)), false)
  }
]
