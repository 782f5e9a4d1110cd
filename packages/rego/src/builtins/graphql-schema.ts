// Schema validation as gqlparser v2.5 does it (validator.ValidateSchemaDocument), which is what
// decides `graphql.schema_is_valid` and which schemas `graphql.is_valid` accepts in OPA.
//
// gqlparser's rules differ from graphql-js's buildASTSchema/validateSchema in ways policies can
// see: extending a type that does not exist creates it, a schema need not define a query root,
// extensions are merged into their base definitions, and the first failure is reported with a
// position. The user's schema is merged after gqlparser's prelude (built-in scalars, directives
// and introspection types), exactly as OPA does.

import type { Definition, DirectiveDefinition, FieldDefinition, ArgumentDefinition, Position, SchemaDocument, Type } from "./graphql-ast.js"
import { GqlError, parseSchema } from "./graphql-parser.js"
import { quoteString } from "../format.js"

/** A validated schema: the merged type definitions and the root operation types. */
export interface Schema {
  query?: Definition
  mutation?: Definition
  subscription?: Definition
  readonly types: Map<string, Definition>
  readonly directives: Map<string, DirectiveDefinition>
  readonly possibleTypes: Map<string, Array<Definition | undefined>>
}

// The implicit definitions of every schema. Descriptions are left out: they never reach a policy.
const PRELUDE = `
scalar Int
scalar Float
scalar String
scalar Boolean
scalar ID
directive @include(if: Boolean!) on FIELD | FRAGMENT_SPREAD | INLINE_FRAGMENT
directive @skip(if: Boolean!) on FIELD | FRAGMENT_SPREAD | INLINE_FRAGMENT
directive @deprecated(reason: String = "No longer supported") on FIELD_DEFINITION | ARGUMENT_DEFINITION | INPUT_FIELD_DEFINITION | ENUM_VALUE
directive @specifiedBy(url: String!) on SCALAR
type __Schema {
  description: String
  types: [__Type!]!
  queryType: __Type!
  mutationType: __Type
  subscriptionType: __Type
  directives: [__Directive!]!
}
type __Type {
  kind: __TypeKind!
  name: String
  description: String
  fields(includeDeprecated: Boolean = false): [__Field!]
  interfaces: [__Type!]
  possibleTypes: [__Type!]
  enumValues(includeDeprecated: Boolean = false): [__EnumValue!]
  inputFields: [__InputValue!]
  ofType: __Type
  specifiedByURL: String
}
type __Field {
  name: String!
  description: String
  args: [__InputValue!]!
  type: __Type!
  isDeprecated: Boolean!
  deprecationReason: String
}
type __InputValue {
  name: String!
  description: String
  type: __Type!
  defaultValue: String
}
type __EnumValue {
  name: String!
  description: String
  isDeprecated: Boolean!
  deprecationReason: String
}
enum __TypeKind { SCALAR OBJECT INTERFACE UNION ENUM INPUT_OBJECT LIST NON_NULL }
type __Directive {
  name: String!
  description: String
  locations: [__DirectiveLocation!]!
  args: [__InputValue!]!
  isRepeatable: Boolean!
}
enum __DirectiveLocation {
  QUERY MUTATION SUBSCRIPTION FIELD FRAGMENT_DEFINITION FRAGMENT_SPREAD INLINE_FRAGMENT VARIABLE_DEFINITION
  SCHEMA SCALAR OBJECT FIELD_DEFINITION ARGUMENT_DEFINITION INTERFACE UNION ENUM ENUM_VALUE INPUT_OBJECT INPUT_FIELD_DEFINITION
}
`

let prelude: SchemaDocument | undefined

/** The prelude, parsed once (validation copies definitions before merging extensions into them). */
const preludeDocument = (): SchemaDocument => {
  if (prelude === undefined) {
    const r = parseSchema(PRELUDE, "prelude.graphql", true)
    if ("error" in r) throw new Error(`the GraphQL prelude does not parse: ${r.error.toString()}`)
    prelude = r.doc
  }
  return prelude
}

/** The user's schema after the prelude, as gqlparser's SchemaDocument.Merge builds it. */
const mergeWithPrelude = (doc: SchemaDocument): SchemaDocument => {
  const p = preludeDocument()
  return {
    Schema: [...p.Schema, ...doc.Schema],
    SchemaExtension: [...p.SchemaExtension, ...doc.SchemaExtension],
    Directives: [...p.Directives, ...doc.Directives],
    Definitions: [...p.Definitions, ...doc.Definitions],
    Extensions: [...p.Extensions, ...doc.Extensions]
  }
}

const fail = (pos: Position | undefined, message: string): never => {
  throw new GqlError(message, pos)
}

/** gqlparser's Type.Name(): the innermost named type. */
export const typeName = (t: Type | undefined): string => {
  let x = t
  while (x !== undefined && x.NamedType === "" && x.Elem !== undefined) x = x.Elem
  return x?.NamedType ?? ""
}

/** gqlparser's Type.String(): `[Name!]!` notation. */
export const typeString = (t: Type | undefined): string => {
  if (t === undefined) return ""
  const nn = t.NonNull ? "!" : ""
  return t.NamedType !== "" ? t.NamedType + nn : `[${typeString(t.Elem)}]${nn}`
}

const isCompatible = (t: Type | undefined, other: Type | undefined): boolean => {
  if (t === undefined || other === undefined) return t === other
  if (t.NamedType !== other.NamedType) return false
  if (t.Elem !== undefined && other.Elem === undefined) return false
  if (t.Elem !== undefined && !isCompatible(t.Elem, other.Elem)) return false
  return other.NonNull ? t.NonNull : true
}

const isInputType = (d: Definition): boolean => d.Kind === "SCALAR" || d.Kind === "ENUM" || d.Kind === "INPUT_OBJECT"

/**
 * Validates a schema document (merged after the prelude) and builds the schema, or throws the
 * first GqlError, as gqlparser's ValidateSchemaDocument does. Definitions are copied before
 * extensions are merged into them, so `doc` is left as it was.
 */
export const validateSchemaDocument = (userDoc: SchemaDocument): Schema => {
  const doc = mergeWithPrelude(userDoc)
  const schema: Schema = { types: new Map(), directives: new Map(), possibleTypes: new Map() }
  const addPossibleType = (name: string, def: Definition | undefined): void => {
    const xs = schema.possibleTypes.get(name)
    if (xs === undefined) schema.possibleTypes.set(name, [def])
    else xs.push(def)
  }

  for (const def of doc.Definitions) {
    if (schema.types.has(def.Name)) fail(def.Position, `Cannot redeclare type ${def.Name}.`)
    schema.types.set(def.Name, { ...def })
  }
  const defs = [...schema.types.values()]

  for (const ext of doc.Extensions) {
    let def = schema.types.get(ext.Name)
    if (def === undefined) {
      def = { Kind: ext.Kind, Description: "", Name: ext.Name, Directives: [], Interfaces: [], Fields: [], Types: [], EnumValues: [], Position: ext.Position, BuiltIn: false }
      schema.types.set(ext.Name, def)
      defs.push(def)
    }
    if (def.Kind !== ext.Kind) fail(ext.Position, `Cannot extend type ${ext.Name} because the base type is a ${def.Kind}, not ${ext.Kind}.`)
    def.Directives = [...def.Directives, ...ext.Directives]
    def.Interfaces = [...def.Interfaces, ...ext.Interfaces]
    def.Fields = [...def.Fields, ...ext.Fields]
    def.Types = [...def.Types, ...ext.Types]
    def.EnumValues = [...def.EnumValues, ...ext.EnumValues]
  }

  for (const def of defs) {
    switch (def.Kind) {
      case "UNION":
        for (const t of def.Types) addPossibleType(def.Name, schema.types.get(t))
        break
      case "INPUT_OBJECT":
      case "OBJECT":
        for (const intf of def.Interfaces) addPossibleType(intf, def)
        addPossibleType(def.Name, def)
        break
      case "INTERFACE":
        for (const intf of def.Interfaces) addPossibleType(intf, def)
        break
    }
  }

  for (const dir of doc.Directives) {
    if (schema.directives.has(dir.Name)) {
      // The SDL may restate a built-in directive; the first definition (the prelude's) wins.
      if (["include", "skip", "deprecated", "specifiedBy"].includes(dir.Name)) continue
      fail(dir.Position, `Cannot redeclare directive ${dir.Name}.`)
    }
    schema.directives.set(dir.Name, dir)
  }

  if (doc.Schema.length > 1) fail(doc.Schema[1].Position, "Cannot have multiple schema entry points, consider schema extensions instead.")
  for (const def of [...doc.Schema, ...doc.SchemaExtension]) {
    for (const entry of def.OperationTypes) {
      const root = schema.types.get(entry.Type)
      if (root === undefined) fail(entry.Position, `Schema root ${entry.Operation} refers to a type ${entry.Type} that does not exist.`)
      if (entry.Operation === "query") schema.query = root
      else if (entry.Operation === "mutation") schema.mutation = root
      else if (entry.Operation === "subscription") schema.subscription = root
    }
  }

  for (const name of [...schema.types.keys()].sort()) validateDefinition(schema, schema.types.get(name) as Definition)
  for (const name of [...schema.directives.keys()].sort()) {
    const dir = schema.directives.get(name) as DirectiveDefinition
    validateName(dir.Position, dir.Name)
    validateArgs(schema, dir.Arguments, dir)
  }

  // Without a `schema` definition, types named Query, Mutation and Subscription are the roots.
  if (doc.Schema.length === 0) {
    schema.query ??= schema.types.get("Query")
    schema.mutation ??= schema.types.get("Mutation")
    schema.subscription ??= schema.types.get("Subscription")
  }
  return schema
}

const validateName = (pos: Position | undefined, name: string): void => {
  if (name.startsWith("__")) fail(pos, `Name "${name}" must not begin with "__", which is reserved by GraphQL introspection.`)
}

const validateTypeRef = (schema: Schema, t: Type | undefined): void => {
  if (!schema.types.has(typeName(t))) fail(t?.Position, `Undefined type ${typeName(t)}.`)
}

const validateArgs = (schema: Schema, args: readonly ArgumentDefinition[], current: DirectiveDefinition | undefined): void => {
  for (const arg of args) {
    validateName(arg.Position, arg.Name)
    validateTypeRef(schema, arg.Type)
    const def = schema.types.get(typeName(arg.Type)) as Definition
    if (!isInputType(def)) fail(arg.Position, `cannot use ${typeString(arg.Type)} as argument ${arg.Name} because ${def.Kind} is not a valid input type`)
    validateDirectives(schema, arg.Directives, "ARGUMENT_DEFINITION", current)
  }
}

const validateDirectives = (schema: Schema, dirs: Definition["Directives"], location: string, current: DirectiveDefinition | undefined): void => {
  for (const dir of dirs) {
    validateName(dir.Position, dir.Name)
    if (current !== undefined && dir.Name === current.Name) fail(dir.Position, `Directive ${current.Name} cannot refer to itself.`)
    const def = schema.directives.get(dir.Name)
    if (def === undefined) fail(dir.Position, `Undefined directive ${dir.Name}.`)
    else if (!def.Locations.includes(location)) fail(dir.Position, `Directive ${dir.Name} is not applicable on ${location}.`)
  }
}

const validateDefinition = (schema: Schema, def: Definition): void => {
  for (const field of def.Fields) {
    validateName(field.Position, field.Name)
    validateTypeRef(schema, field.Type)
    validateArgs(schema, field.Arguments, undefined)
    validateDirectives(schema, field.Directives, def.Kind === "INPUT_OBJECT" ? "INPUT_FIELD_DEFINITION" : "FIELD_DEFINITION", undefined)
  }
  for (const t of def.Types) {
    const member = schema.types.get(t)
    if (member === undefined) fail(def.Position, `Undefined type ${quoteString(t)}.`)
    else if (member.Kind !== "OBJECT") fail(def.Position, `${def.Kind} type ${quoteString(t)} must be OBJECT.`)
  }
  for (const intf of def.Interfaces) validateImplements(schema, def, intf)

  switch (def.Kind) {
    case "OBJECT":
    case "INTERFACE":
      if (def.Fields.length === 0) fail(def.Position, `${def.Kind} ${def.Name}: must define one or more fields.`)
      for (const field of def.Fields) {
        const t = schema.types.get(typeName(field.Type))
        if (t !== undefined && !["SCALAR", "OBJECT", "INTERFACE", "UNION", "ENUM"].includes(t.Kind)) {
          fail(field.Position, `${def.Kind} ${def.Name}: field must be one of SCALAR, OBJECT, INTERFACE, UNION, ENUM.`)
        }
      }
      break
    case "ENUM":
      if (def.EnumValues.length === 0) fail(def.Position, `${def.Kind} ${def.Name}: must define one or more unique enum values.`)
      for (const v of def.EnumValues) {
        if (v.Name === "true" || v.Name === "false" || v.Name === "null") fail(def.Position, `${def.Kind} ${def.Name}: non-enum value ${v.Name}.`)
      }
      break
    case "INPUT_OBJECT":
      if (def.Fields.length === 0) fail(def.Position, `${def.Kind} ${def.Name}: must define one or more input fields.`)
      for (const field of def.Fields) {
        const t = schema.types.get(typeName(field.Type))
        if (t !== undefined && !["SCALAR", "ENUM", "INPUT_OBJECT"].includes(t.Kind)) {
          fail(field.Position, `${t.Kind} ${field.Name}: field must be one of SCALAR, ENUM, INPUT_OBJECT.`)
        }
      }
      break
  }

  const seen = new Set<string>()
  for (const field of def.Fields) {
    if (seen.has(field.Name)) fail(field.Position, `Field ${def.Name}.${field.Name} can only be defined once.`)
    seen.add(field.Name)
  }
  if (!def.BuiltIn) validateName(def.Position, def.Name)
  validateDirectives(schema, def.Directives, def.Kind, undefined)
}

const fieldNamed = <T extends { Name: string }>(xs: readonly T[], name: string): T | undefined => xs.find((x) => x.Name === name)

const validateImplements = (schema: Schema, def: Definition, intfName: string): void => {
  const intf = schema.types.get(intfName)
  if (intf === undefined) return fail(def.Position, `Undefined type ${quoteString(intfName)}.`)
  if (intf.Kind !== "INTERFACE") fail(def.Position, `${quoteString(intfName)} is a non interface type ${intf.Kind}.`)
  for (const required of intf.Fields) {
    const found: FieldDefinition | undefined = fieldNamed(def.Fields, required.Name)
    if (found === undefined) return fail(def.Position, `For ${def.Name} to implement ${intf.Name} it must have a field called ${required.Name}.`)
    if (!isCovariant(schema, required.Type, found.Type)) {
      fail(found.Position, `For ${def.Name} to implement ${intf.Name} the field ${required.Name} must have type ${typeString(required.Type)}.`)
    }
    for (const requiredArg of required.Arguments) {
      const foundArg = fieldNamed(found.Arguments, requiredArg.Name)
      if (foundArg === undefined) {
        return fail(found.Position, `For ${def.Name} to implement ${intf.Name} the field ${required.Name} must have the same arguments but it is missing ${requiredArg.Name}.`)
      }
      if (!isCompatible(requiredArg.Type, foundArg.Type)) {
        fail(foundArg.Position, `For ${def.Name} to implement ${intf.Name} the field ${required.Name} must have the same arguments but ${requiredArg.Name} has the wrong type.`)
      }
    }
    for (const arg of found.Arguments) {
      if (fieldNamed(required.Arguments, arg.Name) === undefined && arg.Type?.NonNull === true && arg.DefaultValue === undefined) {
        fail(arg.Position, `For ${def.Name} to implement ${intf.Name} any additional arguments on ${found.Name} must be optional or have a default value but ${arg.Name} is required.`)
      }
    }
  }
  // Transitive interfaces must be declared too.
  for (const transitive of intf.Interfaces) {
    if (def.Interfaces.includes(transitive)) continue
    if (transitive === def.Name) fail(def.Position, `Type ${def.Name} cannot implement ${intfName} because it would create a circular reference.`)
    fail(def.Position, `Type ${def.Name} must implement ${transitive} because it is implemented by ${intfName}.`)
  }
}

const isCovariant = (schema: Schema, required: Type | undefined, actual: Type | undefined): boolean => {
  if (required === undefined || actual === undefined) return false
  if (required.NonNull && !actual.NonNull) return false
  if (required.NamedType !== "") {
    if (required.NamedType === actual.NamedType) return true
    return (schema.possibleTypes.get(required.NamedType) ?? []).some((pt) => pt?.Name === actual.NamedType)
  }
  if (required.Elem !== undefined && actual.Elem === undefined) return false
  return isCovariant(schema, required.Elem, actual.Elem)
}
