/**
 * Schemas for decoding columns as `PgTypes` delivers them (and encoding parameters back).
 * Use them in `SqlSchema` requests and `Model.Class` fields.
 */
import { Schema } from "effect"

/** `timestamptz` <-> `DateTime.Utc` (rows carry ISO 8601 strings). */
export const Timestamp = Schema.DateTimeUtc

/** `timestamptz` <-> JavaScript `Date`. */
export const TimestampDate = Schema.Date

/** `date` <-> `"YYYY-MM-DD"`. */
export const DateOnly = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/, { message: () => "expected a date as YYYY-MM-DD" }),
  Schema.brand("DateOnly")
)
export type DateOnly = typeof DateOnly.Type

/**
 * `int8` (`bigint`, `bigserial`, `count(*)`) as a JavaScript number. Fails on values outside
 * the safe integer range instead of rounding them; use `Int8BigInt` where that can happen.
 */
export const Int8 = Schema.NumberFromString.pipe(
  Schema.filter((n) => Number.isSafeInteger(n), { message: () => "int8 value outside the safe integer range" })
)

/** `int8` as a `bigint`. */
export const Int8BigInt = Schema.BigInt

/** `numeric` as an exact `BigDecimal`. */
export const Numeric = Schema.BigDecimal

/** `numeric` as a (possibly rounded) number: amounts where float precision is acceptable. */
export const NumericNumber = Schema.NumberFromString

const finite = (values: ReadonlyArray<number>) => values.every((v) => Number.isFinite(v))

/** The pgvector text form of a vector, `[1,2.5,-3]`. Fails on NaN and infinities. */
export const vectorLiteral = (values: ReadonlyArray<number>): string => {
  if (!finite(values)) throw new RangeError("a vector may only hold finite numbers")
  return `[${values.join(",")}]`
}

/**
 * pgvector `vector` <-> `ReadonlyArray<number>`. In SQL, cast the parameter:
 * `sql\`INSERT INTO chunks (embedding) VALUES (${Schema.encodeSync(Vector)(values)}::vector)\``.
 */
export const Vector = Schema.transform(
  Schema.String.pipe(
    Schema.pattern(/^\[[^\]]*\]$/, { message: () => "expected a pgvector literal such as [1,2,3]" })
  ),
  Schema.Array(Schema.Number.pipe(Schema.finite())),
  {
    strict: true,
    decode: (text) => {
      const body = text.slice(1, -1).trim()
      return body === "" ? [] : body.split(",").map(Number)
    },
    encode: (values) => vectorLiteral(values)
  }
)
