// bits.*: bitwise operations on arbitrary-size integers.

import { normBig } from "../value.js"
import { bigint } from "./args.js"
import { type BuiltinDef, operandError } from "./registry.js"

const shift = (v: bigint, pos: number): bigint => {
  if (v < 0n) throw operandError(pos, "must be an unsigned integer number but got a negative integer")
  return v
}

export const bits: BuiltinDef[] = [
  { name: "bits.or", arity: 2, fn: ([a, b]) => normBig(bigint(a, 1) | bigint(b, 2)) },
  { name: "bits.and", arity: 2, fn: ([a, b]) => normBig(bigint(a, 1) & bigint(b, 2)) },
  { name: "bits.xor", arity: 2, fn: ([a, b]) => normBig(bigint(a, 1) ^ bigint(b, 2)) },
  { name: "bits.negate", arity: 1, fn: ([a]) => normBig(~bigint(a, 1)) },
  { name: "bits.lsh", arity: 2, fn: ([a, b]) => normBig(bigint(a, 1) << shift(bigint(b, 2), 2)) },
  { name: "bits.rsh", arity: 2, fn: ([a, b]) => normBig(bigint(a, 1) >> shift(bigint(b, 2), 2)) }
]
