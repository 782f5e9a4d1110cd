/**
 * A parsed YAML file that still knows where every value came from: JSON paths found by the
 * schema and registry checks are mapped back to 1-based line and column numbers.
 */
import * as Yaml from "yaml"
import type { JsonPath } from "./Problem.js"

export interface Position {
  readonly line: number
  readonly column: number
}

export interface YamlError {
  readonly message: string
  readonly position: Position
}

export interface YamlSource {
  readonly file: string
  /** The document as plain data (`undefined` for an empty file). */
  readonly value: unknown
  /** Syntax errors; when there are any, `value` must not be trusted. */
  readonly errors: ReadonlyArray<YamlError>
  /**
   * Where the node at `path` starts. With `at: "key"` a mapping entry is located by its key
   * (for "unknown property" problems); a path that does not exist (a missing property) is
   * located at its nearest existing ancestor.
   */
  readonly positionOf: (path: JsonPath, at?: "key" | "value") => Position
}

export const parseYaml = (file: string, text: string): YamlSource => {
  const lineCounter = new Yaml.LineCounter()
  const document = Yaml.parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true })
  const toPosition = (offset: number): Position => {
    const { line, col } = lineCounter.linePos(offset)
    return { line, column: col }
  }
  const errors = document.errors.map((error) => ({
    // The library's messages carry no position when prettyErrors is off; we add ours.
    message: error.message,
    position: toPosition(error.pos[0])
  }))
  let value: unknown = undefined
  if (errors.length === 0) {
    try {
      value = document.toJS({ maxAliasCount: 1000 })
    } catch (error) {
      // A billion-laughs document (aliases that would expand past `maxAliasCount`) or one nested
      // past the stack: a problem of the file, reported with the others, not an exception.
      const reason = error instanceof RangeError
        ? "the document nests collections too deeply"
        : `the document's aliases would expand too far (${error instanceof Error ? error.message : String(error)})`
      errors.push({ message: reason, position: toPosition(0) })
    }
  }

  const positionOf = (path: JsonPath, at: "key" | "value" = "value"): Position => {
    let node: unknown = document.contents
    let offset = startOf(node) ?? 0
    for (let i = 0; i < path.length; i++) {
      const segment = path[i]!
      const last = i === path.length - 1
      node = Yaml.isAlias(node) ? node.resolve(document) : node
      if (Yaml.isMap(node)) {
        const pair = node.items.find((item) => keyOf(item.key) === String(segment))
        if (pair === undefined) break
        const keyStart = startOf(pair.key)
        const valueStart = startOf(pair.value)
        // An empty value (`did:`) has no useful position of its own: point at its key.
        offset = (last && at === "key") || valueStart === undefined || isEmptyScalar(pair.value)
          ? keyStart ?? offset
          : valueStart
        node = pair.value
      } else if (Yaml.isSeq(node) && typeof segment === "number") {
        const item = node.items[segment]
        const itemStart = startOf(item)
        if (itemStart === undefined) break
        offset = itemStart
        node = item
      } else {
        break
      }
    }
    return toPosition(offset)
  }

  return { file, value, errors, positionOf }
}

const keyOf = (key: unknown): string | undefined =>
  Yaml.isScalar(key) ? String(key.value) : typeof key === "string" ? key : undefined

const startOf = (node: unknown): number | undefined =>
  Yaml.isNode(node) && node.range ? node.range[0] : undefined

const isEmptyScalar = (node: unknown): boolean =>
  Yaml.isScalar(node) && node.value === null && node.range != null && node.range[0] === node.range[1]
