// Type predicates (is_*, type_name) and to_number.

import { type Value, isObject, parseNumberLiteral, RegoSet, typeName } from "../value.js"
import { type BuiltinDef, builtinError, typeError } from "./registry.js"

const is = (name: string, test: (v: Value) => boolean): BuiltinDef => ({ name, arity: 1, fn: ([a]) => test(a) })

/** Go's strconv.ParseFloat syntax (decimal forms; Go also accepts hex floats and underscores in them). */
const FLOAT_SYNTAX = /^[+-]?(?:\d+(?:_\d+)*(?:\.(?:\d+(?:_\d+)*)?)?|\.\d+(?:_\d+)*)(?:[eE][+-]?\d+)?$/
const HEX_SYNTAX = /^[+-]?0[xX](?:[0-9a-fA-F_]+(?:\.[0-9a-fA-F_]*)?|\.[0-9a-fA-F_]+)(?:[pP][+-]?\d+)?$/

const toNumber = (s: string): number | bigint => {
  const lower = s.replace(/^[+-]+/, "").toLowerCase()
  if (lower === "inf" || lower === "infinity" || lower === "nan") throw typeError(1, s, "valid number string")
  if (FLOAT_SYNTAX.test(s) && !s.includes("_")) {
    const text = s.startsWith("+") ? s.slice(1) : s
    const n = parseNumberLiteral(text.startsWith(".") ? "0" + text : text.startsWith("-.") ? "-0" + text.slice(1) : text)
    if (typeof n === "number" && !Number.isFinite(n)) throw builtinError(`strconv.ParseFloat: parsing ${JSON.stringify(s)}: value out of range`)
    return n
  }
  if (HEX_SYNTAX.test(s)) {
    const neg = s.startsWith("-")
    const body = s.replace(/^[+-]/, "").slice(2).replace(/_/g, "")
    const [m, e] = body.split(/[pP]/)
    const [ip, fp = ""] = m.split(".")
    let v = parseInt(ip === "" ? "0" : ip, 16)
    for (let i = 0; i < fp.length; i++) v += parseInt(fp[i], 16) / 16 ** (i + 1)
    if (e !== undefined) v *= 2 ** Number(e)
    return neg ? -v : v
  }
  throw builtinError(`strconv.ParseFloat: parsing ${JSON.stringify(s)}: invalid syntax`)
}

export const types: BuiltinDef[] = [
  is("is_number", (v) => typeof v === "number" || typeof v === "bigint"),
  is("is_string", (v) => typeof v === "string"),
  is("is_boolean", (v) => typeof v === "boolean"),
  is("is_array", (v) => Array.isArray(v)),
  is("is_set", (v) => v instanceof RegoSet),
  is("is_object", (v) => isObject(v)),
  is("is_null", (v) => v === null),
  { name: "type_name", arity: 1, fn: ([a]) => typeName(a) },
  {
    name: "to_number",
    arity: 1,
    fn: ([a]) => {
      if (a === null) return 0
      if (typeof a === "boolean") return a ? 1 : 0
      if (typeof a === "number" || typeof a === "bigint") return a
      if (typeof a === "string") return toNumber(a)
      throw typeError(1, a, "null", "boolean", "number", "string")
    }
  },
  // Removed in Rego v1 (calls are compile errors), kept so the compiler can say so.
  { name: "cast_array", arity: 1, deprecated: true, fn: ([a]) => a },
  { name: "cast_set", arity: 1, deprecated: true, fn: ([a]) => a },
  { name: "cast_string", arity: 1, deprecated: true, fn: ([a]) => a },
  { name: "cast_boolean", arity: 1, deprecated: true, fn: ([a]) => a },
  { name: "cast_null", arity: 1, deprecated: true, fn: ([a]) => a },
  { name: "cast_object", arity: 1, deprecated: true, fn: ([a]) => a }
]
