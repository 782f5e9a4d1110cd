// json.verify_schema and json.match_schema: JSON Schema (drafts 4, 6 and 7) as OPA implements it
// with its fork of gojsonschema, including its error texts, error types and field names.
//
// As in OPA, the draft comes from "$schema" when it names draft 4, 6 or 7; otherwise the
// "hybrid" dialect applies (every keyword of the three drafts, `exclusiveMinimum` as a boolean or
// a number). Numbers are compared exactly (as rationals), so 1.0 is an integer and
// `multipleOf: 0.01` works on decimal amounts. "pattern" and "patternProperties" use Go's RE2
// syntax. Errors are reported in a stable order (object keys sorted) where Go's map order is
// random.
//
// `$ref` resolves JSON pointers and `$id`/`id` anchors within the schema document. References
// to other documents are not fetched: this engine does no I/O from policy evaluation, so such a
// schema fails to compile with an error saying so.

import { compareStrings, isObject, type Value } from "../value.js"
import { type GoAny, goAnyOf, JsonNumber } from "./gojson.js"
import { parseTime } from "./gotime.js"
import type { Regexp } from "../re2/regexp.js"
import { compileRegex, meterOf } from "./regex.js"
import { asBuiltinError, type BuiltinContext, type BuiltinDef } from "./registry.js"

// ---------------------------------------------------------------------------------------------
// JSON documents with exact numbers

type J = GoAny

class SchemaError extends Error {}

const isMap = (x: J): x is Map<string, J> => x instanceof Map

const sortedKeys = (m: Map<string, J>): string[] => [...m.keys()].sort(compareStrings)

/** A Rego value as a JSON document (sets become arrays, as OPA's ast.JSON does). */
const fromValue = (v: Value): J => goAnyOf(v, (k) => encode(fromValue(k), true))

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y

/** Parses strict JSON (RFC 8259) keeping the text of every number. */
const parseJSON = (text: string): J => {
  let i = 0
  const fail = (): never => {
    throw new SchemaError("invalid JSON string")
  }
  const ws = (): void => {
    while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++
  }
  const value = (): J => {
    ws()
    const c = text[i]
    if (c === "{") {
      i++
      const m = new Map<string, J>()
      ws()
      if (text[i] === "}") {
        i++
        return m
      }
      for (;;) {
        ws()
        if (text[i] !== '"') fail()
        const k = string()
        ws()
        if (text[i] !== ":") fail()
        i++
        m.set(k, value())
        ws()
        if (text[i] === ",") {
          i++
          continue
        }
        if (text[i] === "}") {
          i++
          return m
        }
        return fail()
      }
    }
    if (c === "[") {
      i++
      const a: J[] = []
      ws()
      if (text[i] === "]") {
        i++
        return a
      }
      for (;;) {
        a.push(value())
        ws()
        if (text[i] === ",") {
          i++
          continue
        }
        if (text[i] === "]") {
          i++
          return a
        }
        return fail()
      }
    }
    if (c === '"') return string()
    if (text.startsWith("true", i)) {
      i += 4
      return true
    }
    if (text.startsWith("false", i)) {
      i += 5
      return false
    }
    if (text.startsWith("null", i)) {
      i += 4
      return null
    }
    NUMBER.lastIndex = i
    const m = NUMBER.exec(text)
    if (m === null) return fail()
    i += m[0].length
    return new JsonNumber(m[0])
  }
  const string = (): string => {
    // Scan to the closing quote, rejecting raw control characters and bad escapes.
    const start = i
    i++
    while (i < text.length && text[i] !== '"') {
      if (text.charCodeAt(i) < 0x20) fail()
      if (text[i] === "\\") {
        const e = text[i + 1]
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail()
          i += 6
          continue
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) fail()
        i += 2
        continue
      }
      i++
    }
    if (i >= text.length) fail()
    i++
    return JSON.parse(text.slice(start, i)) as string
  }
  const v = value()
  ws()
  if (i !== text.length) fail()
  return v
}

const quote = (s: string): string => JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"))

/**
 * JSON text of a document. With `exact`, numbers keep their text (a cache key); otherwise they
 * are normalised through float64 as gojsonschema's marshalWithoutNumber does (1.0 and 1 are
 * equal in enum and const), and strings are escaped as Go's encoder does.
 */
const encode = (x: J, exact: boolean): string => {
  if (x === null) return "null"
  if (typeof x === "boolean") return x ? "true" : "false"
  if (typeof x === "string") return quote(x)
  if (x instanceof JsonNumber) {
    if (exact) return x.text
    const n = Number(x.text)
    return Number.isFinite(n) ? String(n) : "null"
  }
  if (Array.isArray(x)) return "[" + x.map((y) => encode(y, exact)).join(",") + "]"
  return "{" + sortedKeys(x).map((k) => quote(k) + ":" + encode(x.get(k) as J, exact)).join(",") + "}"
}

const marshal = (x: J): string => encode(x, false)

// ---------------------------------------------------------------------------------------------
// Exact numbers

interface Rat {
  readonly n: bigint
  readonly d: bigint
}

const rat = (text: string): Rat => {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text)
  if (m === null) return { n: 0n, d: 1n }
  const frac = m[3] ?? ""
  let n = BigInt(m[1] + m[2] + frac)
  let d = 10n ** BigInt(frac.length)
  const e = m[4] === undefined ? 0 : Number(m[4])
  if (e > 0) n *= 10n ** BigInt(e)
  else if (e < 0) d *= 10n ** BigInt(-e)
  return { n, d }
}

const cmpRat = (a: Rat, b: Rat): number => {
  const x = a.n * b.d
  const y = b.n * a.d
  return x < y ? -1 : x > y ? 1 : 0
}

const isIntRat = (a: Rat): boolean => a.n % a.d === 0n

/** Go's %v of a big.Float: shortest digits, %e when the exponent is below -4 or at least 6. */
const formatRat = (r: Rat): string => {
  if (r.n === 0n) return "0"
  const neg = r.n < 0n
  let n = neg ? -r.n : r.n
  let d = r.d
  // The rationals here are finite decimals: scale to an integer and a power of ten.
  let exp10 = 0
  while (d % 10n === 0n) {
    d /= 10n
    exp10--
  }
  while (d % 2n === 0n) {
    d /= 2n
    n *= 5n
    exp10--
  }
  while (d % 5n === 0n) {
    d /= 5n
    n *= 2n
    exp10--
  }
  let digits = (n / d).toString()
  while (digits.length > 1 && digits.endsWith("0")) {
    digits = digits.slice(0, -1)
    exp10++
  }
  const exp = digits.length - 1 + exp10
  const sign = neg ? "-" : ""
  if (exp < -4 || exp >= 6) {
    const mant = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits
    return `${sign}${mant}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`
  }
  if (exp10 >= 0) return sign + digits + "0".repeat(exp10)
  const point = digits.length + exp10
  return point > 0 ? sign + digits.slice(0, point) + "." + digits.slice(point) : sign + "0." + "0".repeat(-point) + digits
}

// ---------------------------------------------------------------------------------------------
// Messages (gojsonschema's default locale)

type Details = Record<string, string | number>

const render = (template: string, details: Details): string =>
  template.replace(/\{\{\.(\w+)\}\}/g, (_m, k: string) => (details[k] === undefined ? "<no value>" : String(details[k])))

const TYPES = ["array", "boolean", "integer", "number", "null", "object", "string"]
const SCHEMA = "valid schema"

const invalidType = (expected: string, given: string): SchemaError => new SchemaError(render("Invalid type. Expected: {{.expected}}, given: {{.given}}", { expected, given }))
const mustBeOfA = (x: string, y: string): SchemaError => new SchemaError(`${x} must be of a ${y}`)
const mustBeOfAn = (x: string, y: string): SchemaError => new SchemaError(`${x} must be of an ${y}`)
const mustBeOfType = (key: string, type: string): SchemaError => new SchemaError(`${key} must be of type ${type}`)
const parseError = (): SchemaError => new SchemaError(`Expected: ${SCHEMA}, given: Invalid JSON`)

// ---------------------------------------------------------------------------------------------
// Compiled schemas

const DRAFT4 = 4
const DRAFT6 = 6
const DRAFT7 = 7
const HYBRID = Number.MAX_SAFE_INTEGER

const DRAFT_URLS: Readonly<Record<string, number>> = {
  "http://json-schema.org/draft-04/schema": DRAFT4,
  "http://json-schema.org/draft-06/schema": DRAFT6,
  "http://json-schema.org/draft-07/schema": DRAFT7
}

interface Sub {
  draft: number
  /** Base URI for references below this schema. */
  base: string
  pass?: boolean
  ref?: Sub
  types: string[]
  properties: Array<[string, Sub]>
  additionalProperties?: boolean | Sub
  patternProperties?: Array<[string, Regexp, Sub]>
  propertyNames?: Sub
  dependencies?: Map<string, string[] | Sub>
  items: Sub[]
  itemsSingle: boolean
  additionalItems?: boolean | Sub
  multipleOf?: Rat
  minimum?: Rat
  maximum?: Rat
  exclusiveMinimum?: Rat
  exclusiveMaximum?: Rat
  minLength?: number
  maxLength?: number
  pattern?: { source: string; re: Regexp }
  format?: string
  minProperties?: number
  maxProperties?: number
  required: string[]
  minItems?: number
  maxItems?: number
  uniqueItems: boolean
  contains?: Sub
  constValue?: string
  enumValues?: string[]
  oneOf: Sub[]
  anyOf: Sub[]
  allOf: Sub[]
  not?: Sub
  if?: Sub
  then?: Sub
  else?: Sub
}

const newSub = (draft: number, base: string): Sub => ({
  draft,
  base,
  types: [],
  properties: [],
  items: [],
  itemsSingle: false,
  required: [],
  uniqueItems: false,
  oneOf: [],
  anyOf: [],
  allOf: []
})

const hasScheme = (s: string): boolean => /^[A-Za-z][A-Za-z0-9+.-]*:/.test(s)
const stripFragment = (s: string): string => {
  const i = s.indexOf("#")
  return i < 0 ? s : s.slice(0, i)
}

/** Resolves a reference against a base URI (either may be relative when the schema has no $id). */
const resolveRef = (base: string, ref: string): string => {
  if (hasScheme(ref)) return ref.endsWith("#") ? ref.slice(0, -1) : ref
  if (ref.startsWith("#")) return ref === "#" ? stripFragment(base) : stripFragment(base) + ref
  if (hasScheme(base)) {
    try {
      const u = new URL(ref, base).href
      return u.endsWith("#") ? u.slice(0, -1) : u
    } catch {
      return ref
    }
  }
  const dir = stripFragment(base).replace(/[^/]*$/, "")
  return dir + ref
}

const mustBeNumber = (x: J): Rat | undefined => (x instanceof JsonNumber ? rat(x.text) : undefined)

/** A non-negative-or-negative integer keyword value that fits in an int64 (mustBeInteger). */
const mustBeInteger = (x: J): number | undefined => {
  if (!(x instanceof JsonNumber)) return undefined
  const r = rat(x.text)
  if (!isIntRat(r)) return undefined
  // Go's json.Number.Int64 only reads plain integer text.
  if (!/^-?\d+$/.test(x.text)) return undefined
  const v = BigInt(x.text)
  if (v > (1n << 63n) - 1n || v < -(1n << 63n)) return undefined
  return Number(v)
}

class Compiler {
  /** Documents and anchors by absolute URI (from $id / id). */
  private readonly ids = new Map<string, J>()
  /** Compiled targets of references, by absolute URI. */
  private readonly refs = new Map<string, Sub>()

  constructor(
    private readonly root: J,
    private readonly rootBase: string,
    private readonly rootDraft: number
  ) {
    this.collectIds(root, rootBase, rootDraft)
  }

  private idKey(m: Map<string, J>, draft: number): string {
    if (draft === DRAFT4) return "id"
    if (draft === HYBRID) return m.has("id") ? "id" : "$id"
    return "$id"
  }

  private collectIds(x: J, base: string, draft: number): void {
    if (Array.isArray(x)) {
      for (const y of x) this.collectIds(y, base, draft)
      return
    }
    if (!isMap(x)) return
    const id = x.get(this.idKey(x, draft))
    let here = base
    if (typeof id === "string") {
      here = resolveRef(base, id)
      if (!this.ids.has(here)) this.ids.set(here, x)
    }
    for (const k of sortedKeys(x)) {
      if (k === "enum" || k === "const") continue
      this.collectIds(x.get(k) as J, here, draft)
    }
  }

  compile(): Sub {
    const s = newSub(this.rootDraft, this.rootBase)
    this.parse(this.root, s)
    return s
  }

  private resolve(uri: string): J {
    const hash = uri.indexOf("#")
    const docUri = hash < 0 ? uri : uri.slice(0, hash)
    const fragment = hash < 0 ? "" : uri.slice(hash + 1)
    let doc: J | undefined
    if (docUri === "" || docUri === stripFragment(this.rootBase)) doc = this.root
    else doc = this.ids.get(docUri)
    if (doc === undefined) {
      if (fragment !== "" && !fragment.startsWith("/")) {
        const anchored = this.ids.get(uri)
        if (anchored !== undefined) return anchored
      }
      throw new SchemaError(`cannot load the referenced schema ${JSON.stringify(uri)}: references to other documents are not fetched`)
    }
    if (fragment === "") return doc
    if (!fragment.startsWith("/")) {
      const anchored = this.ids.get(uri)
      if (anchored === undefined) throw new SchemaError(`Object has no key '${fragment}'`)
      return anchored
    }
    let node: J = doc
    for (const raw of fragment.slice(1).split("/")) {
      const token = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~")
      if (isMap(node) && node.has(token)) node = node.get(token) as J
      else if (Array.isArray(node) && /^(0|[1-9]\d*)$/.test(token) && Number(token) < node.length) node = node[Number(token)]
      else throw new SchemaError(`Object has no key '${token}'`)
    }
    return node
  }

  private child(parent: Sub): Sub {
    return newSub(parent.draft, parent.base)
  }

  private parseChild(x: J, parent: Sub): Sub {
    const s = this.child(parent)
    this.parse(x, s)
    return s
  }

  /** gojsonschema's parseSchema: validates keyword values and fills in the compiled schema. */
  private parse(x: J, s: Sub): void {
    if (s.draft >= DRAFT6 && typeof x === "boolean") {
      s.pass = x
      return
    }
    if (!isMap(x)) throw parseError()
    const m = x
    const idKey = this.idKey(m, s.draft)
    const id = m.get(idKey)
    if (id !== undefined) {
      if (typeof id !== "string") throw invalidType("string", idKey)
      s.base = resolveRef(s.base, id)
    }
    if (m.has("definitions")) {
      const defs = m.get("definitions") as J
      if (!isMap(defs)) throw invalidType("array of schemas", "definitions")
      for (const k of sortedKeys(defs)) {
        const dv = defs.get(k) as J
        if (typeof dv !== "boolean" && !isMap(dv)) throw invalidType("array of schemas", "definitions")
        this.parseChild(dv, s)
      }
    }
    for (const key of ["title", "description"]) if (m.has(key) && typeof m.get(key) !== "string") throw invalidType("string", key)

    if (m.has("$ref")) {
      const ref = m.get("$ref") as J
      if (typeof ref !== "string") throw invalidType("string", "$ref")
      const uri = resolveRef(s.base, ref)
      const known = this.refs.get(uri)
      if (known !== undefined) s.ref = known
      else {
        const target = this.resolve(uri)
        if (typeof target !== "boolean" && !isMap(target)) throw mustBeOfType(SCHEMA, "object")
        const t = newSub(s.draft, uri)
        this.refs.set(uri, t)
        s.ref = t
        this.parse(target, t)
        // As in gojsonschema, the keywords next to a $ref seen for the first time are not read.
        return
      }
    }

    if (m.has("type")) {
      const t = m.get("type") as J
      const names = typeof t === "string" ? [t] : Array.isArray(t) ? t : undefined
      if (names === undefined) throw invalidType("type", "string/array of strings")
      for (const n of names) {
        if (typeof n !== "string") throw invalidType("type", "string/array of strings")
        if (!TYPES.includes(n)) throw new SchemaError(`has a primitive type that is NOT VALID -- given: /${n}/ Expected valid values are:[${TYPES.join(" ")}]`)
        if (s.types.includes(n)) throw new SchemaError(`${n} type is duplicated`)
        s.types.push(n)
      }
    }

    if (m.has("properties")) {
      const props = m.get("properties") as J
      if (!isMap(props)) throw mustBeOfType("properties", "object")
      for (const k of sortedKeys(props)) s.properties.push([k, this.parseChild(props.get(k) as J, s)])
    }

    if (m.has("additionalProperties")) {
      const ap = m.get("additionalProperties") as J
      if (typeof ap === "boolean") s.additionalProperties = ap
      else if (isMap(ap)) s.additionalProperties = this.parseChild(ap, s)
      else throw invalidType("boolean/" + SCHEMA, "additionalProperties")
    }

    if (m.has("patternProperties")) {
      const pp = m.get("patternProperties") as J
      if (!isMap(pp)) throw invalidType(SCHEMA, "patternProperties")
      if (pp.size > 0) {
        s.patternProperties = []
        for (const k of sortedKeys(pp)) {
          let re: Regexp
          try {
            re = compileRegex(k, evaluation)
          } catch {
            throw new SchemaError(`Invalid regex pattern '${k}'`)
          }
          s.patternProperties.push([k, re, this.parseChild(pp.get(k) as J, s)])
        }
      }
    }

    if (m.has("propertyNames") && s.draft >= DRAFT6) {
      const pn = m.get("propertyNames") as J
      if (typeof pn !== "boolean" && !isMap(pn)) throw invalidType(SCHEMA, "patternProperties")
      s.propertyNames = this.parseChild(pn, s)
    }

    if (m.has("dependencies")) {
      const deps = m.get("dependencies") as J
      if (!isMap(deps)) throw mustBeOfType("dependencies", "object")
      s.dependencies = new Map()
      for (const k of sortedKeys(deps)) {
        const dv = deps.get(k) as J
        if (Array.isArray(dv)) {
          const names: string[] = []
          for (const n of dv) {
            if (typeof n !== "string") throw mustBeOfType("dependency", "schema or array of strings")
            names.push(n)
          }
          s.dependencies.set(k, names)
        } else if (typeof dv === "boolean" || isMap(dv)) s.dependencies.set(k, this.parseChild(dv, s))
        else throw mustBeOfType("dependency", "schema or array of strings")
      }
    }

    if (m.has("items")) {
      const items = m.get("items") as J
      if (Array.isArray(items)) {
        for (const it of items) {
          if (typeof it !== "boolean" && !isMap(it)) throw invalidType(SCHEMA + "/array of schemas", "items")
          s.items.push(this.parseChild(it, s))
        }
      } else if (typeof items === "boolean" || isMap(items)) {
        s.items.push(this.parseChild(items, s))
        s.itemsSingle = true
      } else throw invalidType(SCHEMA + "/array of schemas", "items")
    }

    if (m.has("additionalItems")) {
      const ai = m.get("additionalItems") as J
      if (typeof ai === "boolean") s.additionalItems = ai
      else if (isMap(ai)) s.additionalItems = this.parseChild(ai, s)
      else throw invalidType("boolean/" + SCHEMA, "additionalItems")
    }

    if (m.has("multipleOf")) {
      const v = mustBeNumber(m.get("multipleOf") as J)
      if (v === undefined) throw invalidType("number", "multipleOf")
      if (v.n <= 0n) throw new SchemaError("multipleOf must be strictly greater than 0")
      s.multipleOf = v
    }

    this.parseBound(m, s, "minimum", "exclusiveMinimum")
    this.parseBound(m, s, "maximum", "exclusiveMaximum")

    s.minLength = this.parseCount(m, "minLength")
    s.maxLength = this.parseCount(m, "maxLength")
    if (s.minLength !== undefined && s.maxLength !== undefined && s.minLength > s.maxLength) throw new SchemaError("minLength cannot be greater than maxLength")

    if (m.has("pattern")) {
      const p = m.get("pattern") as J
      if (typeof p !== "string") throw invalidType("string", "pattern")
      try {
        s.pattern = { source: p, re: compileRegex(p, evaluation) }
      } catch {
        throw new SchemaError("pattern must be a valid regex")
      }
    }

    if (m.has("format")) {
      const f = m.get("format") as J
      if (typeof f !== "string") throw invalidType("string", "format")
      s.format = f
    }

    s.minProperties = this.parseCount(m, "minProperties")
    s.maxProperties = this.parseCount(m, "maxProperties")
    if (s.minProperties !== undefined && s.maxProperties !== undefined && s.minProperties > s.maxProperties) {
      throw new SchemaError("minProperties cannot be greater than maxProperties")
    }

    for (const r of this.slice(m, "required")) {
      if (typeof r !== "string") throw invalidType("string", "required")
      if (s.required.includes(r)) throw new SchemaError("required items must be unique")
      s.required.push(r)
    }

    s.minItems = this.parseCount(m, "minItems")
    s.maxItems = this.parseCount(m, "maxItems")

    if (m.has("uniqueItems")) {
      const u = m.get("uniqueItems") as J
      if (typeof u !== "boolean") throw mustBeOfA("uniqueItems", "boolean")
      s.uniqueItems = u
    }

    if (m.has("contains") && s.draft >= DRAFT6) s.contains = this.parseChild(m.get("contains") as J, s)

    if (m.has("const") && s.draft >= DRAFT6) s.constValue = marshal(m.get("const") as J)

    if (m.has("enum")) {
      s.enumValues = []
      for (const e of this.slice(m, "enum")) {
        const text = marshal(e)
        if (s.enumValues.includes(text)) throw new SchemaError("enum items must be unique")
        s.enumValues.push(text)
      }
    }

    for (const v of this.slice(m, "oneOf")) s.oneOf.push(this.parseChild(v, s))
    for (const v of this.slice(m, "anyOf")) s.anyOf.push(this.parseChild(v, s))
    for (const v of this.slice(m, "allOf")) s.allOf.push(this.parseChild(v, s))

    if (m.has("not")) {
      const n = m.get("not") as J
      if (typeof n !== "boolean" && !isMap(n)) throw mustBeOfAn("not", "object")
      s.not = this.parseChild(n, s)
    }

    if (s.draft >= DRAFT7) {
      for (const key of ["if", "then", "else"] as const) {
        if (!m.has(key)) continue
        const c = m.get(key) as J
        if (typeof c !== "boolean" && !isMap(c)) throw mustBeOfAn(key, "object")
        s[key] = this.parseChild(c, s)
      }
    }
  }

  private slice(m: Map<string, J>, key: string): J[] {
    if (!m.has(key)) return []
    const v = m.get(key) as J
    if (!Array.isArray(v)) throw mustBeOfAn(key, "array")
    return v
  }

  private parseCount(m: Map<string, J>, key: string): number | undefined {
    if (!m.has(key)) return undefined
    const v = mustBeInteger(m.get(key) as J)
    if (v === undefined) throw mustBeOfAn(key, "integer")
    if (v < 0) throw new SchemaError(`${key} must be greater than or equal to 0`)
    return v
  }

  private parseBound(m: Map<string, J>, s: Sub, key: "minimum" | "maximum", exclusiveKey: "exclusiveMinimum" | "exclusiveMaximum"): void {
    if (m.has(key)) {
      const v = mustBeNumber(m.get(key) as J)
      if (v === undefined) throw mustBeOfA(key, "number")
      s[key] = v
    }
    if (!m.has(exclusiveKey)) return
    const e = m.get(exclusiveKey) as J
    const flag = (): void => {
      if (s[key] === undefined) throw new SchemaError(`${exclusiveKey} cannot be used without ${key}`)
      if (e === true) {
        s[exclusiveKey] = s[key]
        s[key] = undefined
      }
    }
    if (s.draft === DRAFT4) {
      if (typeof e !== "boolean") throw invalidType("boolean", exclusiveKey)
      flag()
    } else if (s.draft === HYBRID) {
      if (typeof e === "boolean") flag()
      else if (e instanceof JsonNumber) s[exclusiveKey] = rat(e.text)
      else throw invalidType("boolean/number", exclusiveKey)
    } else {
      if (!(e instanceof JsonNumber)) throw invalidType("number", exclusiveKey)
      s[exclusiveKey] = rat(e.text)
    }
  }
}

/** The draft named by "$schema", if it is one of the known drafts. */
const detectDraft = (doc: J): number | undefined => {
  if (typeof doc === "boolean") return undefined
  if (!isMap(doc)) throw new SchemaError("schema is invalid")
  if (!doc.has("$schema")) return undefined
  const s = doc.get("$schema") as J
  if (typeof s !== "string") throw mustBeOfType("$schema", "string")
  return DRAFT_URLS[s.endsWith("#") ? s.slice(0, -1) : s]
}

const compileSchema = (doc: J): Sub => {
  const draft = detectDraft(doc) ?? HYBRID
  return new Compiler(doc, "", draft).compile()
}

// ---------------------------------------------------------------------------------------------
// Validation

interface ResultError {
  readonly type: string
  readonly field: string
  readonly description: string
}

class Result {
  errors: ResultError[] = []
  score = 0

  add(type: string, template: string, ctx: Ctx, details: Details): void {
    const field = fieldOf(ctx)
    this.errors.push({ type, field, description: render(template, { ...details, field }) })
    this.score -= 2
  }

  merge(other: Result): void {
    for (const e of other.errors) this.errors.push(e)
    this.score += other.score
  }

  get valid(): boolean {
    return this.errors.length === 0
  }
}

/** A position in the document: "(root)", "(root).a", "(root).a.0". */
interface Ctx {
  readonly head: string
  readonly parent: Ctx | undefined
}

const ROOT: Ctx = { head: "(root)", parent: undefined }
const sub = (head: string, parent: Ctx): Ctx => ({ head, parent })
const ctxString = (c: Ctx): string => (c.parent === undefined ? c.head : ctxString(c.parent) + "." + c.head)
const fieldOf = (c: Ctx): string => {
  const s = ctxString(c)
  return s.startsWith("(root).") ? s.slice(7) : s
}

const typeString = (types: readonly string[]): string => (types.length > 1 ? `[${types.join(",")}]` : (types[0] ?? "undefined"))

const runeLength = (s: string): number => {
  let n = 0
  for (const _ of s) n++
  return n
}

const validateWith = (s: Sub, node: J, ctx: Ctx): Result => {
  const r = new Result()
  validate(s, node, r, ctx)
  return r
}

const validate = (s: Sub, node: J, r: Result, ctx: Ctx): void => {
  evaluation?.charge(1)
  if (s.pass !== undefined) {
    if (!s.pass) r.add("false", "False always fails validation", ctx, {})
    return
  }
  if (s.ref !== undefined) {
    validate(s.ref, node, r, ctx)
    return
  }
  const typed = s.types.length > 0
  const wrongType = (given: string): void => r.add("invalid_type", "Invalid type. Expected: {{.expected}}, given: {{.given}}", ctx, { expected: typeString(s.types), given })
  if (node === null) {
    if (typed && !s.types.includes("null")) return wrongType("null")
    validateSchema(s, node, r, ctx)
    validateCommon(s, node, r, ctx)
  } else if (node instanceof JsonNumber) {
    const n = rat(node.text)
    const isInt = isIntRat(n)
    if (typed && !(s.types.includes("number") || (isInt && s.types.includes("integer")))) return wrongType(isInt ? "integer" : "number")
    validateSchema(s, node, r, ctx)
    validateNumber(s, n, r, ctx)
    validateCommon(s, node, r, ctx)
  } else if (Array.isArray(node)) {
    if (typed && !s.types.includes("array")) return wrongType("array")
    validateSchema(s, node, r, ctx)
    validateArray(s, node, r, ctx)
    validateCommon(s, node, r, ctx)
  } else if (isMap(node)) {
    if (typed && !s.types.includes("object")) return wrongType("object")
    validateSchema(s, node, r, ctx)
    validateObject(s, node, r, ctx)
    validateCommon(s, node, r, ctx)
    for (const [name, p] of s.properties) if (node.has(name)) validate(p, node.get(name) as J, r, sub(name, ctx))
  } else if (typeof node === "boolean") {
    if (typed && !s.types.includes("boolean")) return wrongType("boolean")
    validateSchema(s, node, r, ctx)
    validateCommon(s, node, r, ctx)
  } else {
    if (typed && !s.types.includes("string")) return wrongType("string")
    validateSchema(s, node, r, ctx)
    validateCommon(s, node, r, ctx)
    validateString(s, node, r, ctx)
  }
  r.score++
}

const validateSchema = (s: Sub, node: J, r: Result, ctx: Ctx): void => {
  if (s.anyOf.length > 0) {
    let ok = false
    let best: Result | undefined
    for (const a of s.anyOf) {
      const res = validateWith(a, node, ctx)
      if (res.valid) {
        ok = true
        break
      }
      if (best === undefined || res.score > best.score) best = res
    }
    if (!ok) {
      r.add("number_any_of", "Must validate at least one schema (anyOf)", ctx, {})
      if (best !== undefined) r.merge(best)
    }
  }
  if (s.oneOf.length > 0) {
    let n = 0
    let best: Result | undefined
    for (const o of s.oneOf) {
      const res = validateWith(o, node, ctx)
      if (res.valid) n++
      else if (n === 0 && (best === undefined || res.score > best.score)) best = res
    }
    if (n !== 1) {
      r.add("number_one_of", "Must validate one and only one schema (oneOf)", ctx, {})
      if (n === 0 && best !== undefined) r.merge(best)
    }
  }
  if (s.allOf.length > 0) {
    let n = 0
    for (const a of s.allOf) {
      const res = validateWith(a, node, ctx)
      if (res.valid) n++
      r.merge(res)
    }
    if (n !== s.allOf.length) r.add("number_all_of", "Must validate all the schemas (allOf)", ctx, {})
  }
  if (s.not !== undefined && validateWith(s.not, node, ctx).valid) r.add("number_not", "Must not validate the schema (not)", ctx, {})
  if (s.dependencies !== undefined && isMap(node)) {
    for (const key of sortedKeys(node)) {
      const dep = s.dependencies.get(key)
      if (dep === undefined) continue
      if (Array.isArray(dep)) {
        for (const d of dep) if (!node.has(d)) r.add("missing_dependency", "Has a dependency on {{.dependency}}", ctx, { dependency: d })
      } else validate(dep, node, r, ctx)
    }
  }
  if (s.if !== undefined) {
    const cond = validateWith(s.if, node, ctx).valid
    if (cond && s.then !== undefined) {
      const res = validateWith(s.then, node, ctx)
      if (!res.valid) {
        r.add("condition_then", 'Must validate "then" as "if" was valid', ctx, {})
        r.merge(res)
      }
    }
    if (!cond && s.else !== undefined) {
      const res = validateWith(s.else, node, ctx)
      if (!res.valid) {
        r.add("condition_else", 'Must validate "else" as "if" was not valid', ctx, {})
        r.merge(res)
      }
    }
  }
  r.score++
}

const validateCommon = (s: Sub, node: J, r: Result, ctx: Ctx): void => {
  if (s.constValue !== undefined && marshal(node) !== s.constValue) r.add("const", "{{.field}} does not match: {{.allowed}}", ctx, { allowed: s.constValue })
  if (s.enumValues !== undefined && !s.enumValues.includes(marshal(node))) {
    const allowed = s.enumValues.length === 0 ? "(none)" : s.enumValues.join(", ")
    r.add("enum", "{{.field}} must be one of the following: {{.allowed}}", ctx, { allowed })
  }
  if (s.format !== undefined && !isFormat(s.format, node)) r.add("format", "Does not match format '{{.format}}'", ctx, { format: s.format })
  r.score++
}

const validateArray = (s: Sub, node: J[], r: Result, ctx: Ctx): void => {
  if (s.itemsSingle) {
    for (let i = 0; i < node.length; i++) r.merge(validateWith(s.items[0], node[i], sub(String(i), ctx)))
  } else if (s.items.length > 0) {
    const n = Math.min(s.items.length, node.length)
    for (let i = 0; i < n; i++) r.merge(validateWith(s.items[i], node[i], sub(String(i), ctx)))
    if (s.items.length < node.length) {
      if (s.additionalItems === false) r.add("array_no_additional_items", "No additional items allowed on array", ctx, {})
      else if (s.additionalItems !== undefined && s.additionalItems !== true) {
        for (let i = s.items.length; i < node.length; i++) r.merge(validateWith(s.additionalItems, node[i], sub(String(i), ctx)))
      }
    }
  }
  if (s.minItems !== undefined && node.length < s.minItems) r.add("array_min_items", "Array must have at least {{.min}} items", ctx, { min: s.minItems })
  if (s.maxItems !== undefined && node.length > s.maxItems) r.add("array_max_items", "Array must have at most {{.max}} items", ctx, { max: s.maxItems })
  if (s.uniqueItems) {
    const seen = new Map<string, number>()
    for (let j = 0; j < node.length; j++) {
      const text = marshal(node[j])
      const i = seen.get(text)
      if (i !== undefined) r.add("unique", "{{.type}} items[{{.i}},{{.j}}] must be unique", ctx, { type: "array", i, j })
      seen.set(text, j)
    }
  }
  if (s.contains !== undefined) {
    let ok = false
    let best: Result | undefined
    for (let i = 0; i < node.length; i++) {
      const res = validateWith(s.contains, node[i], sub(String(i), ctx))
      if (res.valid) {
        ok = true
        break
      }
      if (best === undefined || res.score > best.score) best = res
    }
    if (!ok) {
      r.add("contains", "At least one of the items must match", ctx, {})
      if (best !== undefined) r.merge(best)
    }
  }
  r.score++
}

const validateObject = (s: Sub, node: Map<string, J>, r: Result, ctx: Ctx): void => {
  if (s.minProperties !== undefined && node.size < s.minProperties) r.add("array_min_properties", "Must have at least {{.min}} properties", ctx, { min: s.minProperties })
  if (s.maxProperties !== undefined && node.size > s.maxProperties) r.add("array_max_properties", "Must have at most {{.max}} properties", ctx, { max: s.maxProperties })
  for (const p of s.required) {
    if (node.has(p)) r.score++
    else r.add("required", "{{.property}} is required", ctx, { property: p })
  }
  const keys = sortedKeys(node)
  for (const k of keys) {
    const known = s.properties.some(([name]) => name === k)
    let matched = false
    for (const [, re, ps] of s.patternProperties ?? []) {
      if (!re.matchString(k, evaluation === undefined ? undefined : meterOf(evaluation))) continue
      matched = true
      r.merge(validateWith(ps, node.get(k) as J, sub(k, ctx)))
    }
    if (matched) r.score++
    if (known || matched) continue
    const ap = s.additionalProperties
    if (ap === false) r.add("additional_property_not_allowed", "Additional property {{.property}} is not allowed", ctx, { property: k })
    else if (ap !== undefined && ap !== true) r.merge(validateWith(ap, node.get(k) as J, sub(k, ctx)))
  }
  if (s.propertyNames !== undefined) {
    for (const k of keys) {
      const res = validateWith(s.propertyNames, k, ctx)
      if (!res.valid) {
        r.add("invalid_property_name", 'Property name of "{{.property}}" does not match', ctx, { property: k })
        r.merge(res)
      }
    }
  }
  r.score++
}

const validateString = (s: Sub, node: string, r: Result, ctx: Ctx): void => {
  if (s.minLength !== undefined && runeLength(node) < s.minLength) r.add("string_gte", "String length must be greater than or equal to {{.min}}", ctx, { min: s.minLength })
  if (s.maxLength !== undefined && runeLength(node) > s.maxLength) r.add("string_lte", "String length must be less than or equal to {{.max}}", ctx, { max: s.maxLength })
  if (s.pattern !== undefined) {
    if (!s.pattern.re.matchString(node, evaluation === undefined ? undefined : meterOf(evaluation))) r.add("pattern", "Does not match pattern '{{.pattern}}'", ctx, { pattern: s.pattern.source })
  }
  r.score++
}

const validateNumber = (s: Sub, n: Rat, r: Result, ctx: Ctx): void => {
  if (s.multipleOf !== undefined) {
    const m = s.multipleOf
    // n / m is an integer.
    if ((n.n * m.d) % (n.d * m.n) !== 0n) r.add("multiple_of", "Must be a multiple of {{.multiple}}", ctx, { multiple: formatRat(m) })
  }
  if (s.maximum !== undefined && cmpRat(n, s.maximum) > 0) r.add("number_lte", "Must be less than or equal to {{.max}}", ctx, { max: formatRat(s.maximum) })
  if (s.exclusiveMaximum !== undefined && cmpRat(n, s.exclusiveMaximum) >= 0) r.add("number_lt", "Must be less than {{.max}}", ctx, { max: formatRat(s.exclusiveMaximum) })
  if (s.minimum !== undefined && cmpRat(n, s.minimum) < 0) r.add("number_gte", "Must be greater than or equal to {{.min}}", ctx, { min: formatRat(s.minimum) })
  if (s.exclusiveMinimum !== undefined && cmpRat(n, s.exclusiveMinimum) <= 0) r.add("number_gt", "Must be greater than {{.min}}", ctx, { min: formatRat(s.exclusiveMinimum) })
  r.score++
}

// ---------------------------------------------------------------------------------------------
// Formats (gojsonschema's checkers; unknown formats always pass)

const HOSTNAME = /^([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]{0,61}[a-zA-Z0-9])(\.([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]{0,61}[a-zA-Z0-9]))*$/
const UUID = /^[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}$/i
const JSON_POINTER = /^(?:\/(?:[^~/]|~0|~1)*)*$/su
const RELATIVE_JSON_POINTER = /^(?:0|[1-9][0-9]*)(?:#|(?:\/(?:[^~/]|~0|~1)*)*)$/su
// Text in which every { opens a {...} expression. (Written without nested quantifiers: the
// equivalent /^([^{]*(\{[^}]*\})?)*$/ takes exponential time in a backtracking engine.)
const URI_TEMPLATE = /^(?:[^{]|\{[^}]*\})*$/su

const parsesAs = (layouts: readonly string[], s: string): boolean =>
  layouts.some((l) => {
    try {
      parseTime(l, s)
      return true
    } catch {
      return false
    }
  })

/** Go's net.ParseIP (dotted IPv4 without leading zeros, IPv6 with an optional trailing IPv4). */
const parseIPv4 = (s: string): boolean => {
  const parts = s.split(".")
  return parts.length === 4 && parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255)
}

const parseIPv6 = (s: string): boolean => {
  let groups = 0
  let ellipsis = false
  let rest = s
  if (rest.startsWith("::")) {
    ellipsis = true
    rest = rest.slice(2)
    if (rest === "") return true
  }
  while (rest !== "") {
    const m = /^[0-9a-fA-F]{1,4}/.exec(rest)
    if (m === null) return false
    // An IPv4 tail takes the last two groups.
    if (rest.includes(".") && !rest.slice(0, m[0].length + 1).includes(":")) {
      if (!parseIPv4(rest)) return false
      groups += 2
      rest = ""
      break
    }
    groups++
    rest = rest.slice(m[0].length)
    if (rest === "") break
    if (rest[0] !== ":") return false
    rest = rest.slice(1)
    if (rest.startsWith(":")) {
      if (ellipsis) return false
      ellipsis = true
      rest = rest.slice(1)
      if (rest === "") break
    } else if (rest === "") return false
    if (groups > 8) return false
  }
  return ellipsis ? groups < 8 : groups === 8
}

const parseIP = (s: string): boolean => parseIPv4(s) || (s.includes(":") && parseIPv6(s))

const validEscapes = (s: string): boolean => /^(?:[^%]|%[0-9a-fA-F]{2})*$/su.test(s)

/** Go's url.Parse: the parts it rejects (control characters, bad escapes, ports, hosts). */
const parseURL = (raw: string): { scheme: string; path: string } | undefined => {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i)
    if (c < 0x20 || c === 0x7f) return undefined
  }
  let rest = raw
  const hash = rest.indexOf("#")
  if (hash >= 0) {
    if (!validEscapes(rest.slice(hash + 1))) return undefined
    rest = rest.slice(0, hash)
  }
  let scheme = ""
  for (let i = 0; i < rest.length; i++) {
    const c = rest[i]
    if (/[A-Za-z]/.test(c)) continue
    if (/[0-9+.-]/.test(c)) {
      if (i === 0) break
      continue
    }
    if (c === ":") {
      if (i === 0) return undefined
      scheme = rest.slice(0, i)
      rest = rest.slice(i + 1)
    }
    break
  }
  const q = rest.indexOf("?")
  if (q >= 0) rest = rest.slice(0, q)
  if (scheme !== "" && !rest.startsWith("/")) return { scheme, path: "" }
  if (scheme === "") {
    const seg = rest.split("/")[0]
    if (seg.includes(":")) return undefined
  }
  if (rest.startsWith("//")) {
    const end = rest.indexOf("/", 2)
    const authority = end < 0 ? rest.slice(2) : rest.slice(2, end)
    rest = end < 0 ? "" : rest.slice(end)
    const at = authority.lastIndexOf("@")
    const userinfo = at < 0 ? "" : authority.slice(0, at)
    if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo) || !validEscapes(userinfo)) return undefined
    const host = at < 0 ? authority : authority.slice(at + 1)
    if (host.startsWith("[")) {
      const close = host.indexOf("]")
      if (close < 0) return undefined
      const port = host.slice(close + 1)
      if (port !== "" && !/^:\d*$/.test(port)) return undefined
    } else {
      const colon = host.lastIndexOf(":")
      if (colon >= 0 && !/^:\d*$/.test(host.slice(colon))) return undefined
      const name = colon >= 0 ? host.slice(0, colon) : host
      if (!/^[A-Za-z0-9\-._~!$&'()*+,;=%"]*$/u.test(name) || !validEscapes(name)) return undefined
    }
  }
  if (!validEscapes(rest)) return undefined
  let path: string
  try {
    path = decodeURIComponent(rest)
  } catch {
    path = rest
  }
  return { scheme, path }
}

/** net/mail.ParseAddress, for the common forms: addr-spec, or a display name and <addr-spec>. */
const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
const DOT_ATOM = `${ATOM}(?:\\.${ATOM})*`
const QUOTED = '"(?:[^"\\\\\\r\\n]|\\\\.)*"'
const ADDR_SPEC = `(?:${DOT_ATOM}|${QUOTED})@(?:${DOT_ATOM}|\\[[^\\[\\]\\\\]*\\])`
const EMAIL = new RegExp(`^\\s*(?:${ADDR_SPEC}|(?:(?:${ATOM}|${QUOTED})(?:\\s+(?:${ATOM}|${QUOTED}))*\\s*)?<${ADDR_SPEC}>)\\s*$`, "u")

const isFormat = (format: string, node: J): boolean => {
  if (typeof node !== "string") return true
  const s = node
  switch (format) {
    case "date":
      return parsesAs(["2006-01-02"], s)
    case "time":
      return parsesAs(["15:04:05Z07:00", "15:04:05"], s)
    case "date-time":
      return parsesAs(["15:04:05", "15:04:05Z07:00", "2006-01-02", "2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05.999999999Z07:00"], s)
    case "hostname":
      return Buffer.byteLength(s) < 256 && HOSTNAME.test(s)
    case "email":
    case "idn-email":
      return EMAIL.test(s)
    case "ipv4":
      return parseIP(s) && s.includes(".")
    case "ipv6":
      return parseIP(s) && s.includes(":")
    case "uri":
    case "iri": {
      const u = parseURL(s)
      return u !== undefined && u.scheme !== "" && !s.includes("\\")
    }
    case "uri-reference":
    case "iri-reference":
      return parseURL(s) !== undefined && !s.includes("\\")
    case "uri-template": {
      const u = parseURL(s)
      return u !== undefined && !s.includes("\\") && URI_TEMPLATE.test(u.path)
    }
    case "uuid":
      return UUID.test(s)
    case "regex":
      if (s === "") return true
      try {
        compileRegex(s, evaluation)
        return true
      } catch {
        return false
      }
    case "json-pointer":
      return JSON_POINTER.test(s)
    case "relative-json-pointer":
      return RELATIVE_JSON_POINTER.test(s)
    default:
      return true
  }
}

// ---------------------------------------------------------------------------------------------
// Builtins

/** A schema or document operand: JSON text, or an object or array (OPA's loader rules). */
const load = (v: Value): J => {
  if (typeof v === "string") return parseJSON(v)
  if (Array.isArray(v) || isObject(v)) return fromValue(v)
  throw new SchemaError("wrong type, expected string or object")
}

/**
 * The evaluation a json.* schema builtin runs in, while it runs (builtins run synchronously):
 * schema compilation and validation charge their work to it, and its patterns are metered.
 */
let evaluation: BuiltinContext | undefined

const within = <T>(ctx: BuiltinContext, f: () => T): T => {
  const outer = evaluation
  evaluation = ctx
  try {
    return f()
  } finally {
    evaluation = outer
  }
}

/** Compiled schemas of recently used schema texts and values (compiling is the expensive part). */
const compiled = new Map<string, Sub>()
const COMPILED_MAX = 128

const schemaOf = (v: Value): Sub => {
  const doc = load(v)
  const key = encode(doc, true)
  const hit = compiled.get(key)
  if (hit !== undefined) return hit
  const s = compileSchema(doc)
  if (compiled.size >= COMPILED_MAX) compiled.delete(compiled.keys().next().value as string)
  compiled.set(key, s)
  return s
}

export const jsonSchema: BuiltinDef[] = [
  {
    name: "json.verify_schema",
    arity: 1,
    fn: ([schema], ctx) => {
      try {
        within(ctx, () => schemaOf(schema))
        return [true, null]
      } catch (e) {
        if (e instanceof SchemaError) return [false, "jsonschema: " + e.message]
        throw e
      }
    }
  },
  {
    name: "json.match_schema",
    arity: 2,
    fn: ([document, schema], ctx) => {
      const [doc, s] = asBuiltinError(SchemaError, () => [load(document), within(ctx, () => schemaOf(schema))] as const)
      const r = within(ctx, () => validateWith(s, doc, ROOT))
      const errors: Value[] = r.errors.map((e) => ({ error: `${e.field}: ${e.description}`, type: e.type, field: e.field, desc: e.description }))
      return [r.valid, errors]
    }
  }
]
