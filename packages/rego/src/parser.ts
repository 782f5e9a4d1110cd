// Recursive-descent parser for Rego v1. It follows the structure of OPA's parser (speculative
// parsing with save/restore, the same operator precedence and the same error messages) so that
// programs are accepted or rejected exactly as OPA does.

import { parse as parseYAML } from "yaml"
import type {
  Annotation,
  Body,
  CallTerm,
  Expr,
  ExprBody,
  Head,
  Import,
  Loc,
  Module,
  RefTerm,
  Rule,
  ScalarTerm,
  Term,
  VarTerm,
  With
} from "./ast.js"
import { termString, valueName } from "./ast.js"
import { isStackOverflow, RegoCompileError, RegoError } from "./errors.js"
import { KEYWORDS, Scanner, type ScannerState, type Tok, type Token } from "./scanner.js"
import { parseNumberLiteral } from "./value.js"

interface State {
  tok: Token
  scanner: ScannerState
  errors: number
  wildcard: number
  lastEnd: number
  skippedNL: boolean
  comments: number
}

const ROOT_DOCS = new Set(["data", "input"])
const RELATION_OPS: ReadonlySet<Tok> = new Set(["equal", "neq", "lt", "gt", "lte", "gte"])

interface Comment {
  text: string
  loc: Loc
}

export type Statement =
  | { type: "package"; path: RefTerm | VarTerm; loc: Loc }
  | { type: "import"; imp: Import }
  | { type: "rule"; rule: Rule; generatedHead?: boolean }
  | { type: "body"; body: Body; loc: Loc }

/** Mutable builder for rules during parsing. */
interface RuleDraft {
  default: boolean
  head: HeadDraft
  body: Body
  else: Rule | undefined
  generatedBody: boolean
  loc: Loc
}
interface HeadDraft {
  ref: Term[]
  args: Term[] | undefined
  key: Term | undefined
  value: Term | undefined
  assign: boolean
  generatedValue: boolean
  contains: boolean
  hasIf: boolean
  loc: Loc
}

const freezeHead = (h: HeadDraft): Head => ({ ...h })

const freezeRule = (r: RuleDraft): Rule => ({
  default: r.default,
  head: freezeHead(r.head),
  body: r.body,
  else: r.else,
  generatedBody: r.generatedBody,
  loc: r.loc
})

const isGround = (t: Term): boolean => {
  switch (t.type) {
    case "scalar":
      return true
    case "var":
      return false
    case "ref":
      return t.terms.every(isGround)
    case "array":
    case "set":
      return t.items.every(isGround)
    case "object":
      return t.entries.every(([k, v]) => isGround(k) && isGround(v))
    case "call":
      return t.args.every(isGround)
    default:
      return false
  }
}

export class Parser {
  private readonly s: Scanner
  private tok: Token
  // Plain records while parsing: speculative parses create and drop errors, and an Error is
  // costly to construct (stack capture). Converted to RegoError once parsing ends.
  private errors: Array<{ readonly message: string; readonly loc: Loc }> = []
  private wildcard = 0
  private lastEnd = 0
  private skippedNL = false
  private comments: Comment[] = []
  private depth = 0

  constructor(
    private readonly file: string,
    src: string
  ) {
    this.s = new Scanner(src)
    this.tok = { tok: "eof", lit: "", offset: 0, end: 0, row: 1, col: 1 }
    this.scan()
  }

  // -------------------------------------------------------------------------------------------
  // Token handling

  /** The current token kind (a method, so that narrowing does not survive scans). */
  private t(): Tok {
    return this.tok.tok
  }

  /** Where the parser is (for errors raised around it). */
  location(): Loc {
    return this.loc()
  }

  private loc(t: Token = this.tok): Loc {
    return { file: this.file, row: t.row, col: t.col, offset: t.offset }
  }

  private save(): State {
    return {
      tok: this.tok,
      scanner: this.s.save(),
      errors: this.errors.length,
      wildcard: this.wildcard,
      lastEnd: this.lastEnd,
      skippedNL: this.skippedNL,
      comments: this.comments.length
    }
  }

  private restore(st: State): void {
    this.tok = st.tok
    this.s.restore(st.scanner)
    this.errors.length = st.errors
    this.wildcard = st.wildcard
    this.lastEnd = st.lastEnd
    this.skippedNL = st.skippedNL
    this.comments.length = st.comments
  }

  private scan(): void {
    this.doScan(true)
  }

  private scanWS(): void {
    this.doScan(false)
  }

  private doScan(skipws: boolean, template?: "template" | "raw"): void {
    if (this.t() !== "whitespace") {
      this.lastEnd = this.tok.end
      this.skippedNL = false
    }
    for (;;) {
      if (this.s.errors.length > 0) this.s.errors = []
      const t = this.s.scan(template)
      template = undefined
      this.tok = t
      if (this.s.errors.length > 0) {
        for (const e of this.s.errors) this.errorAt({ file: this.file, row: t.row, col: t.col, offset: t.offset }, e.message)
        this.tok = { ...t, tok: "illegal" }
      }
      if (t.tok === "whitespace") {
        if (t.lit === "\n") this.skippedNL = true
        if (skipws) continue
      }
      if (t.tok !== "comment") break
      this.comments.push({ text: t.lit.slice(1), loc: this.loc(t) })
    }
  }

  private regoErrors(): RegoError[] {
    return this.errors.map((e) => new RegoError("rego_parse_error", e.message, { file: e.loc.file, row: e.loc.row, col: e.loc.col }))
  }

  private errorAt(loc: Loc, message: string): void {
    this.errors.push({ message, loc })
  }

  private illegal(note?: string): void {
    const t = this.tok
    if (t.tok === "illegal") {
      this.errorAt(this.loc(), "illegal token")
      return
    }
    const kind = KEYWORDS.has(t.tok) ? "keyword" : "token"
    this.errorAt(this.loc(), note !== undefined ? `unexpected ${t.tok} ${kind}: ${note}` : `unexpected ${t.tok} ${kind}`)
  }

  private enter(): boolean {
    if (++this.depth > 10000) {
      this.errorAt(this.loc(), "max parsing recursion depth exceeded")
      this.depth--
      return false
    }
    return true
  }

  private leave(): void {
    this.depth--
  }

  /** The token after the current one, without skipping whitespace. */
  private peekNoWS(): Tok {
    const st = this.save()
    this.scanWS()
    const t = this.t()
    this.restore(st)
    return t
  }

  private isKeywordTok(t: Tok): boolean {
    return KEYWORDS.has(t)
  }

  /** Whether the current keyword token is the head of a ref (`with.x` on the next line). */
  private startsKeywordRef(): boolean {
    const next = this.peekNoWS()
    return next === "." || next === "["
  }

  /** A keyword immediately followed by `.` or `[` starts a ref (`input.in`, `if.x`). */
  private scanAheadRef(): boolean {
    if (this.isKeywordTok(this.t())) {
      const next = this.peekNoWS()
      if (next === "." || next === "[") {
        this.tok = { ...this.tok, tok: "identifier" }
        return true
      }
    }
    return false
  }

  private genWildcard(): string {
    return "$" + this.wildcard++
  }

  // -------------------------------------------------------------------------------------------
  // Statements

  parseStatements(): { stmts: Statement[]; errors: RegoError[]; comments: Comment[] } {
    const stmts: Statement[] = []
    while (this.t() !== "eof") {
      if (this.t() === "package") {
        const st = this.save()
        const pkg = this.parsePackage()
        if (pkg !== undefined) {
          stmts.push(pkg)
          continue
        }
        if (this.errors.length > 0) break
        this.restore(st)
      }
      if (this.t() === "import") {
        const st = this.save()
        const imp = this.parseImport()
        if (imp !== undefined) {
          stmts.push({ type: "import", imp })
          continue
        }
        if (this.errors.length > 0) break
        this.restore(st)
      }
      {
        const st = this.save()
        const rules = this.parseRules()
        if (rules !== undefined) {
          for (const r of rules) stmts.push({ type: "rule", rule: freezeRule(r) })
          continue
        }
        if (this.errors.length > 0) break
        this.restore(st)
      }
      const loc = this.loc()
      const body = this.parseQuery(true, "eof")
      if (body !== undefined) {
        stmts.push({ type: "body", body, loc })
        continue
      }
      break
    }
    return { stmts, errors: this.regoErrors(), comments: this.comments }
  }

  private parsePackage(): Statement | undefined {
    const loc = this.loc()
    if (!this.startPath()) return undefined
    const term = this.parseTerm()
    if (term === undefined) {
      if (this.errors.length === 0) this.errorAt(this.loc(), "expected path")
      return undefined
    }
    if (term.type === "var") return { type: "package", path: term, loc }
    if (term.type === "ref") {
      if (term.terms[0].type !== "var") {
        this.errorAt(term.terms[0].loc, `unexpected ${valueName(term.terms[0])} token: expecting var`)
        return undefined
      }
      return this.stringSegments(term) ? { type: "package", path: term, loc } : undefined
    }
    this.illegal()
    return undefined
  }

  /** Whether every segment of a package or import path after its head is a string (reporting the first that is not). */
  private stringSegments(path: RefTerm): boolean {
    for (let i = 1; i < path.terms.length; i++) {
      const t = path.terms[i]
      if (t.type !== "scalar" || typeof t.value !== "string") {
        this.errorAt(t.loc, `unexpected ${valueName(t)} token: expecting string`)
        return false
      }
    }
    return true
  }

  /**
   * After `package` or `import`: whether a path follows. Not when the keyword heads a ref
   * (`import.x`: the statement is parsed again as a rule); otherwise a missing path is an error.
   */
  private startPath(): boolean {
    this.scanWS()
    if (this.t() === "." || this.t() === "[") return false
    if (this.t() === "whitespace") this.scan()
    if (this.identOrRefKeyword()) return true
    this.illegal()
    return false
  }

  private identOrRefKeyword(): boolean {
    if (this.t() === "identifier") return true
    if (this.isKeywordTok(this.t())) {
      this.tok = { ...this.tok, tok: "identifier" }
      return true
    }
    return false
  }

  private parseImport(): Import | undefined {
    const loc = this.loc()
    if (!this.startPath()) return undefined
    const term = this.parseTerm()
    let path: RefTerm | undefined
    if (term !== undefined) {
      if (term.type === "var") path = { type: "ref", terms: [term], loc: term.loc }
      else if (term.type === "ref") {
        if (!this.stringSegments(term)) return undefined
        path = term
      }
    }
    if (path === undefined) {
      this.errorAt(this.loc(), "expected path")
      return undefined
    }
    const head = path.terms[0]
    const headName = head.type === "var" ? head.name : ""
    if (headName !== "data" && headName !== "input" && headName !== "future" && headName !== "rego") {
      this.errorAt(
        path.loc,
        `unexpected import path, must begin with one of: {data, future, input, rego}, got: ${termString(head)} (hint: if this is unexpected, try updating OPA)`
      )
      return undefined
    }
    if (this.t() === "as") {
      this.scan()
      if (this.t() !== "identifier") {
        this.illegal("expected var")
        return undefined
      }
      const alias = this.parseTerm()
      if (alias !== undefined && alias.type === "var") return { path, alias: alias.name, loc }
      this.illegal("expected var")
      return undefined
    }
    if (headName !== "future") {
      const last = path.terms[path.terms.length - 1]
      const name = last.type === "var" ? last.name : String((last as ScalarTerm).value)
      if (KEYWORDS.has(name)) {
        this.errorAt(last.loc, `unexpected import path, must not end with a keyword, got: ${name} (hint: import a different path or use an alias)`)
      }
    }
    return { path, alias: undefined, loc }
  }

  // -------------------------------------------------------------------------------------------
  // Rules

  private parseRules(): RuleDraft[] | undefined {
    const loc = this.loc()
    this.scanAheadRef()
    let isDefault = false
    if (this.t() === "default") {
      this.scan()
      isDefault = true
      this.scanAheadRef()
    }
    if (this.t() !== "identifier") return undefined
    const parsed = this.parseHead(isDefault)
    if (parsed === undefined) return undefined
    const [head, usesContains] = parsed
    const rule: RuleDraft = { default: isDefault, head, body: [], else: undefined, generatedBody: false, loc }

    if (isDefault) {
      if (!this.validateDefault(rule)) return undefined
      rule.body = [trueExpr(loc)]
      return [rule]
    }

    const hasIf = this.t() === "if" && !this.startsKeywordRef()
    // `p[x] if ...` is a single-value rule `p[x] := true`.
    if (hasIf && !usesContains && head.ref.length === 2 && head.value === undefined) {
      head.generatedValue = true
      head.value = { type: "scalar", value: true, loc: head.loc }
    }
    // `p[x] { ... }` without `if`: the v0 multi-value form (rejected below by the v1 checks).
    if (!hasIf && !usesContains && head.args === undefined && head.ref.length === 2 && head.value === undefined) {
      if (head.ref[0].type !== "var") return undefined
      head.key = head.ref[1]
      head.ref = head.ref.slice(0, 1)
    }

    if (hasIf) {
      head.hasIf = true
      this.scan()
      const st = this.save()
      const leadingBrace = this.t() === "{"
      const expr = this.parseLiteral()
      let done = false
      if (expr !== undefined) {
        const isSetLiteral = leadingBrace && expr.body.type === "term" && expr.body.term.type === "set"
        if (!isSetLiteral) {
          rule.body = [expr]
          done = true
        }
      }
      if (!done) {
        if (!leadingBrace) return undefined
        this.restore(st)
        if (!this.parseBraceBody(rule)) return undefined
      }
    } else if (this.t() === "{") {
      if (!this.parseBraceBody(rule)) return undefined
    } else if (usesContains) {
      rule.body = [trueExpr(head.loc)]
      rule.generatedBody = true
      rule.loc = head.loc
      return [rule]
    } else {
      return undefined
    }

    if (this.t() === "else") {
      if (!this.scanAheadRef()) {
        if (head.ref.length > 1 && !head.ref.slice(1).every(isGround)) {
          this.errorAt(this.loc(), "else keyword cannot be used on rules with variables in head")
          return undefined
        }
        if (head.key !== undefined) {
          this.errorAt(this.loc(), "else keyword cannot be used on multi-value rules")
          return undefined
        }
        const e = this.parseElse(head)
        if (e === undefined) return undefined
        rule.else = e
      }
    }

    const rules = [rule]
    while (this.t() === "{") {
      if (rule.else !== undefined) {
        this.errorAt(this.loc(), "expected else keyword")
        return undefined
      }
      const bloc = this.loc()
      const next: RuleDraft = {
        default: false,
        head: { ...head, loc: bloc, args: this.freshWildcards(head.args) },
        body: [],
        else: undefined,
        generatedBody: false,
        loc: bloc
      }
      if (!this.parseBraceBody(next)) return undefined
      rules.push(next)
    }
    return rules
  }

  /** A head's arguments for another of its bodies: each wildcard (`_`) under a new name. */
  private freshWildcards(args: Term[] | undefined): Term[] | undefined {
    return args?.map((a) => (a.type === "var" && a.name.startsWith("$") ? { ...a, name: this.genWildcard() } : a))
  }

  private parseBraceBody(rule: RuleDraft): boolean {
    this.scan()
    const body = this.parseBody("}")
    if (body === undefined) return false
    rule.body = body
    this.scan()
    return true
  }

  private parseElse(head: HeadDraft): Rule | undefined {
    const loc = this.loc()
    const h: HeadDraft = {
      ...head,
      generatedValue: false,
      hasIf: false,
      loc,
      args: this.freshWildcards(head.args)
    }
    this.scan()
    switch (this.t()) {
      case "{":
      case "if":
        h.generatedValue = true
        h.value = { type: "scalar", value: true, loc }
        break
      case "assign":
      case "eq": {
        h.assign = this.t() === "assign"
        this.scan()
        const v = this.parseTermInfixCall()
        if (v === undefined) return undefined
        h.value = v
        break
      }
      default:
        this.illegal("expected else value term or rule body")
        return undefined
    }
    const rule: RuleDraft = { default: false, head: h, body: [], else: undefined, generatedBody: false, loc }
    const hasIf = this.t() === "if"
    const hasBrace = this.t() === "{"
    if (!hasIf && !hasBrace) {
      rule.body = [trueExpr(loc)]
      rule.generatedBody = true
      return freezeRule(rule)
    }
    if (hasIf) {
      h.hasIf = true
      this.scan()
    }
    if (this.t() === "{") {
      if (!this.parseBraceBody(rule)) return undefined
    } else if (this.t() !== "eof") {
      const expr = this.parseLiteral()
      if (expr === undefined) return undefined
      rule.body = [expr]
    } else {
      this.illegal("rule body expected")
      return undefined
    }
    if (this.t() === "else") {
      const e = this.parseElse(head)
      if (e === undefined) return undefined
      rule.else = e
    }
    return freezeRule(rule)
  }

  private parseHead(isDefault: boolean): [HeadDraft, boolean] | undefined {
    const loc = this.loc()
    const v = this.parseVar()
    const term = this.parseHeadFinish(v)
    if (term === undefined) {
      this.illegal("expected rule head name")
      return undefined
    }
    const head: HeadDraft = {
      ref: [],
      args: undefined,
      key: undefined,
      value: undefined,
      assign: false,
      generatedValue: false,
      contains: false,
      hasIf: false,
      loc
    }
    switch (term.type) {
      case "var":
        head.ref = [term]
        break
      case "ref":
        head.ref = [...term.terms]
        break
      case "call": {
        const op = term.op
        if (op.terms[0].type !== "var") {
          this.illegal(`rule head ref ${termString(op)} invalid`)
          return undefined
        }
        head.ref = [...op.terms]
        head.args = [...term.args]
        break
      }
      default:
        return undefined
    }
    const name = termString({ type: "ref", terms: head.ref, loc })
    switch (this.t()) {
      case "contains": {
        if (head.args !== undefined)
          this.illegal(`the contains keyword can only be used with multi-value rule definitions (e.g., ${name} contains <VALUE> { ... })`)
        this.scan()
        head.key = this.parseTermInfixCall()
        head.contains = true
        if (head.key === undefined) this.illegal(`expected rule key term (e.g., ${name} contains <VALUE> { ... })`)
        if (head.key === undefined) return undefined
        return [head, true]
      }
      case "eq":
        this.scan()
        head.value = this.parseTermInfixCall()
        if (head.value === undefined) {
          this.illegal(`expected rule value term (e.g., ${name}[${head.key === undefined ? "<nil>" : termString(head.key)}] = <VALUE> { ... })`)
          return undefined
        }
        break
      case "assign":
        this.scan()
        head.assign = true
        head.value = this.parseTermInfixCall()
        if (head.value === undefined) {
          if (head.args !== undefined) this.illegal(`expected function value term (e.g., ${name}(...) := <VALUE> { ... })`)
          else if (isDefault) this.illegal(`expected default rule value term (e.g., default ${name} := <VALUE>)`)
          else this.illegal(`expected rule value term (e.g., ${name} := <VALUE> { ... })`)
          return undefined
        }
        break
    }
    if (head.value === undefined && head.key === undefined) {
      if (head.ref.length !== 2 || head.args !== undefined) {
        head.generatedValue = true
        head.value = { type: "scalar", value: true, loc }
      }
    }
    return [head, false]
  }

  private parseHeadFinish(head: Term): Term | undefined {
    this.scanWS()
    switch (this.t()) {
      case "plus":
      case "minus":
      case "mul":
      case "div":
      case "rem":
      case "and":
      case "or":
      case "equal":
      case "neq":
      case "gt":
      case "gte":
      case "lt":
      case "lte":
        this.illegal()
        break
      case "whitespace":
        this.doScan(true)
    }
    return this.parseRefOrTerm(head)
  }

  private validateDefault(rule: RuleDraft): boolean {
    const v = rule.head.value
    if (v === undefined) {
      this.errorAt(rule.loc, "illegal default rule (must have a value)")
      return false
    }
    let valid = true
    const visit = (t: Term): void => {
      if (!valid) return
      switch (t.type) {
        case "var":
          this.errorAt(rule.loc, "illegal default rule (value cannot contain var)")
          valid = false
          return
        case "ref":
          this.errorAt(rule.loc, "illegal default rule (value cannot contain ref)")
          valid = false
          return
        case "call":
          this.errorAt(rule.loc, "illegal default rule (value cannot contain call)")
          valid = false
          return
        case "array":
        case "set":
          t.items.forEach(visit)
          return
        case "object":
          t.entries.forEach(([k, x]) => {
            visit(k)
            visit(x)
          })
          return
        case "template":
          this.errorAt(rule.loc, "illegal default rule (value cannot contain call)")
          valid = false
          return
        default:
          return
      }
    }
    visit(v)
    if (!valid) return false
    if (rule.head.args !== undefined) {
      const seen = new Set<string>()
      for (const a of rule.head.args) {
        if (a.type !== "var") {
          this.errorAt(rule.loc, `illegal default rule (arguments cannot contain ${valueName(a)})`)
          return false
        }
        if (seen.has(a.name)) {
          this.errorAt(rule.loc, `illegal default rule (arguments cannot be repeated ${a.name})`)
          return false
        }
        seen.add(a.name)
      }
    }
    return true
  }

  // -------------------------------------------------------------------------------------------
  // Bodies and literals

  parseQuery(requireSemi: boolean, end: Tok): Expr[] | undefined {
    if (this.t() === end) {
      this.errorAt(this.loc(), "found empty body")
      return undefined
    }
    const body: Expr[] = []
    for (;;) {
      const expr = this.parseLiteral()
      if (expr === undefined) return undefined
      body.push(expr)
      if (this.t() === ";") {
        this.scan()
        continue
      }
      if (this.t() === end || requireSemi) return body
      if (!this.skippedNL) {
        if (this.errors.length === 0) this.illegal(`expected \\n or ; or ${end}`)
        return undefined
      }
    }
  }

  private parseBody(end: Tok): Expr[] | undefined {
    if (!this.enter()) return undefined
    try {
      return this.parseQuery(false, end)
    } finally {
      this.leave()
    }
  }

  private parseLiteral(): Expr | undefined {
    const loc = this.loc()
    if (this.isKeywordTok(this.t()) && this.t() !== "not") {
      const next = this.peekNoWS()
      if (next === "." || next === "[") {
        this.tok = { ...this.tok, tok: "identifier" }
        return this.parseLiteralExpr(false, loc)
      }
    }
    let negated = false
    if (this.t() === "not") {
      const next = this.peekNoWS()
      if (next === "." || next === "[") this.tok = { ...this.tok, tok: "identifier" }
      else {
        negated = true
        this.scan()
      }
    }
    switch (this.t()) {
      case "some":
        if (negated) {
          this.illegal("illegal negation of 'some'")
          return undefined
        }
        if (this.scanAheadRef()) return this.parseLiteralExpr(false, loc)
        return this.parseSome(loc)
      case "every":
        if (negated) {
          this.illegal("illegal negation of 'every'")
          return undefined
        }
        if (this.scanAheadRef()) return this.parseLiteralExpr(false, loc)
        return this.parseEvery(loc)
      default:
        return this.parseLiteralExpr(negated, loc)
    }
  }

  private parseLiteralExpr(negated: boolean, loc: Loc): Expr | undefined {
    const body = this.parseExpr()
    if (body === undefined) return undefined
    const withs = this.t() === "with" && !this.startsKeywordRef() ? this.parseWith() : []
    if (withs === undefined) return undefined
    return { negated, body, with: withs, loc }
  }

  private parseWith(): With[] | undefined {
    const withs: With[] = []
    for (;;) {
      const loc = this.loc()
      this.scan()
      if (this.t() !== "identifier" && !this.scanAheadRef()) {
        this.illegal("expected ident")
        return undefined
      }
      const target = this.parseTerm()
      if (target === undefined) return undefined
      if (target.type !== "ref" && target.type !== "var") this.illegal("expected with target path")
      if (this.t() !== "as") {
        this.illegal("expected as keyword")
        return undefined
      }
      this.scan()
      const value = this.parseTermInfixCall()
      if (value === undefined) return undefined
      withs.push({ target, value, loc })
      if (this.t() !== "with") break
    }
    return withs
  }

  private parseSome(loc: Loc): Expr | undefined {
    const st = this.save()
    this.scan()
    const term = this.parseTermInfixCall()
    if (term !== undefined && term.type === "call") {
      const name = termString(term.op)
      if (name === "internal.member_2" || name === "internal.member_3") {
        const withs = this.t() === "with" ? this.parseWith() : []
        if (withs === undefined) return undefined
        return { negated: false, body: { type: "somein", call: term }, with: withs, loc }
      }
      this.illegal("expected `x in xs` or `x, y in xs` expression")
      return undefined
    }
    this.restore(st)
    const vars: VarTerm[] = []
    for (;;) {
      this.scan()
      if (this.t() !== "identifier") {
        this.illegal("expected var")
        return undefined
      }
      vars.push(this.parseVar())
      this.scan()
      if (this.t() !== ",") break
    }
    return { negated: false, body: { type: "some", vars }, with: [], loc }
  }

  private parseEvery(loc: Loc): Expr | undefined {
    this.scan()
    const term = this.parseTermInfixCall()
    if (term === undefined) return undefined
    if (term.type !== "call") {
      this.illegal("expected `x[, y] in xs { ... }` expression")
      return undefined
    }
    const name = termString(term.op)
    let key: Term | undefined
    let value: Term
    let domain: Term
    if (name === "internal.member_2") {
      value = term.args[0]
      domain = term.args[1]
    } else if (name === "internal.member_3") {
      key = term.args[0]
      value = term.args[1]
      domain = term.args[2]
      if (key.type !== "var") {
        this.illegal("expected key to be a variable")
        return undefined
      }
    } else {
      this.illegal("expected `x[, y] in xs { ... }` expression")
      return undefined
    }
    if (value.type !== "var") {
      this.illegal("expected value to be a variable")
      return undefined
    }
    if (this.t() === "{") {
      this.scan()
      const body = this.parseBody("}")
      if (body === undefined) return undefined
      this.scan()
      const withs = this.t() === "with" ? this.parseWith() : []
      if (withs === undefined) return undefined
      return { negated: false, body: { type: "every", key, value, domain, body }, with: withs, loc }
    }
    this.illegal("missing body")
    return undefined
  }

  private parseExpr(): ExprBody | undefined {
    const lhs = this.parseTermInfixCall()
    if (lhs === undefined) return undefined
    if (this.t() === "assign" || this.t() === "eq") {
      const op = this.opTerm(this.t())
      this.scan()
      const rhs = this.parseTermInfixCall()
      if (rhs === undefined) return undefined
      return { type: "call", op, args: [lhs, rhs] }
    }
    if (lhs.type === "call") return { type: "call", op: lhs.op, args: lhs.args }
    return { type: "term", term: lhs }
  }

  private opTerm(name: string): RefTerm {
    const loc = this.loc()
    const terms: Term[] = name.split(".").map((seg, i) => (i === 0 ? { type: "var", name: seg, loc } : { type: "scalar", value: seg, loc }))
    return { type: "ref", terms, loc }
  }

  // -------------------------------------------------------------------------------------------
  // Terms and operators (loosest first: in, relations, |, &, + -, * / %)

  parseTermInfixCall(): Term | undefined {
    if (!this.enter()) return undefined
    try {
      return this.parseTermIn(undefined, true)
    } finally {
      this.leave()
    }
  }

  private parseTermInfixCallInList(): Term | undefined {
    if (!this.enter()) return undefined
    try {
      return this.parseTermIn(undefined, false)
    } finally {
      this.leave()
    }
  }

  private call(op: RefTerm, args: Term[], loc: Loc): CallTerm {
    return { type: "call", op, args, loc }
  }

  private parseTermIn(lhs: Term | undefined, keyVal: boolean): Term | undefined {
    if (!this.enter()) return undefined
    try {
      if (lhs === undefined) lhs = this.parseTermRelation(undefined)
      if (lhs === undefined) return undefined
      if (keyVal && this.t() === ",") {
        const st = this.save()
        this.scan()
        const mhs = this.parseTermRelation(undefined)
        if (mhs !== undefined && this.t() === "in") {
          const op = this.opTerm("internal.member_3")
          this.scan()
          const rhs = this.parseTermRelation(undefined)
          if (rhs !== undefined) {
            const c = this.call(op, [lhs, mhs, rhs], lhs.loc)
            return this.t() === "in" ? this.parseTermIn(c, keyVal) : c
          }
        }
        this.restore(st)
      }
      this.scanAheadRefIn()
      if (this.t() === "in") {
        const op = this.opTerm("internal.member_2")
        this.scan()
        const rhs = this.parseTermRelation(undefined)
        if (rhs !== undefined) {
          const c = this.call(op, [lhs, rhs], lhs.loc)
          return this.t() === "in" ? this.parseTermIn(c, keyVal) : c
        }
      }
      return lhs
    } finally {
      this.leave()
    }
  }

  /** `in.foo` after a term is a ref, not the membership operator. */
  private scanAheadRefIn(): void {
    if (this.t() === "in") {
      const next = this.peekNoWS()
      if (next === "." || next === "[") this.tok = { ...this.tok, tok: "identifier" }
    }
  }

  private parseTermRelation(lhs: Term | undefined): Term | undefined {
    if (!this.enter()) return undefined
    try {
      if (lhs === undefined) lhs = this.parseTermBinary(0)
      if (lhs === undefined) return undefined
      if (RELATION_OPS.has(this.t())) {
        const op = this.opTerm(this.t())
        this.scan()
        const rhs = this.parseTermBinary(0)
        if (rhs !== undefined) {
          const c = this.call(op, [lhs, rhs], lhs.loc)
          return RELATION_OPS.has(this.t()) ? this.parseTermRelation(c) : c
        }
      }
      return lhs
    } finally {
      this.leave()
    }
  }

  private static readonly LEVELS: ReadonlyArray<ReadonlySet<Tok>> = [
    new Set<Tok>(["or"]),
    new Set<Tok>(["and"]),
    new Set<Tok>(["plus", "minus"]),
    new Set<Tok>(["mul", "div", "rem"])
  ]

  /** Left-associative binary operators at precedence `level` and tighter. */
  private parseTermBinary(level: number): Term | undefined {
    if (!this.enter()) return undefined
    try {
      const next = (): Term | undefined => (level === 3 ? this.parseTerm() : this.parseTermBinary(level + 1))
      let lhs = next()
      if (lhs === undefined) return undefined
      const ops = Parser.LEVELS[level]
      while (ops.has(this.t())) {
        const op = this.opTerm(this.t())
        this.scan()
        const rhs = next()
        if (rhs === undefined) return lhs
        lhs = this.call(op, [lhs, rhs], lhs.loc)
      }
      return lhs
    } finally {
      this.leave()
    }
  }

  private parseTerm(): Term | undefined {
    if (!this.enter()) return undefined
    try {
      return this.parseTermInner()
    } finally {
      this.leave()
    }
  }

  private parseTermInner(): Term | undefined {
    let term: Term | undefined
    let unaryMinus: Loc | undefined
    const loc = this.loc()
    if (this.isKeywordTok(this.t()) && this.t() !== "null" && this.t() !== "true" && this.t() !== "false") {
      // Keywords are identifiers when they start a ref (`input.in` has them after a dot).
      const next = this.peekNoWS()
      if (next === "." || next === "[" || this.t() === "contains") this.tok = { ...this.tok, tok: "identifier" }
    }
    switch (this.t()) {
      case "null":
        term = { type: "scalar", value: null, loc }
        break
      case "true":
        term = { type: "scalar", value: true, loc }
        break
      case "false":
        term = { type: "scalar", value: false, loc }
        break
      case "minus": {
        const st = this.save()
        this.scan()
        if (this.t() === "identifier" || this.t() === "contains") {
          unaryMinus = loc
          term = this.parseVar()
        } else {
          this.restore(st)
          term = this.parseNumber()
        }
        break
      }
      case ".":
      case "number":
        term = this.parseNumber()
        break
      case "string":
        term = this.parseString()
        break
      case "template-string-part":
      case "template-string-end":
        term = this.parseTemplate(false)
        break
      case "raw-template-string-part":
      case "raw-template-string-end":
        term = this.parseTemplate(true)
        break
      case "identifier":
        term = this.parseVar()
        break
      case "[":
        term = this.parseCollection("]")
        break
      case "{":
        term = this.parseCollection("}")
        break
      case "(": {
        this.scan()
        const r = this.parseTermInfixCall()
        if (r !== undefined) {
          if (this.t() === ")") term = r
          else this.errorAt(this.loc(), "non-terminated expression")
        }
        break
      }
      default:
        this.illegal()
    }
    term = this.parseTermFinish(term)
    if (unaryMinus !== undefined && term !== undefined) {
      const zero: Term = { type: "scalar", value: 0, loc: unaryMinus }
      term = this.call({ type: "ref", terms: [{ type: "var", name: "minus", loc: unaryMinus }], loc: unaryMinus }, [zero, term], unaryMinus)
    }
    return term
  }

  private parseTermFinish(head: Term | undefined): Term | undefined {
    if (head === undefined) return undefined
    this.scanWS()
    return this.parseRefOrTerm(head)
  }

  /** A ref when `(`, `.` or `[` follows the term (or the term is a root document), else the term. */
  private parseRefOrTerm(head: Term): Term | undefined {
    switch (this.t()) {
      case "(":
      case ".":
      case "[":
        return this.parseRef(head)
      case "whitespace":
        this.scan()
    }
    if (head.type === "var" && ROOT_DOCS.has(head.name)) return { type: "ref", terms: [head], loc: head.loc }
    return head
  }

  private parseNumber(): Term | undefined {
    const loc = this.loc()
    let prefix = ""
    if (this.t() === "minus") {
      prefix = "-"
      this.scan()
      if (this.t() !== "number" && this.t() !== ".") {
        this.illegal("expected number")
        return undefined
      }
    }
    if (this.t() === ".") {
      prefix += "."
      this.scan()
      if (this.t() !== "number") {
        this.illegal("expected number")
        return undefined
      }
    }
    const lit = this.tok.lit
    if (!prefix.endsWith(".") && lit.length > 1 && lit[0] === "0") {
      const isDecimal = lit[1] === "."
      const isScientific = lit.length > 2 && (lit[1] === "e" || lit[1] === "E")
      if (!isDecimal && !isScientific) {
        this.illegal("expected number without leading zero")
        return undefined
      }
    }
    let text = prefix + lit
    if (text.startsWith(".")) text = "0" + text
    else if (text.startsWith("-.")) text = "-0" + text.slice(1)
    const expMatch = /[eE]([+-]?\d+)$/.exec(text)
    if (expMatch !== null && Math.abs(Number(expMatch[1])) > 100000) {
      this.errorAt(this.loc(), "number too big")
      return undefined
    }
    const value = parseNumberLiteral(text)
    if (typeof value === "number" && !Number.isFinite(value)) {
      this.errorAt(this.loc(), "number too big")
      return undefined
    }
    return { type: "scalar", value, loc }
  }

  private parseString(): Term | undefined {
    const loc = this.loc()
    const lit = this.tok.lit
    if (lit[0] === '"') {
      const inner = lit.slice(1, -1)
      if (!inner.includes("\\")) return { type: "scalar", value: inner, loc }
      try {
        return { type: "scalar", value: JSON.parse(lit) as string, loc }
      } catch {
        this.errorAt(loc, `illegal string literal: ${lit}`)
        return undefined
      }
    }
    if (lit.length < 2) return undefined
    return { type: "scalar", value: lit.slice(1, -1), loc }
  }

  private parseTemplate(raw: boolean): Term | undefined {
    const loc = this.loc()
    const parts: Array<ScalarTerm | Expr> = []
    for (;;) {
      if (this.tok.lit.length > 0) parts.push({ type: "scalar", value: this.tok.lit, loc: this.loc() })
      if (this.t() === "template-string-end" || this.t() === "raw-template-string-end") break
      const before = this.comments.length
      this.scan()
      const expr = this.parseLiteral()
      if (expr === undefined) {
        this.errorAt(this.loc(), "invalid template-string expression")
        return undefined
      }
      if (expr.negated) {
        this.errorAt(expr.loc, "unexpected negation ('not') in template-string expression")
        return undefined
      }
      const b = expr.body
      if (b.type === "call" && b.op.terms.length === 1 && b.op.terms[0].type === "var") {
        const n = b.op.terms[0].name
        if (n === "eq") {
          this.errorAt(expr.loc, "unexpected unification ('=') in template-string expression")
          return undefined
        }
        if (n === "assign") {
          this.errorAt(expr.loc, "unexpected assignment (':=') in template-string expression")
          return undefined
        }
      }
      if (b.type === "every") {
        this.errorAt(expr.loc, "unexpected 'every' in template-string expression")
        return undefined
      }
      if (b.type === "some" || b.type === "somein") {
        this.errorAt(expr.loc, "unexpected 'some' in template-string expression")
        return undefined
      }
      if (b.type === "term" && b.term.type === "scalar" && this.comments.length === before && expr.with.length === 0) {
        const v = b.term.value
        parts.push({ type: "scalar", value: typeof v === "string" ? v : formatScalar(v), loc: b.term.loc })
      } else parts.push(expr)
      if (this.t() !== "}") {
        this.errorAt(this.loc(), "expected } to end template string expression")
        return undefined
      }
      if (this.t() !== "whitespace") {
        this.lastEnd = this.tok.end
        this.skippedNL = false
      }
      this.doScan(false, raw ? "raw" : "template")
    }
    return { type: "template", parts, loc }
  }

  private parseCall(op: RefTerm): Term | undefined {
    if (!this.enter()) return undefined
    try {
      this.scan()
      if (this.t() === ")") {
        this.scanWS()
        if (op.terms.length === 1 && op.terms[0].type === "var" && op.terms[0].name === "set") return { type: "set", items: [], loc: op.loc }
        return this.call(op, [], op.loc)
      }
      const args = this.parseTermList(")", [])
      if (args === undefined) return undefined
      this.scanWS()
      return this.call(op, args, op.loc)
    } finally {
      this.leave()
    }
  }

  private parseRef(head: Term): Term | undefined {
    if (!this.enter()) return undefined
    try {
      switch (head.type) {
        case "var":
        case "array":
        case "object":
        case "set":
        case "arraycomp":
        case "objectcomp":
        case "setcomp":
        case "call":
          break
        default:
          this.errorAt(head.loc, `illegal ref (head cannot be ${valueName(head)})`)
      }
      const terms: Term[] = [head]
      for (;;) {
        switch (this.t()) {
          case ".": {
            this.scanWS()
            if (this.t() !== "identifier" && !this.isKeywordTok(this.t())) {
              this.illegal("expected identifier")
              return undefined
            }
            terms.push({ type: "scalar", value: this.tok.lit, loc: this.loc() })
            this.scanWS()
            break
          }
          case "(": {
            let t: Term | undefined = this.parseCall({ type: "ref", terms: [...terms], loc: head.loc })
            if (t !== undefined) {
              const tt = this.t()
              if (tt === "whitespace") {
                this.scan()
                return t
              }
              if (tt === "." || tt === "[") t = this.parseRef(t)
            }
            return t
          }
          case "[": {
            this.scan()
            const t = this.parseTermInfixCall()
            if (t === undefined) return undefined
            if (this.t() !== "]") {
              this.illegal("expected [")
              return undefined
            }
            terms.push(t)
            this.scanWS()
            break
          }
          case "whitespace":
            this.scan()
            return { type: "ref", terms, loc: head.loc }
          default:
            return { type: "ref", terms, loc: head.loc }
        }
      }
    } finally {
      this.leave()
    }
  }

  /** An array (`end` is `]`), or a set or object (`end` is `}`), from its opening bracket. */
  private parseCollection(end: "]" | "}"): Term | undefined {
    if (!this.enter()) return undefined
    try {
      const loc = this.loc()
      this.scan()
      if (this.t() === end) return end === "]" ? { type: "array", items: [], loc } : { type: "object", entries: [], loc }
      let potentialComprehension = true
      if (this.t() === ",") {
        potentialComprehension = false
        this.scan()
      }
      const st = this.save()
      const head = this.parseTerm()
      if (head === undefined) return undefined
      if (end === "]") return this.parseItems("array", st, head, potentialComprehension, loc)
      return this.parseSetOrObject(st, head, potentialComprehension, loc)
    } finally {
      this.leave()
    }
  }

  /** The rest of a set or object after its first term (`head`, parsed from `st`). */
  private parseSetOrObject(st: State, head: Term, potentialComprehension: boolean, loc: Loc): Term | undefined {
    switch (this.t()) {
      case "or":
        if (potentialComprehension) return this.parseItems("set", st, head, true, loc)
        break
      case "}":
      case ",":
        return this.parseItems("set", st, head, potentialComprehension, loc)
      case ":":
        return this.parseObject(head, potentialComprehension, loc)
    }
    this.restore(st)
    const infix = this.parseTermInfixCallInList()
    if (infix === undefined) return undefined
    switch (this.t()) {
      case "}":
      case ",":
        return this.parseItems("set", st, infix, false, loc)
      case ":":
        return this.parseObject(infix, potentialComprehension, loc)
    }
    this.illegal("non-terminated set")
    return undefined
  }

  /**
   * The rest of an array or set after its first term (`head`, parsed from `st`): the closing
   * bracket, more items, or `|` and a comprehension body; otherwise (head was only the start of
   * an infix term) the items again from `st`. Sets come here only on `}`, `,` or a possible `|`.
   */
  private parseItems(type: "array" | "set", st: State, head: Term, potentialComprehension: boolean, loc: Loc): Term | undefined {
    const end = type === "array" ? "]" : "}"
    switch (this.t()) {
      case end:
        return { type, items: [head], loc }
      case ",": {
        this.scan()
        const items = this.parseTermList(end, [head])
        return items === undefined ? undefined : { type, items, loc }
      }
      case "or":
        if (potentialComprehension) {
          this.scan()
          const body = this.parseBody(end)
          if (body !== undefined) return { type: type === "array" ? "arraycomp" : "setcomp", head, body, loc }
          if (this.t() !== ",") return undefined
        }
    }
    this.restore(st)
    const items = this.parseTermList(end, [])
    return items === undefined ? undefined : { type, items, loc }
  }

  private parseObject(key: Term, potentialComprehension: boolean, loc: Loc): Term | undefined {
    this.scan()
    const st = this.save()
    const v = this.parseTerm()
    if (v === undefined) return undefined
    let potentialRelation = true
    if (potentialComprehension) {
      const t = this.t()
      if (t === "}" || t === ",") potentialRelation = false
      if (t === "}" || t === "," || t === "or") {
        const term = this.parseObjectFinish(key, v, true, loc)
        if (term !== undefined) return term
      }
    }
    this.restore(st)
    if (potentialRelation) {
      const v2 = this.parseTermInfixCallInList()
      if (v2 === undefined) return undefined
      if (this.t() === "}" || this.t() === ",") return this.parseObjectFinish(key, v2, false, loc)
    }
    this.illegal("non-terminated object")
    return undefined
  }

  private parseObjectFinish(key: Term, value: Term, potentialComprehension: boolean, loc: Loc): Term | undefined {
    switch (this.t()) {
      case "}":
        return { type: "object", entries: [[key, value]], loc }
      case "or":
        if (potentialComprehension) {
          this.scan()
          const body = this.parseBody("}")
          if (body !== undefined) return { type: "objectcomp", key, value, body, loc }
        } else this.illegal("non-terminated object")
        return undefined
      case ",": {
        this.scan()
        const entries = this.parseTermPairList("}", [[key, value]])
        return entries === undefined ? undefined : { type: "object", entries, loc }
      }
    }
    return undefined
  }

  /** Items after those in `r`, separated by commas (a trailing one allowed), up to `end`. */
  private parseList<T>(end: Tok, r: T[], item: () => T | undefined): T[] | undefined {
    if (this.t() === end) return r
    for (;;) {
      const x = item()
      if (x === undefined) return undefined
      r.push(x)
      if (this.t() === end) return r
      if (this.t() === ",") {
        this.scan()
        if (this.t() === end) return r
        continue
      }
      this.illegal(`expected "," or "${end}"`)
      return undefined
    }
  }

  private parseTermList(end: Tok, r: Term[]): Term[] | undefined {
    return this.parseList(end, r, () => this.parseTermInfixCallInList())
  }

  private parseTermPairList(end: Tok, r: Array<[Term, Term]>): Array<[Term, Term]> | undefined {
    return this.parseList(end, r, (): [Term, Term] | undefined => {
      const key = this.parseTermInfixCallInList()
      if (key === undefined) return undefined
      if (this.t() !== ":") {
        this.illegal(`expected ":"`)
        return undefined
      }
      this.scan()
      const val = this.parseTermInfixCallInList()
      return val === undefined ? undefined : [key, val]
    })
  }

  /** A whole query: literals separated by newlines or semicolons. */
  parseQueryStatements(): { body: Expr[]; errors: RegoError[] } {
    const body: Expr[] = []
    while (this.t() !== "eof") {
      const b = this.parseQuery(true, "eof")
      if (b === undefined) break
      body.push(...b)
    }
    if (body.length === 0 && this.errors.length === 0) this.errorAt(this.loc(), "empty query")
    return { body, errors: this.regoErrors() }
  }

  private parseVar(): VarTerm {
    const loc = this.loc()
    if (this.tok.lit === "_") return { type: "var", name: this.genWildcard(), loc }
    return { type: "var", name: this.tok.lit, loc }
  }
}

const trueExpr = (loc: Loc): Expr => ({ negated: false, body: { type: "term", term: { type: "scalar", value: true, loc } }, with: [], loc })

const formatScalar = (v: unknown): string => (v === null ? "null" : typeof v === "bigint" ? v.toString() : String(v))

// ---------------------------------------------------------------------------------------------
// Modules

const parseAnnotations = (comments: Comment[], errors: RegoError[]): Annotation[] => {
  const out: Annotation[] = []
  for (let i = 0; i < comments.length; i++) {
    const c = comments[i]
    if (c.loc.col !== 1 || c.text.trim() !== "METADATA") continue
    const lines: string[] = []
    let j = i + 1
    for (; j < comments.length; j++) {
      const d = comments[j]
      if (d.loc.col !== 1 || d.loc.row - 1 !== comments[j - 1].loc.row || d.text.trim() === "METADATA") break
      lines.push(d.text.startsWith(" ") ? d.text.slice(1) : d.text)
    }
    i = j - 1
    try {
      const raw = (parseYAML(lines.join("\n")) ?? {}) as Record<string, unknown>
      if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new Error("expected METADATA block to be a YAML object")
      out.push({ loc: c.loc, endRow: comments[j - 1].loc.row, raw })
    } catch (e) {
      errors.push(new RegoError("rego_parse_error", e instanceof Error ? e.message : String(e), c.loc))
    }
  }
  return out
}

const KEYWORD_RULE_NAMES = KEYWORDS

const checkRegoV1Rule = (rule: Rule, errors: RegoError[]): void => {
  const head = rule.head
  const t = head.args !== undefined ? "function" : "rule"
  const first = head.ref[0]
  if (head.ref.length < 2 && first.type === "var" && KEYWORD_RULE_NAMES.has(first.name)) {
    errors.push(new RegoError("rego_parse_error", `${first.name} keyword cannot be used for rule name`, rule.loc))
  }
  if (rule.generatedBody && head.generatedValue) {
    errors.push(new RegoError("rego_parse_error", `${t} must have value assignment and/or body declaration`, rule.loc))
  }
  if (!rule.generatedBody && !head.hasIf && !rule.default) {
    errors.push(new RegoError("rego_parse_error", `\`if\` keyword is required before ${t} body`, rule.loc))
  }
  if (head.key !== undefined && head.value === undefined && !head.contains) {
    errors.push(new RegoError("rego_parse_error", "`contains` keyword is required for partial set rules", rule.loc))
  }
}

/** Turns a statement like `p := 1`, `a.b.c`, `p[x] = y` or `f(x) = y` into a rule. */
const ruleFromBody = (body: Body): Rule | string => {
  if (body.length !== 1) return "multiple expressions cannot be used for rule head"
  const expr = body[0]
  if (expr.with.length > 0) return "expressions using with keyword cannot be used for rule head"
  if (expr.negated) return "negated expressions cannot be used for rule head"
  const b = expr.body
  if (b.type === "some" || b.type === "somein") return "'some' declarations cannot be used for rule head"
  const loc = expr.loc
  const mk = (head: Omit<Head, "hasIf" | "contains" | "loc"> & { loc?: Loc }, bodyLoc: Loc): Rule => ({
    default: false,
    head: { hasIf: false, contains: false, loc: head.loc ?? loc, ...head } as Head,
    body: [trueExpr(bodyLoc)],
    else: undefined,
    generatedBody: true,
    loc
  })
  if (b.type === "term") {
    const t = b.term
    if (t.type !== "ref") return `${valueName(t)} cannot be used for rule name`
    if (t.terms[0].type !== "var") return `invalid rule head: ${termString(t)}`
    if (t.terms.length > 2) {
      return mk({ ref: t.terms, args: undefined, key: undefined, value: { type: "scalar", value: true, loc: t.loc }, assign: false, generatedValue: true }, t.loc)
    }
    if (t.terms.length === 1) return `refs cannot be used for rule head`
    return mk({ ref: [t.terms[0]], args: undefined, key: t.terms[1], value: undefined, assign: false, generatedValue: false }, t.loc)
  }
  if (b.type !== "call") return "expression cannot be used for rule head"
  const opName = b.op.terms.length === 1 && b.op.terms[0].type === "var" ? b.op.terms[0].name : undefined
  if (opName === "eq" || opName === "assign") {
    const [lhs, rhs] = b.args
    if (lhs === undefined || rhs === undefined) return "assignment requires two operands"
    const assign = opName === "assign"
    if (lhs.type === "call") {
      if (lhs.op.terms[0].type !== "var") return `invalid rule head: ${termString(lhs.op)}`
      return mk({ ref: lhs.op.terms, args: lhs.args, key: undefined, value: rhs, assign, generatedValue: false, loc: lhs.loc }, rhs.loc)
    }
    if (lhs.type === "var") return mk({ ref: [lhs], args: undefined, key: undefined, value: rhs, assign, generatedValue: false, loc: lhs.loc }, rhs.loc)
    if (lhs.type === "ref") {
      if (lhs.terms[0].type !== "var") return `invalid rule head: ${termString(lhs)}`
      return mk({ ref: lhs.terms, args: undefined, key: undefined, value: rhs, assign, generatedValue: false, loc: lhs.loc }, rhs.loc)
    }
    return `${valueName(lhs)} cannot be used for rule name`
  }
  if (opName !== undefined && BUILTIN_HEAD_NAMES.has(opName)) return "rule name conflicts with built-in function"
  if (b.args.length === 0) return "rule argument list must take at least one argument"
  if (b.op.terms[0].type !== "var") return `invalid rule head: ${termString(b.op)}`
  return mk({ ref: b.op.terms, args: b.args, key: undefined, value: { type: "scalar", value: true, loc: b.op.loc }, assign: false, generatedValue: true }, b.op.loc)
}

// Infix operator builtins: a top-level statement using one of them is not a rule.
const BUILTIN_HEAD_NAMES = new Set([
  "equal",
  "neq",
  "lt",
  "gt",
  "lte",
  "gte",
  "plus",
  "minus",
  "mul",
  "div",
  "rem",
  "and",
  "or",
  "internal.member_2",
  "internal.member_3"
])

/** Parses one module; throws RegoCompileError with every parse error found. */
/** Runs a parse; nesting deeper than the JavaScript stack allows is a parse error, as past the depth limit. */
const withinStack = <T>(p: Parser, f: () => T): T => {
  try {
    return f()
  } catch (e) {
    if (isStackOverflow(e)) throw new RegoCompileError([new RegoError("rego_parse_error", "max parsing recursion depth exceeded", p.location())])
    throw e
  }
}

export const parseModule = (file: string, source: string): Module => {
  const p = new Parser(file, source)
  const { stmts, errors, comments } = withinStack(p, () => p.parseStatements())
  if (errors.length > 0) throw new RegoCompileError(errors)
  if (stmts.length === 0) throw new RegoCompileError([new RegoError("rego_parse_error", "empty module", { file, row: 0, col: 0 })])
  const errs: RegoError[] = []
  const first = stmts[0]
  let pkg: string[] = []
  let pkgLoc: Loc = { file, row: 1, col: 1, offset: 0 }
  if (first.type !== "package") {
    const loc = first.type === "import" ? first.imp.loc : first.type === "rule" ? first.rule.loc : first.loc
    errs.push(new RegoError("rego_parse_error", "package expected", loc))
  } else {
    pkgLoc = first.loc
    const path = first.path
    pkg = path.type === "var" ? [path.name] : path.terms.map((t, i) => (i === 0 ? (t as VarTerm).name : String((t as ScalarTerm).value)))
  }
  const imports: Import[] = []
  const rules: Rule[] = []
  for (let i = 1; i < stmts.length; i++) {
    const s = stmts[i]
    switch (s.type) {
      case "import":
        imports.push(s.imp)
        break
      case "rule":
        rules.push(s.rule)
        break
      case "body": {
        const r = ruleFromBody(s.body)
        if (typeof r === "string") errs.push(new RegoError("rego_parse_error", r, s.body[0]?.loc ?? s.loc))
        else rules.push(r)
        break
      }
      case "package":
        errs.push(new RegoError("rego_parse_error", "unexpected package", s.loc))
        break
    }
  }
  for (const rule of rules) for (let r: Rule | undefined = rule; r !== undefined; r = r.else) checkRegoV1Rule(r, errs)
  const annotations = parseAnnotations(comments, errs)
  if (errs.length > 0) throw new RegoCompileError(errs)
  return { file, pkg, pkgLoc, imports, rules, annotations, source }
}

/** Parses a query (a body), e.g. `data.x.allow == true; y := 1`. */
export const parseQuery = (source: string, file = ""): Body => {
  const p = new Parser(file, source)
  const { body, errors } = withinStack(p, () => p.parseQueryStatements())
  if (errors.length > 0) throw new RegoCompileError(errors)
  return body
}
