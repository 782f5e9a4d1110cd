// A GraphQL lexer and parser that behaves like gqlparser v2.5 (the parser OPA vendors).
//
// graphql-js parses the same language, but OPA's builtins expose gqlparser's results: its AST
// shape (see graphql-ast.ts), its leniencies (`extend type X implements Y` without fields,
// fragment variables) and its error messages and positions, e.g. "expected at least one
// definition, found }" or "Unexpected <Invalid>", which policies and OPA's conformance suite
// match on. So this parser follows gqlparser's grammar functions, its peek/next error
// discipline and its lexer's position arithmetic (columns count code points; a string token's
// column is that of its first character after the opening quote).

import {
  type Argument,
  type ArgumentDefinition,
  type ChildValue,
  type Definition,
  type Directive,
  type DirectiveDefinition,
  type EnumValueDefinition,
  type Field,
  type FieldDefinition,
  type FragmentDefinition,
  type GqlValue,
  type InlineFragment,
  type OperationDefinition,
  type OperationTypeDefinition,
  type Position,
  type QueryDocument,
  type SchemaDefinition,
  type SchemaDocument,
  type Selection,
  type Type,
  type VariableDefinition,
  ValueKind
} from "./graphql-ast.js"
import { quoteString } from "../format.js"

/** A gqlparser error: a message and, usually, where it happened. */
export class GqlError {
  constructor(
    readonly message: string,
    readonly position: Position | undefined
  ) {}

  /** gqlerror.Error.Error() as OPA builds it: `file:line:column: message` ("input" for unnamed sources). */
  toString(): string {
    const where = this.position === undefined ? "" : `:${this.position.line}:${this.position.column}`
    return `${this.position?.file ?? "input"}${where}: ${this.message}`
  }
}

// ---------------------------------------------------------------------------------------------
// Lexer

const enum Tok {
  Invalid,
  EOF,
  Bang,
  Dollar,
  Amp,
  ParenL,
  ParenR,
  Spread,
  Colon,
  Equals,
  At,
  BracketL,
  BracketR,
  BraceL,
  Pipe,
  BraceR,
  Name,
  Int,
  Float,
  String,
  BlockString
}

const TOKEN_NAMES = ["<Invalid>", "<EOF>", "!", "$", "&", "(", ")", "...", ":", "=", "@", "[", "]", "{", "|", "}", "Name", "Int", "Float", "String", "BlockString"]

interface Token {
  readonly kind: Tok
  readonly value: string
  readonly pos: Position
}

const tokenString = (t: Token): string => (t.value !== "" ? `${TOKEN_NAMES[t.kind]} ${quoteString(t.value)}` : TOKEN_NAMES[t.kind])

/** The character Go prints for the first byte of `ch` in UTF-8 (`string(byte)` in gqlparser). */
const firstByteChar = (ch: string): string => {
  const c = ch.codePointAt(0) as number
  if (c < 0x80) return ch
  if (c < 0x800) return String.fromCharCode(0xc0 | (c >> 6))
  if (c < 0x10000) return String.fromCharCode(0xe0 | (c >> 12))
  return String.fromCharCode(0xf0 | (c >> 18))
}

const isNameStart = (c: number): boolean => c === 0x5f || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39

/**
 * gqlparser's blockStringValue: dedent by the common indentation (the first line counts too,
 * unlike the spec's algorithm), then drop leading and trailing blank lines.
 */
const blockStringValue = (raw: string): string => {
  const lines = raw.split("\n")
  const leading = (line: string): number => {
    const m = /^[ \t]*/.exec(line) as RegExpExecArray
    return m[0].length === line.length ? Number.POSITIVE_INFINITY : m[0].length
  }
  let common = Number.POSITIVE_INFINITY
  for (const line of lines) {
    const indent = leading(line)
    if (indent < line.length && indent < common) {
      common = indent
      if (common === 0) break
    }
  }
  if (common !== Number.POSITIVE_INFINITY) {
    for (let i = 1; i < lines.length; i++) lines[i] = lines[i].length < common ? "" : lines[i].slice(common)
  }
  let start = 0
  let end = lines.length
  while (start < end && leading(lines[start]) === Number.POSITIVE_INFINITY) start++
  while (start < end && leading(lines[end - 1]) === Number.POSITIVE_INFINITY) end--
  return lines.slice(start, end).join("\n")
}

class Lexer {
  /** UTF-16 offsets of the token being read (start) and of the read head (end). */
  private start = 0
  private end = 0
  /** The same offsets in code points, which is what positions count. */
  private startRunes = 0
  private endRunes = 0
  private line = 1
  private lineStartRunes = 0

  constructor(
    private readonly input: string,
    private readonly file: string
  ) {}

  private code(i: number): number {
    return this.input.charCodeAt(i)
  }

  private position(column: number): Position {
    return this.file === "" ? { line: this.line, column } : { line: this.line, column, file: this.file }
  }

  private token(kind: Tok, value: string): { token: Token; error?: GqlError } {
    return { token: { kind, value, pos: this.position(this.startRunes - this.lineStartRunes + 1) } }
  }

  private fail(message: string): { token: Token; error: GqlError } {
    const pos = this.position(this.endRunes - this.lineStartRunes + 1)
    return { token: { kind: Tok.Invalid, value: "", pos }, error: new GqlError(message, pos) }
  }

  /** Advances over one code point. */
  private advance(): void {
    const c = this.code(this.end)
    this.end += c >= 0xd800 && c <= 0xdbff && this.end + 1 < this.input.length ? 2 : 1
    this.endRunes++
  }

  read(): { token: Token; error?: GqlError } {
    for (;;) {
      this.skipWhitespace()
      this.start = this.end
      this.startRunes = this.endRunes
      if (this.end >= this.input.length) return this.token(Tok.EOF, "")
      const c = this.code(this.start)
      this.end++
      this.endRunes++
      switch (c) {
        case 0x21:
          return this.token(Tok.Bang, "")
        case 0x24:
          return this.token(Tok.Dollar, "")
        case 0x26:
          return this.token(Tok.Amp, "")
        case 0x28:
          return this.token(Tok.ParenL, "")
        case 0x29:
          return this.token(Tok.ParenR, "")
        case 0x2e:
          if (this.input.startsWith("...", this.start)) {
            this.end += 2
            this.endRunes += 2
            return this.token(Tok.Spread, "")
          }
          break
        case 0x3a:
          return this.token(Tok.Colon, "")
        case 0x3d:
          return this.token(Tok.Equals, "")
        case 0x40:
          return this.token(Tok.At, "")
        case 0x5b:
          return this.token(Tok.BracketL, "")
        case 0x5d:
          return this.token(Tok.BracketR, "")
        case 0x7b:
          return this.token(Tok.BraceL, "")
        case 0x7d:
          return this.token(Tok.BraceR, "")
        case 0x7c:
          return this.token(Tok.Pipe, "")
        case 0x23:
          this.skipComment()
          continue
        case 0x22:
          return this.input.startsWith('"""', this.start) ? this.readBlockString() : this.readString()
        default:
          if (isNameStart(c)) return this.readName()
          if (c === 0x2d || isDigit(c)) return this.readNumber()
      }
      this.end--
      this.endRunes--
      if (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return this.fail(`Cannot contain the invalid character "\\u${String(c).padStart(4, "0")}"`)
      if (c === 0x27) return this.fail(`Unexpected single quote character ('), did you mean to use a double quote (")?`)
      return this.fail(`Cannot parse the unexpected character "${firstByteChar(String.fromCodePoint(this.input.codePointAt(this.start) as number))}".`)
    }
  }

  private skipWhitespace(): void {
    while (this.end < this.input.length) {
      const c = this.code(this.end)
      if (c === 0x09 || c === 0x20 || c === 0x2c) {
        this.end++
        this.endRunes++
      } else if (c === 0x0a || c === 0x0d) {
        this.end++
        this.endRunes++
        this.line++
        this.lineStartRunes = this.endRunes
        if (c === 0x0d && this.code(this.end) === 0x0a) {
          this.end++
          this.endRunes++
        }
      } else if (c === 0xfeff) {
        // A byte order mark.
        this.end++
        this.endRunes++
      } else return
    }
  }

  private skipComment(): void {
    while (this.end < this.input.length) {
      const c = this.code(this.end)
      if (c > 0x1f || c === 0x09) this.advance()
      else break
    }
  }

  private describeNext(): string {
    return this.end < this.input.length ? `"${String.fromCodePoint(this.input.codePointAt(this.end) as number)}"` : "<EOF>"
  }

  private acceptDigits(): number {
    let n = 0
    while (this.end < this.input.length && isDigit(this.code(this.end))) {
      this.end++
      this.endRunes++
      n++
    }
    return n
  }

  private accept(...chars: number[]): boolean {
    if (this.end < this.input.length && chars.includes(this.code(this.end))) {
      this.end++
      this.endRunes++
      return true
    }
    return false
  }

  private readNumber(): { token: Token; error?: GqlError } {
    let float = false
    this.end--
    this.endRunes--
    this.accept(0x2d)
    if (this.accept(0x30)) {
      const n = this.acceptDigits()
      if (n !== 0) {
        this.end -= n
        this.endRunes -= n
        return this.fail(`Invalid number, unexpected digit after 0: ${this.describeNext()}.`)
      }
    } else if (this.acceptDigits() === 0) return this.fail(`Invalid number, expected digit but got: ${this.describeNext()}.`)
    if (this.accept(0x2e)) {
      float = true
      if (this.acceptDigits() === 0) return this.fail(`Invalid number, expected digit but got: ${this.describeNext()}.`)
    }
    if (this.accept(0x65, 0x45)) {
      float = true
      this.accept(0x2d, 0x2b)
      if (this.acceptDigits() === 0) return this.fail(`Invalid number, expected digit but got: ${this.describeNext()}.`)
    }
    return this.token(float ? Tok.Float : Tok.Int, this.input.slice(this.start, this.end))
  }

  private readName(): { token: Token; error?: GqlError } {
    while (this.end < this.input.length) {
      const c = this.code(this.end)
      if (isNameStart(c) || isDigit(c)) {
        this.end++
        this.endRunes++
      } else break
    }
    return this.token(Tok.Name, this.input.slice(this.start, this.end))
  }

  private readString(): { token: Token; error?: GqlError } {
    const n = this.input.length
    let buf: string | undefined
    // Skip the opening quote: the token's column is that of the first character inside.
    this.start++
    this.startRunes++
    while (this.end < n) {
      const c = this.code(this.end)
      if (c === 0x0a || c === 0x0d) break
      if (c < 0x20 && c !== 0x09) return this.fail(`Invalid character within String: "\\u${String(c).padStart(4, "0")}".`)
      if (c === 0x22) {
        const t = this.token(Tok.String, buf ?? this.input.slice(this.start, this.end))
        this.end++
        this.endRunes++
        return t
      }
      if (c !== 0x5c) {
        const from = this.end
        this.advance()
        if (buf !== undefined) buf += this.input.slice(from, this.end)
        continue
      }
      // An escape sequence.
      if (this.end + 1 >= n) {
        this.end++
        this.endRunes++
        return this.fail("Invalid character escape sequence.")
      }
      if (buf === undefined) buf = this.input.slice(this.start, this.end)
      const e = this.input[this.end + 1]
      if (e === "u") {
        if (this.end + 6 >= n) {
          this.end++
          this.endRunes++
          return this.fail(`Invalid character escape sequence: \\${this.input.slice(this.end)}.`)
        }
        const hex = this.input.slice(this.end + 2, this.end + 6)
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
          this.end++
          this.endRunes++
          return this.fail(`Invalid character escape sequence: \\${this.input.slice(this.end, this.end + 5)}.`)
        }
        buf += String.fromCharCode(parseInt(hex, 16))
        this.end += 6
        this.endRunes += 6
        continue
      }
      const simple: Record<string, string> = { '"': '"', "/": "/", "\\": "\\", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" }
      const r = simple[e]
      if (r === undefined) {
        this.end++
        this.endRunes++
        return this.fail(`Invalid character escape sequence: \\${e}.`)
      }
      buf += r
      this.end += 2
      this.endRunes += 2
    }
    return this.fail("Unterminated string.")
  }

  private readBlockString(): { token: Token; error?: GqlError } {
    const n = this.input.length
    let buf = ""
    this.start += 3
    this.startRunes += 3
    this.end += 2
    this.endRunes += 2
    while (this.end < n) {
      const c = this.code(this.end)
      if (c === 0x22 && this.input.startsWith('"""', this.end)) {
        const t = this.token(Tok.BlockString, blockStringValue(buf))
        this.end += 3
        this.endRunes += 3
        return t
      }
      if (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return this.fail(`Invalid character within String: "\\u${String(c).padStart(4, "0")}".`)
      if (c === 0x5c && this.input.startsWith('\\"""', this.end)) {
        buf += '"""'
        this.end += 4
        this.endRunes += 4
      } else if (c === 0x0d) {
        if (this.code(this.end + 1) === 0x0a) {
          this.end++
          this.endRunes++
        }
        buf += "\n"
        this.end++
        this.endRunes++
        this.line++
        this.lineStartRunes = this.endRunes
      } else {
        const from = this.end
        this.advance()
        buf += this.input.slice(from, this.end)
        if (c === 0x0a) {
          this.line++
          this.lineStartRunes = this.endRunes
        }
      }
    }
    return this.fail("Unterminated string.")
  }
}

// ---------------------------------------------------------------------------------------------
// Parser

const DIRECTIVE_LOCATIONS = new Set([
  "QUERY",
  "MUTATION",
  "SUBSCRIPTION",
  "FIELD",
  "FRAGMENT_DEFINITION",
  "FRAGMENT_SPREAD",
  "INLINE_FRAGMENT",
  "VARIABLE_DEFINITION",
  "SCHEMA",
  "SCALAR",
  "OBJECT",
  "FIELD_DEFINITION",
  "ARGUMENT_DEFINITION",
  "INTERFACE",
  "UNION",
  "ENUM",
  "ENUM_VALUE",
  "INPUT_OBJECT",
  "INPUT_FIELD_DEFINITION"
])

const newDefinition = (kind: string, description: string, pos: Position | undefined): Definition => ({
  Kind: kind,
  Description: description,
  Name: "",
  Directives: [],
  Interfaces: [],
  Fields: [],
  Types: [],
  EnumValues: [],
  Position: pos,
  BuiltIn: false
})

/**
 * The parser. Like gqlparser's, it records the first error and keeps going in a degraded mode
 * (every read returns the previous token) until the grammar function returns.
 */
class Parser {
  private readonly lexer: Lexer
  err: GqlError | undefined
  private peeked = false
  private peekToken: Token = { kind: Tok.Invalid, value: "", pos: { line: 0, column: 0 } }
  private peekError: GqlError | undefined
  private prev: Token = { kind: Tok.Invalid, value: "", pos: { line: 0, column: 0 } }

  constructor(input: string, file = "") {
    this.lexer = new Lexer(input, file)
  }

  private peek(): Token {
    if (this.err !== undefined) return this.prev
    if (!this.peeked) {
      const r = this.lexer.read()
      this.peekToken = r.token
      this.peekError = r.error
      this.peeked = true
    }
    return this.peekToken
  }

  private peekPos(): Position | undefined {
    return this.err !== undefined ? undefined : this.peek().pos
  }

  private error(tok: Token, message: string): void {
    if (this.err === undefined) this.err = new GqlError(message, tok.pos)
  }

  private next(): Token {
    if (this.err !== undefined) return this.prev
    if (this.peeked) {
      this.peeked = false
      this.prev = this.peekToken
      this.err = this.peekError
    } else {
      const r = this.lexer.read()
      this.prev = r.token
      this.err = r.error
    }
    return this.prev
  }

  private expectKeyword(value: string): Token {
    const tok = this.peek()
    if (tok.kind === Tok.Name && tok.value === value) return this.next()
    this.error(tok, `Expected ${quoteString(value)}, found ${tokenString(tok)}`)
    return tok
  }

  private expect(kind: Tok): Token {
    const tok = this.peek()
    if (tok.kind === kind) return this.next()
    this.error(tok, `Expected ${TOKEN_NAMES[kind]}, found ${TOKEN_NAMES[tok.kind]}`)
    return tok
  }

  /** Consumes the next token when it is of `kind` (gqlparser's skip); false, consuming nothing, otherwise or after an error. */
  private accept(kind: Tok): boolean {
    if (this.err !== undefined) return false
    if (this.peek().kind !== kind) return false
    this.next()
    return true
  }

  private unexpectedError(): void {
    this.unexpectedToken(this.peek())
  }

  private unexpectedToken(tok: Token): void {
    this.error(tok, `Unexpected ${tokenString(tok)}`)
  }

  /** Zero or more items between start and end (when start is present). */
  private many(start: Tok, end: Tok, item: () => void): void {
    if (!this.accept(start)) return
    while (this.peek().kind !== end && this.err === undefined) item()
    this.next()
  }

  /** One or more items between start and end (when start is present). */
  private some(start: Tok, end: Tok, item: () => void): void {
    if (!this.accept(start)) return
    let called = false
    while (this.peek().kind !== end && this.err === undefined) {
      called = true
      item()
    }
    if (!called) {
      this.error(this.peek(), `expected at least one definition, found ${TOKEN_NAMES[this.peek().kind]}`)
      return
    }
    this.next()
  }

  private parseName(): string {
    return this.expect(Tok.Name).value
  }

  // -------------------------------------------------------------------------------------------
  // Queries

  parseQueryDocument(): QueryDocument {
    const doc: QueryDocument = { Operations: [], Fragments: [] }
    while (this.peek().kind !== Tok.EOF) {
      if (this.err !== undefined) return doc
      doc.Position = this.peekPos()
      const tok = this.peek()
      if (tok.kind === Tok.Name) {
        switch (tok.value) {
          case "query":
          case "mutation":
          case "subscription":
            doc.Operations.push(this.parseOperationDefinition())
            break
          case "fragment":
            doc.Fragments.push(this.parseFragmentDefinition())
            break
          default:
            this.unexpectedError()
        }
      } else if (tok.kind === Tok.BraceL) doc.Operations.push(this.parseOperationDefinition())
      else this.unexpectedError()
    }
    return doc
  }

  private parseOperationDefinition(): OperationDefinition {
    if (this.peek().kind === Tok.BraceL) {
      const Position = this.peekPos()
      return { Operation: "query", Name: "", VariableDefinitions: [], Directives: [], SelectionSet: this.parseRequiredSelectionSet(), Position }
    }
    const Position = this.peekPos()
    const Operation = this.parseOperationType()
    const Name = this.peek().kind === Tok.Name ? this.next().value : ""
    const VariableDefinitions = this.parseVariableDefinitions()
    const Directives = this.parseDirectives(false)
    const SelectionSet = this.parseRequiredSelectionSet()
    return { Operation, Name, VariableDefinitions, Directives, SelectionSet, Position }
  }

  private parseOperationType(): string {
    const tok = this.next()
    if (tok.value === "query" || tok.value === "mutation" || tok.value === "subscription") return tok.value
    this.unexpectedToken(tok)
    return ""
  }

  private parseVariableDefinitions(): VariableDefinition[] {
    const defs: VariableDefinition[] = []
    this.many(Tok.ParenL, Tok.ParenR, () => defs.push(this.parseVariableDefinition()))
    return defs
  }

  private parseVariableDefinition(): VariableDefinition {
    const Position = this.peekPos()
    const Variable = this.parseVariable()
    this.expect(Tok.Colon)
    const type = this.parseTypeReference()
    const DefaultValue = this.accept(Tok.Equals) ? this.parseValueLiteral(true) : undefined
    const Directives = this.parseDirectives(false)
    return { Variable, Type: type, DefaultValue, Directives, Position, Used: false }
  }

  private parseVariable(): string {
    this.expect(Tok.Dollar)
    return this.parseName()
  }

  private parseOptionalSelectionSet(): Selection[] {
    const selections: Selection[] = []
    this.some(Tok.BraceL, Tok.BraceR, () => selections.push(this.parseSelection()))
    return selections
  }

  private parseRequiredSelectionSet(): Selection[] {
    if (this.peek().kind !== Tok.BraceL) {
      this.error(this.peek(), `Expected ${TOKEN_NAMES[Tok.BraceL]}, found ${TOKEN_NAMES[this.peek().kind]}`)
      return []
    }
    return this.parseOptionalSelectionSet()
  }

  private parseSelection(): Selection {
    return this.peek().kind === Tok.Spread ? this.parseFragment() : this.parseField()
  }

  private parseField(): Field {
    const Position = this.peekPos()
    const Alias = this.parseName()
    const Name = this.accept(Tok.Colon) ? this.parseName() : Alias
    const Arguments = this.parseArguments(false)
    const Directives = this.parseDirectives(false)
    const SelectionSet = this.peek().kind === Tok.BraceL ? this.parseOptionalSelectionSet() : []
    return { selection: "Field", Alias, Name, Arguments, Directives, SelectionSet, Position }
  }

  private parseArguments(isConst: boolean): Argument[] {
    const args: Argument[] = []
    this.many(Tok.ParenL, Tok.ParenR, () => args.push(this.parseArgument(isConst)))
    return args
  }

  private parseArgument(isConst: boolean): Argument {
    const Position = this.peekPos()
    const Name = this.parseName()
    this.expect(Tok.Colon)
    return { Name, Value: this.parseValueLiteral(isConst), Position }
  }

  private parseFragment(): Selection {
    this.expect(Tok.Spread)
    const peek = this.peek()
    if (peek.kind === Tok.Name && peek.value !== "on") {
      const Position = this.peekPos()
      const Name = this.parseFragmentName()
      return { selection: "FragmentSpread", Name, Directives: this.parseDirectives(false), Position }
    }
    const Position = this.peekPos()
    let TypeCondition = ""
    if (this.peek().value === "on") {
      this.next()
      TypeCondition = this.parseName()
    }
    const Directives = this.parseDirectives(false)
    const fragment: InlineFragment = { selection: "InlineFragment", TypeCondition, Directives, SelectionSet: this.parseRequiredSelectionSet(), Position }
    return fragment
  }

  private parseFragmentDefinition(): FragmentDefinition {
    const Position = this.peekPos()
    this.expectKeyword("fragment")
    const Name = this.parseFragmentName()
    const VariableDefinition = this.parseVariableDefinitions()
    this.expectKeyword("on")
    const TypeCondition = this.parseName()
    const Directives = this.parseDirectives(false)
    return { Name, VariableDefinition, TypeCondition, Directives, SelectionSet: this.parseRequiredSelectionSet(), Position }
  }

  private parseFragmentName(): string {
    if (this.peek().value === "on") {
      this.unexpectedError()
      return ""
    }
    return this.parseName()
  }

  private parseValueLiteral(isConst: boolean): GqlValue | undefined {
    const token = this.peek()
    let kind: ValueKind
    switch (token.kind) {
      case Tok.BracketL:
        return this.parseList(isConst)
      case Tok.BraceL:
        return this.parseObject(isConst)
      case Tok.Dollar:
        if (isConst) {
          this.unexpectedError()
          return undefined
        }
        return value(ValueKind.Variable, this.parseVariable(), token.pos)
      case Tok.Int:
        kind = ValueKind.Int
        break
      case Tok.Float:
        kind = ValueKind.Float
        break
      case Tok.String:
        kind = ValueKind.String
        break
      case Tok.BlockString:
        kind = ValueKind.Block
        break
      case Tok.Name:
        kind = token.value === "true" || token.value === "false" ? ValueKind.Boolean : token.value === "null" ? ValueKind.Null : ValueKind.Enum
        break
      default:
        this.unexpectedError()
        return undefined
    }
    this.next()
    return value(kind, token.value, token.pos)
  }

  private parseList(isConst: boolean): GqlValue {
    const children: ChildValue[] = []
    const pos = this.peekPos()
    this.many(Tok.BracketL, Tok.BracketR, () => children.push({ Name: "", Value: this.parseValueLiteral(isConst) }))
    return { ...value(ValueKind.List, "", pos), Children: children }
  }

  private parseObject(isConst: boolean): GqlValue {
    const children: ChildValue[] = []
    const pos = this.peekPos()
    this.many(Tok.BraceL, Tok.BraceR, () => {
      const Position = this.peekPos()
      const Name = this.parseName()
      this.expect(Tok.Colon)
      children.push({ Name, Value: this.parseValueLiteral(isConst), Position })
    })
    return { ...value(ValueKind.Object, "", pos), Children: children }
  }

  private parseDirectives(isConst: boolean): Directive[] {
    const directives: Directive[] = []
    while (this.peek().kind === Tok.At) {
      if (this.err !== undefined) break
      this.expect(Tok.At)
      const Position = this.peekPos()
      const Name = this.parseName()
      directives.push({ Name, Arguments: this.parseArguments(isConst), Position, Location: "" })
    }
    return directives
  }

  private parseTypeReference(): Type {
    const type: Type = { NamedType: "", NonNull: false }
    if (this.accept(Tok.BracketL)) {
      type.Position = this.peekPos()
      type.Elem = this.parseTypeReference()
      this.expect(Tok.BracketR)
    } else {
      type.Position = this.peekPos()
      type.NamedType = this.parseName()
    }
    if (this.accept(Tok.Bang)) {
      type.Position = this.peekPos()
      type.NonNull = true
    }
    return type
  }

  // -------------------------------------------------------------------------------------------
  // Schemas

  parseSchemaDocument(): SchemaDocument | undefined {
    const doc: SchemaDocument = { Schema: [], SchemaExtension: [], Directives: [], Definitions: [], Extensions: [], Position: this.peekPos() }
    while (this.peek().kind !== Tok.EOF) {
      if (this.err !== undefined) return undefined
      let description = ""
      if (this.peek().kind === Tok.BlockString || this.peek().kind === Tok.String) description = this.parseDescription()
      if (this.peek().kind !== Tok.Name) {
        this.unexpectedError()
        break
      }
      switch (this.peek().value) {
        case "scalar":
        case "type":
        case "interface":
        case "union":
        case "enum":
        case "input":
          doc.Definitions.push(this.parseTypeSystemDefinition(description))
          break
        case "schema":
          doc.Schema.push(this.parseSchemaDefinition(description))
          break
        case "directive":
          doc.Directives.push(this.parseDirectiveDefinition(description))
          break
        case "extend":
          if (description !== "") this.unexpectedToken(this.prev)
          this.parseTypeSystemExtension(doc)
          break
        default:
          this.unexpectedError()
          return undefined
      }
    }
    return doc
  }

  private parseDescription(): string {
    const tok = this.peek()
    if (tok.kind !== Tok.BlockString && tok.kind !== Tok.String) return ""
    return this.next().value
  }

  private parseTypeSystemDefinition(description: string): Definition {
    switch (this.peek().value) {
      case "scalar": {
        this.expectKeyword("scalar")
        const def = newDefinition("SCALAR", description, this.peekPos())
        def.Name = this.parseName()
        def.Directives = this.parseDirectives(true)
        return def
      }
      case "type":
      case "interface": {
        const kind = this.peek().value === "type" ? "OBJECT" : "INTERFACE"
        this.expectKeyword(this.peek().value)
        const def = newDefinition(kind, description, this.peekPos())
        def.Name = this.parseName()
        def.Interfaces = this.parseImplementsInterfaces()
        def.Directives = this.parseDirectives(true)
        def.Fields = this.parseFieldsDefinition()
        return def
      }
      case "union": {
        this.expectKeyword("union")
        const def = newDefinition("UNION", description, this.peekPos())
        def.Name = this.parseName()
        def.Directives = this.parseDirectives(true)
        def.Types = this.parseUnionMemberTypes()
        return def
      }
      case "enum": {
        this.expectKeyword("enum")
        const def = newDefinition("ENUM", description, this.peekPos())
        def.Name = this.parseName()
        def.Directives = this.parseDirectives(true)
        def.EnumValues = this.parseEnumValuesDefinition()
        return def
      }
      default: {
        this.expectKeyword("input")
        const def = newDefinition("INPUT_OBJECT", description, this.peekPos())
        def.Name = this.parseName()
        def.Directives = this.parseDirectives(true)
        def.Fields = this.parseInputFieldsDefinition()
        return def
      }
    }
  }

  private parseSchemaDefinition(description: string): SchemaDefinition {
    this.expectKeyword("schema")
    const def: SchemaDefinition = { Description: description, Directives: [], OperationTypes: [], Position: this.peekPos() }
    def.Directives = this.parseDirectives(true)
    this.some(Tok.BraceL, Tok.BraceR, () => def.OperationTypes.push(this.parseOperationTypeDefinition()))
    return def
  }

  private parseOperationTypeDefinition(): OperationTypeDefinition {
    const Position = this.peekPos()
    const Operation = this.parseOperationType()
    this.expect(Tok.Colon)
    return { Operation, Type: this.parseName(), Position }
  }

  private parseImplementsInterfaces(): string[] {
    const types: string[] = []
    if (this.peek().value === "implements") {
      this.next()
      this.accept(Tok.Amp)
      types.push(this.parseName())
      while (this.accept(Tok.Amp) && this.err === undefined) types.push(this.parseName())
    }
    return types
  }

  private parseFieldsDefinition(): FieldDefinition[] {
    const defs: FieldDefinition[] = []
    this.some(Tok.BraceL, Tok.BraceR, () => defs.push(this.parseFieldDefinition()))
    return defs
  }

  private parseFieldDefinition(): FieldDefinition {
    const Position = this.peekPos()
    const Description = this.parseDescription()
    const Name = this.parseName()
    const Arguments = this.parseArgumentDefs()
    this.expect(Tok.Colon)
    const type = this.parseTypeReference()
    return { Description, Name, Arguments, Type: type, Directives: this.parseDirectives(true), Position }
  }

  private parseArgumentDefs(): ArgumentDefinition[] {
    const args: ArgumentDefinition[] = []
    this.some(Tok.ParenL, Tok.ParenR, () => args.push(this.parseInputValueDef()))
    return args
  }

  /** An argument or input field definition (the same grammar and, in gqlparser, the same fields). */
  private parseInputValueDef(): FieldDefinition {
    const Position = this.peekPos()
    const Description = this.parseDescription()
    const Name = this.parseName()
    this.expect(Tok.Colon)
    const type = this.parseTypeReference()
    const DefaultValue = this.accept(Tok.Equals) ? this.parseValueLiteral(true) : undefined
    return { Description, Name, Arguments: [], DefaultValue, Type: type, Directives: this.parseDirectives(true), Position }
  }

  private parseUnionMemberTypes(): string[] {
    const types: string[] = []
    if (this.accept(Tok.Equals)) {
      this.accept(Tok.Pipe)
      types.push(this.parseName())
      while (this.accept(Tok.Pipe) && this.err === undefined) types.push(this.parseName())
    }
    return types
  }

  private parseEnumValuesDefinition(): EnumValueDefinition[] {
    const values: EnumValueDefinition[] = []
    this.some(Tok.BraceL, Tok.BraceR, () => {
      const Position = this.peekPos()
      const Description = this.parseDescription()
      const Name = this.parseName()
      values.push({ Description, Name, Directives: this.parseDirectives(true), Position })
    })
    return values
  }

  private parseInputFieldsDefinition(): FieldDefinition[] {
    const values: FieldDefinition[] = []
    this.some(Tok.BraceL, Tok.BraceR, () => values.push(this.parseInputValueDef()))
    return values
  }

  private parseTypeSystemExtension(doc: SchemaDocument): void {
    this.expectKeyword("extend")
    const keyword = this.peek().value
    switch (keyword) {
      case "schema": {
        this.expectKeyword("schema")
        const def: SchemaDefinition = { Description: "", Directives: [], OperationTypes: [], Position: this.peekPos() }
        def.Directives = this.parseDirectives(true)
        this.some(Tok.BraceL, Tok.BraceR, () => def.OperationTypes.push(this.parseOperationTypeDefinition()))
        if (def.Directives.length === 0 && def.OperationTypes.length === 0) this.unexpectedError()
        doc.SchemaExtension.push(def)
        return
      }
      case "scalar":
      case "type":
      case "interface":
      case "union":
      case "enum":
      case "input": {
        this.expectKeyword(keyword)
        const kinds: Record<string, string> = { scalar: "SCALAR", type: "OBJECT", interface: "INTERFACE", union: "UNION", enum: "ENUM", input: "INPUT_OBJECT" }
        const def = newDefinition(kinds[keyword], "", this.peekPos())
        def.Name = this.parseName()
        if (keyword === "type") def.Interfaces = this.parseImplementsInterfaces()
        // gqlparser parses the directives of `extend input` as non-constant.
        def.Directives = this.parseDirectives(keyword !== "input")
        if (keyword === "type" || keyword === "interface") def.Fields = this.parseFieldsDefinition()
        else if (keyword === "union") def.Types = this.parseUnionMemberTypes()
        else if (keyword === "enum") def.EnumValues = this.parseEnumValuesDefinition()
        else if (keyword === "input") def.Fields = this.parseInputFieldsDefinition()
        const empty = def.Interfaces.length === 0 && def.Directives.length === 0 && def.Fields.length === 0 && def.Types.length === 0 && def.EnumValues.length === 0
        if (empty) this.unexpectedError()
        doc.Extensions.push(def)
        return
      }
      default:
        this.unexpectedError()
    }
  }

  private parseDirectiveDefinition(description: string): DirectiveDefinition {
    this.expectKeyword("directive")
    this.expect(Tok.At)
    const def: DirectiveDefinition = { Description: description, Name: "", Arguments: [], Locations: [], IsRepeatable: false, Position: this.peekPos() }
    def.Name = this.parseName()
    def.Arguments = this.parseArgumentDefs()
    const peek = this.peek()
    if (peek.kind === Tok.Name && peek.value === "repeatable") {
      def.IsRepeatable = true
      this.accept(Tok.Name)
    }
    this.expectKeyword("on")
    this.accept(Tok.Pipe)
    def.Locations.push(this.parseDirectiveLocation())
    while (this.accept(Tok.Pipe) && this.err === undefined) def.Locations.push(this.parseDirectiveLocation())
    return def
  }

  private parseDirectiveLocation(): string {
    const name = this.expect(Tok.Name)
    if (DIRECTIVE_LOCATIONS.has(name.value)) return name.value
    this.unexpectedToken(name)
    return ""
  }
}

const value = (kind: ValueKind, raw: string, pos: Position | undefined): GqlValue => ({ Raw: raw, Children: [], Kind: kind, Position: pos, ExpectedTypeHasDefault: false })

/** Parses a query document; returns it or the first error. */
export const parseQuery = (source: string): { doc: QueryDocument } | { error: GqlError } => {
  const p = new Parser(source)
  const doc = p.parseQueryDocument()
  return p.err !== undefined ? { error: p.err } : { doc }
}

/** Parses a schema document (type system definitions and extensions); returns it or the first error. */
export const parseSchema = (source: string, file = "", builtIn = false): { doc: SchemaDocument } | { error: GqlError } => {
  const p = new Parser(source, file)
  const doc = p.parseSchemaDocument()
  if (p.err !== undefined || doc === undefined) return { error: p.err ?? new GqlError("invalid schema", undefined) }
  for (const def of doc.Definitions) def.BuiltIn = builtIn
  for (const def of doc.Extensions) def.BuiltIn = builtIn
  return { doc }
}
