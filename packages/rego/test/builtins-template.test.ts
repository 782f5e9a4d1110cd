// strings.render_template beyond OPA's conformance suite: Go text/template semantics for the
// JSON-decoded variables (json.Number values, nil, fmt's %v of arrays and maps), control
// structures, trimming, functions and Go's error messages.
import { describe, expect, it } from "vitest"
import { fromJSON } from "@rec/rego/value"
import { builtinFailure, callBuiltin } from "./helpers.js"

const render = (template: string, vars: unknown = {}): unknown => callBuiltin("strings.render_template", [template, fromJSON(vars)])
const failure = (template: string, vars: unknown = {}): string => builtinFailure(() => render(template, vars))

describe("strings.render_template", () => {
  it("prints values as fmt's %v does, with missing and null values as <undefined>", () => {
    const vars = { s: "text", n: 1.5, big: 12345678901234567890n, b: true, nil: null, list: [1, "x", null, { z: true }], obj: { b: 2, a: [] } }
    expect(render("{{.s}} {{.n}} {{.big}} {{.b}} {{.nil}} {{.missing}} {{.missing.deeper}}", vars)).toBe("text 1.5 12345678901234567890 true <undefined> <undefined> <undefined>")
    expect(render("{{.list}} {{.obj}}", vars)).toBe("[1 x <nil> map[z:true]] map[a:[] b:2]")
  })

  it("ranges over arrays, objects (sorted keys) and integers, with else, break and continue", () => {
    const vars = { m: { b: 2, a: 1 }, l: ["x", "y", "z"], e: [] }
    expect(render("{{range $k, $v := .m}}{{$k}}={{$v}};{{end}}", vars)).toBe("a=1;b=2;")
    expect(render("{{range $i, $v := .l}}{{if $i}},{{end}}{{$i}}:{{.}}{{end}}", vars)).toBe("0:x,1:y,2:z")
    expect(render("{{range .e}}x{{else}}empty{{end}} {{range .missing}}x{{else}}none{{end}}", vars)).toBe("empty none")
    expect(render("{{range $i := 5}}{{if eq $i 1}}{{continue}}{{end}}{{if eq $i 3}}{{break}}{{end}}{{$i}}{{end}}")).toBe("02")
  })

  it("branches with if / else if / else and with", () => {
    const t = "{{if .a}}a{{else if .b}}b{{else}}none{{end}}"
    expect(render(t, { a: "x" })).toBe("a")
    expect(render(t, { b: [1] })).toBe("b")
    expect(render(t, { a: "", b: [] })).toBe("none")
    // A JSON number is a string to Go, so even 0 is true.
    expect(render("{{if .n}}yes{{end}}", { n: 0 })).toBe("yes")
    expect(render("{{with .o}}{{.name}}{{else}}nothing{{end}}", { o: { name: "N" } })).toBe("N")
    expect(render("{{with $x := .o}}{{$x.name}}{{end}}", { o: { name: "N" } })).toBe("N")
    expect(render("{{with .o}}{{.name}}{{else}}nothing{{end}}", {})).toBe("nothing")
  })

  it("trims whitespace around actions and drops comments", () => {
    expect(render("a  {{- .x -}}  b {{/* note */}}c {{- /* trimmed */ -}} d", { x: 1 })).toBe("a1b cd")
    expect(render("{{-3}}")).toBe("-3")
  })

  it("declares and assigns variables", () => {
    expect(render("{{$x := 1}}{{$x = .y}}{{$x}} {{$}}", { y: "Y" })).toBe("Y map[y:Y]")
  })

  it("provides Go's builtin functions", () => {
    const vars = { l: [1, 2, 3], m: { k: "v" }, s: "str", h: "<a href='x'>&</a>", t: true, n: 5 }
    expect(render("{{len .l}} {{len .s}} {{len .m}} {{.l | len}}", vars)).toBe("3 3 1 3")
    expect(render("{{index .l 1}} {{index .m \"k\"}} {{index .m \"none\"}} {{slice .s 1 2}} {{slice .l 1}}", vars)).toBe("2 v <undefined> t [2 3]")
    expect(render("{{and 1 0}} {{and 1 2}} {{or 0 \"\" \"z\"}} {{or 0 false}} {{not .t}}", vars)).toBe("0 2 z false false")
    expect(render('{{eq .s "str"}} {{eq .n "5"}} {{ne .s "x"}} {{lt 1 2}} {{ge "b" "a"}} {{eq 2 1 2}}', vars)).toBe("true true true true true true")
    expect(render('{{print "a" 1 2 "b"}} {{println 1 "x"}}', vars)).toBe("a1 2b 1 x\n")
    expect(render('{{printf "%s=%v %q %5d|%-4s|%x" .s .l .s 42 "ab" 255}}', vars)).toBe('str=[1 2 3] "str"    42|ab  |ff')
    expect(render('{{printf "%d" .n}}', vars)).toBe("%!d(json.Number=5)")
    // Go's fmt refuses widths and precisions that grow past a million (parsenum): the format ends
    // there, instead of allocating the padding.
    expect(render('{{printf "a%50000000db" 1}}', vars)).toBe("a%!(NOVERB)%!(EXTRA int=1)")
    expect(render('{{printf "%.90000000fz" 1.5}}', vars)).toBe("%!(NOVERB)%!(EXTRA float64=1.5)")
    expect(render('{{printf "%8000d" 1}}', vars)).toHaveLength(8000)
    expect(render("{{html .h}} {{js .h}} {{urlquery .s \"a b&c\"}}", vars)).toBe(
      "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt; \\u003Ca href\\u003D\\'x\\'\\u003E\\u0026\\u003C/a\\u003E stra+b%26c"
    )
  })

  it("reports parse errors as Go does", () => {
    expect(failure("{{foo}}")).toBe('eval_builtin_error: template: template:1: function "foo" not defined')
    expect(failure("a\n{{$x}}")).toBe('eval_builtin_error: template: template:2: undefined variable "$x"')
    expect(failure("{{if .a}}")).toBe("eval_builtin_error: template: template:1: unexpected EOF")
    expect(failure("{{end}}")).toBe("eval_builtin_error: template: template:1: unexpected {{end}}")
    expect(failure("{{.a")).toBe("eval_builtin_error: template: template:1: unclosed action")
    expect(failure("{{break}}")).toBe("eval_builtin_error: template: template:1: {{break}} outside {{range}}")
    expect(failure('{{define "x"}}{{end}}')).toBe("eval_builtin_error: template: template:1: {{define}} is not supported by strings.render_template")
  })

  it("reports execution errors with the position and the failing node", () => {
    expect(failure("{{.a.b}}", { a: "str" })).toBe('eval_builtin_error: template: template:1:2: executing "template" at <.a.b>: can\'t evaluate field b in type string')
    expect(failure("x\n  {{index .l 5}}", { l: [1] })).toBe('eval_builtin_error: template: template:2:4: executing "template" at <index .l 5>: error calling index: index out of range: 5')
    expect(failure('{{eq .n 5}}', { n: 5 })).toBe('eval_builtin_error: template: template:1:2: executing "template" at <eq .n 5>: error calling eq: incompatible types for comparison')
    expect(failure("{{range .s}}{{end}}", { s: "abc" })).toContain("range can't iterate over abc")
  })

  it("checks its operands", () => {
    expect(() => callBuiltin("strings.render_template", ["{{.}}", "not an object"])).toThrow("operand 2 must be object but got string")
    expect(() => callBuiltin("strings.render_template", [1, {}])).toThrow("operand 1 must be string but got number")
  })
})
