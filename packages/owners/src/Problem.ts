/**
 * What is wrong with an owner registry, and where: every check reports `Problem`s, and loading
 * fails with all of them at once (`OwnersInvalid`), never only the first.
 */
import { Schema } from "effect"

/**
 * The rule a problem breaks. Schema violations use the JSON Schema keyword of the violated
 * rule (so they compare one to one with ajv's errors); registry-wide checks and file-level
 * failures have their own names.
 */
export const ProblemRule = Schema.Literal(
  // schema keywords
  "type",
  "required",
  "additionalProperties",
  "enum",
  "pattern",
  "format",
  "minLength",
  "minItems",
  // registry-wide checks
  "duplicate-id",
  "duplicate-alias",
  "duplicate-did",
  "duplicate-url",
  "reserved-attribute",
  // the file itself
  "yaml",
  "file"
)
export type ProblemRule = typeof ProblemRule.Type

/** A JSON path, as property names and array indexes from the document root. */
export const JsonPath = Schema.Array(Schema.Union(Schema.String, Schema.Number))
export type JsonPath = typeof JsonPath.Type

export class Problem extends Schema.Class<Problem>("@rec/owners/Problem")({
  file: Schema.String,
  /** 1-based; absent when the problem concerns the whole file (e.g. it cannot be read). */
  line: Schema.optional(Schema.Number),
  /** 1-based. */
  column: Schema.optional(Schema.Number),
  path: JsonPath,
  rule: ProblemRule,
  message: Schema.String
}) {
  /** `$.owners[2].aliases[0]` */
  get jsonPath(): string {
    return formatJsonPath(this.path)
  }

  /** `owners.yaml:12:7 $.owners[2].aliases[0]: <message>` */
  format(): string {
    const at = this.line === undefined ? this.file : `${this.file}:${this.line}:${this.column ?? 1}`
    return this.rule === "file" || this.rule === "yaml"
      ? `${at}: ${this.message}`
      : `${at} ${this.jsonPath}: ${this.message}`
  }
}

export const formatJsonPath = (path: JsonPath): string =>
  path.reduce<string>(
    (acc, segment) =>
      typeof segment === "number"
        ? `${acc}[${segment}]`
        : /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(segment)
        ? `${acc}.${segment}`
        : `${acc}[${JSON.stringify(segment)}]`,
    "$"
  )

/** Orders problems by file (in the order the files were given), then line, then column. */
export const sortProblems = (
  problems: ReadonlyArray<Problem>,
  fileOrder: ReadonlyArray<string>
): Array<Problem> => {
  const rank = (file: string) => {
    const index = fileOrder.indexOf(file)
    return index === -1 ? fileOrder.length : index
  }
  return [...problems].sort(
    (a, b) =>
      rank(a.file) - rank(b.file) ||
      (a.line ?? 0) - (b.line ?? 0) ||
      (a.column ?? 0) - (b.column ?? 0)
  )
}

/** The registry files are invalid: every problem found, in file and line order. */
export class OwnersInvalid extends Schema.TaggedError<OwnersInvalid>()("OwnersInvalid", {
  problems: Schema.Array(Problem)
}) {
  override get message(): string {
    const count = this.problems.length
    return [
      `owner registry invalid (${count} problem${count === 1 ? "" : "s"}):`,
      ...this.problems.map((problem) => `  ${problem.format()}`)
    ].join("\n")
  }
}
