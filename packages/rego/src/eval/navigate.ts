// Dereferencing and iterating plain values: `x[k]` and `x[_]` over arrays, objects and sets.

import { type Value, objectEach, objectGet, objectKeys, RegoSet } from "../value.js"

/** `v[k]`, or undefined. Sets yield the element itself. */
export const getKey = (v: Value | undefined, k: Value): Value | undefined => {
  if (typeof v !== "object" || v === null) return undefined
  if (Array.isArray(v)) {
    if (typeof k === "number" && Number.isInteger(k) && k >= 0 && k < v.length) return v[k]
    return undefined
  }
  if (v instanceof RegoSet) return v.get(k)
  return objectGet(v, k)
}

/**
 * `v[k]` inside the data document: like OPA's storage paths, a number key also finds the
 * object key spelled as that number (`data[2]` reads `{"2": ...}`).
 */
export const getDataKey = (v: Value | undefined, k: Value): Value | undefined => {
  const x = getKey(v, k)
  if (x !== undefined || (typeof k !== "number" && typeof k !== "bigint")) return x
  if (typeof v !== "object" || v === null || Array.isArray(v) || v instanceof RegoSet) return undefined
  return objectGet(v, String(k))
}

/** Calls f(key, value) for each element in Rego order; stops when f returns true. */
export const iterate = (v: Value | undefined, f: (k: Value, v: Value) => boolean): boolean => {
  if (typeof v !== "object" || v === null) return false
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (f(i, v[i])) return true
    return false
  }
  if (v instanceof RegoSet) {
    const items = v.sorted()
    for (let i = 0; i < items.length; i++) if (f(items[i], items[i])) return true
    return false
  }
  return objectEach(v, f)
}

/** Keys of a collection in Rego order (indices, keys, or elements). */
export const keysOf = (v: Value | undefined): Value[] => {
  if (typeof v !== "object" || v === null) return []
  if (Array.isArray(v)) return v.map((_, i) => i)
  if (v instanceof RegoSet) return v.sorted()
  return objectKeys(v)
}
