// The builtin registry: every family module is registered exactly once, no builtin name is
// defined twice (a later family would silently replace an earlier one), and what a production
// host gets by default holds no test-only or I/O builtin that works.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { Rego } from "@rec/rego"
import { type BuiltinDef, defaultBuiltins, families, testBuiltins, testingBuiltins } from "@rec/rego/builtins/index"

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../src/builtins")

const isFamily = (x: unknown): x is BuiltinDef[] =>
  Array.isArray(x) && x.length > 0 && x.every((d) => typeof d === "object" && d !== null && typeof (d as BuiltinDef).name === "string" && typeof (d as BuiltinDef).fn === "function")

describe("builtin families", () => {
  it("registers every family module exactly once", async () => {
    const found: Array<[string, BuiltinDef[]]> = []
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".ts") && f !== "index.ts")) {
      const mod = (await import(`@rec/rego/builtins/${file.replace(/\.ts$/, "")}`)) as Record<string, unknown>
      for (const [name, value] of Object.entries(mod)) if (isFamily(value)) found.push([`${file}:${name}`, value])
    }
    expect(found.length).toBeGreaterThan(25)
    for (const [where, family] of found) expect(families.filter((f) => f === family).length, where).toBe(1)
    expect(families.length).toBe(found.length)
  })

  it("defines each builtin name once", () => {
    const names = families.flat().map((d) => d.name)
    const dups = names.filter((n, i) => names.indexOf(n) !== i)
    expect(dups).toEqual([])
    expect(defaultBuiltins().names()).toEqual([...new Set(names)].sort())
  })

  it("gives a production host no working test or I/O builtin", () => {
    const rego = Rego.compile({
      modules: {
        "p.rego": `package p
sleep if test.sleep("1s")
send := http.send({"method": "GET", "url": "https://example.com"})
dns := net.lookup_ip_addr("example.com")
`
      }
    })
    expect(() => rego.prepareRule("data.p.sleep").evaluate()).toThrow("test.sleep: only available in policy tests")
    expect(() => rego.prepareRule("data.p.send").evaluate()).toThrow("http.send: HTTP requests are not available")
    expect(() => rego.prepareRule("data.p.dns").evaluate()).toThrow("net.lookup_ip_addr: cannot resolve example.com")
    expect(testingBuiltins().get("test.sleep")).toBe(testBuiltins[0])
    expect(testingBuiltins().get("test.sleep")?.unavailable).toBeUndefined()
  })
})
