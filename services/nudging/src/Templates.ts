/**
 * The templates of notification titles and bodies: text with `{{ expression }}` holes, where an
 * expression is a fact name followed by filters, `{{ delta_pct | abs | round(1) }}`.
 *
 * Deliberately small (no logic, no loops): a seed is data written by people who are not
 * developers, and everything a template can go wrong with is found when the seed is loaded
 * (`parse`, `check`), not when an event arrives. The original's Jinja templates raised at
 * delivery time (a `round` on a string fact was a 500).
 *
 * Filters:
 * - `round(n)`: the number with at most `n` decimals (default 0), in the template's language
 *   (`35,2` in Italian);
 * - `abs`: absolute value;
 * - `pct_change`: a ratio as a percent change, `(r - 1) * 100` (1.18 -> 18);
 * - `pct_drop`: a ratio as a percent drop, `(1 - r) * 100` (0.8 -> 20);
 * - `plural("one", "other")`: the first word when the number is 1, else the second;
 * - `map("key:text", ...)`: the text of the value's key, else the value itself (`day_label`
 *   `today` -> `oggi`);
 * - `default("text")`: the text when the fact is absent (optional facts).
 */

export type Filter =
  | { readonly name: "round"; readonly digits: number }
  | { readonly name: "abs" }
  | { readonly name: "pct_change" }
  | { readonly name: "pct_drop" }
  | { readonly name: "plural"; readonly one: string; readonly other: string }
  | { readonly name: "map"; readonly entries: ReadonlyMap<string, string> }
  | { readonly name: "default"; readonly text: string }

export type Part =
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "Hole"; readonly name: string; readonly filters: ReadonlyArray<Filter> }

export interface Template {
  readonly source: string
  readonly parts: ReadonlyArray<Part>
}

/** Filters that need a number. */
export const numericFilters: ReadonlySet<Filter["name"]> = new Set(["round", "abs", "pct_change", "pct_drop", "plural"])

type Arg = string | number

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/

/** `a, "b", 2` -> the arguments, or an error message. */
const parseArgs = (text: string): ReadonlyArray<Arg> | string => {
  const args: Array<Arg> = []
  let rest = text.trim()
  while (rest.length > 0) {
    const quoted = /^"((?:[^"\\]|\\.)*)"|^'((?:[^'\\]|\\.)*)'/.exec(rest)
    if (quoted !== null) {
      args.push((quoted[1] ?? quoted[2] ?? "").replace(/\\(.)/g, "$1"))
      rest = rest.slice(quoted[0].length)
    } else {
      const number = /^-?\d+(\.\d+)?/.exec(rest)
      if (number === null) return `cannot read the argument at "${rest.slice(0, 20)}" (quote text, write numbers plainly)`
      args.push(Number(number[0]))
      rest = rest.slice(number[0].length)
    }
    rest = rest.trim()
    if (rest.startsWith(",")) rest = rest.slice(1).trim()
    else if (rest.length > 0) return `expected "," between arguments at "${rest.slice(0, 20)}"`
  }
  return args
}

const parseFilter = (text: string): Filter | string => {
  const match = /^([A-Za-z_]+)\s*(?:\((.*)\))?$/s.exec(text.trim())
  if (match === null) return `"${text.trim()}" is not a filter (write name or name(arguments))`
  const name = match[1]!
  const args = match[2] === undefined ? [] : parseArgs(match[2])
  if (typeof args === "string") return `${name}: ${args}`
  const strings = args.every((a) => typeof a === "string")
  switch (name) {
    case "round": {
      const digits = args[0] ?? 0
      if (args.length > 1 || typeof digits !== "number" || !Number.isInteger(digits) || digits < 0 || digits > 6) {
        return "round takes one whole number of decimals from 0 to 6, e.g. round(1)"
      }
      return { name, digits }
    }
    case "abs":
    case "pct_change":
    case "pct_drop":
      return args.length === 0 ? { name } : `${name} takes no arguments`
    case "plural":
      return args.length === 2 && strings
        ? { name, one: args[0] as string, other: args[1] as string }
        : "plural takes two texts, the singular and the plural: plural(\"error\", \"errors\")"
    case "map": {
      if (args.length === 0 || !strings) return "map takes texts \"key:text\", e.g. map(\"today:oggi\", \"tomorrow:domani\")"
      const entries = new Map<string, string>()
      for (const arg of args as ReadonlyArray<string>) {
        const colon = arg.indexOf(":")
        if (colon <= 0) return `map entry "${arg}" must read "key:text"`
        entries.set(arg.slice(0, colon), arg.slice(colon + 1))
      }
      return { name, entries }
    }
    case "default":
      return args.length === 1 && strings ? { name, text: args[0] as string } : "default takes one text: default(\"-\")"
    default:
      return `unknown filter "${name}" (round, abs, pct_change, pct_drop, plural, map, default)`
  }
}

/** A template from its source, or the first problem found. */
export const parse = (source: string): Template | string => {
  const parts: Array<Part> = []
  let rest = source
  while (rest.length > 0) {
    const open = rest.indexOf("{{")
    if (open === -1) {
      if (rest.includes("}}")) return "\"}}\" without \"{{\""
      parts.push({ _tag: "Text", text: rest })
      break
    }
    if (open > 0) {
      const text = rest.slice(0, open)
      if (text.includes("}}")) return "\"}}\" without \"{{\""
      parts.push({ _tag: "Text", text })
    }
    const close = rest.indexOf("}}", open + 2)
    if (close === -1) return "\"{{\" is not closed by \"}}\""
    const expression = rest.slice(open + 2, close)
    const [head = "", ...filterTexts] = splitPipes(expression)
    const name = head.trim()
    if (!identifier.test(name)) return `"{{${expression}}}": "${name}" is not a fact name`
    const filters: Array<Filter> = []
    for (const text of filterTexts) {
      const filter = parseFilter(text)
      if (typeof filter === "string") return `"{{${expression}}}": ${filter}`
      filters.push(filter)
    }
    parts.push({ _tag: "Hole", name, filters })
    rest = rest.slice(close + 2)
  }
  return { source, parts }
}

/** Splits on `|` outside quotes. */
const splitPipes = (expression: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  let current = ""
  let quote: string | undefined
  for (let i = 0; i < expression.length; i++) {
    const c = expression[i]!
    if (quote !== undefined) {
      current += c
      if (c === "\\" && i + 1 < expression.length) current += expression[++i]
      else if (c === quote) quote = undefined
    } else if (c === "\"" || c === "'") {
      quote = c
      current += c
    } else if (c === "|") {
      out.push(current)
      current = ""
    } else {
      current += c
    }
  }
  out.push(current)
  return out
}

/** The fact names a template reads. */
export const names = (template: Template): ReadonlyArray<string> =>
  template.parts.flatMap((p) => (p._tag === "Hole" ? [p.name] : []))

/** A value the template could not render (a fact of the wrong type reached it). */
export class RenderError extends Error {
  constructor(readonly fact: string, message: string) {
    super(message)
  }
}

const formatNumber = (value: number, digits: number, language: string): string => {
  try {
    return new Intl.NumberFormat(language, { maximumFractionDigits: digits, useGrouping: false }).format(value)
  } catch {
    return new Intl.NumberFormat("en", { maximumFractionDigits: digits, useGrouping: false }).format(value)
  }
}

const asNumber = (value: unknown): number | undefined => {
  if (typeof value === "number" && Number.isFinite(value)) return value
  if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) return Number(value)
  return undefined
}

const display = (value: unknown, language: string): string => {
  if (value === undefined || value === null) return ""
  if (typeof value === "number") return formatNumber(value, 2, language)
  if (typeof value === "string") return value
  if (typeof value === "boolean") return String(value)
  if (Array.isArray(value)) return value.map((v) => display(v, language)).join(", ")
  return JSON.stringify(value)
}

/** Renders with the facts (`context`) in `language`; a value a filter cannot use is a `RenderError`. */
export const render = (template: Template, context: Readonly<Record<string, unknown>>, language: string): string => {
  let out = ""
  for (const part of template.parts) {
    if (part._tag === "Text") {
      out += part.text
      continue
    }
    let value: unknown = context[part.name]
    for (const filter of part.filters) {
      if (filter.name === "default") {
        if (value === undefined || value === null || value === "") value = filter.text
        continue
      }
      if (filter.name === "map") {
        const key = display(value, "en")
        value = filter.entries.get(key) ?? value
        continue
      }
      const n = asNumber(value)
      if (n === undefined) {
        throw new RenderError(part.name, `${part.name} is ${JSON.stringify(value)}, not a number (filter ${filter.name})`)
      }
      switch (filter.name) {
        case "round":
          value = formatNumber(n, filter.digits, language)
          break
        case "abs":
          value = Math.abs(n)
          break
        case "pct_change":
          value = (n - 1) * 100
          break
        case "pct_drop":
          value = (1 - n) * 100
          break
        case "plural":
          value = n === 1 ? filter.one : filter.other
          break
      }
    }
    out += display(value, language)
  }
  return out
}
