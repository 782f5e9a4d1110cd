/**
 * Flattens an Effect Schema `ParseIssue` tree into one entry per violated rule: the JSON path of
 * the offending value, the JSON Schema keyword of the rule (the same one ajv reports for
 * `schemas/community-bundle.v0.4.schema.json`) and a message for the person editing the bundle.
 */
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as AST from "effect/SchemaAST"

export type JsonPath = ReadonlyArray<string | number>

export interface Violation {
  readonly path: JsonPath
  readonly keyword: string
  readonly message: string
}

export const violations = (issue: ParseResult.ParseIssue): Array<Violation> => {
  const out: Array<Violation> = []
  walk(issue, [], undefined, out)
  return out
}

const walk = (issue: ParseResult.ParseIssue, path: JsonPath, enclosing: AST.TypeLiteral | undefined, out: Array<Violation>): void => {
  switch (issue._tag) {
    case "Pointer": {
      const segments: ReadonlyArray<PropertyKey> = Array.isArray(issue.path) ? issue.path : [issue.path as PropertyKey]
      walk(issue.issue, [...path, ...segments.map(segment)], enclosing, out)
      return
    }
    case "Composite": {
      const issues = ([] as Array<ParseResult.ParseIssue>).concat(issue.issues)
      if (AST.isUnion(issue.ast)) {
        const literals = literalsOf(issue.ast)
        if (literals !== undefined) {
          out.push({ path, keyword: "enum", message: `expected one of ${literals.join(", ")}, got ${show(issue.actual)}` })
          return
        }
        // An optional property is `T | undefined`: only what is wrong against `T` matters. Of the
        // other alternatives, those the value is not even the type of say nothing useful when
        // one alternative has the right type and fails a deeper rule (a pattern, a range).
        const candidates = issues.filter((inner) => !isUndefinedBranch(inner))
        const deeper = candidates.filter((inner) => inner._tag !== "Type")
        if (deeper.length > 0) {
          for (const inner of deeper) walk(inner, path, enclosing, out)
        } else if (candidates.length === 1) {
          walk(candidates[0]!, path, enclosing, out)
        } else {
          const expected = candidates.map((inner) => ("ast" in inner ? describe(inner.ast as AST.AST) : "a value")).join(" or ")
          out.push({ path, keyword: "type", message: `expected ${expected}, got ${show(issue.actual)}` })
        }
        return
      }
      const literal = AST.isTypeLiteral(issue.ast) ? issue.ast : enclosing
      for (const inner of issues) walk(inner, path, literal, out)
      return
    }
    case "Refinement": {
      if (issue.kind === "From") return walk(issue.issue, path, enclosing, out)
      out.push({ path, keyword: keywordOf(issue.ast), message: `expected ${describe(issue.ast)}, got ${show(issue.actual)}` })
      return
    }
    case "Transformation":
      return walk(issue.issue, path, enclosing, out)
    case "Missing":
      out.push({ path, keyword: "required", message: `missing required property ${quote(last(path))}` })
      return
    case "Unexpected": {
      const known = enclosing === undefined ? [] : enclosing.propertySignatures.map((p) => String(p.name))
      out.push({
        path,
        keyword: "additionalProperties",
        message: `unknown property ${quote(last(path))}` + (known.length > 0 ? ` (allowed: ${known.join(", ")})` : "")
      })
      return
    }
    case "Type": {
      const literals = literalsOf(issue.ast)
      if (literals !== undefined) {
        const keyword = literals.length === 1 ? "const" : "enum"
        const expected = literals.length === 1 ? literals[0]! : `one of ${literals.join(", ")}`
        out.push({ path, keyword, message: `expected ${expected}, got ${show(issue.actual)}` })
      } else {
        out.push({ path, keyword: "type", message: `expected ${describe(issue.ast)}, got ${show(issue.actual)}` })
      }
      return
    }
    case "Forbidden":
      // Only asynchronous or effectful schemas forbid; the bundle schemas are neither.
      out.push({ path, keyword: "type", message: issue.message ?? "value cannot be checked" })
      return
  }
}

const isUndefinedBranch = (issue: ParseResult.ParseIssue): boolean =>
  issue._tag === "Type" && AST.isUndefinedKeyword(issue.ast)

const segment = (key: PropertyKey): string | number =>
  typeof key === "number" ? key : typeof key === "symbol" ? key.toString() : key

const last = (path: JsonPath) => path[path.length - 1] ?? ""

const keywordOf = (ast: AST.Refinement): string =>
  Option.match(AST.getJSONSchemaAnnotation(ast), {
    onNone: () => {
      throw new Error(`bundle schema filter without a JSON Schema keyword annotation: ${String(ast)}`)
    },
    onSome: (annotation) => Object.keys(annotation)[0] ?? "type"
  })

const literalsOf = (ast: AST.AST): Array<string> | undefined => {
  if (AST.isLiteral(ast)) return [String(ast.literal)]
  return AST.isUnion(ast) && ast.types.every(AST.isLiteral)
    ? ast.types.map((member) => String((member as AST.Literal).literal))
    : undefined
}

const describe = (ast: AST.AST): string => {
  const description = AST.getDescriptionAnnotation(ast)
  if (Option.isSome(description)) return description.value
  if (AST.isTypeLiteral(ast)) return "a mapping"
  if (AST.isTupleType(ast)) return "a list"
  if (AST.isStringKeyword(ast)) return "a string"
  if (AST.isNumberKeyword(ast)) return "a number"
  if (AST.isBooleanKeyword(ast)) return "true or false"
  if (AST.isLiteral(ast)) return ast.literal === null ? "null" : JSON.stringify(ast.literal)
  if (AST.isRefinement(ast)) return describe(ast.from)
  return String(ast)
}

const quote = (value: unknown) => JSON.stringify(String(value))

/** The actual value as the author of the YAML would recognise it. */
export const show = (actual: unknown): string => {
  if (actual === null) return "null"
  if (actual === undefined) return "nothing"
  if (Array.isArray(actual)) return "a list"
  if (typeof actual === "object") return "a mapping"
  if (typeof actual === "string") return JSON.stringify(actual.length > 80 ? `${actual.slice(0, 77)}...` : actual)
  return `${typeof actual} ${String(actual)}`
}
