// The GraphQL AST as OPA exposes it to policies.
//
// OPA parses GraphQL with its vendored copy of gqlparser (v2.5.x) and hands the Go structs to
// Rego through a JSON round trip, then prunes the result: `Position` keys, nulls, and empty
// arrays and objects are dropped; empty strings, `false` and `0` stay. Policies match on that
// shape (`"Kind": 7`, `"Used": false`, `"Location": ""`...), so this module mirrors the Go
// structs field for field:
//
// - the TypeScript interfaces are what the parser builds and the validators read,
// - `STRUCTS` lists every struct's fields with their Go types, which drives both `encode`
//   (struct -> Rego value, pruned as OPA prunes) and `decode` (Rego value -> struct, with the
//   leniency of Go's `encoding/json`), the path AST objects take when policies pass them back
//   to `graphql.parse`, `graphql.is_valid`...

import { type RegoObject, type Value, isObject, objectEntries, RegoSet, setOwn, type PlainObject } from "../value.js"

/** Where a node starts (line and column count from 1; columns count code points). */
export interface Position {
  readonly line: number
  readonly column: number
  /** The source's name, when it has one (gqlparser names its prelude "prelude.graphql"). */
  readonly file?: string
}

export interface QueryDocument {
  Operations: OperationDefinition[]
  Fragments: FragmentDefinition[]
  Position?: Position
}

export interface OperationDefinition {
  Operation: string
  Name: string
  VariableDefinitions: VariableDefinition[]
  Directives: Directive[]
  SelectionSet: Selection[]
  Position?: Position
}

export interface VariableDefinition {
  Variable: string
  Type?: Type
  DefaultValue?: GqlValue
  Directives: Directive[]
  Position?: Position
  Definition?: Definition
  Used: boolean
}

export interface Type {
  NamedType: string
  Elem?: Type
  NonNull: boolean
  Position?: Position
}

export interface Field {
  readonly selection: "Field"
  Alias: string
  Name: string
  Arguments: Argument[]
  Directives: Directive[]
  SelectionSet: Selection[]
  Position?: Position
  Definition?: FieldDefinition
  ObjectDefinition?: Definition
}

export interface FragmentSpread {
  readonly selection: "FragmentSpread"
  Name: string
  Directives: Directive[]
  ObjectDefinition?: Definition
  Definition?: FragmentDefinition
  Position?: Position
}

export interface InlineFragment {
  readonly selection: "InlineFragment"
  TypeCondition: string
  Directives: Directive[]
  SelectionSet: Selection[]
  ObjectDefinition?: Definition
  Position?: Position
}

export type Selection = Field | FragmentSpread | InlineFragment

export interface FragmentDefinition {
  Name: string
  /** Experimental fragment variables (gqlparser's spelling: singular). */
  VariableDefinition: VariableDefinition[]
  TypeCondition: string
  Directives: Directive[]
  SelectionSet: Selection[]
  Definition?: Definition
  Position?: Position
}

export interface Argument {
  Name: string
  Value?: GqlValue
  Position?: Position
}

/** gqlparser's ValueKind. */
export const enum ValueKind {
  Variable = 0,
  Int = 1,
  Float = 2,
  String = 3,
  Block = 4,
  Boolean = 5,
  Null = 6,
  Enum = 7,
  List = 8,
  Object = 9
}

export interface GqlValue {
  Raw: string
  Children: ChildValue[]
  Kind: number
  Position?: Position
  Definition?: Definition
  VariableDefinition?: VariableDefinition
  ExpectedType?: Type
  ExpectedTypeHasDefault: boolean
}

export interface ChildValue {
  Name: string
  Value?: GqlValue
  Position?: Position
}

export interface Directive {
  Name: string
  Arguments: Argument[]
  Position?: Position
  ParentDefinition?: Definition
  Definition?: DirectiveDefinition
  Location: string
}

export interface SchemaDocument {
  Schema: SchemaDefinition[]
  SchemaExtension: SchemaDefinition[]
  Directives: DirectiveDefinition[]
  Definitions: Definition[]
  Extensions: Definition[]
  Position?: Position
}

export interface SchemaDefinition {
  Description: string
  Directives: Directive[]
  OperationTypes: OperationTypeDefinition[]
  Position?: Position
}

export interface OperationTypeDefinition {
  Operation: string
  Type: string
  Position?: Position
}

/** gqlparser's DefinitionKind. */
export type DefinitionKind = "SCALAR" | "OBJECT" | "INTERFACE" | "UNION" | "ENUM" | "INPUT_OBJECT"

/** Every named type (and type extension): one struct for all kinds, as in gqlparser. */
export interface Definition {
  Kind: string
  Description: string
  Name: string
  Directives: Directive[]
  Interfaces: string[]
  Fields: FieldDefinition[]
  Types: string[]
  EnumValues: EnumValueDefinition[]
  Position?: Position
  BuiltIn: boolean
}

export interface FieldDefinition {
  Description: string
  Name: string
  Arguments: ArgumentDefinition[]
  DefaultValue?: GqlValue
  Type?: Type
  Directives: Directive[]
  Position?: Position
}

export interface ArgumentDefinition {
  Description: string
  Name: string
  DefaultValue?: GqlValue
  Type?: Type
  Directives: Directive[]
  Position?: Position
}

export interface EnumValueDefinition {
  Description: string
  Name: string
  Directives: Directive[]
  Position?: Position
}

export interface DirectiveDefinition {
  Description: string
  Name: string
  Arguments: ArgumentDefinition[]
  Locations: string[]
  IsRepeatable: boolean
  Position?: Position
}

// ---------------------------------------------------------------------------------------------
// Struct descriptions

type StructName =
  | "QueryDocument"
  | "OperationDefinition"
  | "VariableDefinition"
  | "Type"
  | "Field"
  | "FragmentSpread"
  | "InlineFragment"
  | "FragmentDefinition"
  | "Argument"
  | "Value"
  | "ChildValue"
  | "Directive"
  | "SchemaDocument"
  | "SchemaDefinition"
  | "OperationTypeDefinition"
  | "Definition"
  | "FieldDefinition"
  | "ArgumentDefinition"
  | "EnumValueDefinition"
  | "DirectiveDefinition"

/** A Go field type: scalar, string list, struct pointer, list of struct pointers, selections. */
type FieldType = "string" | "bool" | "int" | "strings" | "position" | "selections" | { readonly ptr: StructName } | { readonly list: StructName }

interface StructInfo {
  readonly fields: ReadonlyArray<readonly [string, FieldType]>
  /**
   * gqlparser gives these structs their own UnmarshalJSON, which matches keys exactly (Go's
   * default decoder matches them case-insensitively) and ignores the fields it does not list.
   */
  readonly exactKeys?: ReadonlySet<string>
}

const ptr = (s: StructName): FieldType => ({ ptr: s })
const list = (s: StructName): FieldType => ({ list: s })

const STRUCTS: Readonly<Record<StructName, StructInfo>> = {
  QueryDocument: {
    fields: [
      ["Operations", list("OperationDefinition")],
      ["Fragments", list("FragmentDefinition")],
      ["Position", "position"]
    ]
  },
  OperationDefinition: {
    fields: [
      ["Operation", "string"],
      ["Name", "string"],
      ["VariableDefinitions", list("VariableDefinition")],
      ["Directives", list("Directive")],
      ["SelectionSet", "selections"],
      ["Position", "position"]
    ],
    exactKeys: new Set(["Operation", "Name", "VariableDefinitions", "Directives", "SelectionSet", "Position"])
  },
  VariableDefinition: {
    fields: [
      ["Variable", "string"],
      ["Type", ptr("Type")],
      ["DefaultValue", ptr("Value")],
      ["Directives", list("Directive")],
      ["Position", "position"],
      ["Definition", ptr("Definition")],
      ["Used", "bool"]
    ]
  },
  Type: {
    fields: [
      ["NamedType", "string"],
      ["Elem", ptr("Type")],
      ["NonNull", "bool"],
      ["Position", "position"]
    ]
  },
  Field: {
    fields: [
      ["Alias", "string"],
      ["Name", "string"],
      ["Arguments", list("Argument")],
      ["Directives", list("Directive")],
      ["SelectionSet", "selections"],
      ["Position", "position"],
      ["Definition", ptr("FieldDefinition")],
      ["ObjectDefinition", ptr("Definition")]
    ],
    exactKeys: new Set(["Alias", "Name", "Arguments", "Directives", "SelectionSet", "Position", "Definition", "ObjectDefinition"])
  },
  FragmentSpread: {
    fields: [
      ["Name", "string"],
      ["Directives", list("Directive")],
      ["ObjectDefinition", ptr("Definition")],
      ["Definition", ptr("FragmentDefinition")],
      ["Position", "position"]
    ]
  },
  InlineFragment: {
    fields: [
      ["TypeCondition", "string"],
      ["Directives", list("Directive")],
      ["SelectionSet", "selections"],
      ["ObjectDefinition", ptr("Definition")],
      ["Position", "position"]
    ],
    exactKeys: new Set(["TypeCondition", "Directives", "SelectionSet", "ObjectDefinition", "Position"])
  },
  FragmentDefinition: {
    fields: [
      ["Name", "string"],
      ["VariableDefinition", list("VariableDefinition")],
      ["TypeCondition", "string"],
      ["Directives", list("Directive")],
      ["SelectionSet", "selections"],
      ["Definition", ptr("Definition")],
      ["Position", "position"]
    ],
    exactKeys: new Set(["Name", "VariableDefinition", "TypeCondition", "Directives", "SelectionSet", "Definition", "Position"])
  },
  Argument: {
    fields: [
      ["Name", "string"],
      ["Value", ptr("Value")],
      ["Position", "position"]
    ]
  },
  Value: {
    fields: [
      ["Raw", "string"],
      ["Children", list("ChildValue")],
      ["Kind", "int"],
      ["Position", "position"],
      ["Definition", ptr("Definition")],
      ["VariableDefinition", ptr("VariableDefinition")],
      ["ExpectedType", ptr("Type")],
      ["ExpectedTypeHasDefault", "bool"]
    ]
  },
  ChildValue: {
    fields: [
      ["Name", "string"],
      ["Value", ptr("Value")],
      ["Position", "position"]
    ]
  },
  Directive: {
    fields: [
      ["Name", "string"],
      ["Arguments", list("Argument")],
      ["Position", "position"],
      ["ParentDefinition", ptr("Definition")],
      ["Definition", ptr("DirectiveDefinition")],
      ["Location", "string"]
    ]
  },
  SchemaDocument: {
    fields: [
      ["Schema", list("SchemaDefinition")],
      ["SchemaExtension", list("SchemaDefinition")],
      ["Directives", list("DirectiveDefinition")],
      ["Definitions", list("Definition")],
      ["Extensions", list("Definition")],
      ["Position", "position"]
    ]
  },
  SchemaDefinition: {
    fields: [
      ["Description", "string"],
      ["Directives", list("Directive")],
      ["OperationTypes", list("OperationTypeDefinition")],
      ["Position", "position"]
    ]
  },
  OperationTypeDefinition: {
    fields: [
      ["Operation", "string"],
      ["Type", "string"],
      ["Position", "position"]
    ]
  },
  Definition: {
    fields: [
      ["Kind", "string"],
      ["Description", "string"],
      ["Name", "string"],
      ["Directives", list("Directive")],
      ["Interfaces", "strings"],
      ["Fields", list("FieldDefinition")],
      ["Types", "strings"],
      ["EnumValues", list("EnumValueDefinition")],
      ["Position", "position"],
      ["BuiltIn", "bool"]
    ]
  },
  FieldDefinition: {
    fields: [
      ["Description", "string"],
      ["Name", "string"],
      ["Arguments", list("ArgumentDefinition")],
      ["DefaultValue", ptr("Value")],
      ["Type", ptr("Type")],
      ["Directives", list("Directive")],
      ["Position", "position"]
    ]
  },
  ArgumentDefinition: {
    fields: [
      ["Description", "string"],
      ["Name", "string"],
      ["DefaultValue", ptr("Value")],
      ["Type", ptr("Type")],
      ["Directives", list("Directive")],
      ["Position", "position"]
    ]
  },
  EnumValueDefinition: {
    fields: [
      ["Description", "string"],
      ["Name", "string"],
      ["Directives", list("Directive")],
      ["Position", "position"]
    ]
  },
  DirectiveDefinition: {
    fields: [
      ["Description", "string"],
      ["Name", "string"],
      ["Arguments", list("ArgumentDefinition")],
      ["Locations", "strings"],
      ["IsRepeatable", "bool"],
      ["Position", "position"]
    ]
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding: struct -> Rego value, pruned as OPA's pruneIrrelevantGraphQLASTNodes does

type Struct = object

const fieldOf = (s: Struct, name: string): unknown => (s as Record<string, unknown>)[name]

/** A struct as a Rego object; `undefined` when pruning leaves it empty. */
const encodeStruct = (name: StructName, s: Struct): PlainObject | undefined => {
  const out: PlainObject = {}
  let size = 0
  for (const [field, type] of STRUCTS[name].fields) {
    const v = encodeField(type, fieldOf(s, field))
    if (v !== undefined) {
      setOwn(out, field, v)
      size++
    }
  }
  return size === 0 ? undefined : out
}

const encodeField = (type: FieldType, v: unknown): Value | undefined => {
  switch (type) {
    case "position":
      return undefined
    case "string":
      return typeof v === "string" ? v : ""
    case "bool":
      return v === true
    case "int":
      return typeof v === "number" ? v : 0
    case "strings": {
      const xs = (v as string[] | undefined) ?? []
      return xs.length === 0 ? undefined : [...xs]
    }
    case "selections":
      return encodeList((v as Selection[] | undefined) ?? [], (x) => encodeStruct(x.selection, x))
    default:
      if ("ptr" in type) return v === undefined || v === null ? undefined : encodeStruct(type.ptr, v as Struct)
      return encodeList((v as Struct[] | undefined) ?? [], (x) => encodeStruct(type.list, x))
  }
}

const encodeList = <T>(xs: readonly T[], f: (x: T) => Value | undefined): Value[] | undefined => {
  const out: Value[] = []
  for (const x of xs) {
    if (x === undefined || x === null) continue
    const v = f(x)
    if (v !== undefined) out.push(v)
  }
  return out.length === 0 ? undefined : out
}

/** A parsed query as OPA returns it from `graphql.parse_query`. */
export const encodeQueryDocument = (doc: QueryDocument): Value => encodeStruct("QueryDocument", doc) ?? {}

/** A parsed schema as OPA returns it from `graphql.parse_schema`. */
export const encodeSchemaDocument = (doc: SchemaDocument): Value => encodeStruct("SchemaDocument", doc) ?? {}

// ---------------------------------------------------------------------------------------------
// Decoding: Rego value -> struct, with the behaviour of Go's encoding/json

/** An AST object that `encoding/json` would refuse. */
export class DecodeError extends Error {}

const jsonTypeName = (v: Value): string => {
  if (v === null) return "null"
  switch (typeof v) {
    case "string":
      return "string"
    case "number":
    case "bigint":
      return "number"
    case "boolean":
      return "bool"
    default:
      return Array.isArray(v) || v instanceof RegoSet ? "array" : "object"
  }
}

const mismatch = (v: Value, goType: string, where: string): DecodeError =>
  new DecodeError(`json: cannot unmarshal ${jsonTypeName(v)} into Go ${where} of type ${goType}`)

const elements = (v: Value): Value[] | undefined => (Array.isArray(v) ? v : v instanceof RegoSet ? v.sorted() : undefined)

/** Entries with string keys, in key order (Go decodes `ast.JSON` output, whose keys are sorted). */
const stringEntries = (o: RegoObject): Array<[string, Value]> => {
  const out: Array<[string, Value]> = []
  for (const [k, v] of objectEntries(o)) {
    if (typeof k !== "string") throw new DecodeError("json: object keys must be strings")
    out.push([k, v])
  }
  return out
}

const newStruct = (name: StructName): Record<string, unknown> => {
  const s: Record<string, unknown> = {}
  for (const [field, type] of STRUCTS[name].fields) {
    if (type === "string") s[field] = ""
    else if (type === "bool") s[field] = false
    else if (type === "int") s[field] = 0
    else if (type === "strings" || type === "selections" || (typeof type === "object" && "list" in type)) s[field] = []
  }
  return s
}

const decodeStruct = (name: StructName, v: Value): Struct => {
  if (!isObject(v)) throw mismatch(v, `ast.${name}`, "value")
  const info = STRUCTS[name]
  const s = newStruct(name)
  for (const [key, x] of stringEntries(v)) {
    let field = info.fields.find(([f]) => f === key)
    if (field === undefined && info.exactKeys === undefined) {
      const lower = key.toLowerCase()
      field = info.fields.find(([f]) => f.toLowerCase() === lower)
    }
    if (field === undefined || (info.exactKeys !== undefined && !info.exactKeys.has(key))) continue
    const decoded = decodeField(field[1], x, `struct field ${name}.${field[0]}`)
    if (decoded !== undefined) s[field[0]] = decoded
  }
  return s
}

const decodeField = (type: FieldType, v: Value, where: string): unknown => {
  // JSON null leaves a Go field at its zero value.
  if (v === null) return undefined
  switch (type) {
    case "position": {
      if (!isObject(v)) throw mismatch(v, "ast.Position", where)
      let line: Value | undefined
      let column: Value | undefined
      for (const [k, x] of stringEntries(v)) {
        if (k.toLowerCase() === "line") line = x
        else if (k.toLowerCase() === "column") column = x
      }
      return typeof line === "number" && typeof column === "number" ? { line, column } : undefined
    }
    case "string":
      if (typeof v !== "string") throw mismatch(v, "string", where)
      return v
    case "bool":
      if (typeof v !== "boolean") throw mismatch(v, "bool", where)
      return v
    case "int":
      if (typeof v === "number" && Number.isInteger(v)) return v
      if (typeof v === "bigint" && v >= -(2n ** 63n) && v < 2n ** 63n) return Number(v)
      throw mismatch(v, "int", where)
    case "strings": {
      const xs = elements(v)
      if (xs === undefined) throw mismatch(v, "[]string", where)
      return xs.map((x) => {
        if (typeof x !== "string") throw mismatch(x, "string", where)
        return x
      })
    }
    case "selections":
      return decodeSelectionSet(v)
    default: {
      if ("ptr" in type) return decodeStruct(type.ptr, v)
      const xs = elements(v)
      if (xs === undefined) throw mismatch(v, `[]*ast.${type.list}`, where)
      // A null element decodes to a nil pointer, which the pruned encoding drops anyway.
      return xs.filter((x) => x !== null).map((x) => decodeStruct(type.list, x))
    }
  }
}

/**
 * gqlparser's UnmarshalSelectionSet: each element is tried as a Field, then as a FragmentSpread,
 * then as an InlineFragment, and silently dropped when none accepts it. A Field accepts any
 * object whose known keys have the right types, so fragments passed back in as AST objects
 * become fields: that is OPA's behaviour, kept here.
 */
const decodeSelectionSet = (v: Value): Selection[] => {
  const xs = elements(v)
  if (xs === undefined) throw mismatch(v, "[]json.RawMessage", "value")
  const out: Selection[] = []
  for (const x of xs) {
    // Field's UnmarshalJSON accepts null as an empty field.
    if (x === null) {
      out.push({ ...(newStruct("Field") as object), selection: "Field" } as Field)
      continue
    }
    for (const kind of ["Field", "FragmentSpread", "InlineFragment"] as const) {
      try {
        out.push({ ...(decodeStruct(kind, x) as object), selection: kind } as Selection)
        break
      } catch (e) {
        if (!(e instanceof DecodeError)) throw e
      }
    }
  }
  return out
}

/** A query document from an AST object (OPA's objectToQueryDocument). */
export const decodeQueryDocument = (v: Value): QueryDocument => decodeStruct("QueryDocument", v) as QueryDocument

/** A schema document from an AST object (OPA's objectToSchemaDocument). */
export const decodeSchemaDocument = (v: Value): SchemaDocument => decodeStruct("SchemaDocument", v) as SchemaDocument
