// Tokenizer for Rego source. The parser drives it one token at a time (template strings need a
// scanning mode that depends on parser state) and may save and restore its position.

export type Tok =
  | "illegal"
  | "eof"
  | "whitespace"
  | "comment"
  | "identifier"
  | "number"
  | "string"
  | "template-string-part"
  | "template-string-end"
  | "raw-template-string-part"
  | "raw-template-string-end"
  // keywords
  | "package"
  | "import"
  | "as"
  | "default"
  | "else"
  | "not"
  | "some"
  | "with"
  | "null"
  | "true"
  | "false"
  | "every"
  | "contains"
  | "if"
  | "in"
  // punctuation and operators (operators are named like the builtins they call)
  | "["
  | "]"
  | "{"
  | "}"
  | "("
  | ")"
  | ","
  | ":"
  | ";"
  | "."
  | "plus"
  | "minus"
  | "mul"
  | "div"
  | "rem"
  | "and"
  | "or"
  | "eq"
  | "equal"
  | "assign"
  | "neq"
  | "gt"
  | "lt"
  | "gte"
  | "lte"

/** Keywords that are keywords in OPA 0.x too (reported as "keyword" in messages). */
export const BASE_KEYWORDS: ReadonlySet<string> = new Set([
  "package",
  "import",
  "as",
  "default",
  "else",
  "not",
  "some",
  "with",
  "null",
  "true",
  "false"
])
/** Every keyword of Rego v1. */
export const KEYWORDS: ReadonlySet<string> = new Set([...BASE_KEYWORDS, "every", "contains", "if", "in"])

export interface Token {
  tok: Tok
  /** Source text, or the decoded text of a template string part. */
  lit: string
  offset: number
  end: number
  row: number
  col: number
}

export interface ScanError {
  message: string
  offset: number
  row: number
  col: number
}

export interface ScannerState {
  offset: number
  row: number
  col: number
}

const isLetter = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95
const isDecimal = (c: number): boolean => c >= 48 && c <= 57
const UNICODE_DIGIT = /\p{Nd}/u

export class Scanner {
  private offset = 0
  private row = 1
  private col = 1
  errors: ScanError[] = []

  constructor(readonly src: string) {
    if (src.charCodeAt(0) === 0xfeff) this.offset = 1
  }

  save(): ScannerState {
    return { offset: this.offset, row: this.row, col: this.col }
  }

  restore(s: ScannerState): void {
    this.offset = s.offset
    this.row = s.row
    this.col = s.col
  }

  private cur(): number {
    return this.offset < this.src.length ? this.src.charCodeAt(this.offset) : -1
  }

  private peekAt(n: number): number {
    const i = this.offset + n
    return i < this.src.length ? this.src.charCodeAt(i) : -1
  }

  /** Advances one code point, tracking rows and columns. */
  private next(): void {
    const c = this.src.charCodeAt(this.offset)
    if (c === 10) {
      this.row++
      this.col = 1
      this.offset++
      return
    }
    if (c === 0) this.error("illegal null character")
    else if (c === 0xfeff) this.error("illegal byte-order mark")
    this.offset += c >= 0xd800 && c <= 0xdbff && this.offset + 1 < this.src.length ? 2 : 1
    this.col++
  }

  private error(message: string): void {
    this.errors.push({ message, offset: this.offset, row: this.row, col: this.col })
  }

  private make(tok: Tok, start: ScannerState, lit: string): Token {
    return { tok, lit, offset: start.offset, end: this.offset, row: start.row, col: start.col }
  }

  /** Scans the next token. `template` continues a template string after its `}`. */
  scan(template?: "template" | "raw"): Token {
    const start = this.save()
    if (template !== undefined) return this.scanTemplate(start, template === "raw")
    const c = this.cur()
    if (c === 32 || c === 9 || c === 10 || c === 13) {
      // A run of whitespace is one token; its text is "\n" when the run holds a newline.
      let nl = false
      for (let d = c; d === 32 || d === 9 || d === 10 || d === 13; d = this.cur()) {
        if (d === 10) nl = true
        this.next()
      }
      return this.make("whitespace", start, nl ? "\n" : " ")
    }
    if (isLetter(c)) {
      while (this.offset < this.src.length) {
        const d = this.cur()
        if (isLetter(d) || isDecimal(d)) this.next()
        else if (d >= 128 && UNICODE_DIGIT.test(String.fromCodePoint(this.src.codePointAt(this.offset) as number))) this.next()
        else break
      }
      const lit = this.src.slice(start.offset, this.offset)
      return this.make(KEYWORDS.has(lit) ? (lit as Tok) : "identifier", start, lit)
    }
    if (isDecimal(c)) return this.make("number", start, this.scanNumber(start))
    if (c === -1) return this.make("eof", start, "")
    this.next()
    switch (c) {
      case 35: {
        // '#'
        while (this.offset < this.src.length && this.cur() !== 10) this.next()
        let end = this.offset
        while (end > start.offset + 1 && this.src.charCodeAt(end - 1) === 13) end--
        return this.make("comment", start, this.src.slice(start.offset, end))
      }
      case 34:
        return this.make("string", start, this.scanString(start))
      case 96: {
        // '`'
        for (;;) {
          const d = this.cur()
          if (d === -1) {
            this.error("non-terminated string")
            break
          }
          this.next()
          if (d === 96) break
        }
        return this.make("string", start, this.src.slice(start.offset, this.offset))
      }
      case 91:
        return this.make("[", start, "[")
      case 93:
        return this.make("]", start, "]")
      case 123:
        return this.make("{", start, "{")
      case 125:
        return this.make("}", start, "}")
      case 40:
        return this.make("(", start, "(")
      case 41:
        return this.make(")", start, ")")
      case 44:
        return this.make(",", start, ",")
      case 58:
        if (this.cur() === 61) {
          this.next()
          return this.make("assign", start, ":=")
        }
        return this.make(":", start, ":")
      case 43:
        return this.make("plus", start, "+")
      case 45:
        return this.make("minus", start, "-")
      case 42:
        return this.make("mul", start, "*")
      case 47:
        return this.make("div", start, "/")
      case 37:
        return this.make("rem", start, "%")
      case 38:
        return this.make("and", start, "&")
      case 124:
        return this.make("or", start, "|")
      case 61:
        if (this.cur() === 61) {
          this.next()
          return this.make("equal", start, "==")
        }
        return this.make("eq", start, "=")
      case 62:
        if (this.cur() === 61) {
          this.next()
          return this.make("gte", start, ">=")
        }
        return this.make("gt", start, ">")
      case 60:
        if (this.cur() === 61) {
          this.next()
          return this.make("lte", start, "<=")
        }
        return this.make("lt", start, "<")
      case 33:
        if (this.cur() === 61) {
          this.next()
          return this.make("neq", start, "!=")
        }
        this.error("illegal ! character")
        return this.make("illegal", start, "!")
      case 59:
        return this.make(";", start, ";")
      case 46:
        return this.make(".", start, ".")
      case 36: {
        // '$'
        const d = this.cur()
        if (d === 34 || d === 96) {
          this.next()
          return this.scanTemplate(start, d === 96)
        }
        this.error("illegal $ character")
        return this.make("illegal", start, "$")
      }
      default:
        return this.make("illegal", start, this.src.slice(start.offset, this.offset))
    }
  }

  private scanNumber(start: ScannerState): string {
    while (isDecimal(this.cur())) this.next()
    if (this.cur() === 46) {
      this.next()
      let found = false
      while (isDecimal(this.cur())) {
        this.next()
        found = true
      }
      if (!found) this.error("expected fraction")
    }
    if ((this.cur() | 32) === 101) {
      this.next()
      if (this.cur() === 43 || this.cur() === 45) this.next()
      let found = false
      while (isDecimal(this.cur())) {
        this.next()
        found = true
      }
      if (!found) this.error("expected exponent")
    }
    if (isLetter(this.cur())) {
      this.error("illegal number format")
      while (isLetter(this.cur()) || isDecimal(this.cur())) this.next()
    }
    return this.src.slice(start.offset, this.offset)
  }

  private scanString(start: ScannerState): string {
    for (;;) {
      const c = this.cur()
      if (c === 10 || c === -1) {
        this.error("non-terminated string")
        break
      }
      this.next()
      if (c === 34) break
      if (c === 92) {
        const e = this.cur()
        if (e === 92 || e === 34 || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116) this.next()
        else if (e === 117) {
          for (let i = 0; i < 5 && this.cur() !== -1 && this.cur() !== 10; i++) this.next()
        } else this.error("illegal escape sequence")
      }
    }
    return this.src.slice(start.offset, this.offset)
  }

  /**
   * Scans a template string part up to `{` (part) or the closing quote (end). The token's `lit`
   * is the decoded text, with `\{` escapes resolved.
   */
  private scanTemplate(start: ScannerState, raw: boolean): Token {
    let text = ""
    let segStart = this.offset
    for (;;) {
      const c = this.cur()
      if (c === -1 || (!raw && c === 10)) {
        this.error("non-terminated string")
        text += this.decode(this.src.slice(segStart, this.offset), raw)
        return this.make(raw ? "raw-template-string-end" : "template-string-end", start, text)
      }
      if (c === (raw ? 96 : 34)) {
        text += this.decode(this.src.slice(segStart, this.offset), raw)
        this.next()
        return this.make(raw ? "raw-template-string-end" : "template-string-end", start, text)
      }
      if (c === 123) {
        text += this.decode(this.src.slice(segStart, this.offset), raw)
        this.next()
        return this.make(raw ? "raw-template-string-part" : "template-string-part", start, text)
      }
      if (c === 92) {
        const e = this.peekAt(1)
        if (e === 123) {
          text += this.decode(this.src.slice(segStart, this.offset), raw)
          this.next()
          this.next()
          text += "{"
          segStart = this.offset
          continue
        }
        if (!raw) {
          this.next()
          const d = this.cur()
          if (d === 92 || d === 34 || d === 47 || d === 98 || d === 102 || d === 110 || d === 114 || d === 116) this.next()
          else if (d === 117) for (let i = 0; i < 5 && this.cur() !== -1 && this.cur() !== 10; i++) this.next()
          else this.error("illegal escape sequence")
          continue
        }
      }
      this.next()
    }
  }

  private decode(s: string, raw: boolean): string {
    if (raw || !s.includes("\\")) return s
    try {
      return JSON.parse('"' + s + '"') as string
    } catch {
      this.error("illegal template-string part")
      return s
    }
  }
}
