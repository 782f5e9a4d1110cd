// The Rego value model.
//
// Values are plain JavaScript data wherever possible so that input and data documents can be
// used as they come out of `JSON.parse`, without a conversion pass:
//
//   null, boolean, string            JS primitives
//   number                           JS number for safe integers and floats,
//                                    bigint for integers outside +/-(2^53 - 1)
//   array                            JS array
//   object                           a plain JS object when every key is a string,
//                                    an `ObjectMap` when some key is not a string
//   set                              `RegoSet`
//
// Values are never mutated once they have been handed to the evaluator; caches (sorted keys,
// hash keys) rely on that.

export type Scalar = null | boolean | number | bigint | string
export type Value = Scalar | Value[] | PlainObject | ObjectMap | RegoSet
export interface PlainObject {
  [key: string]: Value
}
export type RegoObject = PlainObject | ObjectMap

// Type tags, ordered as OPA orders types: null < boolean < number < string < array < object < set.
export const T_NULL = 0
export const T_BOOLEAN = 1
export const T_NUMBER = 2
export const T_STRING = 3
export const T_ARRAY = 4
export const T_OBJECT = 5
export const T_SET = 6
export type TypeTag = 0 | 1 | 2 | 3 | 4 | 5 | 6

const TYPE_NAMES = ["null", "boolean", "number", "string", "array", "object", "set"] as const

export const typeOf = (v: Value): TypeTag => {
  switch (typeof v) {
    case "string":
      return T_STRING
    case "number":
    case "bigint":
      return T_NUMBER
    case "boolean":
      return T_BOOLEAN
    default:
      if (v === null) return T_NULL
      if (Array.isArray(v)) return T_ARRAY
      if (v instanceof RegoSet) return T_SET
      return T_OBJECT
  }
}

/** OPA's name for the type of a value ("null", "boolean", "number", ...). */
export const typeName = (v: Value): string => TYPE_NAMES[typeOf(v)]

export const isArray = (v: Value): v is Value[] => Array.isArray(v)
export const isObject = (v: Value): v is RegoObject =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof RegoSet)

const hasOwn = Object.prototype.hasOwnProperty

// ---------------------------------------------------------------------------------------------
// Numbers

const MAX_SAFE = Number.MAX_SAFE_INTEGER

/** Canonical form of an integer: a JS number when it is safe, a bigint otherwise. */
export const normBig = (b: bigint): number | bigint =>
  b <= 9007199254740991n && b >= -9007199254740991n ? Number(b) : b

/** Canonical form of a JS number: integral doubles beyond the safe range become bigints. */
export const normNum = (n: number): number | bigint =>
  (n > MAX_SAFE || n < -MAX_SAFE) && Number.isFinite(n) ? BigInt(n) : n

export const isInteger = (n: number | bigint): boolean => typeof n === "bigint" || Number.isInteger(n)

export const toBigInt = (n: number | bigint): bigint => (typeof n === "bigint" ? n : BigInt(n))

export const compareNumbers = (a: number | bigint, b: number | bigint): number => {
  if (typeof a === "number" && typeof b === "number") return a < b ? -1 : a > b ? 1 : 0
  if (typeof a === "bigint" && typeof b === "bigint") return a < b ? -1 : a > b ? 1 : 0
  // Mixed: compare through the integer part of the float, then its fraction.
  const f = typeof a === "number" ? a : (b as number)
  const i = typeof a === "bigint" ? a : (b as bigint)
  let r: number
  if (!Number.isFinite(f)) r = f > 0 ? 1 : -1
  else {
    const fl = Math.floor(f)
    const bf = BigInt(fl)
    r = bf < i ? -1 : bf > i ? 1 : f > fl ? 1 : 0
  }
  return typeof a === "number" ? r : -r
}

/** The text of a number as OPA prints it. */
export const formatNumber = (n: number | bigint): string => {
  if (typeof n === "bigint") return n.toString()
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return n.toFixed(0)
  return String(n)
}

// ---------------------------------------------------------------------------------------------
// Strings: Rego compares strings by their UTF-8 bytes, which is code point order. JavaScript's
// `<` compares UTF-16 code units; the two only differ for surrogate pairs versus U+E000..U+FFFF.

export const compareStrings = (a: string, b: string): number => {
  if (a === b) return 0
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) {
      if (x >= 0xd800 && y >= 0xd800) {
        const cx = a.codePointAt(i) as number
        const cy = b.codePointAt(i) as number
        return cx < cy ? -1 : cx > cy ? 1 : 0
      }
      return x < y ? -1 : 1
    }
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0
}

// ---------------------------------------------------------------------------------------------
// Hash keys: a canonical string per value, used to key sets and non-string object keys.

export const hashKey = (v: Value): string => {
  switch (typeof v) {
    case "string":
      return JSON.stringify(v)
    case "number":
      return "#" + (Number.isInteger(v) && (v > MAX_SAFE || v < -MAX_SAFE) ? BigInt(v).toString() : String(v))
    case "bigint":
      return "#" + v.toString()
    case "boolean":
      return v ? "t" : "f"
    default: {
      if (v === null) return "n"
      if (Array.isArray(v)) {
        let s = "["
        for (let i = 0; i < v.length; i++) s += (i > 0 ? "," : "") + hashKey(v[i])
        return s + "]"
      }
      if (v instanceof RegoSet) {
        let s = "<"
        const items = v.sorted()
        for (let i = 0; i < items.length; i++) s += (i > 0 ? "," : "") + hashKey(items[i])
        return s + ">"
      }
      let s = "{"
      let first = true
      for (const [k, x] of objectEntries(v)) {
        s += (first ? "" : ",") + hashKey(k) + ":" + hashKey(x)
        first = false
      }
      return s + "}"
    }
  }
}

/** Scalars that can key a JS Map directly (after number normalisation). */
const primKey = (v: Value): Scalar | undefined => {
  switch (typeof v) {
    case "string":
    case "boolean":
    case "bigint":
      return v
    case "number":
      return (v > MAX_SAFE || v < -MAX_SAFE) && Number.isInteger(v) ? BigInt(v) : v
    default:
      return v === null ? null : undefined
  }
}

// ---------------------------------------------------------------------------------------------
// Sets

export class RegoSet {
  private readonly prim = new Map<Scalar, Value>()
  private comp: Map<string, Value> | undefined
  private sortedCache: Value[] | undefined

  static of(items: Iterable<Value>): RegoSet {
    const s = new RegoSet()
    for (const x of items) s.add(x)
    return s
  }

  get size(): number {
    return this.prim.size + (this.comp === undefined ? 0 : this.comp.size)
  }

  /** Adds an element; only valid while the set is being built. Returns false if present. */
  add(v: Value): boolean {
    const p = primKey(v)
    if (p !== undefined) {
      if (this.prim.has(p)) return false
      this.prim.set(p, v)
    } else {
      const h = hashKey(v)
      if (this.comp === undefined) this.comp = new Map()
      else if (this.comp.has(h)) return false
      this.comp.set(h, v)
    }
    this.sortedCache = undefined
    return true
  }

  has(v: Value): boolean {
    const p = primKey(v)
    if (p !== undefined) return this.prim.has(p)
    return this.comp !== undefined && this.comp.has(hashKey(v))
  }

  /** The element equal to v, if any. */
  get(v: Value): Value | undefined {
    const p = primKey(v)
    if (p !== undefined) return this.prim.get(p)
    return this.comp === undefined ? undefined : this.comp.get(hashKey(v))
  }

  /** Elements in OPA's sort order (cached). */
  sorted(): Value[] {
    let s = this.sortedCache
    if (s === undefined) {
      s = [...this.prim.values()]
      if (this.comp !== undefined) for (const x of this.comp.values()) s.push(x)
      if (s.length > 1) s.sort(compare)
      this.sortedCache = s
    }
    return s
  }

  /** Elements in insertion order (cheaper when order does not matter). */
  unordered(): Iterable<Value> {
    if (this.comp === undefined) return this.prim.values()
    return [...this.prim.values(), ...this.comp.values()]
  }
}

// ---------------------------------------------------------------------------------------------
// Objects

/** An object with at least one key that is not a string. */
export class ObjectMap {
  private readonly prim = new Map<Scalar, [Value, Value]>()
  private comp: Map<string, [Value, Value]> | undefined
  private sortedCache: Array<[Value, Value]> | undefined

  get size(): number {
    return this.prim.size + (this.comp === undefined ? 0 : this.comp.size)
  }

  set(k: Value, v: Value): void {
    const p = primKey(k)
    if (p !== undefined) this.prim.set(p, [k, v])
    else {
      if (this.comp === undefined) this.comp = new Map()
      this.comp.set(hashKey(k), [k, v])
    }
    this.sortedCache = undefined
  }

  get(k: Value): Value | undefined {
    const p = primKey(k)
    const e = p !== undefined ? this.prim.get(p) : this.comp?.get(hashKey(k))
    return e === undefined ? undefined : e[1]
  }

  has(k: Value): boolean {
    const p = primKey(k)
    return p !== undefined ? this.prim.has(p) : this.comp !== undefined && this.comp.has(hashKey(k))
  }

  /** Entries sorted by key in OPA's order (cached). */
  sorted(): Array<[Value, Value]> {
    let s = this.sortedCache
    if (s === undefined) {
      s = [...this.prim.values()]
      if (this.comp !== undefined) for (const e of this.comp.values()) s.push(e)
      s.sort((a, b) => compare(a[0], b[0]))
      this.sortedCache = s
    }
    return s
  }
}

const sortedKeyCache = new WeakMap<PlainObject, string[]>()

/** Keys of a plain object in code point order. Cached for larger objects. */
export const sortedKeys = (o: PlainObject): string[] => {
  const cached = sortedKeyCache.get(o)
  if (cached !== undefined) return cached
  const keys = Object.keys(o)
  if (keys.length > 1) keys.sort(compareStrings)
  if (keys.length > 8) sortedKeyCache.set(o, keys)
  return keys
}

export const objectSize = (o: RegoObject): number => (o instanceof ObjectMap ? o.size : Object.keys(o).length)

export const objectGet = (o: RegoObject, k: Value): Value | undefined => {
  if (o instanceof ObjectMap) return o.get(k)
  if (typeof k !== "string") return undefined
  return hasOwn.call(o, k) ? o[k] : undefined
}

export const objectHas = (o: RegoObject, k: Value): boolean => {
  if (o instanceof ObjectMap) return o.has(k)
  return typeof k === "string" && hasOwn.call(o, k)
}

/** Entries in key order. */
export function* objectEntries(o: RegoObject): Generator<[Value, Value]> {
  if (o instanceof ObjectMap) {
    yield* o.sorted()
    return
  }
  const keys = sortedKeys(o)
  for (let i = 0; i < keys.length; i++) yield [keys[i], o[keys[i]]]
}

/** Keys in order. */
export const objectKeys = (o: RegoObject): Value[] =>
  o instanceof ObjectMap ? o.sorted().map((e) => e[0]) : sortedKeys(o)

/** Calls f for every entry in key order; stops when f returns true. Returns whether it stopped. */
export const objectEach = (o: RegoObject, f: (k: Value, v: Value) => boolean): boolean => {
  if (o instanceof ObjectMap) {
    const es = o.sorted()
    for (let i = 0; i < es.length; i++) if (f(es[i][0], es[i][1])) return true
    return false
  }
  const keys = sortedKeys(o)
  for (let i = 0; i < keys.length; i++) if (f(keys[i], o[keys[i]])) return true
  return false
}

/** Assigns o[k] = v on a plain object under construction, safe for the key "__proto__". */
export const setOwn = (o: PlainObject, k: string, v: Value): void => {
  if (k === "__proto__") Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true })
  else o[k] = v
}

/** Builds objects: plain while every key is a string, an ObjectMap otherwise. */
export class ObjectBuilder {
  private plain: PlainObject | undefined = {}
  private map: ObjectMap | undefined

  /** Sets k to v; returns the previous value, if any. */
  set(k: Value, v: Value): Value | undefined {
    if (this.plain !== undefined) {
      if (typeof k === "string") {
        const prev = hasOwn.call(this.plain, k) ? this.plain[k] : undefined
        setOwn(this.plain, k, v)
        return prev
      }
      const m = new ObjectMap()
      for (const key of Object.keys(this.plain)) m.set(key, this.plain[key])
      this.plain = undefined
      this.map = m
    }
    const m = this.map as ObjectMap
    const prev = m.get(k)
    m.set(k, v)
    return prev
  }

  get(k: Value): Value | undefined {
    if (this.plain !== undefined) return typeof k === "string" && hasOwn.call(this.plain, k) ? this.plain[k] : undefined
    return (this.map as ObjectMap).get(k)
  }

  build(): RegoObject {
    return this.plain !== undefined ? this.plain : (this.map as ObjectMap)
  }
}

export const emptyObject = (): PlainObject => ({})

// ---------------------------------------------------------------------------------------------
// Equality and ordering

export const equals = (a: Value, b: Value): boolean => {
  if (a === b) return true
  const ta = typeof a
  const tb = typeof b
  if (ta !== "object" || tb !== "object") {
    if ((ta === "number" && tb === "bigint") || (ta === "bigint" && tb === "number"))
      return compareNumbers(a as number | bigint, b as number | bigint) === 0
    return false
  }
  if (a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!equals(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  if (a instanceof RegoSet) {
    if (!(b instanceof RegoSet) || a.size !== b.size) return false
    for (const x of a.unordered()) if (!b.has(x)) return false
    return true
  }
  if (b instanceof RegoSet) return false
  return objectsEqual(a as RegoObject, b as RegoObject)
}

const objectsEqual = (a: RegoObject, b: RegoObject): boolean => {
  if (!(a instanceof ObjectMap) && !(b instanceof ObjectMap)) {
    const ka = Object.keys(a)
    if (ka.length !== Object.keys(b).length) return false
    for (let i = 0; i < ka.length; i++) {
      const k = ka[i]
      if (!hasOwn.call(b, k) || !equals(a[k], b[k])) return false
    }
    return true
  }
  if (objectSize(a) !== objectSize(b)) return false
  return !objectEach(a, (k, v) => {
    const w = objectGet(b, k)
    return w === undefined || !equals(v, w)
  })
}

/** Total order over values, as OPA defines it. */
export function compare(a: Value, b: Value): number {
  if (a === b) return 0
  const ta = typeOf(a)
  const tb = typeOf(b)
  if (ta !== tb) return ta < tb ? -1 : 1
  switch (ta) {
    case T_NULL:
      return 0
    case T_BOOLEAN:
      return a === b ? 0 : a === false ? -1 : 1
    case T_NUMBER:
      return compareNumbers(a as number | bigint, b as number | bigint)
    case T_STRING:
      return compareStrings(a as string, b as string)
    case T_ARRAY:
      return compareSequences(a as Value[], b as Value[])
    case T_OBJECT: {
      const x = [...objectEntries(a as RegoObject)]
      const y = [...objectEntries(b as RegoObject)]
      const n = Math.min(x.length, y.length)
      for (let i = 0; i < n; i++) {
        const ck = compare(x[i][0], y[i][0])
        if (ck !== 0) return ck
        const cv = compare(x[i][1], y[i][1])
        if (cv !== 0) return cv
      }
      return x.length < y.length ? -1 : x.length > y.length ? 1 : 0
    }
    default:
      return compareSequences((a as RegoSet).sorted(), (b as RegoSet).sorted())
  }
}

/** Arrays (and sets, as their sorted elements) compare element by element, then by length. */
const compareSequences = (x: readonly Value[], y: readonly Value[]): number => {
  const n = Math.min(x.length, y.length)
  for (let i = 0; i < n; i++) {
    const c = compare(x[i], y[i])
    if (c !== 0) return c
  }
  return x.length < y.length ? -1 : x.length > y.length ? 1 : 0
}

// ---------------------------------------------------------------------------------------------
// Conversions

/** Whether fromJSON would change anything in x (checked without allocating). */
export const isPlainJSON = (x: unknown): boolean => {
  switch (typeof x) {
    case "string":
    case "boolean":
      return true
    case "number":
      return Number.isFinite(x) && (Number.isSafeInteger(x) || !Number.isInteger(x))
    case "object": {
      if (x === null) return true
      if (Array.isArray(x)) {
        for (let i = 0; i < x.length; i++) if (!isPlainJSON(x[i])) return false
        return true
      }
      if (x instanceof RegoSet || x instanceof ObjectMap) return true
      const o = x as Record<string, unknown>
      if (typeof o.toJSON === "function" || o.isLosslessNumber === true) return false
      for (const k in o) {
        if (!Object.prototype.hasOwnProperty.call(o, k)) return false
        const v = o[k]
        if (v === undefined || !isPlainJSON(v)) return false
      }
      return true
    }
    default:
      return false
  }
}

/**
 * Converts foreign data into a Rego value, as JSON would see it: LosslessNumber-like objects
 * (anything with `isLosslessNumber`) become exact numbers, objects with `toJSON` their JSON form,
 * members JSON leaves out are dropped. Shares structure with the input where nothing changes.
 */
export const fromJSON = (x: unknown): Value => {
  if (x === null || x === undefined) return null
  switch (typeof x) {
    case "string":
    case "boolean":
      return x
    case "number":
      // As JSON.stringify: NaN and infinities are null.
      return Number.isFinite(x) ? normNum(x) : null
    case "bigint":
      return normBig(x)
    case "object": {
      if (Array.isArray(x)) {
        let out: Value[] | undefined
        for (let i = 0; i < x.length; i++) {
          const y = fromJSON(x[i])
          if (y !== x[i] && out === undefined) out = x.slice(0, i) as Value[]
          if (out !== undefined) out.push(y)
        }
        return out ?? (x as Value[])
      }
      if (x instanceof RegoSet || x instanceof ObjectMap) return x
      const lossless = x as { isLosslessNumber?: boolean; value?: string; toJSON?: unknown }
      if (lossless.isLosslessNumber === true && typeof lossless.value === "string") return parseNumberLiteral(lossless.value)
      // Objects with their own JSON form (Date, ...), as JSON.stringify sees them.
      if (typeof lossless.toJSON === "function") return fromJSON((lossless.toJSON as () => unknown)())
      const o = x as Record<string, unknown>
      let out: PlainObject | undefined
      const keys = Object.keys(o)
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i]
        const v = o[k]
        // Members JSON would leave out (undefined, functions, symbols) are absent.
        if (v === undefined || typeof v === "function" || typeof v === "symbol") {
          if (out === undefined) {
            out = {}
            for (let j = 0; j < i; j++) setOwn(out, keys[j], o[keys[j]] as Value)
          }
          continue
        }
        const y = fromJSON(v)
        if (y !== v && out === undefined) {
          out = {}
          for (let j = 0; j < i; j++) setOwn(out, keys[j], o[keys[j]] as Value)
        }
        if (out !== undefined) setOwn(out, k, y)
      }
      return out ?? (o as PlainObject)
    }
    default:
      return null
  }
}

/** Parses a JSON/Rego number literal exactly (integers of any size become bigints). */
export const parseNumberLiteral = (s: string): number | bigint => {
  if (/^-?\d+$/.test(s)) {
    if (s.length < 16) return Number(s)
    return normBig(BigInt(s))
  }
  const m = /^(-?)(\d*)(?:\.(\d+))?[eE]([+-]?\d+)$/.exec(s)
  if (m !== null) {
    // An integer written with an exponent (1e3, 12.5e2) stays exact.
    const digits = (m[2] ?? "") + (m[3] ?? "")
    const exp = Number(m[4]) - (m[3]?.length ?? 0)
    if (exp >= 0 && exp < 400 && digits.length + exp >= 16) {
      return normBig(BigInt(m[1] + (digits === "" ? "0" : digits)) * 10n ** BigInt(exp))
    }
  }
  return normNum(Number(s))
}
