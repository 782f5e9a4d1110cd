// Set operators (& |) and intersection/union over sets of sets.

import { type Value, RegoSet } from "../value.js"
import { set } from "./args.js"
import { type BuiltinDef, elementTypeError } from "./registry.js"

const intersect = (a: RegoSet, b: RegoSet): RegoSet => {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a]
  const out = new RegoSet()
  for (const x of small.unordered()) if (large.has(x)) out.add(x)
  return out
}

const unite = (a: RegoSet, b: RegoSet): RegoSet => {
  const out = new RegoSet()
  for (const x of a.unordered()) out.add(x)
  for (const x of b.unordered()) out.add(x)
  return out
}

const setOfSets = (v: Value): RegoSet[] => {
  const s = set(v, 1)
  const out: RegoSet[] = []
  for (const x of s.sorted()) {
    if (!(x instanceof RegoSet)) throw elementTypeError(1, v, x, "set")
    out.push(x)
  }
  return out
}

export const sets: BuiltinDef[] = [
  { name: "and", arity: 2, fn: ([a, b]) => intersect(set(a, 1), set(b, 2)) },
  { name: "or", arity: 2, fn: ([a, b]) => unite(set(a, 1), set(b, 2)) },
  {
    name: "intersection",
    arity: 1,
    fn: ([a]) => {
      const xs = setOfSets(a)
      if (xs.length === 0) return new RegoSet()
      return xs.reduce(intersect)
    }
  },
  {
    name: "union",
    arity: 1,
    fn: ([a]) => setOfSets(a).reduce(unite, new RegoSet())
  }
]
