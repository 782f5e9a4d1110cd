// The value model: OPA's total order, equality across number representations, sets and objects
// with structural keys, JSON conversion.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { compare, equals, fromJSON, ObjectMap, RegoSet, toJSON, type Value } from "@rec/rego"
import { hashKey } from "@rec/rego/value"

const scalar = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
  fc.bigInt({ min: 2n ** 60n, max: 2n ** 70n }),
  fc.string({ maxLength: 4 })
)

const value: fc.Arbitrary<Value> = fc.letrec<{ v: Value }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    scalar as fc.Arbitrary<Value>,
    fc.array(tie("v"), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 3 }), tie("v"), { maxKeys: 3 }),
    fc.array(tie("v"), { maxLength: 3 }).map((xs) => RegoSet.of(xs))
  )
})).v

const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0)

describe("ordering", () => {
  it("orders types as OPA: null < boolean < number < string < array < object < set", () => {
    const xs: Value[] = [RegoSet.of([1]), { a: 1 }, [1], "a", 1, true, null]
    expect([...xs].sort(compare)).toEqual([null, true, 1, "a", [1], { a: 1 }, RegoSet.of([1])])
  })

  it("is a total order consistent with equality", () => {
    fc.assert(
      fc.property(value, value, value, (a, b, c) => {
        expect(sign(compare(a, b))).toBe(0 - sign(compare(b, a)))
        expect(compare(a, b) === 0).toBe(equals(a, b))
        if (compare(a, b) <= 0 && compare(b, c) <= 0) expect(compare(a, c)).toBeLessThanOrEqual(0)
      }),
      { numRuns: 300 }
    )
  })

  it("gives equal values equal hash keys", () => {
    fc.assert(
      fc.property(value, value, (a, b) => {
        if (equals(a, b)) expect(hashKey(a)).toBe(hashKey(b))
        else expect(hashKey(a)).not.toBe(hashKey(b))
      }),
      { numRuns: 300 }
    )
  })

  it("compares strings by code point, as UTF-8 bytes do", () => {
    // U+FF21 (one UTF-16 unit) sorts before U+1F600 (a surrogate pair) by code point, although
    // its UTF-16 unit is larger than the pair's first unit.
    expect(compare("\uff21", "\u{1f600}")).toBeLessThan(0)
  })
})

describe("numbers", () => {
  it("treats integers and equal floats as one value", () => {
    expect(equals(1, 1.0)).toBe(true)
    expect(RegoSet.of([1, 1.0, 2]).size).toBe(2)
  })

  it("keeps integers beyond 2^53 exact and ordered", () => {
    expect(compare(2n ** 64n, 2n ** 64n + 1n)).toBeLessThan(0)
    expect(compare(2n ** 64n, 1.5)).toBeGreaterThan(0)
    expect(equals(2n ** 64n, 18446744073709551616n)).toBe(true)
  })
})

describe("sets and objects", () => {
  it("deduplicates structurally and iterates in sorted order", () => {
    const s = RegoSet.of([[1, 2], "b", [1, 2], { k: 1 }, "a", { k: 1 }])
    expect(s.size).toBe(4)
    expect(s.sorted()).toEqual(["a", "b", [1, 2], { k: 1 }])
  })

  it("supports non-string object keys", () => {
    const o = new ObjectMap()
    o.set(1, "one")
    o.set([1, 2], "pair")
    expect(o.get(1.0)).toBe("one")
    expect(o.get([1, 2])).toBe("pair")
    expect(toJSON(o)).toEqual({ "1": "one", "[1,2]": "pair" })
  })

  it("converts to JSON and back", () => {
    fc.assert(
      fc.property(value, (v) => {
        const j = toJSON(v)
        expect(equals(fromJSON(j), fromJSON(toJSON(fromJSON(j))))).toBe(true)
      }),
      { numRuns: 200 }
    )
  })
})
