// Operand helpers shared by builtin families: type checks that raise OPA's operand errors.

import { type RegoObject, type Value, isObject, RegoSet, typeName } from "../value.js"
import { elementTypeError, operandError, typeError } from "./registry.js"

export const str = (v: Value, pos: number): string => {
  if (typeof v !== "string") throw typeError(pos, v, "string")
  return v
}

export const num = (v: Value, pos: number): number | bigint => {
  if (typeof v !== "number" && typeof v !== "bigint") throw typeError(pos, v, "number")
  return v
}

/** An integer operand as a JS number (OPA's IntOperand). */
export const int = (v: Value, pos: number): number => {
  const n = num(v, pos)
  if (typeof n === "bigint") {
    if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < -BigInt(Number.MAX_SAFE_INTEGER)) throw operandError(pos, "must be integer number but got floating-point number")
    return Number(n)
  }
  if (!Number.isInteger(n)) throw operandError(pos, "must be integer number but got floating-point number")
  return n
}

/** An integer operand as a bigint. */
export const bigint = (v: Value, pos: number): bigint => {
  const n = num(v, pos)
  if (typeof n === "bigint") return n
  if (!Number.isInteger(n)) throw operandError(pos, "must be integer number but got floating-point number")
  return BigInt(n)
}

export const bool = (v: Value, pos: number): boolean => {
  if (typeof v !== "boolean") throw typeError(pos, v, "boolean")
  return v
}

export const arr = (v: Value, pos: number): Value[] => {
  if (!Array.isArray(v)) throw typeError(pos, v, "array")
  return v
}

export const obj = (v: Value, pos: number): RegoObject => {
  if (!isObject(v)) throw typeError(pos, v, "object")
  return v
}

export const set = (v: Value, pos: number): RegoSet => {
  if (!(v instanceof RegoSet)) throw typeError(pos, v, "set")
  return v
}

/** Elements of an array or set operand. */
export const items = (v: Value, pos: number, ...expected: string[]): Value[] => {
  if (Array.isArray(v)) return v
  if (v instanceof RegoSet) return v.sorted()
  throw typeError(pos, v, ...(expected.length > 0 ? expected : ["array", "set"]))
}

/** Strings of an array or set operand (OPA's StringSliceOperand). */
export const strings = (v: Value, pos: number): string[] => {
  const xs = items(v, pos, "array", "set")
  for (const x of xs) if (typeof x !== "string") throw elementTypeError(pos, v, x, "string")
  return xs as string[]
}

export { typeName }
