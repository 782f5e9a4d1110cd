// bits.*: bitwise operations on arbitrary-size integers.

import { normBig } from "../value.js"
import { bigint } from "./args.js"
import { bitLength, MAX_INT_BITS } from "./numbers.js"
import { type BuiltinDef, builtinError, operandError } from "./registry.js"

const shift = (v: bigint, pos: number): bigint => {
  if (v < 0n) throw operandError(pos, "must be an unsigned integer number but got a negative integer")
  return v
}

export const bits: BuiltinDef[] = [
  { name: "bits.or", arity: 2, fn: ([a, b]) => normBig(bigint(a, 1) | bigint(b, 2)) },
  { name: "bits.and", arity: 2, fn: ([a, b]) => normBig(bigint(a, 1) & bigint(b, 2)) },
  { name: "bits.xor", arity: 2, fn: ([a, b]) => normBig(bigint(a, 1) ^ bigint(b, 2)) },
  { name: "bits.negate", arity: 1, fn: ([a]) => normBig(~bigint(a, 1)) },
  {
    name: "bits.lsh",
    arity: 2,
    fn: ([a, b], ctx) => {
      const x = bigint(a, 1)
      const n = shift(bigint(b, 2), 2)
      if (x === 0n) return 0
      // Checked before shifting: the result is allocated in full.
      const size = BigInt(bitLength(x)) + n
      if (size > BigInt(MAX_INT_BITS)) throw builtinError(`shift of ${n} bits gives an integer of more than ${MAX_INT_BITS} bits`)
      ctx.charge(Number(size) >> 6)
      return normBig(x << n)
    }
  },
  { name: "bits.rsh", arity: 2, fn: ([a, b]) => normBig(bigint(a, 1) >> shift(bigint(b, 2), 2)) }
]
