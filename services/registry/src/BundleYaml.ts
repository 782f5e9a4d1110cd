/**
 * Reading a bundle's YAML under limits, before anything recursive looks at it.
 *
 * - Size: the upload is refused above `REGISTRY_MAX_UPLOAD_BYTES` while it is read (`Upload`).
 * - Nesting depth and aliases: js-yaml 5 parses into a flat event stream and refuses a
 *   collection nested deeper than `maxDepth`, or more than `maxAliases` aliases, while parsing,
 *   before it composes any value (no recursion over the document runs first).
 * - Expansion: aliases are composed as shared references, so the parsed value is small even for
 *   a "billion laughs"; `expansion` then measures, without recursion and visiting each shared
 *   value once, how many values and how deep the document would be once every alias is expanded
 *   (which is what validation and storage would walk), and refuses more than `maxNodes` values,
 *   a depth over `maxDepth` reached through aliases, or an alias inside its own anchor (a cycle).
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
  | { readonly _tag: "Loaded"; readonly value: unknown }
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
    value = load(text, { schema: CORE_SCHEMA, maxDepth: limits.maxDepth, maxAliases: limits.maxAliases })
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
  const measured = expansion(value, limits)
  return measured === undefined ? { _tag: "Loaded", value } : measured
}

interface Frame {
  readonly node: object
  readonly children: ReadonlyArray<unknown>
  next: number
  size: number
  height: number
}

/**
 * Size and depth of the value with every alias expanded, computed bottom-up over the shared
 * values (each visited once, an explicit stack instead of recursion). `undefined` when within
 * the limits.
 */
export const expansion = (root: unknown, limits: Pick<Limits, "maxNodes" | "maxDepth">): LimitExceeded | undefined => {
  const measured = new Map<object, { readonly size: number; readonly height: number }>()
  const open = new Set<object>()
  const stack: Array<Frame> = []
  const children = (node: object): ReadonlyArray<unknown> => Array.isArray(node) ? node : Object.values(node)
  const tooMany = (): LimitExceeded => ({
    _tag: "Limit",
    limit: "nodes",
    detail: `The bundle expands to more than ${limits.maxNodes} values through its YAML aliases, the most this service accepts`
  })
  const tooDeep = (): LimitExceeded => ({
    _tag: "Limit",
    limit: "depth",
    detail: `Through its YAML aliases the bundle nests deeper than ${limits.maxDepth} levels, the most this service accepts`
  })
  const push = (node: object): LimitExceeded | undefined => {
    if (open.has(node)) {
      return { _tag: "Limit", limit: "cycle", detail: "The bundle contains a YAML alias inside its own anchor (a cycle)" }
    }
    open.add(node)
    stack.push({ node, children: children(node), next: 0, size: 1, height: 1 })
    return undefined
  }
  if (typeof root !== "object" || root === null) return undefined
  const first = push(root)
  if (first !== undefined) return first
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!
    if (frame.next < frame.children.length) {
      const child = frame.children[frame.next++]
      if (typeof child !== "object" || child === null) {
        frame.size += 1
        frame.height = Math.max(frame.height, 2)
      } else {
        const known = measured.get(child)
        if (known !== undefined) {
          frame.size += known.size
          frame.height = Math.max(frame.height, known.height + 1)
        } else {
          const failed = push(child)
          if (failed !== undefined) return failed
        }
      }
      if (frame.size > limits.maxNodes) return tooMany()
      continue
    }
    stack.pop()
    open.delete(frame.node)
    if (frame.height > limits.maxDepth + 1) return tooDeep()
    measured.set(frame.node, { size: frame.size, height: frame.height })
    const parent = stack[stack.length - 1]
    if (parent !== undefined) {
      parent.size += frame.size
      parent.height = Math.max(parent.height, frame.height + 1)
      if (parent.size > limits.maxNodes) return tooMany()
    }
  }
  return undefined
}

/** A value a bundle may not hold anywhere (PostgreSQL's `jsonb` and `text` refuse them). */
export interface ValueProblem {
  readonly path: JsonPath
  readonly message: string
}

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

const badString = (value: string): string | undefined => {
  if (value.includes("\u0000")) return "contains a NUL character (\\0), which cannot be stored"
  if (loneSurrogate.test(value)) return "contains an unpaired UTF-16 surrogate (\\uD800-\\uDFFF), which is not text"
  return undefined
}

/**
 * Values no part of a bundle may hold: numbers that are not finite (`.inf`, `.nan`), strings or
 * keys with NUL characters or unpaired surrogates, and the key `__proto__`. Each shared value is
 * visited once (the expansion was measured before), at most `max` problems are listed.
 */
export const valueProblems = (root: unknown, max = 200): Array<ValueProblem> => {
  const problems: Array<ValueProblem> = []
  const seen = new Set<object>()
  const stack: Array<{ readonly value: unknown; readonly path: JsonPath }> = [{ value: root, path: [] }]
  while (stack.length > 0 && problems.length < max) {
    const { path, value } = stack.pop()!
    if (typeof value === "number") {
      if (!Number.isFinite(value)) problems.push({ path, message: `${value} is not a finite number` })
    } else if (typeof value === "string") {
      const bad = badString(value)
      if (bad !== undefined) problems.push({ path, message: `the text ${bad}` })
    } else if (typeof value === "object" && value !== null && !seen.has(value)) {
      seen.add(value)
      if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: [...path, i] })
      } else {
        const keys = Object.keys(value)
        for (let i = keys.length - 1; i >= 0; i--) {
          const key = keys[i]!
          if (key === "__proto__") {
            problems.push({ path: [...path, key], message: "the key __proto__ is not allowed" })
            continue
          }
          const bad = badString(key)
          if (bad !== undefined) {
            problems.push({ path: [...path, key], message: `the key ${bad}` })
            continue
          }
          stack.push({ value: (value as Record<string, unknown>)[key], path: [...path, key] })
        }
      }
    }
  }
  return problems
}
