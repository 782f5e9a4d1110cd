/**
 * A fetcher's answer (`{items: [...], limit, offset, count}`) folded into a few figures straight
 * from its bytes, with the same result as decoding the whole JSON and folding the decoded value.
 *
 * Why: a month of 15-minute readings is about 1 MB of JSON. Decoded the usual way, its bytes
 * become one 1 MB string, which V8 allocates in the old generation's large-object space: two such
 * answers per overview were what drove the participant gateway's full (mark-compact) collections,
 * each marking the whole heap (docs/performance.md, participant gateway). Here the rows are
 * parsed a batch of about 32 KB at a time, checked by their compiled check and folded at once, so
 * every string and row is young garbage and the collections stay cheap scavenges.
 *
 * How the bytes are split, and why that cannot change the result:
 *
 * - the start of the document, up to the `[` of its `items` array, and the rest after the last
 *   batch are read by a small scanner (strings, escapes, depth, the top level's keys), which
 *   gives up on anything unusual: a second or escaped key at the top level, `items` that is not
 *   an array, an unfinished document;
 * - inside the array, a batch ends at a `},{` found by a native search (the twin writes compact
 *   JSON). A batch is parsed as `[<batch>]`: the parse succeeds only if the batch is a sequence of
 *   whole values, which means the `,` was the array's own separator (a `},{` inside a string or a
 *   nested value leaves the batch unfinished, and the parse fails);
 * - the start and the rest, joined, are parsed and checked as the answer (items: the last batch).
 *
 * Whatever is not accepted this way (invalid JSON, a row or field the compiled checks refuse, a
 * layout the scanner gives up on) is decoded the ordinary way from the whole text, so errors and
 * their messages are exactly those of decoding, and a valid answer of another layout still folds.
 */
import { Either, ParseResult, Schema } from "effect"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { compile } from "./CompiledCheck.js"

/** What a fold does with the rows, in the answer's order, and with the rest of the answer. */
export interface Fold<Item, Page, B> {
  readonly start: () => {
    readonly add: (item: Item) => void
    readonly finish: (page: Page, rows: number) => B
  }
}

const QUOTE = 34
const BACKSLASH = 92
const COMMA = 44
const COLON = 58
const OPEN_OBJECT = 123
const CLOSE_OBJECT = 125
const OPEN_ARRAY = 91
const CLOSE_ARRAY = 93
const isSpace = (b: number) => b === 32 || b === 10 || b === 13 || b === 9
const ITEMS = [105, 116, 101, 109, 115] // "items"

/** Bytes per parsed batch: well under V8's 128 KB large-object threshold, even as UTF-16. */
const batchBytes = 32 * 1024
const separator = Buffer.from("},{")
const decoder = new TextDecoder()

/**
 * The scanner of the document's start and rest (see the module). `scan` walks `bytes[from, to)`
 * and answers false when the layout is not one it can vouch for.
 */
class Scanner {
  depth = 0
  inString = false
  /** Where the key being read starts (a string at the top level, in key position), else -1. */
  keyStart = -1
  keyEscaped = false
  expectKey = false
  /** The `items` key was just read: its value comes next. */
  itemsValueNext = false
  itemsSeen = false
  /** Inside the `items` array (depth 2 is its elements). */
  inItems = false
  /** Index of the `[` of `items`, once found. */
  itemsOpen = -1

  scan(bytes: Uint8Array, from: number, to: number, stopAtItems: boolean): boolean {
    for (let i = from; i < to; i++) {
      const b = bytes[i]
      if (this.inString) {
        if (b === BACKSLASH) {
          if (this.keyStart >= 0) this.keyEscaped = true
          i++
        } else if (b === QUOTE) {
          this.inString = false
          if (this.keyStart >= 0) {
            // A key written with escapes could name `items` without reading as it: give up.
            if (this.keyEscaped) return false
            if (isItemsKey(bytes, this.keyStart, i)) {
              if (this.itemsSeen) return false
              this.itemsSeen = true
              this.itemsValueNext = true
            }
            this.keyStart = -1
          }
        }
        continue
      }
      if (isSpace(b)) continue
      if (this.depth === 1 && this.itemsValueNext && b !== COLON) {
        if (b !== OPEN_ARRAY) return false
        this.itemsValueNext = false
        this.depth = 2
        this.inItems = true
        this.itemsOpen = i
        if (stopAtItems) return true
        continue
      }
      switch (b) {
        case QUOTE:
          this.inString = true
          if (this.depth === 1 && this.expectKey) {
            this.keyStart = i + 1
            this.keyEscaped = false
            this.expectKey = false
          }
          break
        case OPEN_OBJECT:
        case OPEN_ARRAY:
          if (this.depth === 0 && b !== OPEN_OBJECT) return false
          this.depth++
          if (this.depth === 1) this.expectKey = true
          break
        case CLOSE_OBJECT:
        case CLOSE_ARRAY:
          if (this.depth === 2 && this.inItems) {
            if (b !== CLOSE_ARRAY) return false
            this.inItems = false
          }
          this.depth--
          if (this.depth < 0) return false
          break
        case COMMA:
          if (this.depth === 1) this.expectKey = true
          break
      }
    }
    return !stopAtItems && this.depth === 0 && !this.inString && this.itemsSeen && !this.inItems
  }
}

const isItemsKey = (bytes: Uint8Array, start: number, end: number): boolean => {
  if (end - start !== ITEMS.length) return false
  for (let k = 0; k < ITEMS.length; k++) if (bytes[start + k] !== ITEMS[k]) return false
  return true
}

type Check = (u: unknown) => boolean

/**
 * The fold's result from the answer's bytes, or `undefined` when this path cannot vouch for the
 * answer (then the caller decodes the whole text). Exported for its tests.
 */
export const foldBytes = <Item, Page, B>(
  bytes: Uint8Array,
  checkItem: Check,
  checkPage: Check,
  fold: Fold<Item, Page, B>
): B | undefined => {
  const scanner = new Scanner()
  if (!scanner.scan(bytes, 0, bytes.length, true)) return undefined
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const folding = fold.start()
  let rows = 0
  let batchStart = scanner.itemsOpen + 1
  for (;;) {
    const found = buffer.indexOf(separator, batchStart + batchBytes)
    if (found < 0) break
    const cut = found + 1 // the comma
    let batch: unknown
    // `[<batch>]` without copying the batch's text twice (a `[` + text + `]` concatenation is
    // flattened into a second string by `JSON.parse`): the byte before the batch (the array's
    // `[` or the previous cut's `,`) and the cut's `,` are `[` and `]` while the batch is decoded,
    // then restored, in the same synchronous step.
    const before = buffer[batchStart - 1]!
    buffer[batchStart - 1] = OPEN_ARRAY
    buffer[cut] = CLOSE_ARRAY
    let text: string
    try {
      text = buffer.toString("utf8", batchStart - 1, cut + 1)
    } finally {
      buffer[batchStart - 1] = before
      buffer[cut] = COMMA
    }
    try {
      batch = JSON.parse(text)
    } catch {
      return undefined
    }
    const items = batch as Array<unknown>
    for (let i = 0; i < items.length; i++) {
      if (!checkItem(items[i])) return undefined
      folding.add(items[i] as Item)
    }
    rows += items.length
    batchStart = cut + 1
  }
  // The rest: the scanner goes on from inside the array, at the start of an element.
  if (!scanner.scan(bytes, batchStart, bytes.length, false)) return undefined
  let page: unknown
  try {
    page = JSON.parse(decoder.decode(bytes.subarray(0, scanner.itemsOpen + 1)) + decoder.decode(bytes.subarray(batchStart)))
  } catch {
    return undefined
  }
  if (!checkPage(page)) return undefined
  const last = (page as { readonly items: ReadonlyArray<Item> }).items
  for (let i = 0; i < last.length; i++) folding.add(last[i])
  return folding.finish(page as Page, rows + last.length)
}

/**
 * The client-side success schema of a fetcher whose answer is folded by `fold`: the body arrives
 * as bytes (`Uint8Array` encoding), is folded as the module says, or decoded as JSON and `page`
 * (exactly as `HttpApiClient` decodes JSON, errors included) and folded. Decode only.
 */
export const foldedItems = <Page extends { readonly items: ReadonlyArray<Item> }, I, Item, ItemI, B>(
  page: Schema.Schema<Page, I>,
  item: Schema.Schema<Item, ItemI>,
  fold: Fold<Item, Page, B>,
  annotations: Schema.Annotations.Schema<B>
): Schema.Schema<B, Uint8Array> => {
  const checkItem = compile(item.ast)
  const checkPage = compile(page.ast)
  const decodePage = ParseResult.decodeUnknownEither(page)
  const foldDecoded = (value: Page): B => {
    const folding = fold.start()
    for (const row of value.items) folding.add(row)
    return folding.finish(value, value.items.length)
  }
  const schema = Schema.declare([], {
    decode: () => (input, options, ast) => {
      if (!(input instanceof Uint8Array)) return ParseResult.fail(new ParseResult.Type(ast, input, "Expected the answer's bytes"))
      if (checkItem !== undefined && checkPage !== undefined) {
        const folded = foldBytes(input, checkItem, checkPage, fold)
        if (folded !== undefined) return ParseResult.succeed(folded)
      }
      const text = decoder.decode(input)
      let json: unknown
      try {
        json = text === "" ? undefined : JSON.parse(text)
      } catch {
        return ParseResult.fail(new ParseResult.Type(ast, text, "Could not parse JSON"))
      }
      return Either.map(decodePage(json, options), foldDecoded)
    },
    encode: () => (input, _options, ast): Either.Either<Uint8Array, ParseResult.ParseIssue> =>
      ParseResult.fail(new ParseResult.Forbidden(ast, input, "decode only"))
  }, annotations)
  return HttpApiSchema.withEncoding(schema, { kind: "Uint8Array" })
}
