// Comparison operators: ==, !=, <, <=, >, >= over any values (OPA's total order).

import { compare, equals } from "../value.js"
import type { BuiltinDef } from "./registry.js"

export const comparison: BuiltinDef[] = [
  { name: "equal", arity: 2, fn: ([a, b]) => equals(a, b) },
  { name: "neq", arity: 2, fn: ([a, b]) => !equals(a, b) },
  { name: "lt", arity: 2, fn: ([a, b]) => compare(a, b) < 0 },
  { name: "lte", arity: 2, fn: ([a, b]) => compare(a, b) <= 0 },
  { name: "gt", arity: 2, fn: ([a, b]) => compare(a, b) > 0 },
  { name: "gte", arity: 2, fn: ([a, b]) => compare(a, b) >= 0 }
]
