/**
 * Splits a parsed document into chunks of at most `maxTokens` tokens (`gpt-tokenizer`, the
 * o200k encoding of the current OpenAI models) along its structure:
 *
 * - a heading ends the chunk before it, and no chunk spans two sections; each chunk carries the
 *   path of headings above it ("Shared energy › Incentives"), which is embedded and searched
 *   with its text;
 * - paragraphs are kept whole while they fit; a longer paragraph is cut between sentences, and a
 *   sentence longer than a chunk between tokens;
 * - when a section needs several chunks, each one after the first starts with the last sentences
 *   of the previous one (up to `overlapTokens`), so a passage cut in two is still found whole.
 */
import { decode, encode } from "gpt-tokenizer/encoding/o200k_base"
import { sentences } from "./Text.js"

export type Block =
  | { readonly kind: "heading"; readonly level: number; readonly text: string }
  | { readonly kind: "paragraph"; readonly text: string }

export interface Chunk {
  readonly index: number
  /** Headings above the chunk, outermost first, joined with " › "; `null` before any heading. */
  readonly heading: string | null
  readonly text: string
  readonly tokenCount: number
}

export interface Options {
  readonly maxTokens: number
  readonly overlapTokens: number
}

export const countTokens = (text: string): number => encode(text).length

interface Unit {
  readonly text: string
  readonly tokens: number
  /** Starts a paragraph (joined with a blank line) or continues one (a space). */
  readonly paragraphStart: boolean
}

/**
 * A paragraph as units that each fit in a chunk: the whole paragraph when it fits, else runs of
 * sentences of at most `budget` tokens (room left for the overlap carried before them).
 */
const unitsOf = (paragraph: string, maxTokens: number, budget: number): Array<Unit> => {
  const tokens = countTokens(paragraph)
  if (tokens <= maxTokens) return [{ text: paragraph, tokens, paragraphStart: true }]
  const units: Array<Unit> = []
  let pending: Array<string> = []
  let pendingTokens = 0
  const flushPending = () => {
    if (pending.length === 0) return
    units.push({ text: pending.join(" "), tokens: pendingTokens, paragraphStart: units.length === 0 })
    pending = []
    pendingTokens = 0
  }
  for (const sentence of sentences(paragraph)) {
    const encoded = encode(sentence)
    if (encoded.length > budget) {
      flushPending()
      for (let i = 0; i < encoded.length; i += budget) {
        const slice = encoded.slice(i, i + budget)
        units.push({ text: decode(slice).trim(), tokens: slice.length, paragraphStart: units.length === 0 })
      }
      continue
    }
    // Sentences of one unit are joined by a space: one more token at most.
    if (pendingTokens + encoded.length + 1 > budget) flushPending()
    pending.push(sentence)
    pendingTokens += encoded.length + (pending.length > 1 ? 1 : 0)
  }
  flushPending()
  return units
}

/** The last sentences of `units`, at most `budget` tokens. */
const overlapOf = (units: ReadonlyArray<Unit>, budget: number): Array<Unit> => {
  if (budget <= 0) return []
  const tail: Array<string> = []
  let used = 0
  for (let u = units.length - 1; u >= 0; u--) {
    const parts = sentences(units[u].text)
    for (let s = parts.length - 1; s >= 0; s--) {
      const tokens = countTokens(parts[s]) + 1
      if (used + tokens > budget) return tail.length === 0 ? [] : [{ text: tail.join(" "), tokens: used, paragraphStart: true }]
      tail.unshift(parts[s])
      used += tokens
    }
  }
  return tail.length === 0 ? [] : [{ text: tail.join(" "), tokens: used, paragraphStart: true }]
}

const join = (units: ReadonlyArray<Unit>): string =>
  units.map((u, i) => (i === 0 ? u.text : `${u.paragraphStart ? "\n\n" : " "}${u.text}`)).join("")

export const chunk = (blocks: ReadonlyArray<Block>, options: Options): Array<Chunk> => {
  const chunks: Array<Chunk> = []
  const headings: Array<{ level: number; text: string }> = []
  let current: Array<Unit> = []
  let currentTokens = 0
  /** Whether `current` holds more than the overlap carried over from the previous chunk. */
  let fresh = false

  const headingPath = () => (headings.length === 0 ? null : headings.map((h) => h.text).join(" › "))

  const flush = (carryOver: boolean) => {
    if (fresh) {
      const text = join(current)
      chunks.push({ index: chunks.length, heading: headingPath(), text, tokenCount: countTokens(text) })
    }
    current = carryOver && fresh ? overlapOf(current, options.overlapTokens) : []
    currentTokens = current.reduce((n, u) => n + u.tokens, 0)
    fresh = false
  }

  for (const block of blocks) {
    const text = block.text.trim()
    if (text === "") continue
    if (block.kind === "heading") {
      flush(false)
      while (headings.length > 0 && headings[headings.length - 1].level >= block.level) headings.pop()
      headings.push({ level: block.level, text })
      continue
    }
    for (const unit of unitsOf(text, options.maxTokens, options.maxTokens - options.overlapTokens - 2)) {
      if (currentTokens + unit.tokens + 2 > options.maxTokens) {
        if (fresh) flush(true)
        // The carried-over overlap must leave room for the unit.
        if (currentTokens + unit.tokens + 2 > options.maxTokens) {
          current = []
          currentTokens = 0
        }
      }
      current.push(unit)
      currentTokens += unit.tokens + 2
      fresh = true
    }
  }
  flush(false)
  return chunks
}

/** What is embedded and searched for a chunk: its heading path, then its text. */
export const searchText = (title: string | null, heading: string | null, text: string): string =>
  [title, heading, text].filter((part): part is string => part !== null && part !== "").join("\n")
