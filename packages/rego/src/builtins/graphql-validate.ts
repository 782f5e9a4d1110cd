// Query validation against a schema, with graphql-js.
//
// gqlparser's query validator (which OPA uses) is a port of graphql-js's validation rules, and
// gqlparser v2.5 checks itself against graphql-js's own rule tests (its validator/imported
// suite, with a handful of recorded deviations), messages and positions included. So this
// module converts gqlparser-shaped documents and validated schemas to graphql-js and runs
// graphql-js's rules, in gqlparser's order, plus gqlparser's KnownRootType rule. Error
// positions come from the gqlparser AST, so they are the ones gqlparser reports.
//
// graphql-js is loaded on first use: it is a large module that most policies never need.

import { createRequire } from "node:module"
import type * as G from "graphql"
import type { Directive, FragmentDefinition, GqlValue, OperationDefinition, Position, QueryDocument, Selection, Type, VariableDefinition } from "./graphql-ast.js"
import { GqlError } from "./graphql-parser.js"
import type { Schema } from "./graphql-schema.js"

let graphqlModule: typeof G | undefined
const graphql = (): typeof G => (graphqlModule ??= createRequire(import.meta.url)("graphql") as typeof G)

/** A document or schema graphql-js cannot take (only possible for AST objects built by hand). */
export class ConversionError extends Error {}

// The built-in scalars and introspection types: graphql-js supplies its own.
const BUILTIN_TYPES = new Set(["Int", "Float", "String", "Boolean", "ID", "__Schema", "__Type", "__Field", "__InputValue", "__EnumValue", "__TypeKind", "__Directive", "__DirectiveLocation"])
const BUILTIN_DIRECTIVES = new Set(["include", "skip", "deprecated", "specifiedBy"])

/** Builds graphql-js nodes from gqlparser's AST, remembering where each node came from. */
class Converter {
  readonly positions = new WeakMap<object, Position>()
  private readonly g = graphql()

  private at<T extends object>(node: T, pos: Position | undefined): T {
    if (pos !== undefined) this.positions.set(node, pos)
    return node
  }

  name(value: string): G.NameNode {
    return { kind: this.g.Kind.NAME, value }
  }

  named(value: string): G.NamedTypeNode {
    return { kind: this.g.Kind.NAMED_TYPE, name: this.name(value) }
  }

  type(t: Type | undefined): G.TypeNode {
    if (t === undefined) throw new ConversionError("a type is missing")
    let inner: G.NamedTypeNode | G.ListTypeNode
    if (t.NamedType !== "") inner = this.named(t.NamedType)
    else if (t.Elem !== undefined) inner = { kind: this.g.Kind.LIST_TYPE, type: this.type(t.Elem) }
    else throw new ConversionError("a type has neither a name nor an element type")
    return this.at(t.NonNull ? { kind: this.g.Kind.NON_NULL_TYPE, type: inner } : inner, t.Position)
  }

  value(v: GqlValue | undefined): G.ValueNode {
    if (v === undefined) throw new ConversionError("a value is missing")
    const K = this.g.Kind
    let node: G.ValueNode
    switch (v.Kind) {
      case 0:
        node = { kind: K.VARIABLE, name: this.name(v.Raw) }
        break
      case 1:
        node = { kind: K.INT, value: v.Raw }
        break
      case 2:
        node = { kind: K.FLOAT, value: v.Raw }
        break
      case 3:
      case 4:
        node = { kind: K.STRING, value: v.Raw, block: v.Kind === 4 }
        break
      case 5:
        node = { kind: K.BOOLEAN, value: v.Raw === "true" }
        break
      case 6:
        node = { kind: K.NULL }
        break
      case 7:
        node = { kind: K.ENUM, value: v.Raw }
        break
      case 8:
        node = { kind: K.LIST, values: v.Children.map((c) => this.value(c.Value)) }
        break
      case 9:
        node = { kind: K.OBJECT, fields: v.Children.map((c) => this.at({ kind: K.OBJECT_FIELD, name: this.name(c.Name), value: this.value(c.Value) }, c.Position)) }
        break
      default:
        throw new ConversionError(`unknown value kind ${v.Kind}`)
    }
    return this.at(node, v.Position)
  }

  private arguments(args: ReadonlyArray<{ Name: string; Value?: GqlValue; Position?: Position }>): G.ArgumentNode[] {
    return args.map((a) => this.at({ kind: this.g.Kind.ARGUMENT, name: this.name(a.Name), value: this.value(a.Value) }, a.Position))
  }

  private directives(ds: readonly Directive[]): G.DirectiveNode[] {
    return ds.map((d) => this.at({ kind: this.g.Kind.DIRECTIVE, name: this.name(d.Name), arguments: this.arguments(d.Arguments) }, d.Position))
  }

  private variables(vs: readonly VariableDefinition[]): G.VariableDefinitionNode[] {
    return vs.map((v) =>
      this.at(
        {
          kind: this.g.Kind.VARIABLE_DEFINITION,
          variable: this.at({ kind: this.g.Kind.VARIABLE, name: this.name(v.Variable) }, v.Position),
          type: this.type(v.Type),
          defaultValue: v.DefaultValue === undefined ? undefined : (this.value(v.DefaultValue) as G.ConstValueNode),
          directives: this.directives(v.Directives) as G.ConstDirectiveNode[]
        },
        v.Position
      )
    )
  }

  private selectionSet(ss: readonly Selection[]): G.SelectionSetNode {
    return { kind: this.g.Kind.SELECTION_SET, selections: ss.map((s) => this.selection(s)) }
  }

  private selection(s: Selection): G.SelectionNode {
    const K = this.g.Kind
    switch (s.selection) {
      case "Field":
        return this.at(
          {
            kind: K.FIELD,
            alias: s.Alias !== "" && s.Alias !== s.Name ? this.name(s.Alias) : undefined,
            name: this.name(s.Name),
            arguments: this.arguments(s.Arguments),
            directives: this.directives(s.Directives),
            selectionSet: s.SelectionSet.length > 0 ? this.selectionSet(s.SelectionSet) : undefined
          },
          s.Position
        )
      case "FragmentSpread":
        return this.at({ kind: K.FRAGMENT_SPREAD, name: this.name(s.Name), directives: this.directives(s.Directives) }, s.Position)
      case "InlineFragment":
        return this.at(
          {
            kind: K.INLINE_FRAGMENT,
            typeCondition: s.TypeCondition !== "" ? this.named(s.TypeCondition) : undefined,
            directives: this.directives(s.Directives),
            selectionSet: this.selectionSet(s.SelectionSet)
          },
          s.Position
        )
    }
  }

  private operation(op: OperationDefinition): G.OperationDefinitionNode {
    const T = this.g.OperationTypeNode
    // A decoded AST may leave the operation empty; gqlparser treats that as a query.
    const operation = op.Operation === "" || op.Operation === "query" ? T.QUERY : op.Operation === "mutation" ? T.MUTATION : op.Operation === "subscription" ? T.SUBSCRIPTION : undefined
    if (operation === undefined) throw new ConversionError(`got unknown operation type "${op.Operation}"`)
    return this.at(
      {
        kind: this.g.Kind.OPERATION_DEFINITION,
        operation,
        name: op.Name !== "" ? this.name(op.Name) : undefined,
        variableDefinitions: this.variables(op.VariableDefinitions),
        directives: this.directives(op.Directives),
        selectionSet: this.selectionSet(op.SelectionSet)
      },
      op.Position
    )
  }

  private fragment(f: FragmentDefinition): G.FragmentDefinitionNode {
    return this.at(
      {
        kind: this.g.Kind.FRAGMENT_DEFINITION,
        name: this.name(f.Name),
        variableDefinitions: f.VariableDefinition.length > 0 ? this.variables(f.VariableDefinition) : undefined,
        typeCondition: this.named(f.TypeCondition),
        directives: this.directives(f.Directives),
        selectionSet: this.selectionSet(f.SelectionSet)
      },
      f.Position
    )
  }

  /** gqlparser walks operations first, then fragments; so does the converted document. */
  query(doc: QueryDocument): G.DocumentNode {
    return { kind: this.g.Kind.DOCUMENT, definitions: [...doc.Operations.map((o) => this.operation(o)), ...doc.Fragments.map((f) => this.fragment(f))] }
  }

  private inputValues(xs: ReadonlyArray<{ Name: string; Type?: Type; DefaultValue?: GqlValue }>): G.InputValueDefinitionNode[] {
    return xs.map((x) => ({
      kind: this.g.Kind.INPUT_VALUE_DEFINITION,
      name: this.name(x.Name),
      type: this.type(x.Type),
      defaultValue: x.DefaultValue === undefined ? undefined : (this.value(x.DefaultValue) as G.ConstValueNode)
    }))
  }

  /** The SDL of a validated schema, its extensions merged in, minus what graphql-js provides. */
  schema(schema: Schema): G.DocumentNode {
    const K = this.g.Kind
    const definitions: G.DefinitionNode[] = []
    for (const def of schema.types.values()) {
      if (BUILTIN_TYPES.has(def.Name)) continue
      const name = this.name(def.Name)
      const fields = (): G.FieldDefinitionNode[] =>
        def.Fields.map((f) => ({ kind: K.FIELD_DEFINITION, name: this.name(f.Name), arguments: this.inputValues(f.Arguments), type: this.type(f.Type) }))
      switch (def.Kind) {
        case "SCALAR":
          definitions.push({ kind: K.SCALAR_TYPE_DEFINITION, name })
          break
        case "OBJECT":
          definitions.push({ kind: K.OBJECT_TYPE_DEFINITION, name, interfaces: def.Interfaces.map((i) => this.named(i)), fields: fields() })
          break
        case "INTERFACE":
          definitions.push({ kind: K.INTERFACE_TYPE_DEFINITION, name, interfaces: def.Interfaces.map((i) => this.named(i)), fields: fields() })
          break
        case "UNION":
          definitions.push({ kind: K.UNION_TYPE_DEFINITION, name, types: def.Types.map((t) => this.named(t)) })
          break
        case "ENUM":
          definitions.push({ kind: K.ENUM_TYPE_DEFINITION, name, values: def.EnumValues.map((v) => ({ kind: K.ENUM_VALUE_DEFINITION, name: this.name(v.Name) })) })
          break
        case "INPUT_OBJECT":
          definitions.push({ kind: K.INPUT_OBJECT_TYPE_DEFINITION, name, fields: this.inputValues(def.Fields) })
          break
        default:
          throw new ConversionError(`unknown definition kind ${def.Kind}`)
      }
    }
    for (const dir of schema.directives.values()) {
      if (BUILTIN_DIRECTIVES.has(dir.Name)) continue
      definitions.push({
        kind: K.DIRECTIVE_DEFINITION,
        name: this.name(dir.Name),
        arguments: this.inputValues(dir.Arguments),
        repeatable: dir.IsRepeatable,
        locations: dir.Locations.map((l) => this.name(l))
      })
    }
    const T = this.g.OperationTypeNode
    const roots: Array<[G.OperationTypeNode, string | undefined]> = [
      [T.QUERY, schema.query?.Name],
      [T.MUTATION, schema.mutation?.Name],
      [T.SUBSCRIPTION, schema.subscription?.Name]
    ]
    definitions.push({
      kind: K.SCHEMA_DEFINITION,
      operationTypes: roots.filter((r): r is [G.OperationTypeNode, string] => r[1] !== undefined).map(([operation, type]) => ({ kind: K.OPERATION_TYPE_DEFINITION, operation, type: this.named(type) }))
    })
    return { kind: K.DOCUMENT, definitions }
  }
}

/** gqlparser's KnownRootType: operations need a root type in the schema. */
const knownRootType = (context: G.ValidationContext): G.ASTVisitor => ({
  OperationDefinition(node) {
    if (context.getSchema().getRootType(node.operation) == null) {
      context.reportError(new (graphql().GraphQLError)(`Schema does not support operation type "${node.operation}"`, { nodes: node }))
    }
  }
})

/** graphql-js's rules in the order gqlparser registers its equivalents (alphabetical). */
const rules = (): G.ValidationRule[] => {
  const g = graphql()
  return [
    g.FieldsOnCorrectTypeRule,
    g.FragmentsOnCompositeTypesRule,
    g.KnownArgumentNamesRule,
    g.KnownDirectivesRule,
    g.KnownFragmentNamesRule,
    knownRootType,
    g.KnownTypeNamesRule,
    g.LoneAnonymousOperationRule,
    g.NoFragmentCyclesRule,
    g.NoUndefinedVariablesRule,
    g.NoUnusedFragmentsRule,
    g.NoUnusedVariablesRule,
    g.OverlappingFieldsCanBeMergedRule,
    g.PossibleFragmentSpreadsRule,
    g.ProvidedRequiredArgumentsRule,
    g.ScalarLeafsRule,
    g.SingleFieldSubscriptionsRule,
    g.UniqueArgumentNamesRule,
    g.UniqueDirectivesPerLocationRule,
    g.UniqueFragmentNamesRule,
    g.UniqueInputFieldNamesRule,
    g.UniqueOperationNamesRule,
    g.UniqueVariableNamesRule,
    g.ValuesOfCorrectTypeRule,
    g.VariablesAreInputTypesRule,
    g.VariablesInAllowedPositionRule
  ]
}

/** A schema ready for query validation; building it is the expensive part, so callers may keep it. */
export interface CompiledSchema {
  readonly schema: G.GraphQLSchema
}

export const compileSchema = (schema: Schema): CompiledSchema => {
  const sdl = new Converter().schema(schema)
  try {
    return { schema: graphql().buildASTSchema(sdl, { assumeValid: true, assumeValidSDL: true }) }
  } catch (e) {
    throw new ConversionError(e instanceof Error ? e.message : String(e))
  }
}

/** Validates a query; returns gqlparser-style errors (empty when the query is valid). */
export const validateQuery = (compiled: CompiledSchema, doc: QueryDocument): GqlError[] => {
  const converter = new Converter()
  let document: G.DocumentNode
  try {
    document = converter.query(doc)
  } catch (e) {
    if (e instanceof ConversionError) return [new GqlError(e.message, undefined)]
    throw e
  }
  let errors: readonly G.GraphQLError[]
  try {
    errors = graphql().validate(compiled.schema, document, rules())
  } catch (e) {
    throw new ConversionError(e instanceof Error ? e.message : String(e))
  }
  return errors.map((e) => new GqlError(e.message, e.nodes?.[0] === undefined ? undefined : converter.positions.get(e.nodes[0])))
}
