/**
 * What an uploaded file is, decided from its bytes (never its name or declared type), and its
 * text as headings and paragraphs for the chunker:
 *
 * - PDF (`%PDF-`; `unpdf`, Mozilla's pdf.js for servers): the text layer page by page, title from
 *   the document information;
 * - DOCX (a ZIP holding `word/document.xml`, recognised by `file-type`; `mammoth`): converted to
 *   HTML, so Word headings stay headings;
 * - HTML (`htmlparser2`): headings, paragraphs, list items and cells; scripts, styles, templates
 *   and everything else that is not text are dropped;
 * - Markdown (`marked`'s lexer): headings, paragraphs, lists, quotes, tables and code; YAML front
 *   matter is skipped;
 * - plain text (valid UTF-8 without NUL bytes): paragraphs between blank lines.
 *
 * Any other recognised binary (images, archives, spreadsheets) is `unsupported`.
 */
import { fileTypeFromBuffer } from "file-type"
import { Parser as HtmlParser } from "htmlparser2"
import mammoth from "mammoth"
import { marked, type Token, type Tokens } from "marked"
import { extractText, getDocumentProxy, getMeta } from "unpdf"
import type { Block } from "./Chunker.js"
import { tidy } from "./Text.js"
import * as zlib from "node:zlib"

export type Kind = "pdf" | "docx" | "html" | "markdown" | "text"

export const contentTypes: Record<Kind, string> = {
  pdf: "application/pdf",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  html: "text/html; charset=utf-8",
  markdown: "text/markdown; charset=utf-8",
  text: "text/plain; charset=utf-8"
}

export type Sniffed =
  | { readonly _tag: "Supported"; readonly kind: Kind; readonly contentType: string }
  | { readonly _tag: "Unsupported"; readonly description: string }

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** The text of a UTF-8 file (BOM removed), or `undefined` for anything that is not text. */
export const asText = (bytes: Uint8Array): string | undefined => {
  if (bytes.includes(0)) return undefined
  try {
    return utf8.decode(bytes).replace(/^\uFEFF/, "")
  } catch {
    return undefined
  }
}

const htmlStart = /^\s*(?:<!--[\s\S]*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b/i
const htmlTags = /<(?:p|div|h[1-6]|ul|ol|li|table|section|article|span|a|br)\b[^>]*>/gi
const markdownSignals = [
  /^#{1,6}\s+\S/m, // ATX heading
  /^\S.*\n(?:=+|-+)\s*$/m, // setext heading
  /^```/m, // fenced code
  /^\s{0,3}(?:[-*+]|\d+\.)\s+\S/m, // list item
  /\[[^\]\n]+\]\([^)\s]+\)/, // link
  /(?:\*\*|__)[^*_\n]+(?:\*\*|__)/, // strong emphasis
  /^\s{0,3}>\s/m, // block quote
  /^\|.+\|\s*$/m // table row
]

const textKind = (text: string): Kind => {
  if (htmlStart.test(text)) return "html"
  const trimmed = text.trimStart()
  if (trimmed.startsWith("<") && (text.match(htmlTags)?.length ?? 0) >= 2) return "html"
  const signals = markdownSignals.filter((re) => re.test(text)).length
  return signals >= 1 ? "markdown" : "text"
}

export const sniff = async (bytes: Uint8Array): Promise<Sniffed> => {
  if (bytes.length === 0) return { _tag: "Unsupported", description: "an empty file" }
  const detected = await fileTypeFromBuffer(bytes)
  if (detected !== undefined) {
    if (detected.mime === "application/pdf") return { _tag: "Supported", kind: "pdf", contentType: contentTypes.pdf }
    if (detected.ext === "docx") return { _tag: "Supported", kind: "docx", contentType: contentTypes.docx }
    // XML-like text that file-type names (SVG is an image: unsupported).
    if (detected.mime !== "application/xml") return { _tag: "Unsupported", description: `${detected.mime} (.${detected.ext})` }
  }
  const text = asText(bytes)
  if (text === undefined) return { _tag: "Unsupported", description: "binary data of an unknown type" }
  const kind = textKind(text)
  return { _tag: "Supported", kind, contentType: contentTypes[kind] }
}

export interface Parsed {
  readonly title: string | undefined
  readonly blocks: ReadonlyArray<Block>
}

/** A file that has the signature of its type but cannot be read. */
export class ParseFailure extends Error {}

// ---------------------------------------------------------------------------------------------
// Plain text

const paragraphsOf = (text: string): Array<Block> =>
  tidy(text)
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\n/g, " ").trim())
    .filter((p) => p !== "")
    .map((p) => ({ kind: "paragraph" as const, text: p }))

export const parseText = (text: string): Parsed => ({ title: undefined, blocks: paragraphsOf(text) })

// ---------------------------------------------------------------------------------------------
// HTML

const skipped = new Set(["script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "head", "button", "select", "option"])
const blockTags = new Set([
  "p", "div", "section", "article", "header", "footer", "main", "aside", "nav", "li", "dt", "dd", "blockquote", "pre",
  "figure", "figcaption", "table", "tr", "ul", "ol", "dl", "form", "fieldset", "address", "hr", "br", "body", "html"
])
const cellTags = new Set(["td", "th"])

export const parseHtml = (html: string): Parsed => {
  const blocks: Array<Block> = []
  let title: string | undefined
  let text = ""
  let skipDepth = 0
  let inTitle = false
  let headingLevel: number | undefined
  let titleText = ""

  const flush = () => {
    const clean = text.replace(/\s+/g, " ").trim()
    text = ""
    if (clean === "") return
    if (headingLevel !== undefined) blocks.push({ kind: "heading", level: headingLevel, text: clean })
    else blocks.push({ kind: "paragraph", text: clean })
  }

  const parser = new HtmlParser({
    onopentag(name) {
      if (name === "title") inTitle = true
      if (skipped.has(name)) {
        skipDepth++
        return
      }
      if (skipDepth > 0) return
      const heading = /^h([1-6])$/.exec(name)
      if (heading !== null) {
        flush()
        headingLevel = Number(heading[1])
      } else if (blockTags.has(name)) flush()
      else if (cellTags.has(name) && text.trim() !== "") text += " | "
    },
    ontext(data) {
      if (inTitle) titleText += data
      if (skipDepth === 0) text += data
    },
    onclosetag(name) {
      if (name === "title") inTitle = false
      if (skipped.has(name)) {
        skipDepth = Math.max(0, skipDepth - 1)
        return
      }
      if (skipDepth > 0) return
      if (/^h[1-6]$/.test(name)) {
        flush()
        headingLevel = undefined
      } else if (blockTags.has(name)) flush()
    }
  }, { decodeEntities: true, lowerCaseTags: true })
  parser.write(html)
  parser.end()
  flush()
  const cleanTitle = titleText.replace(/\s+/g, " ").trim()
  if (cleanTitle !== "") title = cleanTitle
  else title = blocks.find((b) => b.kind === "heading" && b.level === 1)?.text
  return { title, blocks }
}

// ---------------------------------------------------------------------------------------------
// Markdown

const frontMatter = /^---\r?\n[\s\S]*?\r?\n(?:---|\.\.\.)\s*(?:\r?\n|$)/

export const stripFrontMatter = (text: string): string => text.replace(frontMatter, "")

/** The plain text of inline tokens (emphasis, links, code spans, HTML removed). */
const inlineText = (tokens: ReadonlyArray<Token> | undefined, fallback: string): string => {
  if (tokens === undefined) return fallback
  let out = ""
  for (const token of tokens) {
    switch (token.type) {
      case "html":
        out += parseHtml(token.raw).blocks.map((b) => b.text).join(" ")
        break
      case "br":
        out += " "
        break
      case "image":
        out += (token as Tokens.Image).text
        break
      default: {
        const children = (token as { tokens?: ReadonlyArray<Token> }).tokens
        out += children !== undefined ? inlineText(children, "") : "text" in token ? String(token.text) : ""
      }
    }
  }
  return out
}

const markdownBlocks = (tokens: ReadonlyArray<Token>, out: Array<Block>): void => {
  for (const token of tokens) {
    switch (token.type) {
      case "heading": {
        const t = token as Tokens.Heading
        out.push({ kind: "heading", level: t.depth, text: inlineText(t.tokens, t.text) })
        break
      }
      case "paragraph":
      case "text": {
        const t = token as Tokens.Paragraph
        out.push({ kind: "paragraph", text: inlineText(t.tokens, t.text) })
        break
      }
      case "list": {
        for (const item of (token as Tokens.List).items) {
          const inner: Array<Block> = []
          markdownBlocks(item.tokens, inner)
          const text = inner.map((b) => b.text).join(" ")
          if (text.trim() !== "") out.push({ kind: "paragraph", text: `- ${text}` })
        }
        break
      }
      case "blockquote":
        markdownBlocks((token as Tokens.Blockquote).tokens, out)
        break
      case "code":
        out.push({ kind: "paragraph", text: (token as Tokens.Code).text })
        break
      case "table": {
        const t = token as Tokens.Table
        const row = (cells: ReadonlyArray<Tokens.TableCell>) => cells.map((c) => inlineText(c.tokens, c.text)).join(" | ")
        const header = row(t.header)
        for (const r of t.rows) out.push({ kind: "paragraph", text: `${header}: ${row(r)}` })
        break
      }
      case "html":
        out.push(...parseHtml((token as Tokens.HTML).text).blocks)
        break
      default:
        break
    }
  }
}

export const parseMarkdown = (markdown: string): Parsed => {
  const blocks: Array<Block> = []
  markdownBlocks(marked.lexer(stripFrontMatter(markdown)), blocks)
  const first = blocks.find((b) => b.kind === "heading")
  return { title: first?.text, blocks }
}

// ---------------------------------------------------------------------------------------------
// PDF and DOCX

export const parsePdf = async (bytes: Uint8Array): Promise<Parsed> => {
  let pdf
  try {
    // pdf.js takes ownership of the buffer it is given: hand it a copy.
    pdf = await getDocumentProxy(new Uint8Array(bytes))
  } catch (cause) {
    throw new ParseFailure(`the PDF could not be read (${cause instanceof Error ? cause.message : String(cause)})`)
  }
  try {
    const { text } = await extractText(pdf, { mergePages: false })
    let title: string | undefined
    try {
      const meta = await getMeta(pdf)
      const info = meta.info as Record<string, unknown> | undefined
      if (typeof info?.Title === "string" && info.Title.trim() !== "") title = info.Title.trim()
    } catch {
      // No document information: the file name stands in.
    }
    return { title, blocks: text.flatMap((page) => paragraphsOf(page)) }
  } catch (cause) {
    throw new ParseFailure(`the PDF's text could not be extracted (${cause instanceof Error ? cause.message : String(cause)})`)
  } finally {
    await pdf.destroy()
  }
}

/**
 * The most a DOCX may expand to once unzipped (all its parts together). mammoth inflates every
 * part into memory and converts the whole document at once: a 150 KB ZIP bomb expanding to
 * 64 MB of XML held the service for 17 s and 600 MB of memory. Word documents of hundreds of
 * pages stay far below this.
 */
export const maxDocxExpandedBytes = 32 * 1024 * 1024

/**
 * How many bytes the entries of a ZIP hold once inflated, inflating at most `limit + 1` of them
 * (the sizes its headers declare are not trusted: a bomb can lie). `undefined` when the bytes are
 * not a ZIP this can walk (mammoth then reports what is wrong with it); `limit + 1` once past it.
 */
export const zipExpandedSize = (bytes: Uint8Array, limit: number): number | undefined => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let end = -1
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 65_535); i--) {
    if (view.getUint32(i, true) === 0x06054b50) {
      end = i
      break
    }
  }
  if (end < 0) return undefined
  const entries = view.getUint16(end + 10, true)
  let at = view.getUint32(end + 16, true)
  let total = 0
  for (let n = 0; n < entries; n++) {
    if (at + 46 > bytes.length || view.getUint32(at, true) !== 0x02014b50) return undefined
    const method = view.getUint16(at + 10, true)
    const compressed = view.getUint32(at + 20, true)
    const declared = view.getUint32(at + 24, true)
    const local = view.getUint32(at + 42, true)
    at += 46 + view.getUint16(at + 28, true) + view.getUint16(at + 30, true) + view.getUint16(at + 32, true)
    if (local + 30 > bytes.length || view.getUint32(local, true) !== 0x04034b50) return undefined
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true)
    if (compressed === 0xffffffff || declared === 0xffffffff) return limit + 1 // ZIP64: 4 GB parts
    if (method === 0) total += compressed
    else if (method === 8) {
      try {
        total += zlib.inflateRawSync(bytes.subarray(start, start + compressed), { maxOutputLength: limit - total + 1 }).length
      } catch (error) {
        if (error instanceof RangeError) return limit + 1
        return undefined
      }
    } else total += declared
    if (total > limit) return limit + 1
  }
  return total
}

export const parseDocx = async (bytes: Uint8Array): Promise<Parsed> => {
  const expanded = zipExpandedSize(bytes, maxDocxExpandedBytes)
  if (expanded !== undefined && expanded > maxDocxExpandedBytes) {
    throw new ParseFailure(
      `the DOCX expands to more than ${maxDocxExpandedBytes} bytes once unzipped, the most this assistant reads (a ZIP bomb, or images too large)`
    )
  }
  let html: string
  try {
    html = (await mammoth.convertToHtml({ buffer: Buffer.from(bytes) })).value
  } catch (cause) {
    throw new ParseFailure(`the DOCX could not be read (${cause instanceof Error ? cause.message : String(cause)})`)
  }
  const parsed = parseHtml(html)
  return { title: parsed.blocks.find((b) => b.kind === "heading")?.text, blocks: parsed.blocks }
}

/** The text of a sniffed file. Fails with `ParseFailure` for a file that cannot be read. */
export const parse = (kind: Kind, bytes: Uint8Array): Promise<Parsed> => {
  switch (kind) {
    case "pdf":
      return parsePdf(bytes)
    case "docx":
      return parseDocx(bytes)
    case "html":
      return Promise.resolve(parseHtml(asText(bytes) ?? ""))
    case "markdown":
      return Promise.resolve(parseMarkdown(asText(bytes) ?? ""))
    case "text":
      return Promise.resolve(parseText(asText(bytes) ?? ""))
  }
}
