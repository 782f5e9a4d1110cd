/**
 * Folding an answer from its bytes gives what decoding the whole JSON and folding gives: the same
 * figures for valid answers of any layout, the same verdict and message for anything else.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, ParseResult, Schema } from "effect"
import { compile } from "../src/CompiledCheck.js"
import * as Energy from "../src/EnergySchemas.js"
import { type Fold, foldBytes, foldedItems } from "../src/ItemsFold.js"

type Reading = typeof Energy.MeterReading.Type
type Page = typeof Energy.MetersDataResult.Type

const sums: Fold<Reading, Page, { rows: number; limit: number; production: number; consumption: number; first: string }> = {
  start: () => {
    let production = 0
    let consumption = 0
    let first = ""
    return {
      add: (r) => {
        if (first === "") first = r.ts
        production += r.production_kwh
        consumption += r.consumption_kwh
      },
      finish: (page, rows) => ({ rows, limit: page.limit, production, consumption, first })
    }
  }
}

const schema = foldedItems(Energy.MetersDataResult, Energy.MeterReading, sums, { identifier: "Sums" })
const folded = Schema.decodeUnknownEither(schema)

/** The reference: the whole text parsed, decoded with the page's schema, then folded. */
const reference = (text: string) => {
  let json: unknown
  try {
    json = text === "" ? undefined : JSON.parse(text)
  } catch {
    return Either.left("Could not parse JSON")
  }
  return Schema.decodeUnknownEither(Energy.MetersDataResult)(json).pipe(
    Either.mapLeft((error) => error.message),
    Either.map((page) => {
      const f = sums.start()
      for (const r of page.items) f.add(r)
      return f.finish(page, page.items.length)
    })
  )
}

const bytes = (text: string) => new TextEncoder().encode(text)

const reading = (i: number) => ({
  ts: new Date(Date.UTC(2026, 10, 1) + i * 900_000).toISOString().replace(".000", ""),
  device_id: "meter-1",
  production_kwh: (i % 7) * 0.0123 + 0.001,
  consumption_kwh: (i % 5) * 0.0311 + 0.002,
  production_kw: 1.5,
  consumption_kw: 2.25
})
const rows = (n: number) => Array.from({ length: n }, (_, i) => reading(i))
const page = (items: Array<unknown>) => ({ items, limit: 40_000, offset: 0, count: items.length })
const month = JSON.stringify(page(rows(2_900)))

const expectSame = (text: string) => {
  const a = folded(bytes(text))
  const b = reference(text)
  expect(a._tag).toBe(b._tag)
  if (Either.isRight(a) && Either.isRight(b)) expect(a.right).toStrictEqual(b.right)
  if (Either.isLeft(a) && Either.isLeft(b)) {
    expect(a.left.message).toContain(b.left)
  }
  return a
}

const check = (schema: Schema.Schema.AnyNoContext) => compile(schema.ast)!

/** Whether the batched path vouched for the answer (else the whole text was decoded). */
const batched = (text: string) =>
  foldBytes(bytes(text), check(Energy.MeterReading), check(Energy.MetersDataResult), sums) !== undefined

describe("ItemsFold", () => {
  it("folds a month in batches to exactly the figures of decoding the whole answer", () => {
    expect(month.length).toBeGreaterThan(200_000)
    expect(batched(month)).toBe(true)
    const result = expectSame(month)
    expect(Either.getOrThrow(result).rows).toBe(2_900)
    expect(Either.getOrThrow(result).first).toBe("2026-11-01T00:00:00Z")
  })

  it("folds small, empty and differently laid out answers the same way", () => {
    expect(batched(JSON.stringify(page(rows(3))))).toBe(true)
    expectSame(JSON.stringify(page(rows(3))))
    expectSame(JSON.stringify(page([])))
    // `items` last, and pretty-printed (no `},{` to cut at: one parse of the rest).
    const { items, ...rest } = page(rows(2_000))
    const last = JSON.stringify({ ...rest, items })
    expect(batched(last)).toBe(true)
    expectSame(last)
    const pretty = JSON.stringify(page(rows(1_500)), null, 2)
    expect(batched(pretty)).toBe(true)
    expectSame(pretty)
    // Non-ASCII text in the rows (multi-byte UTF-8 on both sides of the cuts).
    const accents = JSON.stringify(page(rows(2_000).map((r, i) => ({ ...r, device_id: `compteur-é-${i}-€` }))))
    expect(batched(accents)).toBe(true)
    expectSame(accents)
  })

  it("leaves the answer's bytes as they were (each batch is bracketed in place while it is decoded)", () => {
    for (const text of [month, JSON.stringify(page(rows(2_000).map((r, i) => ({ ...r, device_id: i % 97 === 0 ? "a},{" : "m" }))))]) {
      const input = bytes(text)
      const copy = Uint8Array.from(input)
      expectSame(text)
      foldBytes(input, check(Energy.MeterReading), check(Energy.MetersDataResult), sums)
      expect(Buffer.compare(input, copy)).toBe(0)
    }
  })

  it("is not fooled by a `},{` inside a string", () => {
    const tricky = JSON.stringify(page(rows(2_000).map((r, i) => ({ ...r, device_id: i % 97 === 0 ? "a},{\"b\":1}" : "m" }))))
    expectSame(tricky)
  })

  it("gives decoding's verdict for what it cannot vouch for", () => {
    const middle = month.indexOf("},{", Math.floor(month.length / 2))
    const cases = [
      // Broken JSON in a middle batch, at the end, and an unfinished document.
      month.slice(0, middle) + "}#{" + month.slice(middle + 3),
      month.slice(0, -1),
      month.slice(0, middle),
      // A row the contract refuses, in a middle batch and in the last batch.
      JSON.stringify(page(rows(2_900).map((r, i) => (i === 1_400 ? { ...r, production_kwh: "7" } : r)))),
      JSON.stringify(page(rows(2_900).map((r, i) => (i === 2_899 ? { ...r, production_kw: null } : r)))),
      // A trailing comma; a wrong page field; items that is not an array; not an object.
      month.replace(/\]\s*,\s*"limit"/, ",]," + '"limit"'),
      JSON.stringify({ ...page(rows(10)), limit: 1.5 }),
      JSON.stringify({ items: { a: 1 }, limit: 1, offset: 0, count: 0 }),
      JSON.stringify(rows(3)),
      "",
      "null"
    ]
    cases.forEach((text, i) => expect([i, batched(text)]).toEqual([i, false]))
    for (const text of cases) expect(Either.isLeft(expectSame(text))).toBe(true)
    // An undeclared key, which decoding strips: the compiled check refuses it, decoding folds it.
    const extra = JSON.stringify(page(rows(2_900).map((r, i) => (i === 10 ? { ...r, extra: true } : r))))
    expect(batched(extra)).toBe(false)
    expect(Either.getOrThrow(expectSame(extra)).rows).toBe(2_900)
  })

  it("leaves duplicate and escaped `items` keys to decoding (the last key wins there)", () => {
    const inner = JSON.stringify(page(rows(2_000))).slice(0, -1)
    const twice = `${inner},"items":[]}`
    const escaped = `${inner},"\\u0069tems":[]}`
    for (const text of [twice, escaped]) {
      expect(batched(text)).toBe(false)
      const result = expectSame(text)
      expect(Either.getOrThrow(result).rows).toBe(0)
    }
  })

  it("refuses anything but bytes, and cannot encode", () => {
    expect(Either.isLeft(folded(month))).toBe(true)
    const encoded = ParseResult.encodeUnknownEither(schema)({ rows: 0, limit: 0, production: 0, consumption: 0, first: "" })
    expect(Either.isLeft(encoded)).toBe(true)
  })
})
