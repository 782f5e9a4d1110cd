// Encodings: base64, base64url, hex, URL query strings, JSON and YAML.

import { parse as parseLossless } from "lossless-json"
import { parse as parseYAML, stringify as stringifyYAML, YAMLError } from "yaml"
import { toJSON } from "../json.js"
import { type Value, compareStrings, fromJSON, objectEach, ObjectBuilder, parseNumberLiteral, RegoSet } from "../value.js"
import { bool, obj, str } from "./args.js"
import { Base64Error, base64UrlDecode, goBase64Decode } from "./gobase64.js"
import { marshalGoJSON } from "./gojson.js"
import { asBuiltinError, type BuiltinDef, builtinError, operandError } from "./registry.js"

const utf8 = new TextDecoder("utf-8")
const enc = new TextEncoder()


/** Go's base64 decoding (base64.* builtins): errors become builtin errors with Go's text. */
const decodeBase64 = (s: string, url: boolean): Uint8Array => asBuiltinError(Base64Error, () => (url ? base64UrlDecode(s) : goBase64Decode(s)))

const bytesToString = (b: Uint8Array): string => utf8.decode(b)

/** Go's url.QueryEscape. */
export const queryEscape = (s: string): string => {
  let out = ""
  for (const b of enc.encode(s)) {
    const c = String.fromCharCode(b)
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c
    else if (c === " ") out += "+"
    else out += "%" + b.toString(16).toUpperCase().padStart(2, "0")
  }
  return out
}

/** Go's url.QueryUnescape. */
export const queryUnescape = (s: string): string => {
  const bytes: number[] = []
  for (let i = 0; i < s.length; i++) {
    const c = s[i]
    if (c === "%") {
      const h = s.slice(i + 1, i + 3)
      if (!/^[0-9a-fA-F]{2}$/.test(h)) {
        throw builtinError(`invalid URL escape ${JSON.stringify(s.slice(i, i + 3))}`)
      }
      bytes.push(parseInt(h, 16))
      i += 2
    } else if (c === "+") bytes.push(32)
    else for (const b of enc.encode(c)) bytes.push(b)
  }
  return utf8.decode(Uint8Array.from(bytes))
}

/** Parses JSON text exactly (big numbers stay exact). */
export const parseJSONValue = (text: string): Value => {
  try {
    return fromJSON(parseLossless(text, null, (s: string) => parseNumberLiteral(s) as unknown as number))
  } catch (e) {
    throw builtinError(e instanceof Error ? e.message : String(e))
  }
}

/** A YAML parse error worded like Go's yaml.v3 ("yaml: line 1: did not find expected ..."). */
const goYAMLError = (e: unknown): string => {
  if (!(e instanceof YAMLError)) return `yaml: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`
  const line = e.linePos?.[0].line
  const first = e.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "")
  let msg = first.charAt(0).toLowerCase() + first.slice(1)
  if (e.code === "MISSING_CHAR") {
    const m = /must end with a (.)/.exec(first)
    if (m !== null) msg = `did not find expected ',' or '${m[1]}'`
  }
  return line === undefined ? `yaml: ${msg}` : `yaml: line ${line}: ${msg}`
}

const yamlToValue = (x: unknown): Value => {
  if (x === undefined) return null
  if (x instanceof Map) {
    const ob = new ObjectBuilder()
    for (const [k, v] of x) ob.set(typeof k === "string" ? k : String(k), yamlToValue(v))
    return ob.build()
  }
  if (Array.isArray(x)) return x.map(yamlToValue)
  if (x instanceof Date) return x.toISOString()
  if (typeof x === "object" && x !== null) {
    const ob = new ObjectBuilder()
    for (const [k, v] of Object.entries(x)) ob.set(k, yamlToValue(v))
    return ob.build()
  }
  return fromJSON(x)
}

const encodeObjectErr = (): Error => operandError(1, "values must be string, array[string], or set[string]")

export const encoding: BuiltinDef[] = [
  { name: "base64.encode", arity: 1, fn: ([a]) => Buffer.from(str(a, 1), "utf8").toString("base64") },
  { name: "base64.decode", arity: 1, fn: ([a]) => bytesToString(decodeBase64(str(a, 1), false)) },
  {
    name: "base64.is_valid",
    arity: 1,
    fn: ([a]) => {
      if (typeof a !== "string") return false
      try {
        decodeBase64(a, false)
        return true
      } catch {
        return false
      }
    }
  },
  { name: "base64url.encode", arity: 1, fn: ([a]) => Buffer.from(str(a, 1), "utf8").toString("base64url").padEnd(Math.ceil(Buffer.byteLength(str(a, 1)) / 3) * 4, "=") },
  { name: "base64url.encode_no_pad", arity: 1, fn: ([a]) => Buffer.from(str(a, 1), "utf8").toString("base64url") },
  {
    name: "base64url.decode",
    arity: 1,
    // Unpadded input is padded first (RFC 7515 appendix C), as OPA does.
    fn: ([a]) => bytesToString(decodeBase64(str(a, 1), true))
  },
  { name: "hex.encode", arity: 1, fn: ([a]) => Buffer.from(str(a, 1), "utf8").toString("hex") },
  {
    name: "hex.decode",
    arity: 1,
    fn: ([a]) => {
      const s = str(a, 1)
      for (let i = 0; i < s.length; i++) {
        if (!/[0-9a-fA-F]/.test(s[i])) {
          const cp = s.codePointAt(i) as number
          throw builtinError(`encoding/hex: invalid byte: U+${cp.toString(16).toUpperCase().padStart(4, "0")} ${JSON.stringify(String.fromCodePoint(cp)).replace(/^"|"$/g, "'")}`)
        }
      }
      if (s.length % 2 === 1) throw builtinError("encoding/hex: odd length hex string")
      return bytesToString(Buffer.from(s, "hex"))
    }
  },
  { name: "urlquery.encode", arity: 1, fn: ([a]) => queryEscape(str(a, 1)) },
  { name: "urlquery.decode", arity: 1, fn: ([a]) => queryUnescape(str(a, 1)) },
  {
    name: "urlquery.encode_object",
    arity: 1,
    fn: ([a]) => {
      const o = obj(a, 1)
      const pairs: Array<[string, string[]]> = []
      objectEach(o, (k, v) => {
        if (typeof k !== "string") throw encodeObjectErr()
        if (typeof v === "string") pairs.push([k, [v]])
        else if (Array.isArray(v) || v instanceof RegoSet) {
          const xs = Array.isArray(v) ? v : v.sorted()
          const out: string[] = []
          for (const x of xs) {
            if (typeof x !== "string") throw encodeObjectErr()
            out.push(x)
          }
          pairs.push([k, out])
        } else throw encodeObjectErr()
        return false
      })
      pairs.sort((x, y) => compareStrings(x[0], y[0]))
      return pairs.flatMap(([k, vs]) => vs.map((v) => queryEscape(k) + "=" + queryEscape(v))).join("&")
    }
  },
  {
    name: "urlquery.decode_object",
    arity: 1,
    fn: ([a]) => {
      const s = str(a, 1)
      const acc = new Map<string, string[]>()
      for (const part of s.split(/&/)) {
        if (part === "") continue
        if (part.includes(";")) throw builtinError("invalid semicolon separator in query")
        const eq = part.indexOf("=")
        const k = queryUnescape(eq < 0 ? part : part.slice(0, eq))
        const v = eq < 0 ? "" : queryUnescape(part.slice(eq + 1))
        const list = acc.get(k)
        if (list === undefined) acc.set(k, [v])
        else list.push(v)
      }
      const ob = new ObjectBuilder()
      for (const [k, vs] of acc) ob.set(k, vs)
      return ob.build()
    }
  },
  { name: "json.marshal", arity: 1, fn: ([a]) => marshalGoJSON(a) },
  {
    name: "json.marshal_with_options",
    arity: 2,
    fn: ([a, o], ctx) => {
      const opts = obj(o, 2)
      let indent = "\t"
      let prefix = ""
      let implicit = false
      let explicit: boolean | undefined
      objectEach(opts, (k, v) => {
        if (typeof k !== "string") throw operandError(2, `failed to stringify key ${String(k)}`)
        switch (k) {
          case "prefix":
            if (typeof v !== "string") throw operandError(2, `key ${k} failed cast to string`)
            prefix = v
            implicit = true
            break
          case "indent":
            if (typeof v !== "string") throw operandError(2, `key ${k} failed cast to string`)
            indent = v
            implicit = true
            break
          case "pretty":
            if (typeof v !== "boolean") throw operandError(2, `key ${k} failed cast to bool`)
            explicit = bool(v, 2)
            break
          default:
            throw operandError(2, `object contained unknown key ${JSON.stringify(k).slice(1, -1) === k ? JSON.stringify(k) : k}`)
        }
        return false
      })
      const pretty = explicit ?? implicit
      return pretty ? prefix + marshalGoJSON(a, { prefix, indent, charge: (n) => ctx.charge(n) }) : marshalGoJSON(a)
    }
  },
  { name: "json.unmarshal", arity: 1, fn: ([a]) => parseJSONValue(str(a, 1)) },
  {
    name: "json.is_valid",
    arity: 1,
    fn: ([a]) => {
      if (typeof a !== "string") return false
      try {
        JSON.parse(a)
        return true
      } catch {
        return false
      }
    }
  },
  {
    name: "yaml.marshal",
    arity: 1,
    fn: ([a]) => stringifyYAML(toJSON(a), { indentSeq: false, lineWidth: 0 })
  },
  {
    name: "yaml.unmarshal",
    arity: 1,
    fn: ([a]) => {
      const s = str(a, 1)
      try {
        return yamlToValue(parseYAML(s, { uniqueKeys: true }))
      } catch (e) {
        throw builtinError(goYAMLError(e))
      }
    }
  },
  {
    name: "yaml.is_valid",
    arity: 1,
    fn: ([a]) => {
      if (typeof a !== "string") return false
      try {
        parseYAML(a, { uniqueKeys: true })
        return true
      } catch {
        return false
      }
    }
  }
]


