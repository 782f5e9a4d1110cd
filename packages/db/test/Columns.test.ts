import * as FastCheck from "effect/FastCheck"
import { describe, expect, it } from "@effect/vitest"
import { Columns, PgTypes } from "@rec/db"
import { BigDecimal, DateTime, Either, Schema } from "effect"

describe("column schemas", () => {
  it("decode the shapes PgTypes produces", () => {
    const decode = <A, I>(schema: Schema.Schema<A, I>) => Schema.decodeUnknownEither(schema)
    expect(DateTime.formatIso(Either.getOrThrow(decode(Columns.Timestamp)("2024-03-30T23:30:00.123Z")))).toBe(
      "2024-03-30T23:30:00.123Z"
    )
    expect(Either.getOrThrow(decode(Columns.DateOnly)("2024-02-29"))).toBe("2024-02-29")
    expect(Either.isLeft(decode(Columns.DateOnly)("2024-02-29T00:00:00Z"))).toBe(true)
    expect(Either.getOrThrow(decode(Columns.Int8)("9007199254740991"))).toBe(9007199254740991)
    expect(Either.isLeft(decode(Columns.Int8)("9007199254740993"))).toBe(true)
    expect(Either.getOrThrow(decode(Columns.Int8BigInt)("9007199254740993"))).toBe(9007199254740993n)
    expect(BigDecimal.format(Either.getOrThrow(decode(Columns.Numeric)("12.340")))).toBe("12.34")
  })

  it("round-trip pgvector literals and refuse non-finite values", () => {
    expect(Schema.decodeSync(Columns.Vector)("[1,2.5,-3e-7]")).toEqual([1, 2.5, -3e-7])
    expect(Schema.decodeSync(Columns.Vector)("[]")).toEqual([])
    expect(Schema.encodeSync(Columns.Vector)([0.25, -1])).toBe("[0.25,-1]")
    expect(Either.isLeft(Schema.decodeEither(Columns.Vector)("[1,NaN]"))).toBe(true)
    expect(Either.isLeft(Schema.decodeEither(Columns.Vector)("1,2"))).toBe(true)
    expect(() => Columns.vectorLiteral([Infinity])).toThrow(RangeError)
  })

  it("timestamptz text becomes ISO 8601 UTC in every PostgreSQL output style", () => {
    expect(PgTypes.timestamptzToIso("2024-03-31 01:30:00.123+02")).toBe("2024-03-30T23:30:00.123Z")
    expect(PgTypes.timestamptzToIso("2024-01-01 00:00:00+05:30")).toBe("2023-12-31T18:30:00.000Z")
    expect(PgTypes.timestamptzToIso("1900-01-01 00:00:00+00:19:32")).toBe("1899-12-31T23:40:28.000Z")
    expect(PgTypes.timestamptzToIso("infinity")).toBe("infinity")
    expect(PgTypes.timestamptzToIso("-infinity")).toBe("-infinity")
  })

  it("reads UTC text (the fast path) exactly as it reads every other style", () => {
    expect(PgTypes.timestamptzToIso("2026-08-17 10:00:00+00")).toBe("2026-08-17T10:00:00.000Z")
    expect(PgTypes.timestamptzToIso("2026-08-17 10:00:00.5+00")).toBe("2026-08-17T10:00:00.500Z")
    expect(PgTypes.timestamptzToIso("2026-08-17 10:00:00.123999+00")).toBe("2026-08-17T10:00:00.123Z")
    expect(PgTypes.timestamptzToIso("0044-03-15 12:00:00+00 BC")).toBe("-000043-03-15T12:00:00.000Z")
    FastCheck.assert(
      FastCheck.property(
        FastCheck.integer({ min: Date.UTC(1, 0, 1), max: Date.UTC(9999, 11, 31) }),
        FastCheck.integer({ min: 0, max: 999 }),
        FastCheck.constantFrom(0, 1, 2, 3),
        (ms, micros, extra) => {
          // PostgreSQL prints up to 6 fractional digits, trailing zeros dropped.
          const iso = new Date(ms).toISOString()
          const fraction = `${iso.slice(20, 23)}${String(micros).padStart(3, "0")}`.slice(0, 3 + extra).replace(/0+$/, "")
          const text = `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction === "" ? "" : `.${fraction}`}+00`
          const viaDate = PgTypes.timestamptzToIso(text.replace("+00", "+00:00:00"))
          expect(PgTypes.timestamptzToIso(text)).toBe(viaDate)
        }
      )
    )
  })
})
