/**
 * Rules are data (`seed/rules/*.yaml`): which events they answer, the facts they need, when
 * they fire, how they are deduplicated and what they say. This module has their schema and
 * the generic evaluation every rule shares:
 *
 * - facts are checked against the rule's declared types (`number` accepts numeric strings,
 *   which is what the flexibility service sends);
 * - the condition is a comparison `{fact, op, value}` (`<`, `<=`, `>`, `>=`, `==`, `!=`), a
 *   threshold `{threshold: {fact, above | below}}` (strict), or `all` / `any` lists of
 *   conditions; no condition means the rule fires whenever its facts are there.
 *
 * The original had a Python evaluator per rule, and most of its rules pointed at empty
 * evaluator files, so they could never fire; here every rule is evaluated by the same code.
 */
import * as Schema from "effect/Schema"
import { DedupWindow, RuleType, Severity } from "./Domain.js"

// ---------------------------------------------------------------------------------------------
// Schema of a rule file

export const FactType = Schema.Literal("number", "integer", "string", "date", "time", "boolean", "strings", "any")
  .annotations({
    description: "number (or numeric text), integer, string, date (YYYY-MM-DD), time (HH:MM), boolean, " +
      "strings (a list of texts), any"
  })
export type FactType = typeof FactType.Type

export const Operator = Schema.Literal("<", "<=", ">", ">=", "==", "!=")
export type Operator = typeof Operator.Type

const FactName = Schema.String.pipe(Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]*$/, {
  message: () => "Expected a fact name (letters, digits, underscores)"
}))

export interface Comparison {
  readonly fact: string
  readonly op: Operator
  readonly value: number | string | boolean
}
export interface Threshold {
  readonly threshold: { readonly fact: string; readonly above?: number | undefined; readonly below?: number | undefined }
}
export interface All {
  readonly all: ReadonlyArray<Condition>
}
export interface AnyOf {
  readonly any: ReadonlyArray<Condition>
}
export type Condition = Comparison | Threshold | All | AnyOf

const strict = { parseOptions: { onExcessProperty: "error" } } as const

export const Comparison: Schema.Schema<Comparison> = Schema.Struct({
  fact: FactName,
  op: Operator,
  value: Schema.Union(Schema.Number, Schema.String, Schema.Boolean)
}).annotations(strict)

export const Threshold: Schema.Schema<Threshold> = Schema.Struct({
  threshold: Schema.Struct({
    fact: FactName,
    above: Schema.optionalWith(Schema.Number, { exact: true }),
    below: Schema.optionalWith(Schema.Number, { exact: true })
  }).pipe(Schema.filter((t) => (t.above === undefined) !== (t.below === undefined), {
    message: () => "a threshold has exactly one of above and below"
  })).annotations(strict)
}).annotations(strict)

export const Condition: Schema.Schema<Condition> = Schema.Union(
  Comparison,
  Threshold,
  Schema.Struct({
    all: Schema.Array(Schema.suspend((): Schema.Schema<Condition> => Condition)).pipe(Schema.minItems(1))
  }).annotations(strict),
  Schema.Struct({
    any: Schema.Array(Schema.suspend((): Schema.Schema<Condition> => Condition)).pipe(Schema.minItems(1))
  }).annotations(strict)
)

const TemplateTexts = Schema.Struct({
  title: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  body: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2000))
}).annotations(strict)

const NonEmptyStrings = Schema.Array(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128))).pipe(Schema.minItems(1))

/** One rule file, as written. */
export const RuleFile = Schema.Struct({
  id: Schema.String.pipe(Schema.pattern(/^[a-z0-9][a-z0-9_.-]{0,63}$/, {
    message: () => "Expected a rule id: lower-case letters, digits, _ . - (at most 64)"
  })),
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  description: Schema.optional(Schema.String),
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  version: Schema.optionalWith(Schema.Number.pipe(Schema.int(), Schema.positive()), { default: () => 1 }),
  event_types: NonEmptyStrings,
  scenarios: NonEmptyStrings,
  family: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(50)),
  type: RuleType,
  severity: Severity,
  kind: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)),
  dedup_window: DedupWindow,
  required_facts: Schema.optionalWith(Schema.Record({ key: FactName, value: FactType }), { default: () => ({}) }),
  optional_facts: Schema.optionalWith(Schema.Record({ key: FactName, value: FactType }), { default: () => ({}) }),
  condition: Schema.optional(Condition),
  url: Schema.optionalWith(Schema.String.pipe(Schema.startsWith("/"), Schema.maxLength(500)), { default: () => "/" }),
  templates: Schema.Record({ key: Schema.String.pipe(Schema.pattern(/^[a-z]{2,3}$/)), value: TemplateTexts })
}).annotations(strict)
export type RuleFile = typeof RuleFile.Type

/** A rule as stored and evaluated (the file, validated). */
export type Rule = RuleFile

// ---------------------------------------------------------------------------------------------
// Facts

/** Facts every event carries or may carry, checked whatever the rule (spec part 2B). */
export const commonFacts: Readonly<Record<string, FactType>> = {
  facts_version: "string",
  scenario: "string",
  delta_pct: "number",
  cur: "number",
  prev: "number",
  lang: "string",
  email_recipients: "strings"
}

/** Names a template may use besides the rule's facts. */
export const contextNames: ReadonlySet<string> = new Set(["user_id", "community_id", "event_type", "scenario"])

export interface FactIssue {
  readonly fact: string
  readonly message: string
}

const datePattern = /^\d{4}-\d{2}-\d{2}$/
const timePattern = /^([01]\d|2[0-3]):[0-5]\d$/

const numeric = (value: unknown): number | undefined => {
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined
  if (typeof value === "string" && value.trim() !== "") {
    const n = Number(value.trim())
    return Number.isFinite(n) ? n : undefined
  }
  return undefined
}

/** The value as `type`, or why it is not one. */
export const coerce = (type: FactType, value: unknown): { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string } => {
  switch (type) {
    case "number": {
      const n = numeric(value)
      return n === undefined ? { ok: false, message: `Expected a number, actual ${show(value)}` } : { ok: true, value: n }
    }
    case "integer": {
      const n = numeric(value)
      return n === undefined || !Number.isInteger(n)
        ? { ok: false, message: `Expected a whole number, actual ${show(value)}` }
        : { ok: true, value: n }
    }
    case "string":
      if (typeof value === "string") return { ok: true, value }
      if (typeof value === "number" && Number.isFinite(value)) return { ok: true, value: String(value) }
      return { ok: false, message: `Expected a string, actual ${show(value)}` }
    case "date":
      return typeof value === "string" && datePattern.test(value) && !Number.isNaN(Date.parse(value))
        ? { ok: true, value }
        : { ok: false, message: `Expected a date YYYY-MM-DD, actual ${show(value)}` }
    case "time":
      return typeof value === "string" && timePattern.test(value)
        ? { ok: true, value }
        : { ok: false, message: `Expected a time HH:MM, actual ${show(value)}` }
    case "boolean":
      return typeof value === "boolean" ? { ok: true, value } : { ok: false, message: `Expected true or false, actual ${show(value)}` }
    case "strings":
      return Array.isArray(value) && value.every((v) => typeof v === "string")
        ? { ok: true, value }
        : { ok: false, message: `Expected a list of strings, actual ${show(value)}` }
    case "any":
      return { ok: true, value }
  }
}

const show = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

const isPresent = (value: unknown) => value !== undefined && value !== null && value !== ""

/**
 * The rule's facts, typed: missing required facts and values of the wrong type are issues
 * (422); absent optional facts are left out. Facts the rule does not declare pass unchanged.
 */
export const checkFacts = (
  rule: Rule,
  facts: Readonly<Record<string, unknown>>
): { readonly facts: Record<string, unknown>; readonly issues: ReadonlyArray<FactIssue> } => {
  const out: Record<string, unknown> = { ...facts }
  const issues: Array<FactIssue> = []
  for (const [name, type] of Object.entries(rule.required_facts)) {
    const value = facts[name]
    if (!isPresent(value)) {
      issues.push({ fact: name, message: `is missing (rule ${rule.id} needs it)` })
      continue
    }
    const result = coerce(type, value)
    if (result.ok) out[name] = result.value
    else issues.push({ fact: name, message: `${result.message} (rule ${rule.id})` })
  }
  for (const [name, type] of Object.entries(rule.optional_facts)) {
    const value = facts[name]
    if (!isPresent(value)) continue
    const result = coerce(type, value)
    if (result.ok) out[name] = result.value
    else issues.push({ fact: name, message: `${result.message} (rule ${rule.id})` })
  }
  return { facts: out, issues }
}

// ---------------------------------------------------------------------------------------------
// Conditions

export interface Evaluation {
  readonly triggered: boolean
  /** For a rule that does not fire: the first condition not met. */
  readonly reason: string
}

const compare = (left: number | string | boolean, op: Operator, right: number | string | boolean): boolean => {
  switch (op) {
    case "==":
      return left === right
    case "!=":
      return left !== right
    case "<":
      return left < right
    case "<=":
      return left <= right
    case ">":
      return left > right
    case ">=":
      return left >= right
  }
}

const describe = (c: Comparison) => `${c.fact} ${c.op} ${JSON.stringify(c.value)}`

/** The fact as compared with `value`: numbers with numbers, otherwise as given. */
const operand = (fact: unknown, value: number | string | boolean): number | string | boolean | undefined => {
  if (typeof value === "number") return numeric(fact)
  if (typeof value === "boolean") return typeof fact === "boolean" ? fact : undefined
  if (typeof fact === "string") return fact
  if (typeof fact === "number") return String(fact)
  return undefined
}

/** Evaluates a condition over facts already checked by `checkFacts`. */
export const evaluate = (condition: Condition | undefined, facts: Readonly<Record<string, unknown>>): Evaluation => {
  if (condition === undefined) return { triggered: true, reason: "the rule has no condition" }
  if ("all" in condition) {
    for (const c of condition.all) {
      const result = evaluate(c, facts)
      if (!result.triggered) return result
    }
    return { triggered: true, reason: "every condition is met" }
  }
  if ("any" in condition) {
    const reasons: Array<string> = []
    for (const c of condition.any) {
      const result = evaluate(c, facts)
      if (result.triggered) return result
      reasons.push(result.reason)
    }
    return { triggered: false, reason: `none of the conditions is met (${reasons.join("; ")})` }
  }
  if ("threshold" in condition) {
    const { above, below, fact } = condition.threshold
    const comparison: Comparison = above !== undefined
      ? { fact, op: ">", value: above }
      : { fact, op: "<", value: below ?? 0 }
    return evaluate(comparison, facts)
  }
  const left = operand(facts[condition.fact], condition.value)
  if (left === undefined) {
    return { triggered: false, reason: `${condition.fact} is ${show(facts[condition.fact])}, so ${describe(condition)} is not met` }
  }
  return compare(left, condition.op, condition.value)
    ? { triggered: true, reason: `${describe(condition)} is met` }
    : { triggered: false, reason: `${describe(condition)} is not met (${condition.fact} is ${show(facts[condition.fact])})` }
}

/** Every fact a condition reads. */
export const conditionFacts = (condition: Condition | undefined): ReadonlyArray<string> => {
  if (condition === undefined) return []
  if ("all" in condition) return condition.all.flatMap(conditionFacts)
  if ("any" in condition) return condition.any.flatMap(conditionFacts)
  if ("threshold" in condition) return [condition.threshold.fact]
  return [condition.fact]
}

/** Every comparison of a condition, thresholds included, for checks at load. */
export const comparisons = (condition: Condition | undefined): ReadonlyArray<Comparison> => {
  if (condition === undefined) return []
  if ("all" in condition) return condition.all.flatMap(comparisons)
  if ("any" in condition) return condition.any.flatMap(comparisons)
  if ("threshold" in condition) {
    const { above, below, fact } = condition.threshold
    return [above !== undefined ? { fact, op: ">", value: above } : { fact, op: "<", value: below ?? 0 }]
  }
  return [condition]
}
