// providers.aws.sign_req beyond OPA's conformance suite: AWS's published SigV4 test vectors,
// an independent recomputation of the canonical request (path escaping, header handling,
// session tokens), Go's URL parsing, and OPA's operand checks.
import { createHash, createHmac } from "node:crypto"
import { describe, expect, it } from "vitest"
import { signV4, type SigV4Input } from "@rec/rego/builtins/aws"
import { escapedPath, parseURL } from "@rec/rego/builtins/gourl"
import { Rego } from "@rec/rego/rego"
import type { Value } from "@rec/rego/value"
import { builtinFailure, callBuiltinJSON } from "./helpers.js"

const signReq = (...args: Value[]): unknown => callBuiltinJSON("providers.aws.sign_req", args)
const failure = (...args: Value[]): string => builtinFailure(() => signReq(...args))

// 2015-08-30T12:36:00Z, the date of AWS's SigV4 test suite.
const TIME_NS = 1440938160n * 1_000_000_000n
const CREDENTIALS = { accessKey: "AKIDEXAMPLE", secretKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", region: "us-east-1" }
const CONFIG = { aws_access_key: CREDENTIALS.accessKey, aws_secret_access_key: CREDENTIALS.secretKey, aws_region: CREDENTIALS.region, aws_service: "service" }

const sign = (input: Partial<SigV4Input> & { method: string; url: string }): string =>
  signV4({ headers: new Map(), body: "", service: "service", sessionToken: "", timeNs: TIME_NS, disablePayloadSigning: false, ...CREDENTIALS, ...input }).authorization

/** SigV4 computed from an explicit canonical request, independently of the implementation. */
const expectedAuthorization = (canonicalRequest: string, signedHeaders: string, service = "service"): string => {
  const hmac = (key: Buffer | string, data: string): Buffer => createHmac("sha256", key).update(data).digest()
  const scope = `20150830/us-east-1/${service}/aws4_request`
  const toSign = `AWS4-HMAC-SHA256\n20150830T123600Z\n${scope}\n${createHash("sha256").update(canonicalRequest).digest("hex")}`
  const key = ["us-east-1", service, "aws4_request"].reduce(hmac, hmac("AWS4" + CREDENTIALS.secretKey, "20150830"))
  return `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/${scope},SignedHeaders=${signedHeaders},Signature=${hmac(key, toSign).toString("hex")}`
}

const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

describe("SigV4", () => {
  it("matches AWS's published test vectors (get-vanilla, post-vanilla)", () => {
    const prefix = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request,SignedHeaders=host;x-amz-date,Signature="
    expect(sign({ method: "GET", url: "https://example.amazonaws.com/" })).toBe(prefix + "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
    expect(sign({ method: "POST", url: "https://example.amazonaws.com/" })).toBe(prefix + "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b")
  })

  it("signs the Go-escaped path, the raw query and the lower-cased headers", () => {
    const authorization = sign({
      method: "get",
      url: "https://example.com:8443/a b/%2F/ü?z=1&a=%20",
      headers: new Map([
        ["X-Custom", "v"],
        ["User-Agent", "left out"]
      ])
    })
    // The raw path is not validly encoded (a space), so Go re-escapes the decoded path: %2F becomes /.
    const canonical = `get\n/a%20b///%C3%BC\nz=1&a=%20\nhost:example.com:8443\nx-amz-date:20150830T123600Z\nx-custom:v\n\nhost;x-amz-date;x-custom\n${EMPTY_SHA256}`
    expect(authorization).toBe(expectedAuthorization(canonical, "host;x-amz-date;x-custom"))
  })

  it("adds the payload hash for S3 and the session token", () => {
    const authorization = sign({ method: "PUT", url: "https://bucket.s3.amazonaws.com/key", body: "hello", service: "s3", sessionToken: "TOKEN" })
    const hash = createHash("sha256").update("hello").digest("hex")
    const canonical = `PUT\n/key\n\nhost:bucket.s3.amazonaws.com\nx-amz-content-sha256:${hash}\nx-amz-date:20150830T123600Z\nx-amz-security-token:TOKEN\n\nhost;x-amz-content-sha256;x-amz-date;x-amz-security-token\n${hash}`
    expect(authorization).toBe(expectedAuthorization(canonical, "host;x-amz-content-sha256;x-amz-date;x-amz-security-token", "s3"))
  })
})

describe("Go URL parsing", () => {
  const path = (url: string): string => escapedPath(parseURL(url))

  it("re-escapes paths as net/url's EscapedPath does", () => {
    expect(path("http://h")).toBe("")
    expect(path("http://h/a b")).toBe("/a%20b")
    expect(path("http://h/a%2Fb")).toBe("/a%2Fb")
    expect(path("http://h/a;b=c,d")).toBe("/a;b=c,d")
    expect(path("http://h/ü")).toBe("/%C3%BC")
    expect(parseURL("http://user:pw@h:80/p?q=1#frag")).toMatchObject({ host: "h:80", rawQuery: "q=1" })
  })

  it("fails with Go's messages", () => {
    expect(() => parseURL("http://h/%zz")).toThrow('parse "http://h/%zz": invalid URL escape "%zz"')
    expect(() => parseURL("http://h:port/")).toThrow('parse "http://h:port/": invalid port ":port" after host')
    expect(() => parseURL("http://a b/")).toThrow('parse "http://a b/": invalid character " " in host name')
    expect(() => parseURL(":x")).toThrow('parse ":x": missing protocol scheme')
  })
})

describe("providers.aws.sign_req", () => {
  const request = { method: "get", url: "https://example.com/x", headers: { "X-Custom": "v", Authorization: "old" } }

  it("returns the request with the original and the signature headers", () => {
    const out = signReq({ ...request, body: { b: "<&>" } }, CONFIG, TIME_NS) as { headers: Record<string, string>; body: unknown }
    expect(out.body).toEqual({ b: "<&>" })
    expect(out.headers).toMatchObject({ "X-Custom": "v", host: "example.com", "x-amz-date": "20150830T123600Z" })
    // A caller's Authorization header is neither signed nor kept under that name.
    expect(out.headers.Authorization).toBe(sign({ method: "get", url: "https://example.com/x", headers: new Map([["X-Custom", "v"]]), body: '{"b":"\\u003c\\u0026\\u003e"}' }))
  })

  it("checks its operands in OPA's order, with OPA's messages", () => {
    expect(failure("x", CONFIG, TIME_NS)).toBe("eval_type_error: operand 1 must be object but got string")
    expect(failure(request, { aws_region: "r", aws_service: 1 }, TIME_NS)).toBe(
      'eval_type_error: operand 2 missing required AWS config parameters(s): {"aws_access_key", "aws_secret_access_key"}'
    )
    expect(failure(request, { ...CONFIG, aws_service: 1 }, TIME_NS)).toBe('eval_type_error: operand 2 invalid values for required AWS config parameters(s): {"aws_service"}')
    expect(failure(request, CONFIG, 1.5)).toBe("eval_type_error: operand 3 could not convert time_ns value into a unix timestamp")
    expect(failure(request, CONFIG, -1)).toBe("eval_type_error: operand 3 could not convert time_ns value into a unix timestamp")
    expect(failure({ ...request, verbose: true }, CONFIG, TIME_NS)).toBe('eval_type_error: operand 1 invalid request parameters(s): {"verbose"}')
    expect(failure({ ...request, headers: "h" }, CONFIG, TIME_NS)).toBe("eval_type_error: operand 0 must be object but got string")
    expect(failure(request, { ...CONFIG, disable_payload_signing: "yes" }, TIME_NS)).toBe("eval_type_error: operand 2 invalid value for 'disable_payload_signing' in AWS config")
    expect(failure({ method: "get", url: "http://h/%zz" }, CONFIG, TIME_NS)).toBe('eval_builtin_error: parse "http://h/%zz": invalid URL escape "%zz"')
  })

  it("signs inside a policy, with the timestamp from time.now_ns", () => {
    const rego = Rego.compile({
      modules: { "p.rego": "package p\nsigned := providers.aws.sign_req(input.req, input.config, time.now_ns())" },
      defaults: { nowNs: TIME_NS }
    })
    const [result] = rego.prepare("x := data.p.signed.headers").evaluate({ req: { method: "GET", url: "https://example.amazonaws.com/" }, config: CONFIG })
    expect(result.x).toMatchObject({ "x-amz-date": "20150830T123600Z", Authorization: sign({ method: "GET", url: "https://example.amazonaws.com/" }) })
  })
})
