// Values as plain JSON data, and JSON text with exact big integers.

import { type Value, compareStrings, formatNumber, ObjectMap, RegoSet, setOwn } from "./value.js"

/** A JSON value, except that integers beyond 2^53 stay bigints. */
export type Json = null | boolean | number | bigint | string | Json[] | { [key: string]: Json }

/**
 * A value as plain JSON-compatible data: sets become sorted arrays, object keys that are not
 * strings are written as their JSON text (as OPA does). Shares structure with the input where
 * nothing needs converting.
 */
export const toJSON = (v: Value): Json => {
  if (typeof v !== "object" || v === null) return v
  if (Array.isArray(v)) {
    let out: Json[] | undefined
    for (let i = 0; i < v.length; i++) {
      const x = toJSON(v[i])
      if (x !== v[i] && out === undefined) out = v.slice(0, i) as Json[]
      if (out !== undefined) out.push(x)
    }
    return out ?? (v as Json[])
  }
  if (v instanceof RegoSet) return v.sorted().map(toJSON)
  if (v instanceof ObjectMap) {
    const o: Record<string, Json> = {}
    for (const [k, x] of v.sorted()) setOwn(o, typeof k === "string" ? k : stringifyJSON(toJSON(k)), toJSON(x))
    return o
  }
  let out: Record<string, Json> | undefined
  for (const k of Object.keys(v)) {
    const x = toJSON(v[k])
    if (x !== v[k] && out === undefined) out = { ...(v as Record<string, Json>) }
    if (out !== undefined) setOwn(out, k, x)
  }
  return out ?? (v as Record<string, Json>)
}

/** JSON text for JSON data that may hold bigints; object keys in code point order. */
export const stringifyJSON = (v: unknown, indent?: string): string => {
  const write = (x: unknown, pad: string): string => {
    if (x === null || x === undefined) return "null"
    switch (typeof x) {
      case "string":
        return JSON.stringify(x)
      case "number":
        return Number.isFinite(x) ? formatNumber(x) : "null"
      case "bigint":
        return x.toString()
      case "boolean":
        return x ? "true" : "false"
      case "object": {
        const inner = indent === undefined ? "" : pad + indent
        const nl = indent === undefined ? "" : "\n"
        if (x instanceof RegoSet || x instanceof ObjectMap) return write(toJSON(x), pad)
        if (Array.isArray(x)) {
          if (x.length === 0) return "[]"
          return "[" + nl + x.map((e) => inner + write(e, inner)).join("," + nl) + nl + pad + "]"
        }
        const o = x as Record<string, unknown>
        const keys = Object.keys(o).sort(compareStrings)
        if (keys.length === 0) return "{}"
        const colon = indent === undefined ? ":" : ": "
        return "{" + nl + keys.map((k) => inner + JSON.stringify(k) + colon + write(o[k], inner)).join("," + nl) + nl + pad + "}"
      }
      default:
        return "null"
    }
  }
  return write(v, "")
}
