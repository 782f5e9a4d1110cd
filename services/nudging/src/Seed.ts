/**
 * The seed directory: the kinds of notification and the rules with their templates, as YAML.
 *
 * ```
 * seed/kinds.yaml          kinds: [{kind, editable, label: {en, it, ...}, description: {en, it, ...}}]
 * seed/rules/<id>.yaml     one rule per file (see Rules.RuleFile); the file is named after the rule
 * ```
 *
 * `load` reads and validates everything and reports every problem with its file and field
 * (`rules/imported_up.yaml: condition.threshold.above: Expected number, actual "20"`), so a seed
 * that loads cannot fail later: every template parses and reads only facts the rule declares,
 * numeric filters and comparisons only touch numeric facts, every kind exists, every rule has an
 * English template.
 */
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Yaml from "yaml"
import * as Rules from "./Rules.js"
import * as Templates from "./Templates.js"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

const Texts = Schema.Record({ key: Schema.String.pipe(Schema.pattern(/^[a-z]{2,3}$/)), value: Schema.String.pipe(Schema.minLength(1)) })
  .pipe(Schema.filter((texts) => texts["en"] !== undefined, { message: () => "needs an English (en) text" }))

export const KindFile = Schema.Struct({
  kind: Schema.String.pipe(Schema.pattern(/^[a-z0-9][a-z0-9_]{0,63}$/, {
    message: () => "Expected a kind: lower-case letters, digits, underscores"
  })),
  editable: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  label: Texts,
  description: Texts
}).annotations(strict)
export type Kind = typeof KindFile.Type

const KindsFile = Schema.Struct({ kinds: Schema.Array(KindFile).pipe(Schema.minItems(1)) }).annotations(strict)

export interface Seed {
  readonly kinds: ReadonlyArray<Kind>
  readonly rules: ReadonlyArray<Rules.Rule>
  /** The file each rule came from, relative to the seed directory. */
  readonly sources: ReadonlyMap<string, string>
}

export interface Problem {
  /** Relative to the seed directory. */
  readonly file: string
  /** Dotted path of the field (`condition.all[0].op`); empty for the whole file. */
  readonly field: string
  readonly message: string
}

export const formatProblem = (p: Problem): string => `${p.file}: ${p.field === "" ? "" : `${p.field}: `}${p.message}`

export class SeedInvalid extends Schema.TaggedError<SeedInvalid>()("SeedInvalid", {
  directory: Schema.String,
  problems: Schema.Array(Schema.Struct({ file: Schema.String, field: Schema.String, message: Schema.String }))
}) {
  override get message(): string {
    const shown = this.problems.slice(0, 20).map(formatProblem)
    const more = this.problems.length > shown.length ? `\n... and ${this.problems.length - shown.length} more` : ""
    return `The seed in ${this.directory} is invalid (${this.problems.length} problem${
      this.problems.length === 1 ? "" : "s"
    }):\n${shown.join("\n")}${more}`
  }
}

const fieldOf = (segments: ReadonlyArray<PropertyKey>): string =>
  segments.reduce<string>((out, s) => (typeof s === "number" ? `${out}[${s}]` : out === "" ? String(s) : `${out}.${String(s)}`), "")

/**
 * Problems of one field merged: the alternatives of a union each report "Expected X, actual Y";
 * one "Expected "a" | "b", actual Y" reads better.
 */
const mergeAlternatives = (problems: ReadonlyArray<Problem>): Array<Problem> => {
  const out: Array<Problem> = []
  const expected = /^Expected (.+), actual (.+)$/s
  for (const problem of problems) {
    const match = expected.exec(problem.message)
    const previous = out.find((p) => p.file === problem.file && p.field === problem.field)
    const previousMatch = previous === undefined ? null : expected.exec(previous.message)
    if (match !== null && previous !== undefined && previousMatch !== null && previousMatch[2] === match[2]) {
      out[out.indexOf(previous)] = { ...previous, message: `Expected ${previousMatch[1]} | ${match[1]}, actual ${match[2]}` }
    } else if (!out.some((p) => p.file === problem.file && p.field === problem.field && p.message === problem.message)) {
      out.push(problem)
    }
  }
  return out
}

const decodeProblems = <A, I>(schema: Schema.Schema<A, I>, file: string, value: unknown, prefix: ReadonlyArray<PropertyKey> = []): A | Array<Problem> => {
  const result = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })(value)
  if (result._tag === "Right") return result.right
  return mergeAlternatives(ParseResult.ArrayFormatter.formatErrorSync(result.left).map((issue) => ({
    file,
    field: fieldOf([...prefix, ...issue.path]),
    message: issue.message
  })))
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A condition's problems, read by its shape (`all`, `any`, `threshold`, else a comparison), so
 * a mistake is reported once at its place instead of once per kind of condition.
 */
const conditionProblems = (value: unknown, file: string, path: ReadonlyArray<PropertyKey>): Array<Problem> => {
  const field = fieldOf(path)
  if (!isRecord(value)) {
    return [{ file, field, message: "Expected a condition: {fact, op, value}, {threshold: {fact, above | below}}, {all: [...]} or {any: [...]}" }]
  }
  for (const key of ["all", "any"] as const) {
    if (!(key in value)) continue
    const extra = Object.keys(value).filter((k) => k !== key)
    const problems: Array<Problem> = extra.map((k) => ({ file, field: fieldOf([...path, k]), message: `is unexpected next to ${key}` }))
    const list = value[key]
    if (!Array.isArray(list) || list.length === 0) {
      problems.push({ file, field: fieldOf([...path, key]), message: "Expected a non-empty list of conditions" })
      return problems
    }
    list.forEach((c, i) => problems.push(...conditionProblems(c, file, [...path, key, i])))
    return problems
  }
  const decoded = "threshold" in value
    ? decodeProblems(Rules.Threshold, file, value, path)
    : decodeProblems(Rules.Comparison, file, value, path)
  return Array.isArray(decoded) ? decoded : []
}

/** A rule file: its condition checked by shape, the rest by the schema. */
const decodeRule = (value: unknown, file: string): Rules.Rule | Array<Problem> => {
  if (!isRecord(value)) return [{ file, field: "", message: "Expected a rule (a mapping of id, name, event_types, ...)" }]
  const { condition, ...rest } = value
  const problems = condition === undefined ? [] : conditionProblems(condition, file, ["condition"])
  const decoded = decodeProblems(Rules.RuleFile, file, rest)
  if (Array.isArray(decoded)) return [...decoded, ...problems]
  if (problems.length > 0) return problems
  return condition === undefined ? decoded : { ...decoded, condition: Schema.decodeUnknownSync(Rules.Condition)(condition) }
}

const readYaml = (directory: string, file: string): unknown | Problem => {
  const full = path.join(directory, file)
  let text: string
  try {
    text = fs.readFileSync(full, "utf8")
  } catch (cause) {
    return { file, field: "", message: `cannot be read: ${cause instanceof Error ? cause.message : String(cause)}` }
  }
  const doc = Yaml.parseDocument(text, { prettyErrors: true, uniqueKeys: true })
  if (doc.errors.length > 0) {
    const error = doc.errors[0]!
    const at = error.linePos?.[0]
    return { file, field: "", message: `is not valid YAML${at ? ` (line ${at.line}, column ${at.col})` : ""}: ${error.message.split("\n")[0]}` }
  }
  return doc.toJS() as unknown
}

const isProblem = (value: unknown): value is Problem =>
  typeof value === "object" && value !== null && "file" in value && "message" in value && "field" in value &&
  Object.keys(value).length === 3

const numericTypes: ReadonlySet<Rules.FactType> = new Set(["number", "integer"])

/** The checks a schema cannot make: facts, templates, conditions, kinds. */
const checkRule = (rule: Rules.Rule, file: string, kinds: ReadonlySet<string>): Array<Problem> => {
  const problems: Array<Problem> = []
  const problem = (field: string, message: string) => problems.push({ file, field, message })
  const expected = `${rule.id}.yaml`
  if (path.basename(file) !== expected) problem("id", `the file of rule "${rule.id}" must be named ${expected}`)
  if (!kinds.has(rule.kind)) problem("kind", `unknown kind "${rule.kind}" (kinds.yaml has ${[...kinds].join(", ")})`)

  const types = new Map<string, Rules.FactType>()
  for (const [name, type] of Object.entries(rule.required_facts)) types.set(name, type)
  for (const [name, type] of Object.entries(rule.optional_facts)) {
    if (types.has(name)) problem(`optional_facts.${name}`, "is also a required fact")
    types.set(name, type)
  }
  for (const [name, type] of Object.entries(Rules.commonFacts)) {
    const declared = types.get(name)
    if (declared !== undefined && declared !== type && declared !== "any" && !(type === "number" && declared === "integer")) {
      problem(`required_facts.${name}`, `every event's ${name} is a ${type}; the rule cannot declare it ${declared}`)
    }
  }

  for (const comparison of Rules.comparisons(rule.condition)) {
    const type = types.get(comparison.fact)
    if (type === undefined) {
      problem("condition", `reads fact "${comparison.fact}", which is neither a required nor an optional fact of the rule`)
      continue
    }
    if (typeof comparison.value === "number" && !numericTypes.has(type) && type !== "any") {
      problem("condition", `compares ${comparison.fact} (${type}) with the number ${comparison.value}; declare it number`)
    }
    if (typeof comparison.value === "string" && !["==", "!="].includes(comparison.op)) {
      problem("condition", `${comparison.fact} ${comparison.op} "${comparison.value}": texts are compared with == or != only`)
    }
    if (typeof comparison.value === "boolean" && type !== "boolean" && type !== "any") {
      problem("condition", `compares ${comparison.fact} (${type}) with ${comparison.value}; declare it boolean`)
    }
  }

  if (rule.templates["en"] === undefined) problem("templates", "needs an English (en) template, the last fallback")
  for (const [language, texts] of Object.entries(rule.templates)) {
    for (const part of ["title", "body"] as const) {
      const field = `templates.${language}.${part}`
      const template = Templates.parse(texts[part])
      if (typeof template === "string") {
        problem(field, template)
        continue
      }
      for (const hole of template.parts) {
        if (hole._tag !== "Hole") continue
        const type = types.get(hole.name)
        if (type === undefined && !Rules.contextNames.has(hole.name)) {
          problem(field, `uses "${hole.name}", which is neither a fact of the rule nor one of ${[...Rules.contextNames].join(", ")}`)
          continue
        }
        let numeric = type !== undefined && numericTypes.has(type)
        for (const filter of hole.filters) {
          if (!Templates.numericFilters.has(filter.name)) continue
          if (!numeric) {
            problem(field, `filter ${filter.name} needs a number, but ${hole.name} is ${type ?? "text"} here`)
            break
          }
          // round and plural produce text.
          if (filter.name === "round" || filter.name === "plural") numeric = false
        }
      }
    }
  }
  return problems
}

/** Reads and validates the seed directory. */
export const load = (directory: string): Effect.Effect<Seed, SeedInvalid> =>
  Effect.suspend(() => {
    const problems: Array<Problem> = []
    const invalid = () => Effect.fail(new SeedInvalid({ directory, problems }))
    if (!fs.existsSync(directory) || !fs.statSync(directory).isDirectory()) {
      problems.push({ file: ".", field: "", message: `${directory} is not a directory` })
      return invalid()
    }

    let kinds: ReadonlyArray<Kind> = []
    const kindsYaml = readYaml(directory, "kinds.yaml")
    if (isProblem(kindsYaml)) problems.push(kindsYaml)
    else {
      const decoded = decodeProblems(KindsFile, "kinds.yaml", kindsYaml)
      if (Array.isArray(decoded)) problems.push(...decoded)
      else {
        kinds = decoded.kinds
        const seen = new Set<string>()
        decoded.kinds.forEach((k, i) => {
          if (seen.has(k.kind)) problems.push({ file: "kinds.yaml", field: `kinds[${i}].kind`, message: `"${k.kind}" is listed twice` })
          seen.add(k.kind)
        })
      }
    }
    const kindNames = new Set(kinds.map((k) => k.kind))

    const rulesDir = path.join(directory, "rules")
    const files = fs.existsSync(rulesDir)
      ? fs.readdirSync(rulesDir).filter((f) => f.endsWith(".yaml") || f.endsWith(".yml")).sort()
      : []
    if (files.length === 0) problems.push({ file: "rules", field: "", message: "has no rule files (rules/<id>.yaml)" })

    const rules: Array<Rules.Rule> = []
    const sources = new Map<string, string>()
    for (const name of files) {
      const file = `rules/${name}`
      const yaml = readYaml(directory, file)
      if (isProblem(yaml)) {
        problems.push(yaml)
        continue
      }
      const rule = decodeRule(yaml, file)
      if (Array.isArray(rule)) {
        problems.push(...rule)
        continue
      }
      const previous = sources.get(rule.id)
      if (previous !== undefined) {
        problems.push({ file, field: "id", message: `"${rule.id}" is also the id of ${previous}` })
        continue
      }
      problems.push(...checkRule(rule, file, kindNames))
      sources.set(rule.id, file)
      rules.push(rule)
    }
    return problems.length > 0 ? invalid() : Effect.succeed({ kinds, rules, sources })
  })

/** A stable digest of a value (keys sorted), to tell changed seed entries from unchanged ones. */
export const digest = (value: unknown): string =>
  crypto.createHash("sha256").update(stableJson(value)).digest("hex")

const stableJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(",")}}`
  }
  return JSON.stringify(value)
}
