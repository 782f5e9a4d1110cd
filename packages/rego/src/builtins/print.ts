// print(...): writes its operands to the evaluation's print sink. Each operand arrives as the set
// of its values (the compiler wraps them), so undefined operands print as `<undefined>` instead of
// stopping evaluation.

import { formatPlain } from "../format.js"
import { type Value, RegoSet } from "../value.js"
import type { BuiltinDef } from "./registry.js"

const cross = (sets: Value[][], i: number, acc: string[], out: string[]): void => {
  if (i === sets.length) {
    out.push(acc.join(" "))
    return
  }
  for (const v of sets[i]) {
    acc.push(formatPlain(v))
    cross(sets, i + 1, acc, out)
    acc.pop()
  }
}

export const print: BuiltinDef[] = [
  {
    name: "print",
    arity: 0,
    variadic: true,
    void: true,
    fn: (args, ctx) => {
      const sets = args.map((a) => (a instanceof RegoSet ? (a.size === 0 ? ["<undefined>"] : a.sorted()) : [a]))
      const lines: string[] = []
      cross(sets, 0, [], lines)
      for (const l of lines) ctx.print(l, ctx.location)
      return true
    }
  }
]
