/** The export's YAML writer: js-yaml (the loader, core schema) reads every output back to its value. */
import { BundleExport } from "@rec/registry-service"
import { emit, scalarText } from "@rec/registry-service/YamlEmit"
import * as fc from "effect/FastCheck"
import { CORE_SCHEMA, load } from "js-yaml"
import { describe, expect, it } from "vitest"

const back = (text: string) => load(text, { schema: CORE_SCHEMA })

/** JSON has no -0; the bundle stores JSON. */
const normalised = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

const tricky = fc.constantFrom(
  "", " ", " lead", "trail ", "a: b", "a:", "a #b", "#x", "-", "- x", "-5", "+39 0464", "0x1F", "0o17", "1e3", ".5", "1_000",
  ".inf", "-.Inf", ".nan", "null", "Null", "~", "true", "False", "yes", "NO", "on", "Off", "y", "n", "12:30", "2024-05-01",
  "---", "...", "a\nb", "tab\there", "quote\"", "back\\slash", "'single'", "[x]", "{y}", "*alias", "&anchor", "!tag", "|", ">",
  "%", "@", "`", "?", ",", "https://x.example.org/a?b=c#d", "schema:Person", "àèì", "emoji \u{1F600}", "\u0085", "\u2028",
  "\ufeff", "\u007f", "\u0000", "ctrl\u0001", "<<", "=", "key: value # comment"
)

describe("YamlEmit", () => {
  it("writes strings YAML reads back as the same string, plain when it can", () => {
    fc.assert(fc.property(fc.oneof(tricky, fc.string(), fc.fullUnicodeString()), (s) => {
      expect(back(`v: ${scalarText(s)}\n`)).toEqual({ v: s })
    }), { numRuns: 3000 })
    expect(scalarText("schema:Person")).toBe("schema:Person")
    expect(scalarText("Via Segantini 12, 38062 Arco (TN)")).toBe("Via Segantini 12, 38062 Arco (TN)")
    expect(scalarText("yes")).toBe("\"yes\"")
    expect(scalarText("+39 0464 000000")).toBe("+39 0464 000000")
  })

  it("round-trips any JSON value", () => {
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
      expect(back(emit(value))).toEqual(normalised(value))
    }), { numRuns: 2000 })
  })

  it("round-trips objects with tricky keys and nested lists", () => {
    fc.assert(fc.property(fc.dictionary(fc.oneof(tricky, fc.string()), fc.jsonValue({ maxDepth: 3 })), (value) => {
      expect(back(emit(value))).toEqual(normalised(value))
    }), { numRuns: 1000 })
  })

  it("writes the block style of the examples", () => {
    expect(emit({ a: 1, b: [1, { c: "x", d: [] }, []], e: {}, f: { g: null } })).toBe(
      "a: 1\nb:\n  - 1\n  - c: x\n    d: []\n  - []\ne: {}\nf:\n  g: null\n"
    )
    expect(BundleExport.header).toMatch(/^# /)
  })
})
