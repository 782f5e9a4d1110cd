// Comprehensions are computed once per scope (or once into an index keyed by the outer variables
// they compare against): the results must be those of computing them every time.
import { describe, expect, it } from "vitest"
import { Rego } from "@rec/rego"

const items = Array.from({ length: 300 }, (_, i) => ({ id: i, kind: `k${i % 7}`, size: i % 5, tags: [`t${i % 3}`, `t${i % 4}`] }))

const rego = Rego.compile({
  modules: {
    "c.rego": `package c

counts[k] := n if {
	some x in data.items
	k := x.kind
	n := count([y | some y in data.items; y.kind == k])
}

big[k] := ids if {
	some x in data.items
	k := x.kind
	ids := {y.id | some y in data.items; k == y.kind; y.size > 2}
}

by_two[k] := ids if {
	some x in data.items
	k := [x.kind, x.size]
	ids := [y.id | some y in data.items; y.kind == k[0]; y.size == k[1]]
}

pairs[[k, s]] := n if {
	some x in data.items
	k := x.kind
	s := x.size
	n := count({y.id | some y in data.items; y.kind == k; s == y.size})
}

tagged[t] := n if {
	some t in ["t0", "t1", "t2", "t3", "t9"]
	n := count([y | some y in data.items; y.tags[_] == t])
}

above[k] := n if {
	some k in [0, 2, 4]
	n := count([y | some y in data.items; y.size > k])
}

by_kind := {k: ids | some x in data.items; k := x.kind; ids := {y.id: y.size | some y in data.items; y.kind == k}}

f(kind) := count([y | some y in data.items; y.kind == kind])

via_function := [f("k1"), f("k2"), f("nope")]

input_sizes := {s | some s in input.sizes}

scoped := [a, b] if {
	a := count(input_sizes)
	b := count(input_sizes) with input.sizes as [1]
}
`
  },
  data: { items }
})

const evaluate = (rule: string, input: unknown = {}): unknown => rego.prepareRule(`data.c.${rule}`).evaluate(input)

describe("comprehension indexing", () => {
  it("groups by one equality key", () => {
    const want: Record<string, number> = {}
    for (const x of items) want[x.kind] = items.filter((y) => y.kind === x.kind).length
    expect(evaluate("counts")).toEqual(want)
  })

  it("keeps the other conditions of the body", () => {
    const want: Record<string, number[]> = {}
    for (const x of items) want[x.kind] = items.filter((y) => y.kind === x.kind && y.size > 2).map((y) => y.id)
    expect(evaluate("big")).toEqual(want)
  })

  it("keys on several outer variables, and on a generator", () => {
    const pairs = evaluate("pairs") as Record<string, number>
    for (const x of items) {
      expect(pairs[JSON.stringify([x.kind, x.size])]).toBe(items.filter((y) => y.kind === x.kind && y.size === x.size).length)
    }
    // One element per solution: an item with the tag twice is in the array twice.
    const occurrences = (t: string): number => items.reduce((n, y) => n + y.tags.filter((x) => x === t).length, 0)
    expect(evaluate("tagged")).toEqual({ t0: occurrences("t0"), t1: occurrences("t1"), t2: occurrences("t2"), t3: occurrences("t3"), t9: 0 })
  })

  it("computes comprehensions that close over non-key variables every time", () => {
    expect(evaluate("above")).toEqual({ "0": items.filter((y) => y.size > 0).length, "2": items.filter((y) => y.size > 2).length, "4": 0 })
    const byTwo = evaluate("by_two") as Record<string, number[]>
    expect(byTwo[JSON.stringify(["k3", 4])]).toEqual(items.filter((y) => y.kind === "k3" && y.size === 4).map((y) => y.id))
  })

  it("builds object comprehensions per key", () => {
    const byKind = evaluate("by_kind") as Record<string, Record<string, number>>
    expect(Object.keys(byKind).length).toBe(7)
    expect(byKind.k0).toEqual(Object.fromEntries(items.filter((y) => y.kind === "k0").map((y) => [String(y.id), y.size])))
  })

  it("indexes over function arguments, with an empty result for unknown keys", () => {
    expect(evaluate("via_function")).toEqual([items.filter((y) => y.kind === "k1").length, items.filter((y) => y.kind === "k2").length, 0])
  })

  it("is linear in the data for a group-by", () => {
    const many = Array.from({ length: 20_000 }, (_, i) => ({ id: i, kind: `k${i % 100}` }))
    const r = Rego.compile({
      modules: { "g.rego": "package g\ncounts[k] := n if { some x in data.items; k := x.kind; n := count([y | some y in data.items; y.kind == k]) }" },
      data: { items: many }
    })
    // Quadratic evaluation would take 20,000 x 20,000 steps.
    const counts = r.prepareRule("data.g.counts").evaluate({}, { limits: { maxSteps: 1_000_000 } }) as Record<string, number>
    expect(counts.k42).toBe(200)
  })
})

describe("comprehension caching", () => {
  it("recomputes a comprehension in another `with` scope", () => {
    expect(evaluate("scoped", { sizes: [1, 2, 3] })).toEqual([3, 1])
  })

  it("keeps print() inside comprehensions running every time", () => {
    const lines: string[] = []
    const r = Rego.compile({ modules: { "p.rego": 'package p\nq := [n | some i in [1, 2]; n := count([x | some x in [1, 2, 3]; print("in", x)])]' } })
    expect(r.prepareRule("data.p.q").evaluate({}, { print: (m) => lines.push(m) })).toEqual([3, 3])
    expect(lines.length).toBe(6)
  })
})
