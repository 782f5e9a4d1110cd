/**
 * Reading a bundle's YAML under limits, before anything recursive looks at it.
 *
 * - Size: the upload is refused above `REGISTRY_MAX_UPLOAD_BYTES` while it is read (`Upload`).
 * - Nesting depth and aliases: js-yaml 5 parses into a flat event stream and refuses a
 *   collection nested deeper than `maxDepth`, or more than `maxAliases` aliases, while parsing,
 *   before it composes any value (no recursion over the document runs first).
 * - Expansion: aliases are composed as shared references, so the parsed value is small even for
 *   a "billion laughs"; `measure` then finds, without recursion and visiting each shared value
 *   once, how many values and how deep the document would be once every alias is expanded (which
 *   is what validation and storage would walk), and refuses more than `maxNodes` values, a depth
 *   over `maxDepth` reached through aliases, or an alias inside its own anchor (a cycle).
 *
 * - Memory: js-yaml keeps an event object per node of the whole document before it builds any
 *   value (820,000 events, about 110 MB, for a 10,000-member bundle). A bundle laid out as
 *   exports and the examples are (block style, no anchors, aliases or tags) is read in parts
 *   instead (`loadInParts`): the document without its `members` and `sites`, then those a few
 *   hundred kilobytes at a time; anything unusual, and any error, goes to the whole-document
 *   parse, so errors, limits and line numbers are exactly those of one parse.
 *
 * The core schema of YAML 1.2 is used: `2025-03-01` stays a string, `yes` is a string, there are
 * no merge keys and no `!!binary`; a mapping key given twice is a syntax error.
 */
import { CORE_SCHEMA, load, YAMLException } from "js-yaml"
import type { Limits } from "./Config.js"

export type JsonPath = ReadonlyArray<string | number>

/** The text is not a YAML document we can read: reported as a `yaml` problem. */
export interface SyntaxProblem {
  readonly _tag: "Syntax"
  readonly message: string
  readonly line?: number | undefined
  readonly column?: number | undefined
}

/** A parsing limit was reached: the request is refused (400) before validation. */
export interface LimitExceeded {
  readonly _tag: "Limit"
  readonly limit: "depth" | "aliases" | "nodes" | "cycle" | "encoding"
  readonly detail: string
}

export type LoadResult =
  | { readonly _tag: "Loaded"; readonly value: unknown; readonly problems: ReadonlyArray<ValueProblem> }
  | SyntaxProblem
  | LimitExceeded

const decoder = new TextDecoder("utf-8", { fatal: true })

/** The upload as text; a file that is not UTF-8 is refused. */
export const decodeText = (bytes: Uint8Array): string | LimitExceeded => {
  try {
    return decoder.decode(bytes)
  } catch {
    return { _tag: "Limit", limit: "encoding", detail: "The bundle is not UTF-8 text" }
  }
}

/** Parses the YAML of a bundle under the depth and alias limits, then measures its expansion. */
export const loadYaml = (text: string, limits: Limits): LoadResult => {
  if (text.trim() === "") return { _tag: "Syntax", message: "the file is empty: a bundle is a YAML mapping" }
  let value: unknown
  try {
    value = loadInParts(text, limits) ?? load(text, { schema: CORE_SCHEMA, maxDepth: limits.maxDepth, maxAliases: limits.maxAliases })
  } catch (error) {
    if (!(error instanceof YAMLException)) throw error
    const reason = error.reason ?? error.message
    if (reason.startsWith("nesting exceeded maxDepth")) {
      return {
        _tag: "Limit",
        limit: "depth",
        detail: `The bundle nests YAML collections deeper than ${limits.maxDepth} levels (line ${
          (error.mark?.line ?? 0) + 1
        }), the most this service accepts`
      }
    }
    if (reason.startsWith("aliases exceeded maxAliases")) {
      return {
        _tag: "Limit",
        limit: "aliases",
        detail: `The bundle uses more than ${limits.maxAliases} YAML aliases (line ${(error.mark?.line ?? 0) + 1}), the most this service accepts`
      }
    }
    return {
      _tag: "Syntax",
      message: `invalid YAML: ${reason}`,
      line: error.mark === undefined ? undefined : error.mark.line + 1,
      column: error.mark === undefined ? undefined : error.mark.column + 1
    }
  }
  // Without a `*` in the text there is no alias, so no value is shared and none needs remembering.
  const measured = measure(value, limits, { shared: text.includes("*") })
  return measured._tag === "Limit" ? measured.limit : { _tag: "Loaded", value, problems: measured.problems }
}

/** Sections read in parts, when they are block mappings at the top of the document. */
const partedSections = new Set(["members", "sites"])

/** Text per part of a parted section (whole entries: a part ends where an entry starts). */
export const partBytes = 256 * 1024

/** What stops the parted reading: anchors, aliases, tags, tabs, carriage returns, a BOM; directives and document markers. */
const unusual = /[&*!\t\r\uFEFF]|^(?:%|---|\.\.\.)/m

const isMapping = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

interface Parted {
  /** The document without the entries of its parted sections (their `name:` lines stay, as nulls). */
  readonly head: string
  /** Per parted section, `[start, end)` ranges of the text, each whole entries at one indentation. */
  readonly sections: ReadonlyArray<{ readonly name: string; readonly parts: ReadonlyArray<readonly [number, number]> }>
}

/**
 * Finds the parted sections of a document in block style: a line `members:` (or `sites:`) at
 * column 0, then lines indented by one same width (each a new entry), more (inside an entry),
 * blank or comments, until the next line at column 0. `undefined` when the layout is anything
 * else: the caller then parses the whole document.
 */
export const partition = (text: string): Parted | undefined => {
  if (unusual.test(text)) return undefined
  const heads: Array<string> = []
  const sections: Array<{ readonly name: string; readonly parts: Array<readonly [number, number]> }> = []
  let headFrom = 0
  let position = 0
  while (position < text.length) {
    const lineEnd = text.indexOf("\n", position)
    const next = lineEnd === -1 ? text.length : lineEnd + 1
    const match = /^([a-z]+):[ ]*$/.exec(text.slice(position, lineEnd === -1 ? text.length : lineEnd))
    if (match === null || !partedSections.has(match[1]!)) {
      position = next
      continue
    }
    // A parted section: its entries up to the next line at column 0.
    const parts: Array<readonly [number, number]> = []
    let indent = -1
    let partStart = next
    let cursor = next
    while (cursor < text.length) {
      const end = text.indexOf("\n", cursor)
      const after = end === -1 ? text.length : end + 1
      let spaces = 0
      while (text.charCodeAt(cursor + spaces) === 32) spaces++
      const first = text.charCodeAt(cursor + spaces)
      const blank = cursor + spaces >= text.length || first === 10 || first === 35 // end, newline, '#'
      if (!blank) {
        if (spaces === 0) break
        if (indent === -1) indent = spaces
        else if (spaces < indent) return undefined
        if (spaces === indent) {
          if (first === 45) return undefined // '-': a list, not a mapping
          if (cursor - partStart >= partBytes) {
            parts.push([partStart, cursor])
            partStart = cursor
          }
        }
      }
      cursor = after
    }
    if (cursor > partStart) parts.push([partStart, cursor])
    heads.push(text.slice(headFrom, next))
    headFrom = cursor
    position = cursor
    sections.push({ name: match[1]!, parts })
  }
  if (sections.length === 0) return undefined
  heads.push(text.slice(headFrom))
  return { head: heads.join(""), sections }
}

/**
 * The document read in parts (`partition`), or `undefined` when it cannot be (the layout, any
 * error, a key given twice across parts, a value of another shape): the whole-document parse
 * then decides, with its own errors. Each part is a mapping one level down, so it is parsed
 * with one level less of `maxDepth`; aliases are not in such a document at all.
 */
export const loadInParts = (text: string, limits: Pick<Limits, "maxDepth" | "maxAliases">): unknown => {
  if (limits.maxDepth < 3) return undefined
  const parted = partition(text)
  if (parted === undefined) return undefined
  try {
    const head = load(parted.head, { schema: CORE_SCHEMA, maxDepth: limits.maxDepth, maxAliases: limits.maxAliases })
    if (!isMapping(head)) return undefined
    for (const section of parted.sections) {
      if (!Object.hasOwn(head, section.name) || head[section.name] !== null) return undefined
      if (section.parts.length === 0) continue
      const entries: Record<string, unknown> = {}
      for (const [start, end] of section.parts) {
        const part = load(text.slice(start, end), { schema: CORE_SCHEMA, maxDepth: limits.maxDepth - 1, maxAliases: limits.maxAliases })
        if (!isMapping(part)) return undefined
        for (const key of Object.keys(part)) {
          if (key === "__proto__" || Object.hasOwn(entries, key)) return undefined
          entries[key] = part[key]
        }
      }
      head[section.name] = entries
    }
    return head
  } catch {
    return undefined
  }
}

interface Frame {
  readonly node: object
  /** Keys of an object, `undefined` for an array (its indexes). */
  readonly keys: ReadonlyArray<string> | undefined
  readonly length: number
  next: number
  size: number
  height: number
}

/** What `measure` found: a limit reached (nothing else counts then), or the values no bundle may hold. */
export type Measured =
  | { readonly _tag: "Limit"; readonly limit: LimitExceeded }
  | { readonly _tag: "Measured"; readonly problems: ReadonlyArray<ValueProblem> }

/**
 * One walk over the parsed value, each shared value (an alias target) visited once, with an
 * explicit stack instead of recursion:
 *
 * - the size and depth of the value with every alias expanded, computed bottom-up (a "billion
 *   laughs" is small as parsed, huge as expanded), refused above `maxNodes` values or `maxDepth`
 *   levels, and an alias inside its own anchor (a cycle);
 * - values no part of a bundle may hold (PostgreSQL's `jsonb` and `text` refuse them): numbers
 *   that are not finite (`.inf`, `.nan`), text or keys with NUL characters or unpaired
 *   surrogates, and the key `__proto__`; at most `maxProblems`, each with the path it was first
 *   reached by.
 */
export const measure = (
  root: unknown,
  limits: Pick<Limits, "maxNodes" | "maxDepth">,
  options: { readonly shared?: boolean; readonly maxProblems?: number } = {}
): Measured => {
  const shared = options.shared ?? true
  const maxProblems = options.maxProblems ?? 200
  const measured = new Map<object, { readonly size: number; readonly height: number }>()
  const open = new Set<object>()
  const stack: Array<Frame> = []
  const problems: Array<ValueProblem> = []
  const limit = (limit: LimitExceeded): Measured => ({ _tag: "Limit", limit })
  const tooMany = () =>
    limit({
      _tag: "Limit",
      limit: "nodes",
      detail: `The bundle expands to more than ${limits.maxNodes} values through its YAML aliases, the most this service accepts`
    })
  const tooDeep = () =>
    limit({
      _tag: "Limit",
      limit: "depth",
      detail: `Through its YAML aliases the bundle nests deeper than ${limits.maxDepth} levels, the most this service accepts`
    })
  /** The path to the child being visited (and `last` below it). */
  const path = (last?: string): JsonPath => {
    const out: Array<string | number> = stack.map(keyAt)
    if (last !== undefined) out.push(last)
    return out
  }
  const keyAt = (frame: Frame): string | number => (frame.keys === undefined ? frame.next - 1 : frame.keys[frame.next - 1]!)
  const report = (at: () => JsonPath, message: string) => {
    if (problems.length < maxProblems) problems.push({ path: at(), message })
  }
  const scalar = (value: unknown) => {
    if (typeof value === "number") {
      if (!Number.isFinite(value)) report(() => path(), `${value} is not a finite number`)
    } else if (typeof value === "string") {
      const bad = badString(value)
      if (bad !== undefined) report(() => path(), `the text ${bad}`)
    }
  }
  const push = (node: object): boolean => {
    if (shared) {
      if (open.has(node)) return false
      open.add(node)
    }
    const keys = Array.isArray(node) ? undefined : Object.keys(node)
    if (keys !== undefined) {
      for (const key of keys) {
        if (key === "__proto__") report(() => path(key), "the key __proto__ is not allowed")
        else {
          const bad = badString(key)
          if (bad !== undefined) report(() => path(key), `the key ${bad}`)
        }
      }
    }
    stack.push({ node, keys, length: keys === undefined ? (node as ReadonlyArray<unknown>).length : keys.length, next: 0, size: 1, height: 1 })
    return true
  }
  const cycle = () => limit({ _tag: "Limit", limit: "cycle", detail: "The bundle contains a YAML alias inside its own anchor (a cycle)" })
  if (typeof root !== "object" || root === null) {
    scalar(root)
    return { _tag: "Measured", problems }
  }
  push(root)
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!
    if (frame.next < frame.length) {
      const index = frame.next++
      const child = frame.keys === undefined
        ? (frame.node as ReadonlyArray<unknown>)[index]
        : frame.keys[index] === "__proto__" ? undefined : (frame.node as Record<string, unknown>)[frame.keys[index]!]
      if (typeof child !== "object" || child === null) {
        scalar(child)
        frame.size += 1
        if (frame.height < 2) frame.height = 2
      } else {
        const known = shared ? measured.get(child) : undefined
        if (known !== undefined) {
          frame.size += known.size
          if (frame.height < known.height + 1) frame.height = known.height + 1
        } else if (!push(child)) {
          return cycle()
        }
      }
      if (frame.size > limits.maxNodes) return tooMany()
      continue
    }
    stack.pop()
    if (frame.height > limits.maxDepth + 1) return tooDeep()
    if (shared) {
      open.delete(frame.node)
      measured.set(frame.node, { size: frame.size, height: frame.height })
    }
    const parent = stack[stack.length - 1]
    if (parent !== undefined) {
      parent.size += frame.size
      if (parent.height < frame.height + 1) parent.height = frame.height + 1
      if (parent.size > limits.maxNodes) return tooMany()
    }
  }
  return { _tag: "Measured", problems }
}

/** A value a bundle may not hold anywhere (PostgreSQL's `jsonb` and `text` refuse them). */
export interface ValueProblem {
  readonly path: JsonPath
  readonly message: string
}

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

// eslint-disable-next-line no-control-regex -- NUL is exactly what is looked for
const suspicious = /[\u0000\uD800-\uDFFF]/

const badString = (value: string): string | undefined => {
  if (!suspicious.test(value)) return undefined
  if (value.includes("\u0000")) return "contains a NUL character (\\0), which cannot be stored"
  if (loneSurrogate.test(value)) return "contains an unpaired UTF-16 surrogate (\\uD800-\\uDFFF), which is not text"
  return undefined
}
