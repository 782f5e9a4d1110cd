// Aggregates: count, sum, product, max, min, sort, and membership (`in`).

import { type Value, compare, equals, isInteger, isObject, objectEach, objectGet, objectSize, RegoSet } from "../value.js"
import { getKey } from "../eval/navigate.js"
import { items } from "./args.js"
import { add, mul } from "./numbers.js"
import { type BuiltinDef, elementTypeError, typeError } from "./registry.js"

const runeCount = (s: string): number => {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0xd800 || c > 0xdbff) n++
  }
  return n
}

const collection = (v: Value): Value[] => items(v, 1, "set", "array")

const numbersOf = (v: Value): Array<number | bigint> => {
  const xs = collection(v)
  for (const x of xs) if (typeof x !== "number" && typeof x !== "bigint") throw elementTypeError(1, v, x, "number")
  return xs as Array<number | bigint>
}


export const aggregates: BuiltinDef[] = [
  {
    name: "count",
    arity: 1,
    fn: ([a]) => {
      if (typeof a === "string") return runeCount(a)
      if (Array.isArray(a)) return a.length
      if (a instanceof RegoSet) return a.size
      if (isObject(a)) return objectSize(a)
      throw typeError(1, a, "array", "object", "set", "string")
    }
  },
  {
    name: "sum",
    arity: 1,
    fn: ([a], ctx) => {
      const xs = numbersOf(a)
      ctx.charge(xs.length)
      return xs.reduce<number | bigint>((acc, x) => add(acc, x), 0)
    }
  },
  {
    name: "product",
    arity: 1,
    fn: ([a], ctx) => {
      const xs = numbersOf(a)
      ctx.charge(xs.length)
      return xs.reduce<number | bigint>((acc, x) => mul(acc, x), 1)
    }
  },
  {
    name: "max",
    arity: 1,
    fn: ([a], ctx) => {
      const xs = collection(a)
      ctx.charge(xs.length)
      if (xs.length === 0) return undefined
      return xs.reduce((m, x) => (compare(m, x) <= 0 ? x : m))
    }
  },
  {
    name: "min",
    arity: 1,
    fn: ([a], ctx) => {
      const xs = collection(a)
      ctx.charge(xs.length)
      if (xs.length === 0) return undefined
      return xs.reduce((m, x) => (compare(m, x) >= 0 ? x : m))
    }
  },
  {
    name: "sort",
    arity: 1,
    fn: ([a]) => {
      if (a instanceof RegoSet) return a.sorted().slice()
      if (Array.isArray(a)) return a.slice().sort(compare)
      throw typeError(1, a, "set", "array")
    }
  },
  {
    name: "internal.member_2",
    arity: 2,
    fn: ([x, c], ctx) => {
      if (c instanceof RegoSet) return c.has(x)
      // A linear scan: in a loop over another collection, membership is quadratic work.
      if (Array.isArray(c)) {
        ctx.charge(c.length >> 2)
        for (const y of c) if (equals(x, y)) return true
        return false
      }
      if (isObject(c)) {
        ctx.charge(objectSize(c) >> 2)
        return objectEach(c, (_k, v) => equals(x, v))
      }
      return false
    }
  },
  {
    name: "internal.member_3",
    arity: 3,
    fn: ([k, v, c]) => {
      if (c instanceof RegoSet) return c.has(k) && equals(k, v)
      if (Array.isArray(c)) {
        const x = getKey(c, k)
        return x !== undefined && equals(x, v)
      }
      if (isObject(c)) {
        const x = objectGet(c, k)
        return x !== undefined && equals(x, v)
      }
      return false
    }
  },
  { name: "any", arity: 1, deprecated: true, fn: ([a]) => collection(a).some((x) => x === true) },
  { name: "all", arity: 1, deprecated: true, fn: ([a]) => collection(a).every((x) => x === true) }
]

export { isInteger }
