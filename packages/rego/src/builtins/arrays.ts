// Array builtins.

import type { Value } from "../value.js"
import { arr, int } from "./args.js"
import type { BuiltinDef } from "./registry.js"

export const arrays: BuiltinDef[] = [
  { name: "array.concat", arity: 2, fn: ([a, b]) => [...arr(a, 1), ...arr(b, 2)] },
  {
    name: "array.slice",
    arity: 3,
    fn: ([a, b, c]) => {
      const xs = arr(a, 1)
      let start = int(b, 2)
      let stop = int(c, 3)
      stop = stop < 0 ? 0 : Math.min(stop, xs.length)
      start = start < 0 ? 0 : Math.min(start, stop)
      return xs.slice(start, stop)
    }
  },
  { name: "array.reverse", arity: 1, fn: ([a]) => [...arr(a, 1)].reverse() },
  {
    name: "array.flatten",
    arity: 1,
    fn: ([a]) => {
      const out: Value[] = []
      for (const x of arr(a, 1)) {
        if (Array.isArray(x)) out.push(...x)
        else out.push(x)
      }
      return out
    }
  }
]
