/**
 * Flattens an Effect Schema `ParseIssue` tree into one entry per violated rule, each with the
 * JSON path of the offending value, the JSON Schema keyword of the rule and a message meant
 * for the person editing the YAML file.
 */
import { Option, ParseResult, SchemaAST as AST } from "effect"
import type { JsonPath, ProblemRule } from "./Problem.js"

export interface SchemaViolation {
  readonly path: JsonPath
  readonly rule: ProblemRule
  readonly message: string
}

export const schemaViolations = (issue: ParseResult.ParseIssue): Array<SchemaViolation> => {
  const out: Array<SchemaViolation> = []
  walk(issue, [], undefined, out)
  return out
}

const walk = (
  issue: ParseResult.ParseIssue,
  path: JsonPath,
  // The object schema whose properties are being checked, to suggest a known property name
  // when an unknown one is met.
  enclosing: AST.TypeLiteral | undefined,
  out: Array<SchemaViolation>
): void => {
  switch (issue._tag) {
    case "Pointer": {
      const segments: ReadonlyArray<PropertyKey> = typeof issue.path === "object" ? issue.path : [issue.path]
      walk(issue.issue, [...path, ...segments.map(toSegment)], enclosing, out)
      return
    }
    case "Composite": {
      const issues = ([] as Array<ParseResult.ParseIssue>).concat(issue.issues)
      if (AST.isUnion(issue.ast)) {
        const literals = literalsOf(issue.ast)
        if (literals !== undefined) {
          out.push({ path, rule: "enum", message: `expected one of ${literals.join(", ")}, got ${show(issue.actual)}` })
          return
        }
        // An optional property is `T | undefined`: only what is wrong against `T` matters.
        for (const inner of issues) {
          if (!(inner._tag === "Type" && AST.isUndefinedKeyword(inner.ast))) walk(inner, path, enclosing, out)
        }
        return
      }
      const literal = AST.isTypeLiteral(issue.ast) ? issue.ast : enclosing
      for (const inner of issues) walk(inner, path, literal, out)
      return
    }
    case "Refinement": {
      if (issue.kind === "From") return walk(issue.issue, path, enclosing, out)
      const rule = keywordOf(issue.ast)
      out.push({ path, rule, message: `expected ${expected(issue.ast)}, got ${show(issue.actual)}` })
      return
    }
    case "Transformation":
      return walk(issue.issue, path, enclosing, out)
    case "Missing":
      out.push({ path, rule: "required", message: `missing required property ${quote(last(path))}` })
      return
    case "Unexpected": {
      const name = String(last(path))
      const known = enclosing ? propertyNames(enclosing) : []
      const suggestion = closest(name, known)
      out.push({
        path,
        rule: "additionalProperties",
        message: `unknown property ${quote(name)}` +
          (suggestion ? ` (did you mean ${quote(suggestion)}?)` : known.length > 0 ? ` (allowed: ${known.join(", ")})` : "")
      })
      return
    }
    case "Type": {
      const literals = literalsOf(issue.ast)
      if (literals !== undefined) {
        out.push({ path, rule: "enum", message: `expected one of ${literals.join(", ")}, got ${show(issue.actual)}` })
      } else {
        out.push({ path, rule: "type", message: `expected ${expected(issue.ast)}, got ${show(issue.actual)}` })
      }
      return
    }
    case "Forbidden":
      // Only asynchronous or effectful schemas forbid; the owner schemas are neither.
      out.push({ path, rule: "type", message: issue.message ?? "value cannot be checked" })
      return
  }
}

const toSegment = (key: PropertyKey): string | number =>
  typeof key === "number" ? key : typeof key === "symbol" ? key.toString() : key

const last = (path: JsonPath) => path[path.length - 1] ?? ""

const keywordOf = (ast: AST.Refinement): ProblemRule => {
  const keyword = Option.match(AST.getJSONSchemaAnnotation(ast), {
    onNone: () => undefined,
    onSome: (annotation) => Object.keys(annotation)[0]
  })
  switch (keyword) {
    case "pattern":
    case "format":
    case "minLength":
    case "minItems":
      return keyword
    default:
      throw new Error(`owner schema filter without a JSON Schema keyword annotation: ${String(ast)}`)
  }
}

const literalsOf = (ast: AST.AST): Array<string> | undefined =>
  AST.isUnion(ast) && ast.types.every(AST.isLiteral)
    ? ast.types.map((member) => String((member as AST.Literal).literal))
    : undefined

const expected = (ast: AST.AST): string => {
  const description = AST.getDescriptionAnnotation(ast)
  if (Option.isSome(description)) return description.value
  if (AST.isTypeLiteral(ast)) return "a mapping"
  if (AST.isTupleType(ast)) return "a list"
  return String(ast)
}

const propertyNames = (ast: AST.TypeLiteral): Array<string> =>
  ast.propertySignatures.map((signature) => String(signature.name))

const quote = (value: unknown) => JSON.stringify(String(value))

/** The actual value as the YAML author would recognise it. */
export const show = (actual: unknown): string => {
  if (actual === null) return "null"
  if (Array.isArray(actual)) return "a list"
  if (typeof actual === "object") return "a mapping"
  if (typeof actual === "string") return JSON.stringify(actual.length > 80 ? `${actual.slice(0, 77)}...` : actual)
  return `${typeof actual} ${String(actual)}`
}

/**
 * A known name close enough to `name` to be the intended spelling (`organisation`, `urls`):
 * one edit per three characters, at most two.
 */
const closest = (name: string, known: ReadonlyArray<string>): string | undefined => {
  const allowed = Math.min(2, Math.max(1, Math.floor(name.length / 3)))
  let best: { name: string; distance: number } | undefined
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase())
    if (distance <= allowed && (best === undefined || distance < best.distance)) best = { name: candidate, distance }
  }
  return best?.name
}

const editDistance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)
      )
    }
    previous = current
  }
  return previous[b.length]!
}
