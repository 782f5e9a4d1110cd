// crypto.*: digests, HMACs, and X.509 certificates, certificate requests and private keys.
// Semantics follow OPA's topdown/crypto.go; the documents returned for certificates and keys
// are the JSON forms of Go's crypto types (see x509/json.ts).

import * as crypto from "node:crypto"
import { type Value, normBig, objectEach, RegoSet } from "../value.js"
import { obj, str } from "./args.js"
import { bytesToBig, pemDecode, pemEncode, type PemBlock } from "./asn1.js"
import { base64StdEncode, base64UrlDecode, goBase64Decode } from "./gobase64.js"
import { type BuiltinDef, BuiltinError, builtinError } from "./registry.js"
import { parseCertificates, parseSingleCertificate } from "./x509/certificate.js"
import { certificateRequestValue, certificateValue } from "./x509/json.js"
import type { Certificate } from "./x509/model.js"
import { parseCertificateRequest } from "./x509/request.js"
import { verifyChain, type VerifyOptions } from "./x509/verify.js"
import { trimASCII } from "./strings.js"

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** Runs f, turning a failure into a builtin error with its message (Go returns these as is). */
const attempt = <T>(f: () => T): T => {
  try {
    return f()
  } catch (e) {
    throw e instanceof BuiltinError ? e : builtinError(message(e))
  }
}

const BEGIN = "-----BEGIN"

// ---------------------------------------------------------------------------------------------
// Digests and HMACs

const digest = (name: string, alg: string): BuiltinDef => ({
  name,
  arity: 1,
  fn: ([a]) => crypto.createHash(alg).update(str(a, 1), "utf8").digest("hex")
})

const hmac = (name: string, alg: string): BuiltinDef => ({
  name,
  arity: 2,
  fn: ([m, k]) => {
    const msg = str(m, 1)
    return crypto.createHmac(alg, Buffer.from(str(k, 2), "utf8")).update(msg, "utf8").digest("hex")
  }
})

const hmacEqual = (a: Value, b: Value): boolean => {
  const x = Buffer.from(str(a, 1), "utf8")
  const y = Buffer.from(str(b, 2), "utf8")
  return x.length === y.length && crypto.timingSafeEqual(x, y)
}

// ---------------------------------------------------------------------------------------------
// Certificates

const certsFromPEM = (data: Buffer): Certificate[] => {
  const ders: Buffer[] = []
  let rest = data
  while (rest.length > 0) {
    const d = pemDecode(rest)
    if (d.block === undefined) break
    if (d.block.type !== "CERTIFICATE") throw new Error(`PEM block type is '${d.block.type}', expected CERTIFICATE`)
    ders.push(d.block.bytes)
    rest = d.rest
  }
  return parseCertificates(Buffer.concat(ders))
}

/** OPA's getX509CertsFromString: PEM, base64 of PEM, or base64 of DER. */
const certsFromString = (s: string): Certificate[] => {
  if (s.startsWith(BEGIN)) return certsFromPEM(Buffer.from(s, "utf8"))
  const b = goBase64Decode(s)
  if (b.subarray(0, BEGIN.length).toString("latin1") === BEGIN) return certsFromPEM(b)
  return parseCertificates(b)
}

const ALLOWED_KEY_USAGES: ReadonlyMap<string, number> = new Map([
  ["KeyUsageAny", 0],
  ["KeyUsageServerAuth", 1],
  ["KeyUsageClientAuth", 2],
  ["KeyUsageCodeSigning", 3],
  ["KeyUsageEmailProtection", 4],
  ["KeyUsageIPSECEndSystem", 5],
  ["KeyUsageIPSECTunnel", 6],
  ["KeyUsageIPSECUser", 7],
  ["KeyUsageTimeStamping", 8],
  ["KeyUsageOCSPSigning", 9],
  ["KeyUsageMicrosoftServerGatedCrypto", 10],
  ["KeyUsageNetscapeServerGatedCrypto", 11],
  ["KeyUsageMicrosoftCommercialCodeSigning", 12],
  ["KeyUsageMicrosoftKernelCodeSigning", 13]
])

const INT64_MAX = (1n << 63n) - 1n

const int64Of = (v: Value): bigint | undefined => {
  if (typeof v === "bigint") return v <= INT64_MAX && v >= -INT64_MAX - 1n ? v : undefined
  if (typeof v === "number" && Number.isInteger(v)) return BigInt(v)
  return undefined
}

/** OPA's extractVerifyOpts. */
const verifyOptions = (o: Value, nowNs: bigint): VerifyOptions => {
  let dnsName: string | undefined
  let currentTimeNs = nowNs
  let maxConstraintComparisons: number | undefined
  let keyUsages: number[] | undefined
  objectEach(obj(o, 2), (k, v) => {
    if (typeof k !== "string") return false
    switch (k) {
      case "DNSName":
        if (typeof v !== "string") throw builtinError("'DNSName' should be a string")
        dnsName = trimASCII(v, '"')
        break
      case "CurrentTime": {
        if (typeof v !== "number" && typeof v !== "bigint") throw builtinError("'CurrentTime' should be a number")
        const t = int64Of(v)
        if (t === undefined) throw builtinError("'CurrentTime' should be a valid int64 number")
        currentTimeNs = t
        break
      }
      case "MaxConstraintComparisons": {
        if (typeof v !== "number" && typeof v !== "bigint") throw builtinError("'MaxConstraintComparisons' should be a number")
        const n = int64Of(v)
        if (n === undefined || n > BigInt(Number.MAX_SAFE_INTEGER)) throw builtinError("'MaxConstraintComparisons' should be a valid number")
        maxConstraintComparisons = Number(n)
        break
      }
      case "KeyUsages": {
        if (!Array.isArray(v) && !(v instanceof RegoSet)) throw builtinError("'KeyUsages' should be an Array or Set")
        const bad: string[] = []
        const usages: number[] = []
        for (const x of Array.isArray(v) ? v : v.sorted()) {
          if (typeof x !== "string") continue
          const name = trimASCII(x, '"')
          const u = ALLOWED_KEY_USAGES.get(name)
          if (u === undefined) bad.push(name)
          else usages.push(u)
        }
        if (bad.length > 0) throw builtinError(`invalid entries for 'KeyUsages' found: [${bad.join(" ")}]`)
        keyUsages = usages
        break
      }
      default:
        throw builtinError("invalid key option")
    }
    return false
  })
  return { dnsName, currentTimeNs, maxConstraintComparisons, keyUsages }
}

const UNVERIFIED: Value = [false, []]

const parseAndVerify = (certsText: string, options: () => VerifyOptions, withURIStrings: boolean): Value => {
  let certs: Certificate[]
  try {
    certs = certsFromString(certsText)
  } catch {
    return UNVERIFIED
  }
  const o = options()
  let chain: Certificate[]
  try {
    chain = verifyChain(certs, o)
  } catch {
    return UNVERIFIED
  }
  return [true, chain.map((c) => certificateValue(c, withURIStrings))]
}

const parseCertificateRequestBuiltin = (a: Value): Value => {
  const s = str(a, 1)
  let der: Buffer = Buffer.from(s, "utf8")
  if (!s.startsWith("-----BEGIN CERTIFICATE REQUEST-----")) der = attempt(() => goBase64Decode(s))
  const { block } = pemDecode(der)
  if (block !== undefined && block.type !== "CERTIFICATE REQUEST") throw builtinError("invalid PEM-encoded certificate signing request")
  if (block !== undefined) der = block.bytes
  return certificateRequestValue(attempt(() => parseCertificateRequest(der)))
}

// ---------------------------------------------------------------------------------------------
// Private keys

/** A private key as Go's x509 package returns it. */
type PrivateKey =
  | { readonly type: "rsa"; readonly key: crypto.KeyObject }
  | { readonly type: "ecdsa"; readonly key: crypto.KeyObject }
  | { readonly type: "ed25519"; readonly key: crypto.KeyObject }
  | { readonly type: "x25519"; readonly key: crypto.KeyObject }

const GO_CURVES = new Set(["prime256v1", "secp384r1", "secp521r1", "secp224r1"])

const classify = (key: crypto.KeyObject, where: string): PrivateKey => {
  switch (key.asymmetricKeyType) {
    case "rsa":
      return { type: "rsa", key }
    case "ec":
      if (!GO_CURVES.has(key.asymmetricKeyDetails?.namedCurve ?? "")) throw new Error("x509: unknown elliptic curve")
      return { type: "ecdsa", key }
    case "ed25519":
      return { type: "ed25519", key }
    case "x25519":
      return { type: "x25519", key }
    default:
      throw new Error(`x509: ${where} contained private key with unknown algorithm`)
  }
}

const tryPrivate = (der: Buffer, type: "pkcs1" | "pkcs8" | "sec1"): crypto.KeyObject | undefined => {
  try {
    return crypto.createPrivateKey({ key: der, format: "der", type })
  } catch {
    return undefined
  }
}

/** x509.ParsePKCS1PrivateKey */
const parsePKCS1 = (der: Buffer): PrivateKey => {
  const k = tryPrivate(der, "pkcs1")
  if (k !== undefined) return { type: "rsa", key: k }
  if (tryPrivate(der, "pkcs8") !== undefined) throw new Error("x509: failed to parse private key (use ParsePKCS8PrivateKey instead for this key format)")
  if (tryPrivate(der, "sec1") !== undefined) throw new Error("x509: failed to parse private key (use ParseECPrivateKey instead for this key format)")
  throw new Error("x509: failed to parse RSA private key")
}

/** x509.ParsePKCS8PrivateKey */
const parsePKCS8 = (der: Buffer): PrivateKey => {
  const k = tryPrivate(der, "pkcs8")
  if (k !== undefined) return classify(k, "PKCS#8 wrapping")
  if (tryPrivate(der, "pkcs1") !== undefined) throw new Error("x509: failed to parse private key (use ParsePKCS1PrivateKey instead for this key format)")
  if (tryPrivate(der, "sec1") !== undefined) throw new Error("x509: failed to parse private key (use ParseECPrivateKey instead for this key format)")
  throw new Error("x509: failed to parse PKCS#8 private key")
}

/** x509.ParseECPrivateKey */
const parseEC = (der: Buffer): PrivateKey => {
  const k = tryPrivate(der, "sec1")
  if (k !== undefined) return classify(k, "EC key")
  if (tryPrivate(der, "pkcs8") !== undefined) throw new Error("x509: failed to parse private key (use ParsePKCS8PrivateKey instead for this key format)")
  if (tryPrivate(der, "pkcs1") !== undefined) throw new Error("x509: failed to parse private key (use ParsePKCS1PrivateKey instead for this key format)")
  throw new Error("x509: failed to parse EC private key")
}

/** OPA's getPrivateKeysFromPEMData: every RSA, PKCS#8 and EC private key block. */
const privateKeysFromPEM = (data: Buffer): PrivateKey[] => {
  let bs = data
  try {
    bs = goBase64Decode(data)
  } catch {
    // not base64: the PEM text itself
  }
  const keys: PrivateKey[] = []
  while (bs.length > 0) {
    const before = bs.length
    const { block, rest }: { block: PemBlock | undefined; rest: Buffer } = pemDecode(bs)
    bs = rest
    if (block === undefined || before === bs.length) break
    switch (block.type) {
      case "RSA PRIVATE KEY":
        keys.push(parsePKCS1(block.bytes))
        break
      case "PRIVATE KEY":
        keys.push(parsePKCS8(block.bytes))
        break
      case "EC PRIVATE KEY":
        keys.push(parseEC(block.bytes))
        break
    }
  }
  return keys
}

type JWK = Record<string, string>
const jwkOf = (k: crypto.KeyObject): JWK => k.export({ format: "jwk" }) as JWK
const bigOf = (b64url: string): Value => normBig(bytesToBig(base64UrlDecode(b64url)))

/** The JSON form of Go's private key types (rsa.PrivateKey, ecdsa.PrivateKey, ed25519.PrivateKey). */
const privateKeyValue = (k: PrivateKey): Value => {
  const j = jwkOf(k.key)
  switch (k.type) {
    case "rsa":
      return {
        N: bigOf(j.n),
        E: Number(bytesToBig(base64UrlDecode(j.e))),
        D: bigOf(j.d),
        Primes: [bigOf(j.p), bigOf(j.q)],
        Precomputed: { Dp: bigOf(j.dp), Dq: bigOf(j.dq), Qinv: bigOf(j.qi), CRTValues: [] }
      }
    case "ecdsa":
      // elliptic.Curve implementations have no exported fields.
      return { Curve: {}, X: bigOf(j.x), Y: bigOf(j.y), D: bigOf(j.d) }
    case "ed25519":
      return base64StdEncode(Buffer.concat([base64UrlDecode(j.d), base64UrlDecode(j.x)]))
    case "x25519":
      // ecdh.PrivateKey has no exported fields.
      return {}
  }
}

/** The JWK OPA's internal jwk.New makes of a private key (RSA and ECDSA only). */
const privateKeyJWK = (k: PrivateKey): Value => {
  switch (k.type) {
    case "rsa":
    case "ecdsa": {
      const j = jwkOf(k.key)
      const out: Record<string, Value> = {}
      for (const f of k.type === "rsa" ? ["kty", "n", "e", "d", "p", "q", "dp", "dq", "qi"] : ["kty", "crv", "x", "y", "d"]) if (j[f] !== undefined) out[f] = j[f]
      return out
    }
    case "ed25519":
      throw builtinError("invalid key type ed25519.PrivateKey")
    case "x25519":
      throw builtinError("invalid key type *ecdh.PrivateKey")
  }
}

// ---------------------------------------------------------------------------------------------
// tls.X509KeyPair

const publicMatches = (cert: Certificate, key: PrivateKey): void => {
  const pub = cert.publicKey
  if (pub === undefined || pub.type === "dsa") throw new Error("tls: unknown public key algorithm")
  const expected = { rsa: "rsa", ecdsa: "ecdsa", ed25519: "ed25519" }[pub.type]
  if (expected !== key.type) throw new Error("tls: private key type does not match public key type")
  const derived = crypto.createPublicKey(key.key).export({ format: "der", type: "spki" })
  const j = jwkOf(key.key)
  const same =
    pub.type === "rsa"
      ? bytesToBig(base64UrlDecode(j.n)) === pub.n
      : pub.type === "ecdsa"
        ? bytesToBig(base64UrlDecode(j.x)) === pub.x && bytesToBig(base64UrlDecode(j.y)) === pub.y
        : pub.key.export({ format: "der", type: "spki" }).equals(derived)
  if (!same) throw new Error("tls: private key does not match public key")
}

const keyPair = (certPEM: Buffer, keyPEM: Buffer): Value => {
  const certs: Buffer[] = []
  const skipped: string[] = []
  for (let rest = certPEM; ; ) {
    const d = pemDecode(rest)
    if (d.block === undefined) break
    if (d.block.type === "CERTIFICATE") certs.push(d.block.bytes)
    else skipped.push(d.block.type)
    rest = d.rest
  }
  if (certs.length === 0) {
    if (skipped.length === 0) throw new Error("tls: failed to find any PEM data in certificate input")
    if (skipped.length === 1 && skipped[0].endsWith("PRIVATE KEY")) {
      throw new Error("tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may have been switched")
    }
    throw new Error(`tls: failed to find "CERTIFICATE" PEM block in certificate input after skipping PEM blocks of the following types: [${skipped.join(" ")}]`)
  }
  skipped.length = 0
  let keyBlock: PemBlock | undefined
  for (let rest = keyPEM; ; ) {
    const d = pemDecode(rest)
    if (d.block === undefined) {
      if (skipped.length === 0) throw new Error("tls: failed to find any PEM data in key input")
      if (skipped.length === 1 && skipped[0] === "CERTIFICATE") throw new Error("tls: found a certificate rather than a key in the PEM for the private key")
      throw new Error(`tls: failed to find PEM block with type ending in "PRIVATE KEY" in key input after skipping PEM blocks of the following types: [${skipped.join(" ")}]`)
    }
    if (d.block.type === "PRIVATE KEY" || d.block.type.endsWith(" PRIVATE KEY")) {
      keyBlock = d.block
      break
    }
    skipped.push(d.block.type)
    rest = d.rest
  }
  const leaf = parseSingleCertificate(certs[0])
  let key: PrivateKey | undefined
  const pkcs1 = tryPrivate(keyBlock.bytes, "pkcs1")
  if (pkcs1 !== undefined) key = { type: "rsa", key: pkcs1 }
  else {
    const pkcs8 = tryPrivate(keyBlock.bytes, "pkcs8")
    if (pkcs8 !== undefined) {
      const t = pkcs8.asymmetricKeyType
      if (t !== "rsa" && t !== "ec" && t !== "ed25519") throw new Error("tls: found unknown private key type in PKCS#8 wrapping")
      key = classify(pkcs8, "PKCS#8 wrapping")
    } else {
      const sec1 = tryPrivate(keyBlock.bytes, "sec1")
      if (sec1 === undefined) throw new Error("tls: failed to parse private key")
      key = classify(sec1, "EC key")
    }
  }
  publicMatches(leaf, key)
  return {
    Certificate: certs.map(base64StdEncode),
    PrivateKey: privateKeyValue(key),
    SupportedSignatureAlgorithms: null,
    OCSPStaple: null,
    SignedCertificateTimestamps: null,
    Leaf: certificateValue(leaf, false)
  }
}

/** OPA's getTLSx509KeyPairFromString: PEM or base64 of PEM or DER, for both inputs. */
const parseKeyPair = (certText: string, keyText: string): Value => {
  let cert: Buffer = Buffer.from(certText, "utf8")
  let key: Buffer = Buffer.from(keyText, "utf8")
  const isPEM = (b: Buffer): boolean => b.subarray(0, 11).toString("latin1") === "-----BEGIN "
  if (!isPEM(cert)) cert = goBase64Decode(cert)
  if (!isPEM(key)) key = goBase64Decode(key)
  if (!isPEM(cert)) cert = Buffer.from(pemEncode("CERTIFICATE", cert))
  if (key.subarray(0, BEGIN.length).toString("latin1") !== BEGIN) key = Buffer.from(pemEncode("PRIVATE KEY", key))
  return keyPair(cert, key)
}

// ---------------------------------------------------------------------------------------------

export const cryptoBuiltins: BuiltinDef[] = [
  digest("crypto.md5", "md5"),
  digest("crypto.sha1", "sha1"),
  digest("crypto.sha256", "sha256"),
  hmac("crypto.hmac.md5", "md5"),
  hmac("crypto.hmac.sha1", "sha1"),
  hmac("crypto.hmac.sha256", "sha256"),
  hmac("crypto.hmac.sha512", "sha512"),
  { name: "crypto.hmac.equal", arity: 2, fn: ([a, b]) => hmacEqual(a, b) },
  {
    name: "crypto.x509.parse_certificates",
    arity: 1,
    fn: ([a]) => attempt(() => certsFromString(str(a, 1))).map((c) => certificateValue(c, true))
  },
  {
    name: "crypto.x509.parse_and_verify_certificates",
    arity: 1,
    fn: ([a], ctx) => parseAndVerify(str(a, 1), () => ({ currentTimeNs: ctx.nowNs }), true)
  },
  {
    name: "crypto.x509.parse_and_verify_certificates_with_options",
    arity: 2,
    fn: ([a, o], ctx) => {
      const s = str(a, 1)
      obj(o, 2)
      return parseAndVerify(s, () => verifyOptions(o, ctx.nowNs), false)
    }
  },
  { name: "crypto.x509.parse_certificate_request", arity: 1, fn: ([a]) => parseCertificateRequestBuiltin(a) },
  {
    name: "crypto.x509.parse_keypair",
    arity: 2,
    // OPA reports a non-string key as operand 1 too.
    fn: ([c, k]) => {
      const cert = str(c, 1)
      return attempt(() => parseKeyPair(cert, str(k, 1)))
    }
  },
  {
    name: "crypto.x509.parse_rsa_private_key",
    arity: 1,
    fn: ([a]) => {
      const s = str(a, 1)
      if (s === "") throw builtinError("input PEM data was empty")
      const data = s.startsWith(BEGIN) ? Buffer.from(s, "utf8") : attempt(() => goBase64Decode(s))
      const keys = attempt(() => privateKeysFromPEM(data))
      return keys.length === 0 ? null : privateKeyJWK(keys[0])
    }
  },
  {
    name: "crypto.parse_private_keys",
    arity: 1,
    fn: ([a]) => {
      const s = str(a, 1)
      if (s === "") return null
      return attempt(() => privateKeysFromPEM(Buffer.from(s, "utf8"))).map(privateKeyValue)
    }
  }
]
