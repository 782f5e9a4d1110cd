// strings.render_template: Go's text/template over the template variables, as OPA runs it.
//
// OPA decodes the variables as JSON (numbers stay their JSON text), executes the template with
// the default "missingkey" behaviour and replaces every "<no value>" in the output with
// "<undefined>". This implementation covers the language policies use: text, comments and
// whitespace trimming (`{{- -}}`), fields and chains (`.a.b`, `$x.a`, `(pipeline).a`), variables
// (`$x := ...`, `$x = ...`), pipelines (`a | f b`), `if`/`else if`/`else`, `range` (with
// `else`, `break`, `continue`, one or two variables, over arrays, objects and integers),
// `with`/`else with`, and the builtin functions and, or, not, len, index, slice, eq, ne, lt,
// le, gt, ge, print, println, printf (common verbs), html, js and urlquery. Named templates
// (`define`, `template`, `block`) and `call` are reported as errors.

import { stringifyJSON, toJSON } from "../json.js"
import type { Value } from "../value.js"
import { queryEscape } from "./encoding.js"
import { goAnyOf, JsonNumber } from "./gojson.js"
import { obj, str } from "./args.js"
import { asBuiltinError, type BuiltinDef } from "./registry.js"
import { parseNum } from "./sprintf.js"
import { trimASCII } from "./strings.js"

// ---------------------------------------------------------------------------------------------
// Values as the template sees them (Go's decoding of JSON into `any`)

/** A float64 constant written in the template. */
class Float {
  constructor(readonly value: number) {}
}

/** undefined is Go's invalid value ("no value"); null is a nil interface. */
type TV = undefined | null | boolean | string | number | JsonNumber | Float | TV[] | Map<string, TV>

/** The variables as Go decodes them (a json.Number prints as its JSON text; its Go kind is string). */
const fromValue = (v: Value): TV => goAnyOf(v, (k) => stringifyJSON(toJSON(k)))

const isMap = (v: TV): v is Map<string, TV> => v instanceof Map
const sortedKeys = (m: Map<string, TV>): string[] => [...m.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))

/** Go's type names, for error messages. */
const goType = (v: TV): string => {
  if (v === undefined || v === null) return "<nil>"
  if (typeof v === "string") return "string"
  if (typeof v === "boolean") return "bool"
  if (typeof v === "number") return "int"
  if (v instanceof JsonNumber) return "json.Number"
  if (v instanceof Float) return "float64"
  if (Array.isArray(v)) return "[]interface {}"
  return "map[string]interface {}"
}

/** Go's %g with the shortest digits (fmt's %v of a float64). */
const formatFloat = (n: number): string => {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? "NaN" : n > 0 ? "+Inf" : "-Inf"
  if (n === 0) return Object.is(n, -0) ? "-0" : "0"
  const [mant, e] = n.toExponential().split("e")
  const exp = Number(e)
  if (exp < -4 || exp >= 21) return `${mant}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`
  return String(n)
}

/** fmt's %v. `top` marks the value printed by an action (a nil there prints as "<no value>"). */
const print = (v: TV, top = false): string => {
  if (v === undefined) return "<no value>"
  if (v === null) return top ? "<no value>" : "<nil>"
  if (typeof v === "string") return v
  if (typeof v === "boolean" || typeof v === "number") return String(v)
  if (v instanceof JsonNumber) return v.text
  if (v instanceof Float) return formatFloat(v.value)
  if (Array.isArray(v)) return "[" + v.map((x) => print(x)).join(" ") + "]"
  return "map[" + sortedKeys(v).map((k) => `${k}:${print(v.get(k))}`).join(" ") + "]"
}

const truth = (v: TV): boolean => {
  if (v === undefined || v === null) return false
  if (typeof v === "boolean") return v
  if (typeof v === "number") return v !== 0
  if (typeof v === "string") return v.length > 0
  if (v instanceof JsonNumber) return v.text.length > 0
  if (v instanceof Float) return v.value !== 0
  if (Array.isArray(v)) return v.length > 0
  return v.size > 0
}

// ---------------------------------------------------------------------------------------------
// Lexing and parsing

class TemplateError extends Error {}

type Node =
  | { kind: "field"; names: string[]; pos: number }
  | { kind: "dot"; pos: number }
  | { kind: "var"; name: string; names: string[]; pos: number }
  | { kind: "ident"; name: string; pos: number }
  | { kind: "string"; value: string; pos: number }
  | { kind: "number"; value: number; float: boolean; pos: number }
  | { kind: "bool"; value: boolean; pos: number }
  | { kind: "nil"; pos: number }
  | { kind: "pipe"; pipe: Pipe; names: string[]; pos: number }

interface Command {
  readonly args: Node[]
  readonly text: string
  readonly pos: number
}

interface Pipe {
  readonly decl: string[]
  readonly assign: boolean
  readonly cmds: Command[]
}

type Item =
  | { kind: "text"; text: string }
  | { kind: "action"; pipe: Pipe; pos: number }
  | { kind: "if" | "with"; pipe: Pipe; body: Item[]; otherwise: Item[] | undefined; pos: number }
  | { kind: "range"; pipe: Pipe; body: Item[]; otherwise: Item[] | undefined; pos: number }
  | { kind: "break" | "continue"; pos: number }

const FUNCTIONS = new Set(["and", "or", "not", "len", "index", "slice", "eq", "ne", "lt", "le", "gt", "ge", "print", "printf", "println", "html", "js", "urlquery", "call"])

/** A raw action: its text between the delimiters and where it starts. */
interface RawAction {
  readonly text: string
  readonly pos: number
}

type Piece = { kind: "text"; text: string } | { kind: "action"; action: RawAction }

const isSpace = (c: string | undefined): boolean => c === " " || c === "\t" || c === "\r" || c === "\n"

/** Splits the source into text and actions, applying trim markers and dropping comments. */
const split = (src: string): Piece[] => {
  const out: Piece[] = []
  let i = 0
  let trimNext = false
  while (i < src.length) {
    const open = src.indexOf("{{", i)
    let text = open < 0 ? src.slice(i) : src.slice(i, open)
    if (trimNext) text = text.replace(/^[ \t\r\n]+/, "")
    trimNext = false
    if (open < 0) {
      if (text !== "") out.push({ kind: "text", text })
      break
    }
    let start = open + 2
    if (src[start] === "-" && isSpace(src[start + 1])) {
      text = trimASCII(text, " \t\r\n", false, true)
      start += 2
    }
    if (text !== "") out.push({ kind: "text", text })
    // Find the closing delimiter outside string literals and comments.
    let j = start
    while (isSpace(src[j])) j++
    let end = -1
    if (src.startsWith("/*", j)) {
      const close = src.indexOf("*/", j + 2)
      if (close < 0) throw new TemplateError(`template: template:${lineOf(src, open)}: unclosed comment`)
      let k = close + 2
      while (isSpace(src[k])) k++
      if (src[k] === "-" && src.startsWith("}}", k + 1) && isSpace(src[k - 1])) {
        trimNext = true
        end = k + 3
      } else if (src.startsWith("}}", k)) end = k + 2
      else throw new TemplateError(`template: template:${lineOf(src, open)}: comment ends before closing delimiter`)
      i = end
      continue
    }
    let k = start
    while (k < src.length) {
      const c = src[k]
      if (c === '"' || c === "'") {
        k++
        while (k < src.length && src[k] !== c) k += src[k] === "\\" ? 2 : 1
        k++
        continue
      }
      if (c === "`") {
        const close = src.indexOf("`", k + 1)
        k = close < 0 ? src.length : close + 1
        continue
      }
      if (c === "-" && src.startsWith("}}", k + 1) && isSpace(src[k - 1])) {
        trimNext = true
        end = k
        break
      }
      if (src.startsWith("}}", k)) {
        end = k
        break
      }
      k++
    }
    if (end < 0) throw new TemplateError(`template: template:${lineOf(src, open)}: unclosed action`)
    out.push({ kind: "action", action: { text: src.slice(start, end), pos: start } })
    i = trimNext ? end + 3 : end + 2
  }
  return out
}

const lineOf = (src: string, pos: number): number => src.slice(0, pos).split("\n").length

type TokBody =
  | { t: "field"; v: string }
  | { t: "var"; v: string }
  | { t: "ident"; v: string }
  | { t: "string"; v: string }
  | { t: "number"; v: number; float: boolean }
  | { t: "punct"; v: "(" | ")" | "|" | ":=" | "=" | "," }
  | { t: "dot"; v: "." }

/** A token: its value, where it starts and ends in the source, and whether it touches the previous one. */
type Tok = TokBody & { pos: number; end: number; adj: boolean }

const unquote = (lit: string, fail: () => never): string => {
  if (lit.startsWith("`")) return lit.slice(1, -1)
  const body = lit.slice(1, -1)
  let out = ""
  for (let i = 0; i < body.length; i++) {
    const c = body[i]
    if (c !== "\\") {
      out += c
      continue
    }
    const e = body[++i]
    const simple: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", '"': '"', "'": "'", a: "\x07", b: "\b", f: "\f", v: "\v" }
    if (e in simple) out += simple[e]
    else if (e === "x" || e === "u" || e === "U") {
      const len = e === "x" ? 2 : e === "u" ? 4 : 8
      const hex = body.slice(i + 1, i + 1 + len)
      if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) fail()
      out += String.fromCodePoint(parseInt(hex, 16))
      i += len
    } else if (e >= "0" && e <= "7") {
      const oct = body.slice(i, i + 3)
      if (!/^[0-7]{3}$/.test(oct)) fail()
      out += String.fromCharCode(parseInt(oct, 8))
      i += 2
    } else fail()
  }
  return out
}

const tokenize = (a: RawAction, src: string): Tok[] => {
  const s = a.text
  const out: Tok[] = []
  let i = 0
  /** Adds a token that ends just before index `next` of the action text, and moves there. */
  const emit = (tok: TokBody & { pos: number; adj: boolean }, next: number): void => {
    out.push({ ...tok, end: a.pos + next })
    i = next
  }
  const fail = (msg: string): never => {
    throw new TemplateError(`template: template:${lineOf(src, a.pos)}: ${msg}`)
  }
  while (i < s.length) {
    const adj = i > 0 && !isSpace(s[i - 1])
    const c = s[i]
    const pos = a.pos + i
    if (isSpace(c)) {
      i++
      continue
    }
    if (c === "(" || c === ")" || c === "|" || c === "," || c === "=") {
      emit({ t: "punct", v: c, pos, adj }, i + 1)
      continue
    }
    if (c === ":" && s[i + 1] === "=") {
      emit({ t: "punct", v: ":=", pos, adj }, i + 2)
      continue
    }
    if (c === '"' || c === "`") {
      let j = i + 1
      if (c === "`") j = s.indexOf("`", j)
      else while (j < s.length && s[j] !== '"') j += s[j] === "\\" ? 2 : 1
      if (j < 0 || j >= s.length) fail("unterminated quoted string")
      const lit = s.slice(i, j + 1)
      emit({ t: "string", v: unquote(lit, () => fail(`bad string syntax: ${lit}`)), pos, adj }, j + 1)
      continue
    }
    if (c === "'") {
      let j = i + 1
      while (j < s.length && s[j] !== "'") j += s[j] === "\\" ? 2 : 1
      const lit = s.slice(i, j + 1)
      const ch = unquote('"' + lit.slice(1, -1) + '"', () => fail(`bad character syntax: ${lit}`))
      if ([...ch].length !== 1) fail(`malformed character constant: ${lit}`)
      emit({ t: "number", v: ch.codePointAt(0) as number, float: false, pos, adj }, j + 1)
      continue
    }
    if (c === "." && !/[0-9]/.test(s[i + 1] ?? "")) {
      const m = /^\.[A-Za-z_][A-Za-z0-9_]*/.exec(s.slice(i))
      if (m === null) {
        emit({ t: "dot", v: ".", pos, adj }, i + 1)
      } else {
        emit({ t: "field", v: m[0].slice(1), pos, adj }, i + m[0].length)
      }
      continue
    }
    if (c === "$") {
      const m = /^\$[A-Za-z0-9_]*/.exec(s.slice(i)) as RegExpExecArray
      emit({ t: "var", v: m[0], pos, adj }, i + m[0].length)
      continue
    }
    const num = /^[+-]?(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?)/.exec(s.slice(i))
    if (num !== null && (c !== "+" && c !== "-" ? true : /[0-9.]/.test(s[i + 1] ?? ""))) {
      const text = num[0].replaceAll("_", "")
      const float = /^[+-]?\d*\.|[eE]/.test(text) && !/^[+-]?0[xX]/.test(text)
      const sign = text.startsWith("-") ? -1 : 1
      const body = text.replace(/^[+-]/, "")
      let v: number
      if (/^0[xX]/.test(body)) v = parseInt(body.slice(2), 16)
      else if (/^0[bB]/.test(body)) v = parseInt(body.slice(2), 2)
      else if (/^0[oO]/.test(body)) v = parseInt(body.slice(2), 8)
      else if (!float && /^0\d/.test(body)) v = parseInt(body, 8)
      else v = Number(body)
      emit({ t: "number", v: sign * v, float, pos, adj }, i + num[0].length)
      continue
    }
    const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(s.slice(i))
    if (id !== null) {
      emit({ t: "ident", v: id[0], pos, adj }, i + id[0].length)
      continue
    }
    fail(`unexpected ${JSON.stringify(c)} in command`)
  }
  return out
}

class Parser {
  private readonly pieces: Piece[]
  private at = 0
  /** Declared variables, one scope per control structure. */
  private readonly scopes: Array<Set<string>> = [new Set(["$"])]

  constructor(private readonly src: string) {
    this.pieces = split(src)
  }

  private fail(pos: number, msg: string): never {
    throw new TemplateError(`template: template:${lineOf(this.src, pos)}: ${msg}`)
  }

  parse(): Item[] {
    const { items, end } = this.list(0)
    if (end !== undefined) this.fail(end.pos, `unexpected {{${end.word}}}`)
    return items
  }

  private declared(name: string): boolean {
    return this.scopes.some((s) => s.has(name))
  }

  /** Items up to an {{end}} / {{else ...}} (returned as `end`) or the end of input. */
  private list(depth: number): { items: Item[]; end: { word: string; rest: Tok[]; pos: number } | undefined } {
    const items: Item[] = []
    while (this.at < this.pieces.length) {
      const p = this.pieces[this.at++]
      if (p.kind === "text") {
        items.push({ kind: "text", text: p.text })
        continue
      }
      const toks = tokenize(p.action, this.src)
      if (toks.length === 0) this.fail(p.action.pos, "missing value for command")
      const first = toks[0]
      if (first.t === "ident") {
        switch (first.v) {
          case "end":
          case "else":
            if (depth === 0) this.fail(first.pos, `unexpected {{${first.v}}}`)
            return { items, end: { word: first.v, rest: toks.slice(1), pos: first.pos } }
          case "if":
          case "with":
          case "range":
            items.push(this.control(first.v, toks.slice(1), first.pos, depth))
            continue
          case "break":
          case "continue":
            if (!this.inRange) this.fail(first.pos, `{{${first.v}}} outside {{range}}`)
            items.push({ kind: first.v, pos: first.pos })
            continue
          case "define":
          case "template":
          case "block":
            this.fail(first.pos, `{{${first.v}}} is not supported by strings.render_template`)
        }
      }
      items.push({ kind: "action", pipe: this.pipeline(toks, p.action.pos, false), pos: p.action.pos })
    }
    return { items, end: undefined }
  }

  private inRange = false

  private control(kind: "if" | "with" | "range", toks: Tok[], pos: number, depth: number): Item {
    this.scopes.push(new Set())
    const pipe = this.pipeline(toks, pos, kind === "range")
    const wasInRange = this.inRange
    if (kind === "range") this.inRange = true
    const body = this.list(depth + 1)
    this.inRange = wasInRange
    this.scopes.pop()
    if (body.end === undefined) this.fail(pos, "unexpected EOF")
    let otherwise: Item[] | undefined
    if (body.end.word === "else") {
      const rest = body.end.rest
      if (rest.length > 0 && rest[0].t === "ident" && (rest[0].v === "if" || rest[0].v === "with") && kind !== "range") {
        // {{else if ...}} / {{else with ...}}: a nested control that shares the {{end}}.
        const nested = rest[0].v === "if" ? "if" : "with"
        otherwise = [this.control(nested, rest.slice(1), rest[0].pos, depth)]
      } else {
        if (rest.length > 0) this.fail(body.end.pos, "unexpected token after else")
        this.scopes.push(new Set())
        const e = this.list(depth + 1)
        this.scopes.pop()
        if (e.end === undefined || e.end.word !== "end") this.fail(pos, "expected end; found " + (e.end === undefined ? "EOF" : "else"))
        otherwise = e.items
      }
    } else if (body.end.rest.length > 0) this.fail(body.end.pos, "unexpected token after end")
    return { kind, pipe, body: body.items, otherwise, pos }
  }

  private pipeline(toks: Tok[], pos: number, allowTwo: boolean): Pipe {
    let decl: string[] = []
    let assign = false
    let k = 0
    // $x := / $x = / $i, $v :=
    if (toks[0]?.t === "var") {
      if (toks[1]?.t === "punct" && (toks[1].v === ":=" || toks[1].v === "=")) {
        decl = [toks[0].v]
        assign = toks[1].v === "="
        k = 2
      } else if (allowTwo && toks[1]?.t === "punct" && toks[1].v === "," && toks[2]?.t === "var" && toks[3]?.t === "punct" && toks[3].v === ":=") {
        decl = [toks[0].v, toks[2].v]
        k = 4
      }
    }
    for (const d of decl) {
      if (assign) {
        if (!this.declared(d)) this.fail(pos, `undefined variable "${d}"`)
      } else this.scopes[this.scopes.length - 1].add(d)
    }
    const cmds: Command[] = []
    let args: Node[] = []
    let start = k
    const finish = (end: number): void => {
      if (args.length === 0) this.fail(pos, "missing value for command")
      const first = toks[start]
      const last = toks[end - 1]
      cmds.push({ args, text: first === undefined ? "" : this.src.slice(first.pos, last.end), pos: first?.pos ?? pos })
      args = []
    }
    while (k < toks.length) {
      const t = toks[k]
      if (t.t === "punct" && t.v === "|") {
        finish(k)
        k++
        start = k
        continue
      }
      const [node, next] = this.operand(toks, k, pos)
      args.push(node)
      k = next
    }
    if (args.length === 0 && cmds.length === 0 && decl.length > 0) this.fail(pos, "missing value for command")
    finish(k)
    for (let i = 0; i < cmds.length; i++) {
      const a0 = cmds[i].args[0]
      if ((a0.kind === "string" || a0.kind === "number" || a0.kind === "bool" || a0.kind === "nil") && (cmds[i].args.length > 1 || i > 0)) {
        this.fail(pos, `can't give argument to non-function ${tokTextOfNode(a0)}`)
      }
    }
    return { decl, assign, cmds }
  }

  /** One operand and any field chain attached to it. */
  private operand(toks: Tok[], k: number, pos: number): [Node, number] {
    const t = toks[k]
    let node: Node
    k++
    switch (t.t) {
      case "field":
        node = { kind: "field", names: [t.v], pos: t.pos }
        break
      case "dot":
        node = { kind: "dot", pos: t.pos }
        break
      case "var":
        if (!this.declared(t.v)) this.fail(pos, `undefined variable "${t.v}"`)
        node = { kind: "var", name: t.v, names: [], pos: t.pos }
        break
      case "string":
        node = { kind: "string", value: t.v, pos: t.pos }
        break
      case "number":
        node = { kind: "number", value: t.v, float: t.float, pos: t.pos }
        break
      case "ident":
        if (t.v === "true" || t.v === "false") node = { kind: "bool", value: t.v === "true", pos: t.pos }
        else if (t.v === "nil") node = { kind: "nil", pos: t.pos }
        else if (FUNCTIONS.has(t.v)) node = { kind: "ident", name: t.v, pos: t.pos }
        else this.fail(pos, `function "${t.v}" not defined`)
        break
      case "punct": {
        if (t.v !== "(") this.fail(pos, `unexpected "${t.v}" in operand`)
        let depth = 1
        let j = k
        while (j < toks.length && depth > 0) {
          const x = toks[j]
          if (x.t === "punct" && x.v === "(") depth++
          if (x.t === "punct" && x.v === ")") depth--
          j++
        }
        if (depth !== 0) this.fail(pos, "unclosed left paren")
        node = { kind: "pipe", pipe: this.pipeline(toks.slice(k, j - 1), pos, false), names: [], pos: t.pos }
        k = j
        break
      }
    }
    // Fields written right after the operand (".a.b", "$x.a", "(...).a").
    while (k < toks.length && toks[k].t === "field" && toks[k].adj) {
      const f = toks[k].v as string
      if (node.kind === "field" || node.kind === "var" || node.kind === "pipe") node.names.push(f)
      else if (node.kind === "dot") node = { kind: "field", names: [f], pos: node.pos }
      else this.fail(pos, `unexpected . after term ${tokTextOfNode(node)}`)
      k++
    }
    return [node, k]
  }
}

const tokTextOfNode = (n: Node): string => {
  switch (n.kind) {
    case "string":
      return JSON.stringify(n.value)
    case "number":
      return String(n.value)
    case "bool":
      return String(n.value)
    case "nil":
      return "nil"
    case "field":
      return "." + n.names.join(".")
    case "var":
      return [n.name, ...n.names].join(".")
    case "dot":
      return "."
    case "ident":
      return n.name
    case "pipe":
      return "(...)"
  }
}

// ---------------------------------------------------------------------------------------------
// Execution

class Break {}
class Continue {}

class Exec {
  out = ""
  private readonly vars: Array<[string, TV]> = []
  private steps = 0

  constructor(
    private readonly src: string,
    root: TV,
    private readonly charge: (n: number) => void
  ) {
    this.vars.push(["$", root])
  }

  private fail(pos: number, at: string, msg: string): never {
    // Go reports the byte offset within the line, counted from 0.
    const before = this.src.slice(0, pos)
    const line = before.split("\n").length
    const nl = before.lastIndexOf("\n")
    const col = nl < 0 ? pos : pos - (nl + 1)
    throw new TemplateError(`template: template:${line}:${col}: executing "template" at <${at}>: ${msg}`)
  }

  run(items: readonly Item[], dot: TV): void {
    for (const it of items) {
      if (++this.steps % 256 === 0) this.charge(256)
      switch (it.kind) {
        case "text":
          this.out += it.text
          break
        case "action": {
          const v = this.pipe(it.pipe, dot)
          if (it.pipe.decl.length === 0) this.out += print(v, true)
          break
        }
        case "if":
        case "with": {
          const mark = this.vars.length
          const v = this.pipe(it.pipe, dot)
          if (truth(v)) this.run(it.body, it.kind === "with" ? v : dot)
          else if (it.otherwise !== undefined) this.run(it.otherwise, dot)
          this.vars.length = mark
          break
        }
        case "range":
          this.range(it, dot)
          break
        case "break":
          throw new Break()
        case "continue":
          throw new Continue()
      }
    }
  }

  private range(it: Extract<Item, { kind: "range" }>, dot: TV): void {
    const mark = this.vars.length
    const v = this.pipeValue(it.pipe, dot)
    const each = (key: TV, elem: TV): boolean => {
      const inner = this.vars.length
      if (it.pipe.decl.length === 1) this.vars.push([it.pipe.decl[0], elem])
      else if (it.pipe.decl.length === 2) this.vars.push([it.pipe.decl[0], key], [it.pipe.decl[1], elem])
      try {
        this.run(it.body, elem)
      } catch (e) {
        if (e instanceof Break) return false
        if (!(e instanceof Continue)) throw e
      } finally {
        this.vars.length = inner
      }
      return true
    }
    let any = false
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        any = true
        if (!each(i, v[i])) break
      }
    } else if (isMap(v)) {
      for (const k of sortedKeys(v)) {
        any = true
        if (!each(k, v.get(k))) break
      }
    } else if (typeof v === "number") {
      this.charge(Math.max(0, v))
      for (let i = 0; i < v; i++) {
        any = true
        if (!each(i, i)) break
      }
    } else if (v !== undefined && v !== null) this.fail(it.pos, "range", `range can't iterate over ${print(v)}`)
    if (!any && it.otherwise !== undefined) this.run(it.otherwise, dot)
    this.vars.length = mark
  }

  /** The value of a range pipeline, without binding its declared variables (range binds them per element). */
  private pipeValue(p: Pipe, dot: TV): TV {
    let v: TV = undefined
    let first = true
    for (const c of p.cmds) {
      v = this.command(c, dot, first ? undefined : { value: v })
      first = false
    }
    return v
  }

  private pipe(p: Pipe, dot: TV): TV {
    const v = this.pipeValue(p, dot)
    if (p.decl.length === 1) {
      if (p.assign) {
        for (let i = this.vars.length - 1; i >= 0; i--) {
          if (this.vars[i][0] === p.decl[0]) {
            this.vars[i][1] = v
            break
          }
        }
      } else this.vars.push([p.decl[0], v])
    }
    return v
  }

  private variable(name: string): TV {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i][0] === name) return this.vars[i][1]
    return undefined
  }

  private fields(v: TV, names: readonly string[], pos: number, at: string): TV {
    for (const n of names) {
      if (v === undefined || v === null) return undefined
      if (isMap(v)) v = v.get(n)
      else this.fail(pos, at, `can't evaluate field ${n} in type ${goType(v)}`)
    }
    return v
  }

  private command(c: Command, dot: TV, final: { value: TV } | undefined): TV {
    const [head, ...rest] = c.args
    if (head.kind === "ident") return this.call(head.name, rest, dot, final, c)
    if (rest.length > 0 || final !== undefined) {
      if (head.kind === "field" || head.kind === "var" || head.kind === "pipe" || head.kind === "dot") {
        if (head.kind === "field") this.fail(c.pos, c.text, `${head.names[head.names.length - 1]} is not a method but has arguments`)
        this.fail(c.pos, c.text, `can't give argument to non-function ${tokTextOfNode(head)}`)
      }
    }
    return this.arg(head, dot, c)
  }

  private arg(n: Node, dot: TV, c: Command): TV {
    switch (n.kind) {
      case "field":
        return this.fields(dot, n.names, n.pos, c.text)
      case "dot":
        return dot
      case "var":
        return this.fields(this.variable(n.name), n.names, n.pos, c.text)
      case "string":
        return n.value
      case "number":
        return n.float ? new Float(n.value) : n.value
      case "bool":
        return n.value
      case "nil":
        return this.fail(n.pos, c.text, "nil is not a command")
      case "ident":
        return this.call(n.name, [], dot, undefined, c)
      case "pipe":
        return this.fields(this.pipeValue(n.pipe, dot), n.names, n.pos, c.text)
    }
  }

  private call(name: string, argNodes: readonly Node[], dot: TV, final: { value: TV } | undefined, c: Command): TV {
    const lazy = argNodes.map((n) => () => (n.kind === "nil" ? null : this.arg(n, dot, c)))
    if (final !== undefined) lazy.push(() => final.value)
    const bad = (msg: string): never => this.fail(c.pos, c.text, `error calling ${name}: ${msg}`)
    const args = (): TV[] => lazy.map((f) => f())
    const need = (n: number): TV[] => {
      if (lazy.length !== n) this.fail(c.pos, c.text, `wrong number of args for ${name}: want ${n} got ${lazy.length}`)
      return args()
    }
    switch (name) {
      case "and": {
        if (lazy.length === 0) this.fail(c.pos, c.text, "wrong number of args for and: want at least 1 got 0")
        let v: TV = undefined
        for (const f of lazy) {
          v = f()
          if (!truth(v)) return v
        }
        return v
      }
      case "or": {
        if (lazy.length === 0) this.fail(c.pos, c.text, "wrong number of args for or: want at least 1 got 0")
        let v: TV = undefined
        for (const f of lazy) {
          v = f()
          if (truth(v)) return v
        }
        return v
      }
      case "not":
        return !truth(need(1)[0])
      case "len": {
        const [x] = need(1)
        if (typeof x === "string") return Buffer.byteLength(x)
        if (x instanceof JsonNumber) return x.text.length
        if (Array.isArray(x)) return x.length
        if (isMap(x)) return x.size
        return bad(`len of type ${goType(x)}`)
      }
      case "index": {
        if (lazy.length === 0) this.fail(c.pos, c.text, "wrong number of args for index: want at least 1 got 0")
        const [x, ...keys] = args()
        let v = x
        for (const k of keys) {
          if (Array.isArray(v) || typeof v === "string") {
            if (typeof k !== "number") return bad(`cannot index slice/array with type ${goType(k)}`)
            const len = typeof v === "string" ? Buffer.byteLength(v) : v.length
            if (k < 0 || k >= len) return bad(`index out of range: ${k}`)
            v = typeof v === "string" ? Buffer.from(v)[k] : v[k]
          } else if (isMap(v)) {
            if (typeof k !== "string" && !(k instanceof JsonNumber)) return bad(`value has type ${goType(k)}; should be string`)
            v = v.get(typeof k === "string" ? k : k.text) ?? null
          } else if (v === undefined || v === null) return bad("index of untyped nil")
          else return bad(`can't index item of type ${goType(v)}`)
        }
        return v
      }
      case "slice": {
        const [x, ...idx] = args()
        if (typeof x !== "string" && !Array.isArray(x)) return bad(`can't slice item of type ${goType(x)}`)
        const len = typeof x === "string" ? Buffer.byteLength(x) : x.length
        const n = idx.map((i) => {
          if (typeof i !== "number") return bad(`cannot index slice/array with type ${goType(i)}`)
          return i
        })
        if (n.length > 2 || (typeof x === "string" && n.length > 2)) return bad(`too many slice indexes: ${n.length}`)
        const from = n[0] ?? 0
        const to = n[1] ?? len
        if (from < 0 || to > len || from > to) return bad(`index out of range: ${from > to ? from : to}`)
        return typeof x === "string" ? Buffer.from(x).subarray(from, to).toString() : x.slice(from, to)
      }
      case "eq": {
        if (lazy.length < 2) this.fail(c.pos, c.text, `wrong number of args for eq: want at least 2 got ${lazy.length}`)
        const [a, ...others] = args()
        return others.some((b) => this.compare(a, b, "eq", c) === 0)
      }
      case "ne": {
        const [a, b] = need(2)
        return this.compare(a, b, "ne", c) !== 0
      }
      case "lt":
      case "le":
      case "gt":
      case "ge": {
        const [a, b] = need(2)
        const r = this.compare(a, b, name, c, true)
        return name === "lt" ? r < 0 : name === "le" ? r <= 0 : name === "gt" ? r > 0 : r >= 0
      }
      case "print":
        return sprint(args())
      case "println":
        return args().map((x) => print(x)).join(" ") + "\n"
      case "printf": {
        const [f, ...rest] = args()
        if (typeof f !== "string") return bad(`wrong type for value; expected string; got ${goType(f)}`)
        return sprintf(f, rest)
      }
      case "html":
        return sprint(args()).replace(/[<>&'"]/g, (ch) => HTML_ESCAPES[ch]).replaceAll("\u0000", "\uFFFD")
      case "js":
        return jsEscape(sprint(args()))
      case "urlquery":
        return queryEscape(sprint(args()))
      default:
        return bad("call is not supported by strings.render_template")
    }
  }

  /** Go's basic-kind comparison for eq/ne/lt/...: same kind required (strings, numbers, bools). */
  private compare(a: TV, b: TV, name: string, c: Command, ordered = false): number {
    const kind = (v: TV): string => {
      if (typeof v === "string" || v instanceof JsonNumber) return "string"
      if (typeof v === "number") return "int"
      if (v instanceof Float) return "float"
      if (typeof v === "boolean") return "bool"
      return "other"
    }
    const ka = kind(a)
    const kb = kind(b)
    if (ordered && (ka === "bool" || ka === "other")) this.fail(c.pos, c.text, `error calling ${name}: invalid type for comparison`)
    if (ka !== kb || ka === "other") {
      if (ka === "other" && kb === "other" && !ordered && (a === null || a === undefined) && (b === null || b === undefined)) return 0
      this.fail(c.pos, c.text, `error calling ${name}: incompatible types for comparison`)
    }
    const val = (v: TV): string | number | boolean =>
      typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? v : v instanceof JsonNumber ? v.text : (v as Float).value
    const x = val(a)
    const y = val(b)
    return x < y ? -1 : x > y ? 1 : 0
  }
}

const HTML_ESCAPES: Record<string, string> = { "<": "&lt;", ">": "&gt;", "&": "&amp;", "'": "&#39;", '"': "&#34;" }

const jsEscape = (s: string): string => {
  let out = ""
  for (const ch of s) {
    const c = ch.codePointAt(0) as number
    if (ch === "\\") out += "\\\\"
    else if (ch === "'") out += "\\'"
    else if (ch === '"') out += '\\"'
    else if (ch === "<") out += "\\u003C"
    else if (ch === ">") out += "\\u003E"
    else if (ch === "&") out += "\\u0026"
    else if (ch === "=") out += "\\u003D"
    else if (c < 0x20) out += "\\u" + c.toString(16).toUpperCase().padStart(4, "0")
    else out += ch
  }
  return out
}

/** fmt.Sprint: a space between operands when neither side is a string. */
const sprint = (xs: readonly TV[]): string => {
  let out = ""
  for (let i = 0; i < xs.length; i++) {
    const isStr = (v: TV): boolean => typeof v === "string" || v instanceof JsonNumber
    if (i > 0 && !isStr(xs[i]) && !isStr(xs[i - 1])) out += " "
    out += print(xs[i])
  }
  return out
}

/** fmt.Sprintf for the common verbs (%v %s %q %d %t %f %e %g %x %X %%), with width and precision. */
const sprintf = (format: string, args: readonly TV[]): string => {
  let out = ""
  let n = 0
  const re = /%([-+# 0]*)(\d+)?(?:\.(\d+))?([a-zA-Z%])/g
  let last = 0
  for (let m = re.exec(format); m !== null; m = re.exec(format)) {
    out += format.slice(last, m.index)
    last = re.lastIndex
    const [, flags, width, prec, verb] = m
    // Go's parsenum: a width or precision that grows past a million ends the format there.
    if ((width !== undefined && !parseNum(width, 0).isnum) || (prec !== undefined && !parseNum(prec, 0).isnum)) {
      out += "%!(NOVERB)"
      last = format.length
      break
    }
    if (verb === "%") {
      out += "%"
      continue
    }
    if (n >= args.length) {
      out += `%!${verb}(MISSING)`
      continue
    }
    const a = args[n++]
    let s: string
    const typeTag = (): string => `%!${verb}(${goType(a)}=${print(a)})`
    switch (verb) {
      case "v":
        s = print(a)
        break
      case "s":
        s = typeof a === "string" || a instanceof JsonNumber ? print(a) : Array.isArray(a) || isMap(a) ? print(a) : typeTag()
        if (prec !== undefined && (typeof a === "string" || a instanceof JsonNumber)) s = [...s].slice(0, Number(prec)).join("")
        break
      case "q":
        s = typeof a === "string" || a instanceof JsonNumber ? JSON.stringify(print(a)) : typeTag()
        break
      case "d":
        s = typeof a === "number" ? String(a) : typeTag()
        break
      case "t":
        s = typeof a === "boolean" ? String(a) : typeTag()
        break
      case "x":
      case "X":
        s =
          typeof a === "number"
            ? a.toString(16)
            : typeof a === "string" || a instanceof JsonNumber
              ? Buffer.from(print(a)).toString("hex")
              : typeTag()
        if (verb === "X") s = s.toUpperCase()
        break
      case "f":
      case "e":
      case "g": {
        const v = a instanceof Float ? a.value : undefined
        if (v === undefined) s = typeTag()
        else if (verb === "f") s = v.toFixed(prec === undefined ? 6 : Number(prec))
        else if (verb === "e") s = v.toExponential(prec === undefined ? 6 : Number(prec)).replace(/e([+-])(\d)$/, "e$10$2")
        else s = formatFloat(v)
        break
      }
      default:
        s = typeTag()
    }
    if (width !== undefined && s.length < Number(width)) {
      const pad = (flags.includes("0") && !flags.includes("-") ? "0" : " ").repeat(Number(width) - s.length)
      s = flags.includes("-") ? s + pad.replaceAll("0", " ") : pad + s
    }
    out += s
  }
  out += format.slice(last)
  if (n < args.length) out += "%!(EXTRA " + args.slice(n).map((a) => `${goType(a)}=${print(a)}`).join(", ") + ")"
  return out
}

/** Parsed templates by source (parsing is the larger part of a small render). */
const parsed = new Map<string, Item[]>()
const PARSED_MAX = 128

export const renderTemplate = (template: string, vars: Value, charge: (n: number) => void = () => undefined): string => {
  let items = parsed.get(template)
  if (items === undefined) {
    items = new Parser(template).parse()
    if (parsed.size >= PARSED_MAX) parsed.delete(parsed.keys().next().value as string)
    parsed.set(template, items)
  }
  const root = fromValue(vars)
  const exec = new Exec(template, root, charge)
  try {
    exec.run(items, root)
  } catch (e) {
    if (e instanceof Break || e instanceof Continue) throw new TemplateError("template: break or continue outside range")
    throw e
  }
  return exec.out.replaceAll("<no value>", "<undefined>")
}

export const templates: BuiltinDef[] = [
  {
    name: "strings.render_template",
    arity: 2,
    fn: ([t, vars], ctx) => {
      const source = str(t, 1)
      const v = obj(vars, 2)
      return asBuiltinError(TemplateError, () => renderTemplate(source, v, (n) => ctx.charge(n)))
    }
  }
]
