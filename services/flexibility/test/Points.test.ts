/**
 * Points as the original's ledger computes them (Python 3.12: Neumaier `sum`, `round` ties to
 * even on the float's exact value), at and around every .5 boundary.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import * as Points from "../src/Points.js"

describe("roundHalfEven", () => {
  it("rounds exact halves to the even neighbour", () => {
    const cases: Array<[number, number]> = [[0.5, 0], [1.5, 2], [2.5, 2], [3.5, 4], [4.5, 4], [5.5, 6], [10.5, 10], [11.5, 12], [-0.5, 0], [-1.5, -2], [-2.5, -2]]
    for (const [x, expected] of cases) expect(Points.roundHalfEven(x), String(x)).toBe(expected)
  })

  it("rounds everything else to the nearest integer", () => {
    const cases: Array<[number, number]> = [[0, 0], [0.49999999999999994, 0], [0.5000000000000001, 1], [2.4999999999999996, 2], [2.5000000000000004, 3], [7.1, 7], [7.9, 8], [1e15 + 0.5, 1e15]]
    for (const [x, expected] of cases) expect(Points.roundHalfEven(x), String(x)).toBe(expected)
  })

  it("decides on the float's exact value, as Python does", () => {
    // 0.35 * 10 is exactly 3.5 in binary floating point: even -> 4. 1.005 * 10 is 10.049999999999999: 10.
    expect(0.35 * 10).toBe(3.5)
    expect(Points.pointsFor(0.35)).toBe(4)
    expect(Points.pointsFor(0.25)).toBe(2)
    expect(Points.pointsFor(0.45)).toBe(4)
    expect(Points.pointsFor(1.005)).toBe(10)
    expect(Points.pointsFor(0.15)).toBe(2) // 0.15 * 10 = 1.5 exactly -> 2
  })

  it("is within a half of its argument, and a tie goes to an even number", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.double({ min: -1e12, max: 1e12, noNaN: true }), (x) => {
        const r = Points.roundHalfEven(x)
        expect(Number.isInteger(r)).toBe(true)
        expect(Math.abs(r - x)).toBeLessThanOrEqual(0.5)
        if (Math.abs(r - x) === 0.5) expect(Math.abs(r % 2)).toBe(0)
      })
    )
  })

  it("refuses what is not a finite number", () => {
    expect(() => Points.roundHalfEven(Number.NaN)).toThrow(RangeError)
    expect(() => Points.roundHalfEven(Number.POSITIVE_INFINITY)).toThrow(RangeError)
  })
})

describe("pythonSum", () => {
  it("is Python 3.12's compensated sum", () => {
    // The example of Python 3.12's release notes: sum([0.1] * 10) == 1.0.
    expect(Points.pythonSum(Array(10).fill(0.1))).toBe(1)
    expect(Array(10).fill(0.1).reduce((a, b) => a + b, 0)).toBe(0.9999999999999999)
    expect(Points.pythonSum([0.05, 0.1, 0.1])).toBe(0.25)
    expect(Points.pythonSum([1e100, 1, -1e100])).toBe(1)
    expect(Points.pythonSum([])).toBe(0)
  })

  it("is within two units in the last place of the exact sum of the twin's readings", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.array(FastCheck.integer({ min: 0, max: 100_000 }), { maxLength: 24 }), (tenThousandths) => {
        // Readings of the digital twin: 4 decimals, as it rounds them.
        const values = tenThousandths.map((n) => n / 10_000)
        const exact = tenThousandths.reduce((a, b) => a + b, 0) / 10_000
        expect(Math.abs(Points.pythonSum(values) - exact)).toBeLessThanOrEqual(2 * Number.EPSILON * Math.max(1, exact))
      })
    )
  })
})

describe("settle", () => {
  it("gives the kWh and the points of the hourly readings", () => {
    expect(Points.settle([0.05, 0.1, 0.1])).toEqual({ kwh: 0.25, points: 2 })
    expect(Points.settle([0.15, 0.2])).toEqual({ kwh: 0.35, points: 4 })
    expect(Points.settle([1.2345, 0.9, 2])).toEqual({ kwh: 4.1345, points: 41 })
  })
})
