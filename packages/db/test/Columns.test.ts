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
})
