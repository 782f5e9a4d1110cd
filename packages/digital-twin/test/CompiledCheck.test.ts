/**
 * The compiled check decodes exactly as `Schema.decodeUnknown` does, or falls back to it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { compile, withCompiledCheck } from "../src/CompiledCheck.js"
import * as Energy from "../src/EnergySchemas.js"
import * as Grid from "../src/GridSchemas.js"
import { IsoDate } from "../src/Values.js"

const row = { ts: "2026-08-17T10:15:00Z", device_id: "m", production_kwh: 0.25, consumption_kwh: 0.5, production_kw: 1, consumption_kw: 2 }
const page = (items: Array<unknown>) => ({ items, limit: 40_000, offset: 0, count: items.length })

/** Each input gets the same verdict, value or message through both decoders. */
const expectSameAsDecoding = <A>(
  checked: (u: unknown) => Either.Either<A, { readonly message: string }>,
  plain: (u: unknown) => Either.Either<A, { readonly message: string }>,
  cases: ReadonlyArray<unknown>
) => {
  for (const input of cases) {
    const a = checked(input)
    const b = plain(input)
    expect(a._tag).toBe(b._tag)
    if (Either.isRight(a) && Either.isRight(b)) expect(a.right).toEqual(b.right)
    if (Either.isLeft(a) && Either.isLeft(b)) expect(a.left.message).toBe(b.left.message)
  }
}

describe("CompiledCheck", () => {
  it("compiles transformation-free schemas only", () => {
    expect(compile(Energy.MetersDataResult.ast)).toBeDefined()
    expect(compile(Energy.Profile.ast)).toBeDefined()
    expect(compile(Schema.DateFromString.ast)).toBeUndefined()
  })

  it("gives what decoding gives, for valid, extra-keyed and malformed answers", () => {
    const checked = Schema.decodeUnknownEither(withCompiledCheck(Energy.MetersDataResult))
    const plain = Schema.decodeUnknownEither(Energy.MetersDataResult)
    const cases: Array<unknown> = [
      page([row, { ...row, ts: "2026-08-17T10:30:00Z" }]),
      page([{ ...row, extra: 1 }]),
      page([{ ...row, production_kwh: "7" }]),
      page([{ ...row, consumption_kw: undefined }]),
      { ...page([row]), limit: 1.5 },
      page([null]),
      [row],
      null
    ]
    expectSameAsDecoding(checked, plain, cases)
    expect(Either.getOrThrow(checked(page([{ ...row, extra: 1 }]))).items[0]).not.toHaveProperty("extra")
  })

  it("generated struct checks: any property name, optional and nested properties, as decoding decides", () => {
    const Odd = Schema.Struct({
      "a \"quoted\" \\ name": Schema.String,
      "line\nbreak": Schema.optional(Schema.Number),
      "": Schema.Boolean,
      constructor: Schema.NullOr(Schema.Int),
      nested: Schema.optional(Schema.Struct({ x: Schema.Literal("x"), y: Schema.Array(Schema.Number) }))
    })
    const ok = { "a \"quoted\" \\ name": "s", "": true, constructor: null }
    expect(compile(Odd.ast)).toBeDefined()
    expectSameAsDecoding(Schema.decodeUnknownEither(withCompiledCheck(Odd)), Schema.decodeUnknownEither(Odd), [
      ok,
      { ...ok, "line\nbreak": 2, nested: { x: "x", y: [1, 2] } },
      { ...ok, "line\nbreak": undefined },
      { ...ok, "line\nbreak": "2" },
      { ...ok, constructor: 1.5 },
      { ...ok, nested: { x: "y", y: [] } },
      { ...ok, nested: { x: "x", y: [1], z: 0 } },
      { ...ok, extra: 1 },
      { "": true, constructor: null },
      Object.assign(Object.create({ inherited: 1 }), ok),
      [],
      null,
      "text"
    ])
    const check = compile(Odd.ast)!
    expect(check(ok)).toBe(true)
    expect(check({ ...ok, extra: 1 })).toBe(false)
    expect(check({ "": true, constructor: null })).toBe(false)
  })

  it("compiles string-keyed records (a risk's metrics) with the same result as decoding", () => {
    expect(compile(Grid.RisksResult.ast)).toBeDefined()
    const checked = Schema.decodeUnknownEither(withCompiledCheck(Grid.RisksResult))
    const plain = Schema.decodeUnknownEither(Grid.RisksResult)
    const risk = { segment_id: "s1", date: "2026-08-17", risk_vector: "wind", risk_level: "high", risk_color_hex: null, metrics: { gust_kmh: 92, note: "x" } }
    const cases: Array<unknown> = [
      page([risk]),
      page([{ ...risk, metrics: {} }]),
      page([{ ...risk, metrics: [1] }]),
      page([{ ...risk, metrics: null }]),
      page([{ ...risk, date: "2026-02-30" }]),
      page([{ ...risk, risk_level: "extreme" }])
    ]
    expectSameAsDecoding(checked, plain, cases)
    expect(Either.isRight(checked(page([risk])))).toBe(true)
    expect(Either.isLeft(checked(page([{ ...risk, metrics: [1] }])))).toBe(true)
  })

  it("checks calendar dates without a Date", () => {
    const is = Schema.is(IsoDate)
    expect(["2024-02-29", "2000-02-29", "2026-12-31", "0000-01-01"].every(is)).toBe(true)
    expect(["2026-02-29", "1900-02-29", "2026-04-31", "2026-13-01", "2026-00-10", "2026-1-01"].some(is)).toBe(false)
  })
})
