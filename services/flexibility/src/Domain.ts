/**
 * The flexibility service's records and request bodies (reference nudging-flexibility.md A1-A3,
 * with the original's defects fixed): suggestions (flexibility windows of the digital twin, as
 * a participant sees them) and commitments (a user's promise to shift consumption into a
 * window, settled later with points).
 *
 * Timestamps leave the service as ISO 8601 UTC strings (`2026-08-17T10:00:00.000Z`); request
 * date-times must carry `Z` or an offset (a naive time is ambiguous and refused).
 */
import * as Schema from "effect/Schema"

// ---------------------------------------------------------------------------------------------
// Values

/** A date-time in a request (ISO 8601 with `Z` or an offset), decoded to `DateTime.Utc`. */
export const RequestDateTime = Schema.compose(
  Schema.String.pipe(
    Schema.pattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/, {
      message: () => "Expected an ISO 8601 date-time with Z or an offset, e.g. 2026-08-17T10:00:00Z"
    })
  ),
  Schema.DateTimeUtc
).annotations({
  identifier: "RequestDateTime",
  description: "ISO 8601 date-time with Z or an offset, e.g. 2026-08-17T10:00:00Z"
})

/** A date-time as the service answers it (UTC, millisecond precision). */
export const Timestamp = Schema.String.annotations({
  identifier: "Timestamp",
  description: "ISO 8601 date-time in UTC",
  examples: ["2026-08-17T10:00:00.000Z"],
  jsonSchema: { type: "string", format: "date-time" }
})

/** The longest window a commitment may have: the digital twin settles at most 24 hours at once. */
export const maxWindowHours = 24

const Text = (max: number, description: string) =>
  Schema.String.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` })
  ).annotations({ description })

export const UserId = Text(255, "The user's identity-provider subject (`sub`)")
export const SuggestionId = Text(255, "A flexibility window's id (`_id` of the digital twin's rec_flexibility_windows)")
export const SuggestionType = Text(50, "Kind of flexibility; the digital twin's windows are `shift-consumption`")
export const CommunityId = Text(255, "The community's key")
export const DeviceId = Text(255, "The meter's sensor id in the digital twin")

export const defaultSuggestionType = "shift-consumption"

/** Points are whole, non-negative and bounded (a typo must not mint a billion points). */
export const Points = Schema.Int.pipe(
  Schema.between(0, 1_000_000, { message: () => "must be a whole number from 0 to 1000000" })
).annotations({ description: "Points (0 to 1,000,000)" })

export const CommitmentStatus = Schema.Literal("committed", "settled", "rejected", "cancelled").annotations({
  identifier: "CommitmentStatus",
  description: "committed -> cancelled (owner) | settled (settlement); rejected: the user declined the suggestion"
})
export type CommitmentStatus = typeof CommitmentStatus.Type

// ---------------------------------------------------------------------------------------------
// Suggestions

/** A flexibility window offered to the user (reference A2's mapping of the digital twin's windows). */
export const Suggestion = Schema.Struct({
  id: Schema.String.annotations({ description: "The window's id; answer it at /api/suggestions/{id}/respond" }),
  suggestion_type: Schema.String,
  period_start: Timestamp,
  period_end: Timestamp,
  to_is_tomorrow: Schema.Boolean.annotations({ description: "The window starts on a later (UTC) day than today" }),
  from_period: Schema.String.annotations({ description: "`evening` for tomorrow's windows, else empty" }),
  clock_range: Schema.String.annotations({
    description: "`HH:MM–HH:MM` (UTC) of the window; `17:00–21:00` (the evening peak to shift from) for tomorrow's"
  }),
  to_period: Schema.Literal("night", "early_morning", "morning", "late_morning", "midday", "afternoon", "evening")
    .annotations({ description: "Part of the day the window starts in (UTC hour)" }),
  to_time: Schema.String.annotations({ description: "`HH:MM` (UTC) of the window's start" }),
  impact_kwh_estimated: Schema.Number.annotations({ description: "Consumption the user could move into the window, kWh" }),
  reward_points: Schema.Int.annotations({ description: "Points estimated for keeping the commitment" }),
  confidence: Schema.Number.annotations({ description: "The digital twin's confidence in the window, 0 to 1" })
}).annotations({ identifier: "Suggestion" })
export type Suggestion = typeof Suggestion.Type

const windowCheck = (value: {
  readonly period_start?: { readonly epochMillis: number } | undefined
  readonly period_end?: { readonly epochMillis: number } | undefined
}): true | Schema.FilterIssue | ReadonlyArray<Schema.FilterIssue> => {
  const { period_end: end, period_start: start } = value
  if (start === undefined && end === undefined) return true
  if (start === undefined || end === undefined) {
    return { path: [start === undefined ? "period_start" : "period_end"], message: "period_start and period_end go together" }
  }
  if (end.epochMillis <= start.epochMillis) return { path: ["period_end"], message: "must be after period_start" }
  if (end.epochMillis - start.epochMillis > maxWindowHours * 3_600_000) {
    return { path: ["period_end"], message: `the window may last at most ${maxWindowHours} hours` }
  }
  return true
}

export const RespondRequest = Schema.Struct({
  response: Schema.Literal("accepted", "declined"),
  reward_points: Schema.optionalWith(Points, { exact: true }).annotations({
    description: "Points estimated for the window (default: the digital twin's estimate, else 10)"
  }),
  period_start: Schema.optionalWith(RequestDateTime, { exact: true }).annotations({
    description: "The window's start (default: the digital twin's window of this suggestion)"
  }),
  period_end: Schema.optionalWith(RequestDateTime, { exact: true }).annotations({ description: "The window's end; with period_start" })
}).pipe(Schema.filter(windowCheck)).annotations({
  identifier: "RespondRequest",
  description: "Accept or decline a suggestion. Without a window the digital twin's window of the suggestion is used."
})
export type RespondRequest = typeof RespondRequest.Type

export const RespondResponse = Schema.Struct({
  commitment_id: Schema.NullOr(Schema.UUID).annotations({ description: "The new commitment (null when declined)" }),
  status: Schema.Literal("committed", "declined"),
  reward_points_estimated: Schema.Int
}).annotations({ identifier: "RespondResponse" })
export type RespondResponse = typeof RespondResponse.Type

// ---------------------------------------------------------------------------------------------
// Commitments

export const Commitment = Schema.Struct({
  id: Schema.UUID,
  user_id: Schema.String,
  suggestion_id: Schema.String,
  suggestion_type: Schema.String,
  community_id: Schema.NullOr(Schema.String),
  device_id: Schema.NullOr(Schema.String),
  period_start: Timestamp,
  period_end: Timestamp,
  committed_at: Timestamp,
  settled_at: Schema.NullOr(Timestamp),
  reminded_at: Schema.NullOr(Timestamp).annotations({ description: "When the window-open reminder was taken" }),
  cancelled_at: Schema.NullOr(Timestamp),
  status: CommitmentStatus,
  reward_points_estimated: Schema.Int,
  reward_points_actual: Schema.NullOr(Schema.Int),
  actual_kwh: Schema.NullOr(Schema.Number).annotations({ description: "Consumption measured in the window at settlement, kWh" })
}).annotations({ identifier: "Commitment" })
export type Commitment = typeof Commitment.Type

/**
 * The body of `POST /api/commitments`. `suggestion_type` and `reward_points_estimated` are
 * optional and defaulted by the handler (`Commitments.create`), not by `optionalWith`'s
 * `default`: a default makes the whole struct a transformation, so decoding checked every field
 * twice (the body as sent, then the decoded record again), about 40 % of decoding a create body
 * (docs/performance.md, "Flexibility service"). The documented body is the same.
 */
export const CreateCommitment = Schema.Struct({
  user_id: Schema.optionalWith(UserId, { exact: true }).annotations({
    description: "Whose commitment: required for service accounts; a user may only name themself (default)"
  }),
  suggestion_id: SuggestionId,
  suggestion_type: Schema.optionalWith(SuggestionType, { exact: true }),
  community_id: Schema.optionalWith(Schema.NullOr(CommunityId), { exact: true }).annotations({
    description: "Service accounts only; for users it comes from the digital twin's profile"
  }),
  device_id: Schema.optionalWith(Schema.NullOr(DeviceId), { exact: true }).annotations({
    description: "Service accounts: taken as given. Users: must be their own meter (default: their meter)"
  }),
  period_start: RequestDateTime,
  period_end: RequestDateTime,
  reward_points_estimated: Schema.optionalWith(Points, { exact: true })
}).pipe(Schema.filter(windowCheck)).annotations({ identifier: "CreateCommitment" })
export type CreateCommitment = typeof CreateCommitment.Type

export const maxPageSize = 200

const IntParam = (name: string, min: number, max: number) =>
  Schema.NumberFromString.pipe(
    Schema.int({ message: () => `${name} must be a whole number` }),
    Schema.between(min, max, { message: () => `${name} must be from ${min} to ${max}` })
  )

export const ListParams = Schema.Struct({
  user_id: Schema.optionalWith(UserId, { exact: true }).annotations({
    description: "Service accounts: whose commitments (default: everyone's). Users: only their own id"
  }),
  status: Schema.optionalWith(CommitmentStatus, { exact: true }),
  limit: Schema.optionalWith(IntParam("limit", 1, maxPageSize), { exact: true, default: () => 50 }).annotations({
    description: `Page size, 1 to ${maxPageSize} (default 50)`
  }),
  offset: Schema.optionalWith(IntParam("offset", 0, 10_000_000), { exact: true, default: () => 0 }).annotations({
    description: "Rows to skip (default 0)"
  })
}).annotations({ identifier: "ListParams" })
export type ListParams = typeof ListParams.Type

export const CommitmentPage = Schema.Struct({
  items: Schema.Array(Commitment),
  total: Schema.Int.annotations({ description: "Commitments matching the filters, over all pages" }),
  limit: Schema.Int,
  offset: Schema.Int
}).annotations({ identifier: "CommitmentPage" })
export type CommitmentPage = typeof CommitmentPage.Type

export const PendingParams = Schema.Struct({
  limit: Schema.optionalWith(IntParam("limit", 1, maxPageSize), { exact: true, default: () => 100 }).annotations({
    description: `Most rows taken at once, 1 to ${maxPageSize} (default 100); ask again until the list is empty`
  })
}).annotations({ identifier: "PendingParams" })

export const ExportParams = Schema.Struct({
  created_after: Schema.optionalWith(RequestDateTime, { exact: true }).annotations({
    description: "Only commitments made at or after this instant (inclusive)"
  })
}).annotations({ identifier: "ExportParams" })
export type ExportParams = typeof ExportParams.Type

export const SettleRequest = Schema.Struct({
  reward_points_actual: Points,
  actual_kwh: Schema.optionalWith(
    Schema.Number.pipe(Schema.finite(), Schema.nonNegative({ message: () => "must be zero or more" }))
  , { exact: true }).annotations({ description: "Consumption measured in the window, kWh (kept with the commitment)" })
}).annotations({ identifier: "SettleRequest" })
export type SettleRequest = typeof SettleRequest.Type

export const CommitmentPath = Schema.Struct({ id: Schema.UUID.annotations({ description: "The commitment's id" }) })
export const SuggestionPath = Schema.Struct({ id: SuggestionId })
