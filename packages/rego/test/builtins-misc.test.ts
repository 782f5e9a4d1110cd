// Builtins whose behaviour the conformance suite leaves open, checked against what OPA does:
// units.parse_bytes rounding, uuid.parse's length rules, bounded big integers, http.send's
// request keys, Go's JSON and base64 encoders.
import { describe, expect, it } from "vitest"
import { RegoEvalError } from "@rec/rego"
import { ruleValue as value, thrown } from "./helpers.js"

const failure = (expr: string, input?: unknown): string => {
  const e = thrown(RegoEvalError, () => value(expr, input))
  return `${e.code}: ${e.message.replace(/^p\.rego:\d+: [a-z_]+: /, "")}`
}

describe("units.parse_bytes", () => {
  it("computes with big.Float at 64 bits and truncates, as OPA", () => {
    expect(value(`units.parse_bytes("0.13mb")`)).toBe(129999)
    expect(value(`units.parse_bytes("0.001kb")`)).toBe(0)
    expect(value(`units.parse_bytes("-0.13mb")`)).toBe(-129999)
    expect(value(`units.parse_bytes("1.5KiB")`)).toBe(1536)
    expect(value(`units.parse_bytes("0.5")`)).toBe(0)
    expect(value(`units.parse_bytes("1e3")`)).toBe(1000)
    // 64 bits of mantissa: a 30-digit amount is rounded.
    expect(value(`units.parse_bytes("123456789012345678901234567890")`)).toBe(123456789012345678899921813504n)
  })
})

describe("uuid.parse", () => {
  const v4 = "a8acd5a3-0d83-41a7-b9a6-6ba7d8fba2f9"

  it("takes a 38-byte form without checking its first and last characters, as Go", () => {
    expect(value(`uuid.parse("{${v4}}")`)).toEqual({ variant: "RFC4122", version: 4 })
    expect(value(`uuid.parse("(${v4})")`)).toEqual({ variant: "RFC4122", version: 4 })
    expect(value(`uuid.parse("x${v4}x")`)).toEqual({ variant: "RFC4122", version: 4 })
  })

  it("accepts the other forms and rejects other lengths and bad digits", () => {
    expect(value(`uuid.parse("URN:UUID:${v4}")`)).toEqual({ variant: "RFC4122", version: 4 })
    expect(value(`uuid.parse("${v4.replaceAll("-", "")}")`)).toEqual({ variant: "RFC4122", version: 4 })
    expect(value(`uuid.parse("${v4}0")`)).toBeUndefined()
    expect(value(`uuid.parse("${v4.replace("a", "g")}")`)).toBeUndefined()
    // Length in UTF-8 bytes: a two-byte character makes 37.
    expect(value(`uuid.parse("é${v4.slice(1)}")`)).toBeUndefined()
  })
})

describe("big integers", () => {
  it("bits.lsh refuses a result beyond the size limit with a builtin error, before allocating it", () => {
    expect(value("bits.lsh(1, 64)")).toBe(18446744073709551616n)
    const t0 = performance.now()
    expect(failure("bits.lsh(1, 1099511627776)")).toBe("eval_builtin_error: bits.lsh: shift of 1099511627776 bits gives an integer of more than 1048576 bits")
    expect(failure("bits.lsh(3, 1048575)")).toContain("more than 1048576 bits")
    expect(performance.now() - t0).toBeLessThan(500)
  })

  it("multiplication refuses a product beyond the size limit", () => {
    expect(failure("bits.lsh(1, 600000) * bits.lsh(1, 600000)")).toBe("eval_builtin_error: mul: integer product of more than 1048576 bits")
    expect(value("count(format_int(bits.lsh(1, 400000) * bits.lsh(1, 400000), 16))")).toBe(200001)
  })
})

describe("http.send", () => {
  it("accepts every request key OPA v1 does, cache_ignored_headers included", () => {
    expect(failure(`http.send({"method": "GET", "url": "https://example.com", "cache_ignored_headers": ["date"]})`)).toContain("HTTP requests are not available")
    expect(failure(`http.send({"method": "GET", "url": "https://example.com", "nope": 1})`)).toBe('eval_type_error: http.send: operand 1 invalid request parameters(s): {"nope"}')
    expect(failure(`http.send({"url": "https://example.com"})`)).toBe('eval_type_error: http.send: operand 1 missing required request parameters(s): {"method"}')
  })

  it("providers.aws.sign_req validates its request with the same keys", () => {
    const config = `{"aws_access_key": "AKID", "aws_secret_access_key": "secret", "aws_service": "s3", "aws_region": "eu-west-1"}`
    const signed = value(`providers.aws.sign_req({"method": "GET", "url": "https://example.com/x", "cache_ignored_headers": []}, ${config}, 1700000000000000000)`) as { headers: Record<string, string> }
    expect(signed.headers.Authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKID\/20231114\/eu-west-1\/s3\/aws4_request/)
  })
})

describe("Go's encoders", () => {
  it("json.marshal writes Go's escapes (HTML-safe, \\b and \\f, U+FFFD for a lone surrogate)", () => {
    expect(value(`json.marshal({"a": "<&>\\b\\f\\u2028"})`)).toBe('{"a":"\\u003c\\u0026\\u003e\\b\\f\\u2028"}')
    expect(value("json.marshal(input.s)", { s: "x\ud800y" })).toBe('"x\\ufffdy"')
    expect(value(`json.marshal({{1, 2}: [set()]})`)).toBe('{"[1,2]":[[]]}')
  })

  it("json.marshal_with_options indents as json.MarshalIndent", () => {
    expect(value(`json.marshal_with_options({"a": [1, {}], "b": []}, {"indent": "  ", "prefix": "> "})`)).toBe('> {\n>   "a": [\n>     1,\n>     {}\n>   ],\n>   "b": []\n> }')
  })

  it("base64 decoding reports Go's error offsets", () => {
    expect(failure(`base64.decode("Zm9v!mFy")`)).toBe("eval_builtin_error: base64.decode: illegal base64 data at input byte 4")
    expect(value(`base64.decode("Zm9v\\r\\nYmFy")`)).toBe("foobar")
    expect(value(`base64url.decode("Zm9vYg")`)).toBe("foob")
    expect(failure(`base64url.decode("Zm9vY")`)).toBe("eval_builtin_error: base64url.decode: illegal base64url string: Zm9vY")
  })
})
