// Rego's textual form of values (OPA's Value.String()): used by print, template strings,
// sprintf's %v and error messages.

import { type Value, formatNumber, objectEntries, RegoSet } from "./value.js"

/** Quotes a string the way Go's strconv.Quote does for printable text. */
export const quoteString = (s: string): string => {
  let out = '"'
  for (const ch of s) {
    const c = ch.codePointAt(0) as number
    switch (ch) {
      case '"':
        out += '\\"'
        continue
      case "\\":
        out += "\\\\"
        continue
      case "\n":
        out += "\\n"
        continue
      case "\t":
        out += "\\t"
        continue
      case "\r":
        out += "\\r"
        continue
      case "\b":
        out += "\\b"
        continue
      case "\f":
        out += "\\f"
        continue
      case "\v":
        out += "\\v"
        continue
      case "\x07":
        out += "\\a"
        continue
    }
    if (c < 0x20 || c === 0x7f) out += "\\x" + c.toString(16).padStart(2, "0")
    else if ((c >= 0x80 && c < 0xa0) || c === 0xad || c === 0xfeff || (c >= 0xd800 && c <= 0xdfff))
      out += c > 0xffff ? "\\U" + c.toString(16).padStart(8, "0") : "\\u" + c.toString(16).padStart(4, "0")
    else out += ch
  }
  return out + '"'
}

/** The Rego text of a value: strings quoted, sets as `{...}` or `set()`. */
export const formatValue = (v: Value): string => {
  switch (typeof v) {
    case "string":
      return quoteString(v)
    case "number":
    case "bigint":
      return formatNumber(v)
    case "boolean":
      return v ? "true" : "false"
    default:
      if (v === null) return "null"
      if (Array.isArray(v)) return "[" + v.map(formatValue).join(", ") + "]"
      if (v instanceof RegoSet) return v.size === 0 ? "set()" : "{" + v.sorted().map(formatValue).join(", ") + "}"
      {
        const parts: string[] = []
        for (const [k, x] of objectEntries(v)) parts.push(formatValue(k) + ": " + formatValue(x))
        return "{" + parts.join(", ") + "}"
      }
  }
}

/** Like formatValue, but a top-level string is written as is (print, template strings). */
export const formatPlain = (v: Value): string => (typeof v === "string" ? v : formatValue(v))
