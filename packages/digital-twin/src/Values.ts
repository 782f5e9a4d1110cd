/**
 * The digital twin's "values fetchers": `POST <entity>/values/<fetcher>` with a body
 * `{"payload": {...}}`. As in the original, `limit` and `offset` ride inside the payload; the
 * rest is validated against the fetcher's schema, which forbids unknown keys, so a bad payload
 * is a 400 that says which field is wrong. Results are `{items, limit, offset, count}`, where
 * `count` is the number of items returned and `limit` the effective (capped) page size.
 */
import { Schema } from "effect"

const daysInMonth = (year: number, month: number) =>
  month === 2
    ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28)
    : month === 4 || month === 6 || month === 9 || month === 11
    ? 30
    : 31

/**
 * A calendar date `YYYY-MM-DD` (proleptic Gregorian, as `Date` reads it). Checked with arithmetic
 * rather than a `Date` per value: daily rows carry one each.
 */
export const IsoDate = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/),
  Schema.filter((s) => {
    const year = Number(s.slice(0, 4))
    const month = Number(s.slice(5, 7))
    const day = Number(s.slice(8, 10))
    return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month) || `${s} is not a calendar date`
  })
).annotations({ identifier: "IsoDate", description: "A calendar date, YYYY-MM-DD", examples: ["2026-08-17"] })

/** A timestamp as the digital twin writes it (ISO 8601 with an offset); passed through as text. */
export const Timestamp = Schema.String.annotations({
  identifier: "Timestamp",
  description: "ISO 8601 date-time with offset",
  examples: ["2026-08-17T10:15:00Z"]
})

/** A date-time in a request payload (ISO 8601; an offset is required to avoid ambiguity). */
export const RequestDateTime = Schema.compose(
  Schema.String.pipe(Schema.pattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/)),
  Schema.DateTimeUtc
).annotations({
  identifier: "RequestDateTime",
  description: "ISO 8601 date-time with Z or an offset, e.g. 2026-08-17T00:00:00Z"
})

const paging = {
  limit: Schema.optional(Schema.Int.pipe(Schema.positive())).annotations({
    description: "Page size; capped at the fetcher's maximum (also its default)"
  }),
  offset: Schema.optional(Schema.Int.pipe(Schema.nonNegative())).annotations({ description: "Rows to skip (default 0)" })
}

/** A fetcher's payload: its own fields plus `limit`/`offset`; unknown keys are rejected. */
export const FetcherPayload = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.Struct({ ...fields, ...paging }).annotations({ parseOptions: { onExcessProperty: "error" } })

/** The request body of a values fetcher. */
export const ValuesRequest = <P extends Schema.Schema.Any>(payload: P) =>
  Schema.Struct({ payload }).annotations({ parseOptions: { onExcessProperty: "error" } })

/** The result of a values fetcher. */
export const FetchResult = <I extends Schema.Schema.Any>(item: I) =>
  Schema.Struct({
    items: Schema.Array(item),
    limit: Schema.Int,
    offset: Schema.Int,
    count: Schema.Int
  })

/** What any fetcher accepts before the catch-all route says it does not exist. */
export const AnyValuesRequest = Schema.Struct({ payload: Schema.optional(Schema.Unknown) })

/** A fetcher id in a path. */
export const FetcherId = Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_.-]{1,100}$/))

/** `start` before `end`, within `maxDays`. */
export const windowCheck = (maxDays: number) =>
<A extends { readonly start: { readonly epochMillis: number }; readonly end: { readonly epochMillis: number } }>(
  value: A
): true | string => {
  if (value.end.epochMillis <= value.start.epochMillis) return "end must be after start"
  if (value.end.epochMillis - value.start.epochMillis > maxDays * 86_400_000) {
    return `the window may span at most ${maxDays} days`
  }
  return true
}
