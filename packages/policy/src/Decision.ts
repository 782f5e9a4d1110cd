/**
 * What a policy answers and how asking can fail. These Schemas are shared by the embedded
 * engine, the remote client (they travel over `@effect/rpc`) and the policy service's HTTP
 * contract, so a decision looks the same wherever it was made.
 */
import * as Schema from "effect/Schema"
import { PolicyInput } from "./PolicyInput.js"

/** Row-filter operators of the spec (part 2): equals, not equals, member of list, greater, less. */
export const FilterOperator = Schema.Literal("eq", "ne", "in", "gt", "lt")
export type FilterOperator = typeof FilterOperator.Type

export const FilterScalar = Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Null)

/**
 * One row filter: `{field, operator, value}`; `value` is a list for `in` and a scalar otherwise
 * (an `eq` on a list would match nothing in any store, so it is refused instead).
 */
export const Filter = Schema.Struct({
  field: Schema.String,
  operator: FilterOperator,
  value: Schema.Union(FilterScalar, Schema.Array(FilterScalar))
}).pipe(
  Schema.filter((f) =>
    (f.operator === "in") === Array.isArray(f.value) ||
    `operator ${f.operator} needs ${f.operator === "in" ? "a list" : "a scalar"} value`
  ),
  Schema.annotations({ identifier: "Filter", description: "A row filter: rows must satisfy `field operator value`." })
)
export type Filter = typeof Filter.Type

export const Decision = Schema.Struct({
  /** Whether the action is permitted. */
  allowed: Schema.Boolean,
  /** The policy's one reason for the decision. */
  reason: Schema.String,
  /** Row filters, for packages that define a `filters` rule (the dataset row filter). */
  filters: Schema.optional(Schema.Array(Filter)),
  /** The package that decided (`rec.dataset.access`). */
  package: Schema.String,
  /** Served from the decision cache. */
  cached: Schema.Boolean
}).pipe(Schema.annotations({ identifier: "Decision" }))
export type Decision = typeof Decision.Type

/** A question for the engine: a package and the input document its rules read. */
export const DecisionRequest = Schema.Struct({
  package: Schema.String,
  input: PolicyInput
})
export type DecisionRequest = typeof DecisionRequest.Type

/** No compiled policy set is available and the engine fails closed. */
export class PolicyUnavailable extends Schema.TaggedError<PolicyUnavailable>()("PolicyUnavailable", {
  message: Schema.String
}) {}

/** The policies could not answer: an evaluation error, an unknown package, a malformed result. */
export class PolicyEvaluationError extends Schema.TaggedError<PolicyEvaluationError>()("PolicyEvaluationError", {
  package: Schema.String,
  message: Schema.String
}) {}

/** One problem found while loading the policy directory. */
export const LoadProblem = Schema.Struct({
  message: Schema.String,
  file: Schema.optional(Schema.String),
  row: Schema.optional(Schema.Number),
  col: Schema.optional(Schema.Number)
})
export type LoadProblem = typeof LoadProblem.Type

/** Loading or compiling the policy directory failed; the previous set (if any) stays in use. */
export class PolicyLoadError extends Schema.TaggedError<PolicyLoadError>()("PolicyLoadError", {
  message: Schema.String,
  problems: Schema.Array(LoadProblem)
}) {}

/** The caller may not ask (remote engine: the RPC needs a service account token). */
export class PolicyAccessDenied extends Schema.TaggedError<PolicyAccessDenied>()("PolicyAccessDenied", {
  message: Schema.String
}) {}

export type DecisionError = PolicyUnavailable | PolicyEvaluationError

export const DecisionError = Schema.Union(PolicyUnavailable, PolicyEvaluationError)

export const CacheStats = Schema.Struct({
  enabled: Schema.Boolean,
  hits: Schema.Number,
  misses: Schema.Number,
  size: Schema.Number,
  max_size: Schema.Number,
  ttl_seconds: Schema.Number
})
export type CacheStats = typeof CacheStats.Type

export const LoadFailure = Schema.Struct({
  message: Schema.String,
  problems: Schema.Array(LoadProblem),
  /** ISO 8601 time of the failed load. */
  at: Schema.String
})
export type LoadFailure = typeof LoadFailure.Type

/** What the engine has loaded, for health checks and operators. */
export const PolicyStatus = Schema.Struct({
  /** A compiled policy set is in use. */
  loaded: Schema.Boolean,
  /** Policy modules (`.rego` files, tests excluded) of the set in use. */
  policy_count: Schema.Number,
  packages: Schema.Array(Schema.String),
  /** The directory the set was loaded from (embedded engine). */
  directory: Schema.optional(Schema.String),
  /** ISO 8601 time the set in use was loaded. */
  loaded_at: Schema.optional(Schema.String),
  /** The last load attempt failed (the previous set, if any, is still in use). */
  last_load_error: Schema.optional(LoadFailure),
  fail_open: Schema.Boolean,
  cache: CacheStats
}).pipe(Schema.annotations({ identifier: "PolicyStatus" }))
export type PolicyStatus = typeof PolicyStatus.Type

export const ReloadResult = Schema.Struct({
  policy_count: Schema.Number,
  packages: Schema.Array(Schema.String)
})
export type ReloadResult = typeof ReloadResult.Type
