// JSON the way the Go code behind OPA's JWT builtins reads and writes it:
//
//   - `decodeGoJSON`: encoding/json with UseNumber (OPA's util.UnmarshalJSON): exact numbers,
//     the last of duplicate keys wins, Go's syntax error texts;
//   - `marshalGoJSON`: json.Marshal of a Rego value converted by ast.JSON: sorted keys, sets as
//     arrays, HTML-safe escapes;
//   - `fastjsonGetString`: the lenient valyala/fastjson parser that lestrrat-go/jwx uses to read
//     JWS headers when signing (numbers are not validated, so `e` parses as a number).

import { type Value, compareStrings, formatNumber, isObject, objectEach, objectEntries, ObjectBuilder, parseNumberLiteral, RegoSet } from "../value.js"

export class GoJSONError extends Error {}

/** Go's quoteChar: how the json scanner names an offending character. */
const quoteChar = (c: string): string => {
  if (c === "'") return "'\\''"
  if (c === '"') return "'\"'"
  const q = JSON.stringify(c)
  return "'" + q.slice(1, -1) + "'"
}

const WS = new Set([" ", "\t", "\n", "\r"])

/** Parses JSON text into a Rego value; throws GoJSONError with Go's message. */
export const decodeGoJSON = (text: string): Value => {
  let i = 0
  const n = text.length
  const skipWS = (): void => {
    while (i < n && WS.has(text[i])) i++
  }
  const eof = (): never => {
    throw new GoJSONError("unexpected EOF")
  }
  const bad = (what: string): never => {
    throw new GoJSONError(`invalid character ${quoteChar(text[i])} ${what}`)
  }

  const literal = (word: string, v: Value): Value => {
    for (let k = 0; k < word.length; k++, i++) {
      if (i >= n) eof()
      if (text[i] !== word[k]) bad(`in literal ${word} (expecting ${quoteChar(word[k])})`)
    }
    return v
  }

  const number = (): Value => {
    const start = i
    if (text[i] === "-") {
      i++
      if (i >= n) eof()
      if (!(text[i] >= "0" && text[i] <= "9")) bad("in numeric literal")
    }
    if (text[i] === "0") i++
    else while (i < n && text[i] >= "0" && text[i] <= "9") i++
    if (i < n && text[i] === ".") {
      i++
      if (i >= n) eof()
      if (!(text[i] >= "0" && text[i] <= "9")) bad("after decimal point in numeric literal")
      while (i < n && text[i] >= "0" && text[i] <= "9") i++
    }
    if (i < n && (text[i] === "e" || text[i] === "E")) {
      i++
      if (i < n && (text[i] === "+" || text[i] === "-")) i++
      if (i >= n) eof()
      if (!(text[i] >= "0" && text[i] <= "9")) bad("in exponent of numeric literal")
      while (i < n && text[i] >= "0" && text[i] <= "9") i++
    }
    return parseNumberLiteral(text.slice(start, i))
  }

  const string = (): string => {
    i++ // opening quote
    let out = ""
    let run = i
    for (;;) {
      if (i >= n) eof()
      const c = text[i]
      if (c === '"') {
        out += text.slice(run, i)
        i++
        return out
      }
      if (c < " ") bad("in string literal")
      if (c !== "\\") {
        i++
        continue
      }
      out += text.slice(run, i)
      i++
      if (i >= n) eof()
      const e = text[i]
      switch (e) {
        case '"':
        case "\\":
        case "/":
          out += e
          break
        case "b":
          out += "\b"
          break
        case "f":
          out += "\f"
          break
        case "n":
          out += "\n"
          break
        case "r":
          out += "\r"
          break
        case "t":
          out += "\t"
          break
        case "u": {
          let code = 0
          for (let k = 0; k < 4; k++) {
            i++
            if (i >= n) eof()
            const h = parseInt(text[i], 16)
            if (Number.isNaN(h)) bad("in \\u hexadecimal character escape")
            code = code * 16 + h
          }
          out += String.fromCharCode(code)
          break
        }
        default:
          bad("in string escape code")
      }
      i++
      run = i
    }
  }

  const value = (): Value => {
    skipWS()
    if (i >= n) eof()
    const c = text[i]
    switch (c) {
      case "{": {
        i++
        const ob = new ObjectBuilder()
        skipWS()
        if (i >= n) eof()
        if (text[i] === "}") {
          i++
          return ob.build()
        }
        for (;;) {
          skipWS()
          if (i >= n) eof()
          if (text[i] !== '"') bad("looking for beginning of object key string")
          const k = string()
          skipWS()
          if (i >= n) eof()
          if (text[i] !== ":") bad("after object key")
          i++
          ob.set(k, value())
          skipWS()
          if (i >= n) eof()
          if (text[i] === ",") {
            i++
            continue
          }
          if (text[i] === "}") {
            i++
            return ob.build()
          }
          bad("after object key:value pair")
        }
      }
      case "[": {
        i++
        const out: Value[] = []
        skipWS()
        if (i >= n) eof()
        if (text[i] === "]") {
          i++
          return out
        }
        for (;;) {
          out.push(value())
          skipWS()
          if (i >= n) eof()
          if (text[i] === ",") {
            i++
            continue
          }
          if (text[i] === "]") {
            i++
            return out
          }
          bad("after array element")
        }
      }
      case '"':
        return lone(string())
      case "t":
        return literal("true", true)
      case "f":
        return literal("false", false)
      case "n":
        return literal("null", null)
      default:
        if (c === "-" || (c >= "0" && c <= "9")) return number()
        return bad("looking for beginning of value")
    }
  }

  skipWS()
  if (i >= n) throw new GoJSONError("EOF")
  const v = value()
  skipWS()
  if (i < n) {
    // OPA reads one more token after the value and reports it.
    const c = text[i]
    if (c === "{" || c === "[" || c === "]" || c === "}" || c === '"' || c === "-" || (c >= "0" && c <= "9") || "tfn".includes(c)) {
      throw new GoJSONError(`error: invalid character '${c}' after top-level value`)
    }
    bad("looking for beginning of value")
  }
  return v
}

/** Go decodes unpaired surrogate escapes to U+FFFD. */
const lone = (s: string): string => (/[\ud800-\udfff]/.test(s) ? s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd") : s)

/** json.Valid: the text is exactly one JSON value. */
export const isGoJSON = (text: string): boolean => {
  try {
    decodeGoJSON(text)
    return true
  } catch {
    return false
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding

const HEX = "0123456789abcdef"

/** Go's encodeState.string with HTML escaping (json.Marshal's default). */
export const goQuote = (s: string): string => {
  let out = '"'
  let run = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    let esc: string | undefined
    if (c < 0x20 || c === 0x22 || c === 0x5c || c === 0x3c || c === 0x3e || c === 0x26 || c === 0x2028 || c === 0x2029) {
      switch (c) {
        case 0x22:
          esc = '\\"'
          break
        case 0x5c:
          esc = "\\\\"
          break
        case 0x0a:
          esc = "\\n"
          break
        case 0x0d:
          esc = "\\r"
          break
        case 0x09:
          esc = "\\t"
          break
        case 0x08:
          esc = "\\b"
          break
        case 0x0c:
          esc = "\\f"
          break
        default:
          esc = "\\u" + (c >= 0x2028 ? "20" + HEX[c >> 4 & 0xf] + HEX[c & 0xf] : "00" + HEX[c >> 4] + HEX[c & 0xf])
      }
    } else if (c >= 0xd800 && c <= 0xdfff) {
      // A lone surrogate cannot be UTF-8 encoded; Go writes U+FFFD for invalid UTF-8.
      const pair = c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff
      if (pair) {
        i++
        continue
      }
      esc = "\\ufffd"
    }
    if (esc !== undefined) {
      out += s.slice(run, i) + esc
      run = i + 1
    }
  }
  return out + s.slice(run) + '"'
}

/** Go's json.Number: a number kept as its JSON text. */
export class JsonNumber {
  constructor(readonly text: string) {}
}

/** What Go code holds after decoding JSON into `any` with UseNumber. */
export type GoAny = null | boolean | string | JsonNumber | GoAny[] | Map<string, GoAny>

/**
 * ast.JSON(v) as Go code decoding it into `any` with UseNumber sees it: sets become sorted
 * arrays, objects maps, numbers json.Numbers. An object key that is not a string is written as
 * `keyText` makes it (the callers' JSON encoders differ).
 */
export const goAnyOf = (v: Value, keyText: (k: Value) => string): GoAny => {
  const of = (x: Value): GoAny => {
    switch (typeof x) {
      case "string":
      case "boolean":
        return x
      case "number":
      case "bigint":
        return new JsonNumber(formatNumber(x))
      default:
        if (x === null) return null
        if (Array.isArray(x)) return x.map(of)
        if (x instanceof RegoSet) return x.sorted().map(of)
        if (isObject(x)) {
          const m = new Map<string, GoAny>()
          for (const [k, y] of objectEntries(x)) m.set(typeof k === "string" ? k : keyText(k), of(y))
          return m
        }
        return null
    }
  }
  return of(v)
}

/**
 * json.Marshal of ast.JSON(v): objects with sorted keys, sets as sorted arrays, HTML-safe
 * escapes. With an indent, json.MarshalIndent: each element on its own line, after the prefix
 * and one indent per level (the first line is not prefixed; empty arrays and objects stay `[]`
 * and `{}`).
 */
export const marshalGoJSON = (v: Value, indent?: { prefix: string; indent: string; charge?: (n: number) => void }): string => {
  const write = (x: Value, depth: number): string => {
    switch (typeof x) {
      case "string":
        return goQuote(x)
      case "number":
      case "bigint":
        return formatNumber(x)
      case "boolean":
        return x ? "true" : "false"
      default: {
        if (x === null) return "null"
        const nl = indent === undefined ? "" : "\n" + indent.prefix + indent.indent.repeat(depth + 1)
        const close = indent === undefined ? "" : "\n" + indent.prefix + indent.indent.repeat(depth)
        const colon = indent === undefined ? ":" : ": "
        // Indentation repeats for every element at every level: charged before it is written.
        const lines = (n: number): void => indent?.charge?.((n * nl.length) >> 4)
        const elements = Array.isArray(x) ? x : x instanceof RegoSet ? x.sorted() : undefined
        if (elements !== undefined) {
          if (elements.length === 0) return "[]"
          lines(elements.length)
          return "[" + elements.map((e) => nl + write(e, depth + 1)).join(",") + close + "]"
        }
        if (!isObject(x)) return "null"
        // ast.JSON turns a non-string key into its own JSON text (HTML-escaped, as Go's encoder writes it).
        const entries: Array<[string, Value]> = []
        objectEach(x, (k, e) => {
          entries.push([typeof k === "string" ? k : marshalGoJSON(k), e])
          return false
        })
        if (entries.length === 0) return "{}"
        lines(entries.length)
        entries.sort((a, b) => compareStrings(a[0], b[0]))
        return "{" + entries.map(([k, e]) => nl + goQuote(k) + colon + write(e, depth + 1)).join(",") + close + "}"
      }
    }
  }
  return write(v, 0)
}

// ---------------------------------------------------------------------------------------------
// valyala/fastjson, as far as jwx's JWS header accessors need it.

type Fast = { kind: "object"; entries: Array<[string, Fast]> } | { kind: "array" } | { kind: "string"; value: string } | { kind: "other" }

class FastError extends Error {
  constructor(
    message: string,
    readonly tail: string
  ) {
    super(message)
  }
}

const FAST_WS = /^[ \n\t\r]*/

/** fastjson's startEndString: long tails are shortened in the middle. */
const startEnd = (s: string): string => (s.length <= 40 ? s : s.slice(0, 20) + "..." + s.slice(-20))

const fastParse = (input: string): Fast => {
  let s = input.replace(FAST_WS, "")
  const ws = (): void => {
    s = s.replace(FAST_WS, "")
  }
  const rawString = (): string => {
    // s starts after the opening quote
    let k = 0
    for (;;) {
      const q = s.indexOf('"', k)
      if (q < 0) throw new FastError(`missing closing '"'`, s)
      let bs = 0
      for (let j = q - 1; j >= 0 && s[j] === "\\"; j--) bs++
      if (bs % 2 === 0) {
        const raw = s.slice(0, q)
        s = s.slice(q + 1)
        try {
          return JSON.parse('"' + raw + '"') as string
        } catch {
          return raw
        }
      }
      k = q + 1
    }
  }
  const value = (depth: number): Fast => {
    if (s.length === 0) throw new FastError("cannot parse empty string", s)
    if (depth > 300) throw new FastError("too big depth for the nested JSON; it exceeds 300", s)
    const c = s[0]
    if (c === "{") {
      s = s.slice(1)
      const entries: Array<[string, Fast]> = []
      ws()
      if (s.length === 0) throw new FastError("missing '}'", s)
      if (s[0] === "}") {
        s = s.slice(1)
        return { kind: "object", entries }
      }
      for (;;) {
        ws()
        if (s.length === 0 || s[0] !== '"') throw new FastError(`cannot find opening '"" for object key`, s)
        s = s.slice(1)
        let key: string
        try {
          key = rawString()
        } catch (e) {
          throw new FastError(`cannot parse object key: ${(e as Error).message}`, s)
        }
        ws()
        if (s.length === 0 || s[0] !== ":") throw new FastError("missing ':' after object key", s)
        s = s.slice(1)
        ws()
        let v: Fast
        try {
          v = value(depth + 1)
        } catch (e) {
          throw new FastError(`cannot parse object value: ${(e as Error).message}`, s)
        }
        entries.push([key, v])
        ws()
        if (s.length === 0) throw new FastError("unexpected end of object", s)
        if (s[0] === ",") {
          s = s.slice(1)
          continue
        }
        if (s[0] === "}") {
          s = s.slice(1)
          return { kind: "object", entries }
        }
        throw new FastError("missing ',' after object value", s)
      }
    }
    if (c === "[") {
      s = s.slice(1)
      ws()
      if (s.length === 0) throw new FastError("missing ']'", s)
      if (s[0] === "]") {
        s = s.slice(1)
        return { kind: "array" }
      }
      for (;;) {
        ws()
        try {
          value(depth + 1)
        } catch (e) {
          throw new FastError(`cannot parse array value: ${(e as Error).message}`, s)
        }
        ws()
        if (s.length === 0) throw new FastError("unexpected end of array", s)
        if (s[0] === ",") {
          s = s.slice(1)
          continue
        }
        if (s[0] === "]") {
          s = s.slice(1)
          return { kind: "array" }
        }
        throw new FastError("missing ',' after array value", s)
      }
    }
    if (c === '"') {
      s = s.slice(1)
      try {
        return { kind: "string", value: rawString() }
      } catch (e) {
        throw new FastError(`cannot parse string: ${(e as Error).message}`, s)
      }
    }
    for (const word of ["true", "false", "null"]) {
      if (c === word[0] && !(word === "null" && /^nan/i.test(s))) {
        if (!s.startsWith(word)) throw new FastError(`unexpected value found: ${JSON.stringify(s)}`, s)
        s = s.slice(word.length)
        return { kind: "other" }
      }
    }
    // Numbers are only delimited here, never validated.
    const m = /^[0-9.\-eE+]*/.exec(s) as RegExpExecArray
    let len = m[0].length
    if (len === 0 || (len === 1 && (s[0] === "-" || s[0] === "+") && s.length > 1 && !/[0-9.\-eE+]/.test(s[1]))) {
      const at = len
      if (/^(inf|nan)/i.test(s.slice(at, at + 3))) len = at + 3
      else throw new FastError(`cannot parse number: unexpected char: ${JSON.stringify(s[0])}`, s)
    }
    s = s.slice(len)
    return { kind: "other" }
  }
  let v: Fast
  try {
    v = value(0)
  } catch (e) {
    if (e instanceof FastError) throw new Error(`cannot parse JSON: ${e.message}; unparsed tail: ${JSON.stringify(startEnd(e.tail))}`)
    throw e
  }
  ws()
  if (s.length > 0) throw new Error(`unexpected tail: ${JSON.stringify(startEnd(s))}`)
  return v
}

/**
 * jwsbb.HeaderParse followed by HeaderGetString(key): the string value, or an Error with jwx's
 * message when the header does not parse or has no such string field.
 */
export const fastjsonGetString = (header: string, key: string): string | Error => {
  let v: Fast
  try {
    v = fastParse(header)
  } catch (e) {
    return e as Error
  }
  if (v.kind === "object") {
    const hit = v.entries.find(([k]) => k === key)
    if (hit !== undefined && hit[1].kind === "string") return hit[1].value
  }
  return new Error(`jwsbb: header ${JSON.stringify(key)} not found`)
}
