/**
 * YAML text of a JSON value, in the block style of the bundle examples: one key per line,
 * lists as `- ` items, a string plain when YAML reads it back as that same string and in double
 * quotes (with escapes) otherwise. Written for the export: several times faster than a general
 * dumper on a 10,000-member bundle, and `test/YamlEmit.test.ts` checks that js-yaml (the loader)
 * reads every output back to the value it came from.
 *
 * Plain strings are also kept away from what YAML 1.1 tools read as something else (`yes`,
 * `off`, `~`), so other tools read the export as written.
 */

/** Words YAML 1.2 (core schema) or YAML 1.1 read as booleans or null. */
const words = new Set([
  "null", "Null", "NULL", "~",
  "true", "True", "TRUE", "false", "False", "FALSE",
  "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", "y", "Y", "n", "N"
])

/** What the core schema (and YAML 1.1) read as numbers: ints, floats, hex, octal, infinities, NaN. */
const numberLike = /^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)(?:[eE][-+]?[0-9]+)?$|^[-+]?0[xob][0-9a-fA-F_]+$|^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$|^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/

/** Characters a plain scalar may hold here: printable, no indicator that could end or start something. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what must not be plain
const plainSafe = /^[^\s\-?:,[\]{}#&*!|>'"%@`\\\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff][^\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff\\"]*$/

const needsQuotes = (s: string): boolean =>
  s === "" ||
  !plainSafe.test(s) ||
  s !== s.trim() ||
  s.includes(": ") ||
  s.endsWith(":") ||
  s.includes(" #") ||
  words.has(s) ||
  numberLike.test(s) ||
  // a document marker at the start of a line
  s.startsWith("---") ||
  s.startsWith("...")

const escapes: Record<string, string> = {
  "\"": "\\\"",
  "\\": "\\\\",
  "\n": "\\n",
  "\t": "\\t",
  "\r": "\\r",
  "\b": "\\b",
  "\f": "\\f",
  "\u0000": "\\0"
}

/** A double-quoted YAML scalar: escapes for quotes, backslashes and everything not printable. */
const quoted = (s: string): string =>
  `"${
    // eslint-disable-next-line no-control-regex -- control characters are what gets escaped
    s.replace(/["\\\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/g, (c) =>
      escapes[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
  }"`

/** Texts of short strings, which repeat a lot in a bundle (keys, enum values). */
const written = new Map<string, string>()

const stringText = (s: string): string => {
  if (s.length > 40) return needsQuotes(s) ? quoted(s) : s
  let text = written.get(s)
  if (text === undefined) {
    text = needsQuotes(s) ? quoted(s) : s
    if (written.size > 50_000) written.clear()
    written.set(s, text)
  }
  return text
}

export const scalarText = (value: unknown): string => {
  if (value === null || value === undefined) return "null"
  if (typeof value === "boolean") return value ? "true" : "false"
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`cannot write ${value} in a bundle`)
    return Object.is(value, -0) ? "0" : String(value)
  }
  return stringText(String(value))
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isEmpty = (value: unknown) => (Array.isArray(value) ? value.length === 0 : isObject(value) && Object.keys(value).length === 0)

const collection = (value: unknown) => (Array.isArray(value) || isObject(value)) && !isEmpty(value)

const inline = (value: unknown): string => (Array.isArray(value) ? "[]" : isObject(value) ? "{}" : scalarText(value))

const pads: Array<string> = []
const padOf = (indent: number) => (pads[indent] ??= " ".repeat(indent))

/** Appends the value's lines, indented by `indent` spaces, to `out`. */
const write = (out: Array<string>, value: unknown, indent: number): void => {
  const pad = padOf(indent)
  if (Array.isArray(value)) {
    for (const item of value) {
      if (!collection(item)) {
        out.push(`${pad}- ${inline(item)}\n`)
      } else if (Array.isArray(item)) {
        out.push(`${pad}-\n`)
        write(out, item, indent + 2)
      } else {
        // `- key: value` with the following keys aligned under the first.
        const lines: Array<string> = []
        write(lines, item, indent + 2)
        lines[0] = `${pad}- ${lines[0]!.slice(indent + 2)}`
        out.push(...lines)
      }
    }
    return
  }
  const record = value as Record<string, unknown>
  for (const key in record) {
    const inner = record[key]
    if (!collection(inner)) {
      out.push(`${pad}${scalarText(key)}: ${inline(inner)}\n`)
    } else {
      out.push(`${pad}${scalarText(key)}:\n`)
      // Lists under a key are indented like the examples (`key:\n  - item`).
      write(out, inner, indent + 2)
    }
  }
}

/** The YAML document of a value (a mapping or list at the top; a scalar on its own line). */
export const emit = (value: unknown): string => {
  if (!collection(value)) return `${inline(value)}\n`
  const out: Array<string> = []
  write(out, value, 0)
  return out.join("")
}

/** The lines of a mapping or list indented by `indent` spaces: a part of a larger document. */
export const emitAt = (value: object, indent: number): string => {
  const out: Array<string> = []
  write(out, value, indent)
  return out.join("")
}
