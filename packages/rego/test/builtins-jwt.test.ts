// io.jwt.*: tokens are made (and checked) here with node:crypto directly, so the builtins are
// tested against an independent implementation; where OPA's two code paths (Go's crypto in
// verify_*, jwx in decode_verify and encode_sign) differ, both behaviours are pinned.
import * as crypto from "node:crypto"
import { describe, expect, it } from "vitest"
import { type Json, RegoEvalError } from "@rec/rego"
import { LEAF, LEAF_KEY } from "./fixtures/pki.js"
import { queryValue as evaluate, thrown } from "./helpers.js"

const errorOf = (expr: string, input?: unknown): RegoEvalError => thrown(RegoEvalError, () => evaluate(expr, input))

const b64url = (x: string | Buffer): string => Buffer.from(x).toString("base64url")

type Signer = (input: Buffer) => Buffer

/** A compact JWS of header and payload (objects are JSON-encoded as they are). */
const token = (header: object | string, payload: object | string, sign: Signer): string => {
  const h = b64url(typeof header === "string" ? header : JSON.stringify(header))
  const p = b64url(typeof payload === "string" ? payload : JSON.stringify(payload))
  const input = `${h}.${p}`
  return `${input}.${b64url(sign(Buffer.from(input)))}`
}

const hmacSigner =
  (secret: string, hash = "sha256"): Signer =>
  (input) =>
    crypto.createHmac(hash, secret).update(input).digest()

const rsa = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 })
const otherRsa = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 })
const ec256 = crypto.generateKeyPairSync("ec", { namedCurve: "P-256" })
const ec384 = crypto.generateKeyPairSync("ec", { namedCurve: "P-384" })
const ec521 = crypto.generateKeyPairSync("ec", { namedCurve: "P-521" })
const ed = crypto.generateKeyPairSync("ed25519")

const pem = (k: crypto.KeyObject): string => k.export({ type: "spki", format: "pem" }) as string
const jwk = (k: crypto.KeyObject, extra: object = {}): string => JSON.stringify({ ...k.export({ format: "jwk" }), ...extra })

const signer = (alg: string, key: crypto.KeyObject): Signer => {
  const hash = `sha${alg.slice(2)}`
  switch (alg.slice(0, 2)) {
    case "RS":
      return (input) => crypto.sign(hash, input, key)
    case "PS":
      return (input) => crypto.sign(hash, input, { key, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: crypto.constants.RSA_PSS_SALTLEN_DIGEST })
    case "ES":
      return (input) => crypto.sign(hash, input, { key, dsaEncoding: "ieee-p1363" })
    default:
      return (input) => crypto.sign(null, input, key)
  }
}

const ASYMMETRIC: Array<{ alg: string; pair: crypto.KeyPairKeyObjectResult; wrong: crypto.KeyPairKeyObjectResult }> = [
  { alg: "RS256", pair: rsa, wrong: otherRsa },
  { alg: "RS384", pair: rsa, wrong: otherRsa },
  { alg: "RS512", pair: rsa, wrong: otherRsa },
  { alg: "PS256", pair: rsa, wrong: otherRsa },
  { alg: "PS384", pair: rsa, wrong: otherRsa },
  { alg: "PS512", pair: rsa, wrong: otherRsa },
  { alg: "ES256", pair: ec256, wrong: crypto.generateKeyPairSync("ec", { namedCurve: "P-256" }) },
  { alg: "ES384", pair: ec384, wrong: crypto.generateKeyPairSync("ec", { namedCurve: "P-384" }) },
  { alg: "ES512", pair: ec521, wrong: crypto.generateKeyPairSync("ec", { namedCurve: "P-521" }) },
  { alg: "EdDSA", pair: ed, wrong: crypto.generateKeyPairSync("ed25519") }
]

const builtinFor = (alg: string): string => `io.jwt.verify_${alg.toLowerCase()}`

describe("io.jwt.decode", () => {
  it("returns the header, the payload and the signature in hex", () => {
    const t = token({ alg: "HS256", typ: "JWT" }, { sub: "alice", n: 1.5 }, hmacSigner("s"))
    const sig = Buffer.from(t.split(".")[2], "base64url").toString("hex")
    expect(evaluate("io.jwt.decode(input.t)", { t })).toEqual([{ alg: "HS256", typ: "JWT" }, { sub: "alice", n: 1.5 }, sig])
  })

  it("keeps big integers in the payload exact", () => {
    const t = token({ alg: "HS256" }, '{"n":123456789012345678901234567890}', hmacSigner("s"))
    expect(evaluate("format_int(io.jwt.decode(input.t)[1].n, 10)", { t })).toBe("123456789012345678901234567890")
  })

  it("unwraps a nested token (cty JWT), quoted or not", () => {
    const inner = token({ alg: "HS256" }, { level: "inner" }, hmacSigner("s"))
    for (const payload of [inner, JSON.stringify(inner)]) {
      const outer = token({ alg: "HS256", cty: "JWT" }, payload, hmacSigner("s"))
      expect(evaluate("io.jwt.decode(input.t)[1]", { t: outer })).toEqual({ level: "inner" })
    }
  })

  it("rejects encrypted tokens and payloads that are not JSON objects", () => {
    const jwe = token({ alg: "dir", enc: "A128GCM" }, {}, hmacSigner("s"))
    expect(errorOf("io.jwt.decode(input.t)", { t: jwe }).message).toContain("JWT is a JWE object, which is not supported")
    const list = token({ alg: "HS256" }, "[1]", hmacSigner("s"))
    expect(errorOf("io.jwt.decode(input.t)", { t: list }).message).toContain("decoded JSON type was not an Object")
    const broken = token({ alg: "HS256" }, '{"a":', hmacSigner("s"))
    expect(errorOf("io.jwt.decode(input.t)", { t: broken }).message).toContain("invalid JSON: unexpected EOF")
  })

  it("reports a token that is not a string as a type error", () => {
    const e = errorOf("io.jwt.decode(input.t)", { t: 42 })
    expect(e.code).toBe("eval_type_error")
    expect(e.message).toContain("operand 1 must be string but got number")
  })
})

describe("io.jwt.verify_*", () => {
  it.each(ASYMMETRIC)("$alg: verifies with a PEM key and a JWK, refuses tampering and other keys", ({ alg, pair, wrong }) => {
    const t = token({ alg, typ: "JWT" }, { sub: "alice" }, signer(alg, pair.privateKey))
    const verify = (tok: string, key: string): Json | undefined => evaluate(`${builtinFor(alg)}(input.t, input.k)`, { t: tok, k: key })
    expect(verify(t, pem(pair.publicKey))).toBe(true)
    expect(verify(t, jwk(pair.publicKey))).toBe(true)
    expect(verify(t, JSON.stringify({ keys: [JSON.parse(jwk(wrong.publicKey)), JSON.parse(jwk(pair.publicKey))] }))).toBe(true)
    const [h, , s] = t.split(".")
    expect(verify(`${h}.${b64url(JSON.stringify({ sub: "mallory" }))}.${s}`, pem(pair.publicKey))).toBe(false)
    expect(verify(t, pem(wrong.publicKey))).toBe(false)
  })

  it("refuses keys of the wrong type", () => {
    const rs = token({ alg: "RS256" }, {}, signer("RS256", rsa.privateKey))
    const es = token({ alg: "ES256" }, {}, signer("ES256", ec256.privateKey))
    expect(evaluate("io.jwt.verify_rs256(input.t, input.k)", { t: rs, k: pem(ec256.publicKey) })).toBe(false)
    expect(evaluate("io.jwt.verify_es256(input.t, input.k)", { t: es, k: pem(rsa.publicKey) })).toBe(false)
    expect(evaluate("io.jwt.verify_eddsa(input.t, input.k)", { t: es, k: pem(ec256.publicKey) })).toBe(false)
    expect(evaluate("io.jwt.verify_ps256(input.t, input.k)", { t: rs, k: pem(rsa.publicKey) })).toBe(false)
  })

  it("skips JWK set keys whose alg differs from the token's, and prefers the key with the token's kid", () => {
    const t = token({ alg: "RS256", kid: "b" }, {}, signer("RS256", rsa.privateKey))
    const set = (keys: object[]): string => JSON.stringify({ keys })
    const right = JSON.parse(jwk(rsa.publicKey)) as object
    const other = JSON.parse(jwk(otherRsa.publicKey)) as object
    expect(evaluate("io.jwt.verify_rs256(input.t, input.k)", { t, k: set([{ ...right, alg: "RS512" }]) })).toBe(false)
    expect(evaluate("io.jwt.verify_rs256(input.t, input.k)", { t, k: set([{ ...other, kid: "a" }, { ...right, kid: "b" }]) })).toBe(true)
    // A matching kid decides alone: the other keys are not tried.
    expect(evaluate("io.jwt.verify_rs256(input.t, input.k)", { t, k: set([{ ...right, kid: "a" }, { ...other, kid: "b" }]) })).toBe(false)
    // Keys whose algorithm OPA does not know are dropped.
    expect(evaluate("io.jwt.verify_rs256(input.t, input.k)", { t, k: set([{ ...right, alg: "RSA-OAEP" }]) })).toBe(false)
  })

  it("like OPA, accepts only public keys (a private JWK does not verify)", () => {
    const t = token({ alg: "RS256" }, {}, signer("RS256", rsa.privateKey))
    expect(evaluate("io.jwt.verify_rs256(input.t, input.k)", { t, k: jwk(rsa.privateKey) })).toBe(false)
  })

  it("refuses RSA keys below 1024 bits, as Go does", () => {
    const weak = crypto.generateKeyPairSync("rsa", { modulusLength: 768 })
    const t = token({ alg: "RS256" }, {}, signer("RS256", weak.privateKey))
    expect(evaluate("io.jwt.verify_rs256(input.t, input.k)", { t, k: pem(weak.publicKey) })).toBe(false)
  })

  it("accepts any PSS salt length (Go's auto), where decode_verify requires the digest length", () => {
    const t = token({ alg: "PS256" }, {}, (input) =>
      crypto.sign("sha256", input, { key: rsa.privateKey, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: 20 })
    )
    expect(evaluate("io.jwt.verify_ps256(input.t, input.k)", { t, k: pem(rsa.publicKey) })).toBe(true)
    expect(evaluate("io.jwt.decode_verify(input.t, {\"cert\": input.k})[0]", { t, k: pem(rsa.publicKey) })).toBe(false)
  })

  it("rejects a DER-encoded ECDSA signature (JWS uses r || s)", () => {
    const t = token({ alg: "ES256" }, {}, (input) => crypto.sign("sha256", input, { key: ec256.privateKey, dsaEncoding: "der" }))
    expect(evaluate("io.jwt.verify_es256(input.t, input.k)", { t, k: pem(ec256.publicKey) })).toBe(false)
  })

  it("verifies with the public key of a PEM certificate", () => {
    const key = crypto.createPrivateKey(LEAF_KEY)
    const t = token({ alg: "ES256" }, { sub: "api" }, signer("ES256", key))
    expect(evaluate("io.jwt.verify_es256(input.t, input.k)", { t, k: LEAF })).toBe(true)
  })

  it("reports unusable keys with OPA's messages", () => {
    const t = token({ alg: "RS256" }, {}, signer("RS256", rsa.privateKey))
    const pkcs8 = rsa.privateKey.export({ type: "pkcs8", format: "pem" }) as string
    expect(errorOf("io.jwt.verify_rs256(input.t, input.k)", { t, k: pkcs8 }).message).toContain("failed to extract a Key from the PEM certificate")
    expect(errorOf("io.jwt.verify_rs256(input.t, input.k)", { t, k: pem(rsa.publicKey) + "x" }).message).toContain("extra data after a PEM certificate block")
    expect(errorOf("io.jwt.verify_rs256(input.t, input.k)", { t, k: "{}" }).message).toContain("failed to parse a JWK key (set)")
    expect(errorOf("io.jwt.verify_rs256(input.t, 1)", { t }).message).toContain("operand 2 must be string but got number")
  })

  it("checks HMAC signatures", () => {
    const t = token({ alg: "HS512" }, { sub: "alice" }, hmacSigner("sëcret", "sha512"))
    expect(evaluate("io.jwt.verify_hs512(input.t, input.s)", { t, s: "sëcret" })).toBe(true)
    expect(evaluate("io.jwt.verify_hs512(input.t, input.s)", { t, s: "secret" })).toBe(false)
    expect(evaluate("io.jwt.verify_hs256(input.t, input.s)", { t, s: "sëcret" })).toBe(false)
  })
})

describe("io.jwt.decode_verify", () => {
  const secret = "opa-secret"
  const hs = (payload: object, header: object = { alg: "HS256", typ: "JWT" }): string => token(header, payload, hmacSigner(secret))
  const dv = (t: string, constraints: object, nowNs?: bigint): Json | undefined => evaluate("io.jwt.decode_verify(input.t, input.c)", { t, c: constraints }, nowNs)
  /** Whether decode_verify accepts the token. */
  const ok = (t: string, constraints: object, nowNs?: bigint): Json => (dv(t, constraints, nowNs) as Json[])[0]
  const UNVERIFIED = [false, {}, {}]

  it("returns the header and payload of a valid token", () => {
    expect(dv(hs({ sub: "alice" }), { secret })).toEqual([true, { alg: "HS256", typ: "JWT" }, { sub: "alice" }])
    expect(dv(hs({ sub: "alice" }), { secret: "other" })).toEqual(UNVERIFIED)
  })

  it("checks exp and nbf against the time constraint (nanoseconds)", () => {
    const t = hs({ nbf: 1000, exp: 2000 })
    expect(dv(t, { secret, time: 999e9 })).toEqual(UNVERIFIED)
    expect(ok(t, { secret, time: 1000e9 })).toBe(true)
    expect(ok(t, { secret, time: 1999.5e9 })).toBe(true)
    // exp is exclusive: a token is expired at its exp.
    expect(dv(t, { secret, time: 2000e9 })).toEqual(UNVERIFIED)
  })

  it("uses the evaluation clock when no time is given", () => {
    const t = hs({ exp: 2000 })
    expect(ok(t, { secret }, 1999n * 1_000_000_000n)).toBe(true)
    expect(ok(t, { secret }, 2001n * 1_000_000_000n)).toBe(false)
  })

  it("checks iss and aud", () => {
    const t = hs({ iss: "rec", aud: ["platform", "gateway"] })
    expect(ok(t, { secret, iss: "rec", aud: "gateway" })).toBe(true)
    expect(ok(t, { secret, iss: "other", aud: "gateway" })).toBe(false)
    expect(ok(t, { secret, aud: "nobody" })).toBe(false)
    // A token with an audience is only accepted by a verifier that names one of them.
    expect(ok(t, { secret })).toBe(false)
    expect(ok(hs({}), { secret, aud: "gateway" })).toBe(false)
    expect(ok(hs({}), { secret, iss: "rec" })).toBe(false)
  })

  it("checks the algorithm and the JOSE header", () => {
    expect(ok(hs({}), { secret, alg: "HS512" })).toBe(false)
    expect(ok(hs({}, { typ: "JWT" }), { secret })).toBe(false)
    expect(ok(hs({}, { alg: "HS256", crit: ["exp2"], exp2: 1 }), { secret })).toBe(false)
    expect(ok(hs({}, { alg: "HS256", crit: ["kid"], kid: "k" }), { secret })).toBe(true)
    // An HMAC token never verifies against a public key, nor an RSA token against a secret.
    expect(ok(hs({}), { cert: pem(rsa.publicKey) })).toBe(false)
    expect(ok(token({ alg: "RS256" }, {}, signer("RS256", rsa.privateKey)), { secret })).toBe(false)
  })

  it("verifies every level of a nested token and returns the innermost", () => {
    const inner = hs({ sub: "inner" }, { alg: "HS256", kid: "in" })
    const outer = token({ alg: "HS256", cty: "JWT" }, inner, hmacSigner(secret))
    expect(dv(outer, { secret })).toEqual([true, { alg: "HS256", kid: "in" }, { sub: "inner" }])
    const forged = token({ alg: "HS256", cty: "JWT" }, token({ alg: "HS256" }, {}, hmacSigner("other")), hmacSigner(secret))
    expect(dv(forged, { secret })).toEqual(UNVERIFIED)
  })

  it("uses the public half of private keys in a JWK set (jwx does)", () => {
    const t = token({ alg: "ES256" }, {}, signer("ES256", ec256.privateKey))
    expect(ok(t, { cert: jwk(ec256.privateKey) })).toBe(true)
  })

  it("reports bad constraints and claims as errors", () => {
    const t = hs({})
    const e = (c: string, tok = t): string => errorOf(`io.jwt.decode_verify(input.t, ${c})`, { t: tok }).message
    expect(e(`{"secret": "a", "cert": ${JSON.stringify(pem(rsa.publicKey))}}`)).toContain("duplicate key constraints")
    expect(e(`{"iss": "x"}`)).toContain("no key constraint")
    expect(e(`{"secret": "a", "nope": 1}`)).toContain("unknown token validation constraint: nope")
    expect(e(`{"cert": 1}`)).toContain("cert constraint: must be a string")
    expect(e(`{"secret": "a", "time": -1}`)).toContain("token time constraint: must not be negative")
    expect(e(`{"secret": "${secret}"}`, hs({ exp: "soon" }))).toContain("exp value must be a number")
    expect(errorOf("io.jwt.decode_verify(input.t, [])", { t }).code).toBe("eval_type_error")
  })
})

describe("io.jwt.encode_sign", () => {
  const payload = { iss: "rec", sub: "<member>&", n: 1 }

  it.each(ASYMMETRIC)("$alg: signs with a private JWK; the token verifies independently", ({ alg, pair }) => {
    const t = evaluate("io.jwt.encode_sign(input.h, input.p, input.k)", { h: { alg, typ: "JWT" }, p: payload, k: JSON.parse(jwk(pair.privateKey)) }) as string
    const [h, p, s] = t.split(".")
    const input = Buffer.from(`${h}.${p}`)
    const sig = Buffer.from(s, "base64url")
    const hash = `sha${alg.slice(2)}`
    const ok =
      alg === "EdDSA"
        ? crypto.verify(null, input, pair.publicKey, sig)
        : alg.startsWith("ES")
          ? crypto.verify(hash, input, { key: pair.publicKey, dsaEncoding: "ieee-p1363" }, sig)
          : alg.startsWith("PS")
            ? crypto.verify(hash, input, { key: pair.publicKey, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: crypto.constants.RSA_PSS_SALTLEN_DIGEST }, sig)
            : crypto.verify(hash, input, pair.publicKey, sig)
    expect(ok).toBe(true)
    expect(evaluate(`${builtinFor(alg)}(input.t, input.k)`, { t, k: pem(pair.publicKey) })).toBe(true)
  })

  it("writes header and payload as Go's json.Marshal does (sorted keys, HTML escapes, sets as arrays)", () => {
    const t = evaluate(`io.jwt.encode_sign({"typ": "JWT", "alg": "HS256"}, {"sub": "<member>&", "aud": {"b", "a"}}, {"kty": "oct", "k": "c2VjcmV0"})`) as string
    const [h, p, s] = t.split(".")
    expect(Buffer.from(h, "base64url").toString()).toBe('{"alg":"HS256","typ":"JWT"}')
    expect(Buffer.from(p, "base64url").toString()).toBe('{"aud":["a","b"],"sub":"\\u003cmember\\u003e\\u0026"}')
    expect(Buffer.from(s, "base64url")).toEqual(crypto.createHmac("sha256", "secret").update(`${h}.${p}`).digest())
  })

  it("signs raw header and payload text as given", () => {
    const header = '{"alg":"HS256", "typ":"text/plain"}'
    const t = evaluate("io.jwt.encode_sign_raw(input.h, \"not json\", input.k)", { h: header, k: '{"kty":"oct","k":"c2VjcmV0"}' }) as string
    expect(t.split(".").slice(0, 2)).toEqual([b64url(header), b64url("not json")])
  })

  it("reports unusable headers, payloads and keys", () => {
    const oct = '{"kty":"oct","k":"c2VjcmV0"}'
    const e = (h: string, p: string, k: string): string => errorOf("io.jwt.encode_sign_raw(input.h, input.p, input.k)", { h, p, k }).message
    expect(e('{"alg":"none"}', "{}", oct)).toContain("unknown JWS algorithm: none")
    expect(e("{}", "{}", oct)).toContain(`missing or invalid 'alg' header: jwsbb: header "alg" not found`)
    expect(e('{"alg":"HS256"}', "nope", oct)).toContain("type is JWT but payload is not JSON")
    expect(e('{"alg":"RS256"}', "{}", oct)).toContain("jwsbb.Sign")
    expect(e('{"alg":"RS256"}', "{}", jwk(rsa.publicKey))).toContain("a private key is required")
    expect(e('{"alg":"HS256"}', "{}", '{"kty":"bogus"}')).toContain("invalid key type")
  })
})
