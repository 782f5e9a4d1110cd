/**
 * Reading a request body as JSON with the kit's two guarantees:
 *
 * - **a nesting limit**, checked on the text before anything recursive runs: Effect's parse
 *   error formatter (and any recursive walk of a decoded value) overflows the stack on a body of
 *   10,000 nested arrays, so such a body is refused as `JsonTooDeep` up front;
 * - **a position** for invalid JSON: V8's `JSON.parse` messages name a position in some versions
 *   and cases and not in others, so the kit finds the offset, line and column itself (only once
 *   `JSON.parse` has refused the text: valid bodies pay for the depth scan only).
 */

import * as Context from "effect/Context"

/** Default deepest nesting of arrays and objects in a request body (`ServeOptions.maxJsonDepth`). */
export const defaultMaxDepth = 64

/** The limit for the request being served (the kit sets it from `ServeOptions.maxJsonDepth`). */
export class MaxDepth extends Context.Reference<MaxDepth>()("@rec/platform/JsonBody/MaxDepth", {
  defaultValue: () => defaultMaxDepth
}) {}

export class JsonTooDeep extends Error {
  constructor(readonly limit: number) {
    super(`The request body nests arrays and objects deeper than ${limit} levels, the most this service accepts`)
    this.name = "JsonTooDeep"
  }
}

export class InvalidJson extends Error {
  constructor(readonly reason: string, readonly offset: number, readonly line: number, readonly column: number) {
    super(`The request body is not valid JSON: ${reason} at line ${line}, column ${column} (offset ${offset})`)
    this.name = "InvalidJson"
  }
}

const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const QUOTE = 0x22
const BACKSLASH = 0x5c

/**
 * Whether arrays and objects nest deeper than `limit` anywhere in `text` (brackets inside
 * strings do not count). Linear, no recursion, stops at the first level past the limit.
 */
export const exceedsDepth = (text: string, limit: number): boolean => {
  // Each level needs an opening bracket, so a short text cannot be too deep.
  if (text.length <= limit) return false
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === BACKSLASH) i++
      else if (c === QUOTE) inString = false
    } else if (c === QUOTE) {
      inString = true
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > limit) return true
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--
    }
  }
  return false
}

/**
 * Parses a request body: `JsonTooDeep` past the limit, `InvalidJson` with its position when it is
 * not JSON. An empty body is `null` (what `HttpServerRequest.json` gives).
 */
export const parse = (text: string, maxDepth: number): unknown => {
  if (text === "") return null
  if (exceedsDepth(text, maxDepth)) throw new JsonTooDeep(maxDepth)
  try {
    return JSON.parse(text) as unknown
  } catch {
    throw locateError(text)
  }
}

/** Where `text` stops being JSON (RFC 8259), as an `InvalidJson`. */
export const locateError = (text: string): InvalidJson => {
  let i = 0
  const fail = (reason: string): never => {
    const before = text.slice(0, i)
    const line = before.split("\n").length
    const column = i - (before.lastIndexOf("\n") + 1) + 1
    throw new InvalidJson(reason, i, line, column)
  }
  const describe = (): string => (i >= text.length ? "unexpected end of input" : `unexpected ${JSON.stringify(text[i])}`)
  const space = () => {
    while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++
  }
  const literal = (word: string) => {
    for (const ch of word) {
      if (text[i] !== ch) fail(`${describe()} (expected ${word})`)
      i++
    }
  }
  const string = () => {
    const start = i
    i++ // opening quote
    while (i < text.length) {
      const c = text.charCodeAt(i)
      if (c === QUOTE) {
        i++
        return
      }
      if (c < 0x20) fail("control character in a string")
      if (c === BACKSLASH) {
        const e = text[i + 1]
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
            i += 2
            fail("invalid \\u escape in a string")
          }
          i += 6
          continue
        }
        if (e === undefined || !"\"\\/bfnrt".includes(e)) {
          i++
          fail("invalid escape in a string")
        }
        i += 2
        continue
      }
      i++
    }
    i = start
    fail("unterminated string (it starts here)")
  }
  const number = () => {
    const match = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i, i + 400))
    if (match === null || match[0] === "" || match[0] === "-") fail(`${describe()} (expected a value)`)
    i += match![0].length
  }
  // Depth is bounded by the caller's check, so recursion is safe here.
  const value = (): void => {
    space()
    const c = text[i]
    if (c === "{") {
      i++
      space()
      if (text[i] === "}") {
        i++
        return
      }
      for (;;) {
        space()
        if (text[i] !== "\"") fail(`${describe()} (expected a property name in double quotes)`)
        string()
        space()
        if (text[i] !== ":") fail(`${describe()} (expected ":")`)
        i++
        value()
        space()
        if (text[i] === ",") {
          i++
          continue
        }
        if (text[i] === "}") {
          i++
          return
        }
        fail(`${describe()} (expected "," or "}")`)
      }
    } else if (c === "[") {
      i++
      space()
      if (text[i] === "]") {
        i++
        return
      }
      for (;;) {
        value()
        space()
        if (text[i] === ",") {
          i++
          continue
        }
        if (text[i] === "]") {
          i++
          return
        }
        fail(`${describe()} (expected "," or "]")`)
      }
    } else if (c === "\"") {
      string()
    } else if (c === "t") {
      literal("true")
    } else if (c === "f") {
      literal("false")
    } else if (c === "n") {
      literal("null")
    } else if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) {
      number()
    } else {
      fail(`${describe()} (expected a value)`)
    }
  }
  try {
    value()
    space()
    if (i < text.length) fail(`${describe()} after the value`)
  } catch (error) {
    if (error instanceof InvalidJson) return error
    throw error
  }
  // JSON.parse refused what this scanner accepts (a lone surrogate is fine for both): say so plainly.
  return new InvalidJson("not accepted by the JSON parser", 0, 1, 1)
}
