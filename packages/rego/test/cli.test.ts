// The `rego` command line and the directory loader, on policy directories written to a temp dir.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { main } from "@rec/rego/cli"
import { loadDirectory } from "@rec/rego/loader"
import { Rego } from "@rec/rego"

let root: string

const write = (rel: string, text: string): void => {
  const file = path.join(root, rel)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

const run = (...argv: string[]): { code: number; out: string; err: string } => {
  const out: string[] = []
  const err: string[] = []
  const code = main(argv, (s) => out.push(s), (s) => err.push(s))
  return { code, out: out.join("\n"), err: err.join("\n") }
}

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "rego-cli-"))
  write(
    "good/authz/authz.rego",
    `package authz

default allow := false

allow if input.user in data.authz.admins

allow if data.settings.open
`
  )
  write("good/authz/data.json", '{"admins": ["alice"]}')
  write("good/data.yaml", "settings:\n  open: false\n")
  write(
    "good/authz/authz_test.rego",
    `package authz_test

import data.authz

test_admin if authz.allow with input.user as "alice"

test_other_denied if not authz.allow with input.user as "bob"

test_open if authz.allow with data.settings.open as true
`
  )
  write(
    "failing/p_test.rego",
    `package p

test_ok if true

test_false if {
	print("checking", 1 + 1)
	false
}

test_undefined if input.missing

test_value_false := false

v := 1
v := 2 if true

test_error if v == 1

todo_test_later if true
`
  )
  write("broken/a.rego", "package a\n\np if { x }\n")
  write("broken/sub/b.rego", "package b\n\nq := \n")
})

afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

describe("loadDirectory", () => {
  it("reads modules by relative path and places data files at their directory path", () => {
    const loaded = loadDirectory(path.join(root, "good"))
    expect(loaded.modules.map((m) => m.file)).toEqual(["authz/authz.rego", "authz/authz_test.rego"])
    expect(loaded.data).toEqual({ authz: { admins: ["alice"] }, settings: { open: false } })
    const rego = Rego.compile(loaded)
    expect(rego.prepareRule("data.authz.allow").evaluate({ user: "alice" })).toBe(true)
  })

  it("can leave out unit tests", () => {
    expect(loadDirectory(path.join(root, "good"), { skipTests: true }).modules.map((m) => m.file)).toEqual(["authz/authz.rego"])
  })
})

describe("rego test", () => {
  it("passes a directory whose tests pass", () => {
    const r = run("test", path.join(root, "good"))
    expect(r.code).toBe(0)
    expect(r.out).toBe("PASS: 3/3")
  })

  it("reports each failure with its reason, print output and location, and exits 1", () => {
    const r = run("test", path.join(root, "failing"))
    expect(r.code).toBe(1)
    expect(r.out).toContain("data.p.test_false: FAIL")
    expect(r.out).toContain("p_test.rego:5: the test is undefined")
    expect(r.out).toContain("p_test.rego:6: checking 2")
    expect(r.out).toContain("data.p.test_undefined: FAIL")
    expect(r.out).toContain("data.p.test_value_false: FAIL")
    expect(r.out).toContain("p_test.rego:12: the test is false")
    expect(r.out).toContain("data.p.test_error: ERROR")
    expect(r.out).toContain("p_test.rego:15:1: eval_conflict_error: complete rules must not produce multiple outputs")
    expect(r.out).toContain("PASS: 1/6")
    expect(r.out).toContain("FAIL: 3/6")
    expect(r.out).toContain("ERROR: 1/6")
    expect(r.out).toContain("SKIPPED: 1/6")
    expect(r.out).not.toContain("test_ok")
  })

  it("lists every test with -v and filters with --run", () => {
    const r = run("test", "-v", "--run", "test_o", path.join(root, "failing"))
    expect(r.out.split("\n").filter((l) => l.startsWith("data."))).toEqual([expect.stringMatching(/^data\.p\.test_ok: PASS/)])
    expect(r.code).toBe(0)
  })

  it("takes a Go regular expression for --run", () => {
    const r = run("test", "-v", "--run", "(?i)TEST_O\\pL$", path.join(root, "failing"))
    expect(r.out.split("\n").filter((l) => l.startsWith("data."))).toEqual([expect.stringMatching(/^data\.p\.test_ok: PASS/)])
    const bad = run("test", "--run", "test_(?=o)", path.join(root, "failing"))
    expect(bad.code).toBe(2)
    expect(bad.err).toContain("--run: error parsing regexp: invalid or unsupported Perl syntax: `(?=`")
  })
})

describe("rego check", () => {
  it("prints every error with file, row and column, and exits 1", () => {
    const r = run("check", path.join(root, "broken"))
    expect(r.code).toBe(1)
    expect(r.err.split("\n")).toEqual(["sub/b.rego:4:1: rego_parse_error: unexpected eof token", "sub/b.rego:4:1: rego_parse_error: unexpected eof token: expected rule value term (e.g., q := <VALUE> { ... })", "2 errors"])
  })

  it("reports compile errors once the modules parse", () => {
    write("broken2/a.rego", "package a\n\np if { x }\n")
    const r = run("check", path.join(root, "broken2"))
    expect(r.code).toBe(1)
    expect(r.err).toContain("a.rego:3:8: rego_unsafe_var_error: var x is unsafe")
  })

  it("is quiet about good policies", () => {
    const r = run("check", path.join(root, "good"))
    expect(r.code).toBe(0)
    expect(r.out).toBe("2 modules checked, no errors")
  })
})

describe("rego eval", () => {
  it("prints the value of a term query", () => {
    write("input.json", '{"user": "alice"}')
    const r = run("eval", "-d", path.join(root, "good"), "-i", path.join(root, "input.json"), "data.authz.allow")
    expect(r.code).toBe(0)
    expect(JSON.parse(r.out)).toEqual({ result: [{ expressions: [{ value: true, text: "data.authz.allow" }] }] })
  })

  it("prints bindings of a query with variables, and {} when undefined", () => {
    const r = run("eval", "-d", path.join(root, "good"), "some x in data.authz.admins")
    expect(JSON.parse(r.out)).toEqual({ result: [{ expressions: [{ value: true, text: "some x in data.authz.admins" }], bindings: { x: "alice" } }] })
    expect(JSON.parse(run("eval", "-d", path.join(root, "good"), "data.authz.nothing").out)).toEqual({})
  })

  it("rejects a missing query as a usage error", () => {
    const r = run("eval", "-d", path.join(root, "good"))
    expect(r.code).toBe(2)
    expect(r.err).toContain("eval needs a query")
  })
})

describe("usage", () => {
  it("unknown commands exit 2 with the usage", () => {
    const r = run("frobnicate")
    expect(r.code).toBe(2)
    expect(r.err).toContain("usage:")
  })
})
