// crypto.*: digests and HMACs against published test vectors; X.509 parsing and chain
// verification against a small PKI made with OpenSSL (fixtures/pki.ts); the Go-compatible
// base64, PEM and DER readers underneath.
import * as crypto from "node:crypto"
import { describe, expect, it } from "vitest"
import { type Json, Rego, RegoEvalError } from "@rec/rego"
import { Der, pemDecode } from "@rec/rego/builtins/asn1"
import { Base64Error, goBase64Decode } from "@rec/rego/builtins/gobase64"
import { CLIENT, CSR, EC384_KEY, INTERMEDIATE_CA, LEAF, LEAF_KEY, MISC, MISC_KEY, NOW_NS, OTHER_EC_KEY, OUTSIDE_CONSTRAINTS, ROOT_CA, RSA1024_KEY } from "./fixtures/pki.js"
import { queryValue, thrown } from "./helpers.js"

const rego = Rego.compile({ modules: {} })

type Doc = Record<string, Json>

/** The value of `x := <expr>` with strict builtin errors, at NOW_NS (undefined when undefined). */
const evaluate = (expr: string, input?: unknown): Json | undefined => queryValue(expr, input, NOW_NS)
const errorOf = (expr: string, input?: unknown): RegoEvalError => thrown(RegoEvalError, () => evaluate(expr, input))

const derOf = (pem: string): Buffer => Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ""), "base64")
const hexToBase64 = (hex: string): string => Buffer.from(hex.replace(/:/g, ""), "hex").toString("base64")
const CHAIN = ROOT_CA + INTERMEDIATE_CA + LEAF

describe("digests and HMACs", () => {
  it("hash the UTF-8 bytes of a string, in hex", () => {
    expect(evaluate(`[crypto.md5("abc"), crypto.sha1("abc"), crypto.sha256("abc")]`)).toEqual([
      "900150983cd24fb0d6963f7d28e17f72",
      "a9993e364706816aba3e25717850c26c9cd0d89d",
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    ])
    expect(evaluate(`crypto.sha256("é")`)).toBe(crypto.createHash("sha256").update(Buffer.from([0xc3, 0xa9])).digest("hex"))
  })

  it("compute HMACs (RFC 2104, RFC 2202 and RFC 4231 vectors)", () => {
    const msg = "what do ya want for nothing?"
    expect(evaluate(`[crypto.hmac.md5(input.m, "Jefe"), crypto.hmac.sha1(input.m, "Jefe"), crypto.hmac.sha256(input.m, "Jefe"), crypto.hmac.sha512(input.m, "Jefe")]`, { m: msg })).toEqual([
      "750c783e6ab0b503eaa86e310a5db738",
      "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79",
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
      "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"
    ])
  })

  it("compare MACs (different lengths are unequal)", () => {
    expect(evaluate(`[crypto.hmac.equal("abc", "abc"), crypto.hmac.equal("abc", "abd"), crypto.hmac.equal("abc", "ab")]`)).toEqual([true, false, false])
    expect(errorOf(`crypto.hmac.equal("a", 1)`).code).toBe("eval_type_error")
  })
})

describe("crypto.x509.parse_certificates", () => {
  it("returns Go's x509.Certificate fields", () => {
    const c = evaluate("crypto.x509.parse_certificates(input.c)[0]", { c: LEAF }) as Doc
    expect(c.Subject).toEqual({
      Country: ["IT"],
      Organization: ["REC Test"],
      OrganizationalUnit: ["Platform"],
      Locality: ["Trento"],
      Province: ["Trentino"],
      StreetAddress: null,
      PostalCode: null,
      SerialNumber: "",
      CommonName: "api.rec.test",
      Names: [
        { Type: [2, 5, 4, 6], Value: "IT" },
        { Type: [2, 5, 4, 8], Value: "Trentino" },
        { Type: [2, 5, 4, 7], Value: "Trento" },
        { Type: [2, 5, 4, 10], Value: "REC Test" },
        { Type: [2, 5, 4, 11], Value: "Platform" },
        { Type: [2, 5, 4, 3], Value: "api.rec.test" }
      ],
      ExtraNames: null
    })
    expect((c.Issuer as Doc).CommonName).toBe("REC Test Intermediate CA")
    expect(c.SerialNumber).toBe(0x0123456789abcdef0123n)
    expect([c.Version, c.SignatureAlgorithm, c.PublicKeyAlgorithm]).toEqual([3, 4, 3]) // v3, SHA256WithRSA, ECDSA
    // A UTCTime and, from 2050 on, a GeneralizedTime.
    expect([c.NotBefore, c.NotAfter]).toEqual(["2026-11-22T00:55:16Z", "2126-10-29T00:55:16Z"])
    expect([c.KeyUsage, c.ExtKeyUsage, c.BasicConstraintsValid, c.IsCA, c.MaxPathLen]).toEqual([1, [1, 2], true, false, -1])
    expect([c.DNSNames, c.IPAddresses, c.EmailAddresses, c.URIStrings]).toEqual([["api.rec.test", "*.api.rec.test"], ["10.1.2.3"], ["ops@rec.test"], ["spiffe://rec.test/api"]])
    expect(c.URIs).toEqual([
      { Scheme: "spiffe", Opaque: "", User: null, Host: "rec.test", Path: "/api", RawPath: "", OmitHost: false, ForceQuery: false, RawQuery: "", Fragment: "", RawFragment: "" }
    ])
    expect([c.OCSPServer, c.IssuingCertificateURL, c.CRLDistributionPoints]).toEqual([["http://ocsp.rec.test"], ["http://pki.rec.test/inter.crt"], ["http://pki.rec.test/inter.crl"]])
    expect([c.Policies, c.PolicyIdentifiers]).toEqual([["2.23.140.1.2.1"], [[2, 23, 140, 1, 2, 1]]])
    const x509 = new crypto.X509Certificate(LEAF)
    expect(c.Raw).toBe(x509.raw.toString("base64"))
    // As `openssl x509 -ext subjectKeyIdentifier,authorityKeyIdentifier` prints them:
    expect(c.SubjectKeyId).toBe(hexToBase64("B4:2A:0D:EA:6D:4F:AC:5D:E3:61:FE:2D:D5:8F:A7:33:BB:8B:1F:DD"))
    expect(c.AuthorityKeyId).toBe(hexToBase64("EF:53:70:7E:C6:7C:78:6F:80:8B:9C:F6:63:12:7D:66:6B:A4:BE:A2"))
    const jwk = x509.publicKey.export({ format: "jwk" })
    expect(c.PublicKey).toEqual({ Curve: {}, X: BigInt("0x" + Buffer.from(jwk.x as string, "base64url").toString("hex")), Y: BigInt("0x" + Buffer.from(jwk.y as string, "base64url").toString("hex")) })
  })

  it("reads name constraints, path length and RSA keys", () => {
    const c = evaluate("crypto.x509.parse_certificates(input.c)[0]", { c: INTERMEDIATE_CA }) as Doc
    expect([c.IsCA, c.MaxPathLen, c.MaxPathLenZero, c.KeyUsage]).toEqual([true, 0, true, 96])
    expect([c.PermittedDNSDomainsCritical, c.PermittedDNSDomains, c.PermittedEmailAddresses, c.PermittedURIDomains]).toEqual([true, ["rec.test"], ["rec.test"], ["rec.test"]])
    expect(c.PermittedIPRanges).toEqual([{ IP: "10.0.0.0", Mask: "/wAAAA==" }])
    const n = BigInt("0x" + Buffer.from(new crypto.X509Certificate(INTERMEDIATE_CA).publicKey.export({ format: "jwk" }).n as string, "base64url").toString("hex"))
    expect(c.PublicKey).toEqual({ N: n, E: 65537 })
  })

  it("formats IPv6 addresses and URIs as Go does", () => {
    const c = evaluate("crypto.x509.parse_certificates(input.c)[0]", { c: MISC }) as Doc
    expect([c.PublicKeyAlgorithm, c.SignatureAlgorithm]).toEqual([4, 16]) // Ed25519
    expect(c.IPAddresses).toEqual(["2001:db8::1:0:0:1", "::1"])
    expect(c.URIStrings).toEqual(["https://user@rec.test:8443/a%20b?x=1"])
    expect((c.URIs as Doc[])[0]).toMatchObject({ Scheme: "https", User: {}, Host: "rec.test:8443", Path: "/a b", RawPath: "", RawQuery: "x=1" })
  })

  it("accepts PEM chains, base64 of PEM and base64 of concatenated DER", () => {
    const names = ["api.rec.test", "REC Test Intermediate CA"]
    const cns = "[c.Subject.CommonName | some c in crypto.x509.parse_certificates(input.c)]"
    expect(evaluate(cns, { c: LEAF + INTERMEDIATE_CA })).toEqual(names)
    expect(evaluate(cns, { c: Buffer.from(LEAF + INTERMEDIATE_CA).toString("base64") })).toEqual(names)
    expect(evaluate(cns, { c: Buffer.concat([derOf(LEAF), derOf(INTERMEDIATE_CA)]).toString("base64") })).toEqual(names)
  })

  it("reports malformed input with Go's messages", () => {
    const e = (c: string): string => errorOf("crypto.x509.parse_certificates(input.c)", { c }).message
    expect(e("foobar")).toContain("illegal base64 data at input byte 4")
    expect(e(Buffer.from("bad").toString("base64"))).toContain("x509: malformed certificate")
    expect(e(LEAF_KEY)).toContain("PEM block type is 'PRIVATE KEY', expected CERTIFICATE")
    expect(e(derOf(LEAF).subarray(0, -1).toString("base64"))).toContain("x509: malformed certificate")
  })
})

describe("crypto.x509.parse_and_verify_certificates", () => {
  const verify = (certs: string): Json | undefined => evaluate("crypto.x509.parse_and_verify_certificates(input.c)", { c: certs })
  const valid = (certs: string, options: object = {}): Json =>
    (evaluate("crypto.x509.parse_and_verify_certificates_with_options(input.c, input.o)", { c: certs, o: options }) as Json[])[0]

  it("returns the chain from the leaf to the root", () => {
    const [ok, chain] = verify(CHAIN) as [boolean, Doc[]]
    expect(ok).toBe(true)
    expect(chain.map((c) => (c.Subject as Doc).CommonName)).toEqual(["api.rec.test", "REC Test Intermediate CA", "REC Test Root CA"])
    expect(chain[0].URIStrings).toEqual(["spiffe://rec.test/api"])
    // The variant with options returns Go's certificates without OPA's URIStrings.
    const [, plain] = evaluate("crypto.x509.parse_and_verify_certificates_with_options(input.c, {})", { c: CHAIN }) as [boolean, Doc[]]
    expect("URIStrings" in plain[0]).toBe(false)
  })

  it("fails closed: wrong order, missing intermediate, a single certificate, garbage", () => {
    for (const certs of [LEAF + INTERMEDIATE_CA + ROOT_CA, ROOT_CA + LEAF, LEAF, "garbage"]) expect(verify(certs)).toEqual([false, []])
  })

  it("rejects a tampered signature", () => {
    const der = derOf(LEAF)
    der[der.length - 1] ^= 0x01
    const tampered = `-----BEGIN CERTIFICATE-----\n${der.toString("base64")}\n-----END CERTIFICATE-----\n`
    expect(verify(ROOT_CA + INTERMEDIATE_CA + tampered)).toEqual([false, []])
  })

  it("enforces the intermediate's name constraints", () => {
    expect(verify(ROOT_CA + INTERMEDIATE_CA + OUTSIDE_CONSTRAINTS)).toEqual([false, []])
  })

  it("requires server authentication unless told which key usages to accept", () => {
    expect(verify(ROOT_CA + INTERMEDIATE_CA + CLIENT)).toEqual([false, []])
    expect(valid(ROOT_CA + INTERMEDIATE_CA + CLIENT, { KeyUsages: ["KeyUsageClientAuth"] })).toBe(true)
    expect(valid(ROOT_CA + INTERMEDIATE_CA + CLIENT, { KeyUsages: ["KeyUsageAny"] })).toBe(true)
    expect(valid(CHAIN, { KeyUsages: ["KeyUsageCodeSigning"] })).toBe(false)
  })

  it("checks the DNS name, wildcards one label deep", () => {
    expect(valid(CHAIN, { DNSName: "api.rec.test" })).toBe(true)
    expect(valid(CHAIN, { DNSName: "v1.api.rec.test" })).toBe(true)
    expect(valid(CHAIN, { DNSName: "a.v1.api.rec.test" })).toBe(false)
    expect(valid(CHAIN, { DNSName: "rec.test" })).toBe(false)
  })

  it("checks validity at CurrentTime (nanoseconds), the evaluation clock otherwise", () => {
    expect(valid(CHAIN, { CurrentTime: 1_700_000_000_000_000_000 })).toBe(false) // 2023, before issuance
    expect(valid(CHAIN, { CurrentTime: 4_102_444_800_000_000_000 })).toBe(true) // 2100
    expect(rego.query("x := crypto.x509.parse_and_verify_certificates(input.c)[0]", { c: CHAIN }, { nowNs: 1_700_000_000_000_000_000n })[0].x).toBe(false)
  })

  it("reports bad options with OPA's messages", () => {
    const e = (o: string): string => errorOf(`crypto.x509.parse_and_verify_certificates_with_options(input.c, ${o})`, { c: CHAIN }).message
    expect(e(`{"Bogus": 1}`)).toContain("invalid key option")
    expect(e(`{"KeyUsages": ["KeyUsageServerAuth", "Bogus", "Nope"]}`)).toContain("invalid entries for 'KeyUsages' found: [Bogus Nope]")
    expect(e(`{"KeyUsages": "KeyUsageServerAuth"}`)).toContain("'KeyUsages' should be an Array or Set")
    expect(e(`{"DNSName": 1}`)).toContain("'DNSName' should be a string")
    expect(e(`{"CurrentTime": 1.5}`)).toContain("'CurrentTime' should be a valid int64 number")
  })
})

describe("crypto.x509.parse_certificate_request", () => {
  it("returns Go's x509.CertificateRequest fields", () => {
    const r = evaluate("crypto.x509.parse_certificate_request(input.c)", { c: CSR }) as Doc
    expect((r.Subject as Doc).CommonName).toBe("csr.rec.test")
    expect((r.Subject as Doc).OrganizationalUnit).toEqual(["Members"])
    expect([r.Version, r.SignatureAlgorithm, r.PublicKeyAlgorithm]).toEqual([0, 10, 3])
    expect([r.DNSNames, r.IPAddresses, r.EmailAddresses, r.URIs]).toEqual([["csr.rec.test"], ["10.9.8.7"], ["csr@rec.test"], null])
    expect((r.Extensions as Doc[]).map((e) => e.Id)).toEqual([[2, 5, 29, 17]])
  })

  it("accepts base64 of the DER, and reports other input", () => {
    const der = Buffer.from(CSR.replace(/-----[^-]+-----|\s/g, ""), "base64").toString("base64")
    expect((evaluate("crypto.x509.parse_certificate_request(input.c).Subject.CommonName", { c: der }) as string)).toBe("csr.rec.test")
    // Only text starting with the CSR armour is taken as PEM; anything else must be base64.
    expect(errorOf("crypto.x509.parse_certificate_request(input.c)", { c: LEAF }).message).toContain("illegal base64 data at input byte 0")
    const leafB64 = Buffer.from(LEAF).toString("base64")
    expect(errorOf("crypto.x509.parse_certificate_request(input.c)", { c: leafB64 }).message).toContain("invalid PEM-encoded certificate signing request")
    expect(errorOf("crypto.x509.parse_certificate_request(input.c)", { c: "YmFkc3RyaW5n" }).message).toContain(
      "asn1: structure error: tags don't match (16 vs {class:1 tag:2 length:97 isCompound:true})"
    )
  })
})

describe("keys", () => {
  it("parse_keypair pairs a certificate with its key", () => {
    const k = evaluate("crypto.x509.parse_keypair(input.c, input.k)", { c: LEAF, k: LEAF_KEY }) as Doc
    expect(k.Certificate).toEqual([derOf(LEAF).toString("base64")])
    expect(((k.Leaf as Doc).Subject as Doc).CommonName).toBe("api.rec.test")
    const d = crypto.createPrivateKey(LEAF_KEY).export({ format: "jwk" }).d as string
    expect((k.PrivateKey as Doc).D).toBe(BigInt("0x" + Buffer.from(d, "base64url").toString("hex")))
    const b64 = evaluate("crypto.x509.parse_keypair(input.c, input.k).Certificate", { c: Buffer.from(LEAF).toString("base64"), k: Buffer.from(LEAF_KEY).toString("base64") })
    expect(b64).toEqual(k.Certificate)
  })

  it("parse_keypair refuses a key that does not match, or no key at all", () => {
    expect(errorOf("crypto.x509.parse_keypair(input.c, input.k)", { c: LEAF, k: OTHER_EC_KEY }).message).toContain("tls: private key does not match public key")
    expect(errorOf("crypto.x509.parse_keypair(input.c, input.k)", { c: LEAF, k: LEAF }).message).toContain("tls: found a certificate rather than a key in the PEM for the private key")
    expect(errorOf("crypto.x509.parse_keypair(input.c, input.k)", { c: LEAF, k: MISC_KEY }).message).toContain("tls: private key type does not match public key type")
  })

  it("parse_rsa_private_key returns the first key as a JWK", () => {
    const rsa = evaluate("crypto.x509.parse_rsa_private_key(input.k)", { k: RSA1024_KEY })
    expect(rsa).toEqual(crypto.createPrivateKey(RSA1024_KEY).export({ format: "jwk" }))
    const ec = evaluate("crypto.x509.parse_rsa_private_key(input.k)", { k: Buffer.from(EC384_KEY).toString("base64") }) as Doc
    expect([ec.kty, ec.crv]).toEqual(["EC", "P-384"])
    expect(errorOf(`crypto.x509.parse_rsa_private_key("")`).message).toContain("input PEM data was empty")
    expect(errorOf("crypto.x509.parse_rsa_private_key(input.k)", { k: MISC_KEY }).message).toContain("invalid key type ed25519.PrivateKey")
    expect(evaluate(`crypto.x509.parse_rsa_private_key("c29tZXRoaW5n")`)).toBeNull()
  })

  it("parse_private_keys returns every private key in Go's JSON forms", () => {
    const keys = evaluate("crypto.parse_private_keys(input.k)", { k: RSA1024_KEY + "\n" + EC384_KEY + MISC_KEY + LEAF }) as Json[]
    expect(keys).toHaveLength(3)
    const [rsa, ec, ed] = keys as [Doc, Doc, string]
    expect(Object.keys(rsa).sort()).toEqual(["D", "E", "N", "Precomputed", "Primes"])
    expect((rsa.Primes as Json[]).length).toBe(2)
    expect(Object.keys(rsa.Precomputed as Doc).sort()).toEqual(["CRTValues", "Dp", "Dq", "Qinv"])
    expect(Object.keys(ec).sort()).toEqual(["Curve", "D", "X", "Y"])
    const j = crypto.createPrivateKey(MISC_KEY).export({ format: "jwk" })
    expect(ed).toBe(Buffer.concat([Buffer.from(j.d as string, "base64url"), Buffer.from(j.x as string, "base64url")]).toString("base64"))
    expect(evaluate(`crypto.parse_private_keys("")`)).toBeNull()
    expect(evaluate(`crypto.parse_private_keys("nope")`)).toEqual([])
  })
})

describe("Go encodings", () => {
  it("base64 decodes as Go's StdEncoding does", () => {
    expect(goBase64Decode("Zm9v\r\nYmFy").toString()).toBe("foobar")
    expect(goBase64Decode("Zm8=").toString()).toBe("fo")
    const offset = (s: string): string => thrown(Base64Error, () => goBase64Decode(s)).message
    expect(offset("Zm9")).toBe("illegal base64 data at input byte 0")
    expect(offset("Zg=")).toBe("illegal base64 data at input byte 3")
    expect(offset("Zg==Zg==")).toBe("illegal base64 data at input byte 4")
    expect(offset("Zm9v!")).toBe("illegal base64 data at input byte 4")
  })

  it("finds PEM blocks as Go's pem.Decode does", () => {
    const body = "-----BEGIN X-----\nProc-Type: 4,ENCRYPTED\n\nAQID\n-----END X-----\n"
    const { block, rest } = pemDecode(Buffer.from("junk\n" + body + "tail"))
    expect(block?.type).toBe("X")
    expect(block?.headers.get("Proc-Type")).toBe("4,ENCRYPTED")
    expect([...(block?.bytes ?? [])]).toEqual([1, 2, 3])
    expect(rest.toString()).toBe("tail")
    // A block whose body is not base64 is skipped, and nothing is found.
    expect(pemDecode(Buffer.from("-----BEGIN X-----\n!!!\n-----END X-----\n")).block).toBeUndefined()
  })

  it("reads DER strictly", () => {
    expect(new Der(Buffer.from([0x02, 0x81, 0x01, 0x05])).any()).toBeUndefined() // long form for a short length
    expect(new Der(Buffer.from([0x02, 0x02, 0x00, 0x05])).integer()).toBeUndefined() // non-minimal integer
    expect(new Der(Buffer.from([0x02, 0x02, 0xff, 0x7f])).integer()).toBe(-129n)
    expect(new Der(Buffer.from([0x06, 0x03, 0x55, 0x1d, 0x11])).oid()).toEqual([2, 5, 29, 17])
  })
})
