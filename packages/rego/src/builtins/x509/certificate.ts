// Certificates, parsed the way Go's crypto/x509 parseCertificate does (strict DER, same checks in
// the same order, same error texts).

import * as crypto from "node:crypto"
import { type BitString, type Element, bytesToBig, ctx, ctxCons, Der, oidString, parseOid, TAG } from "../asn1.js"
import { parseExtension, processExtensions } from "./extensions.js"
import { type Attribute, type Certificate, type GoTime, type Name, type PublicKey, fail, must, optional, PkAlg, SigAlg } from "./model.js"

const SIGNATURE_OIDS: ReadonlyMap<string, number> = new Map([
  ["1.2.840.113549.1.1.2", SigAlg.MD2WithRSA],
  ["1.2.840.113549.1.1.4", SigAlg.MD5WithRSA],
  ["1.2.840.113549.1.1.5", SigAlg.SHA1WithRSA],
  ["1.3.14.3.2.29", SigAlg.SHA1WithRSA],
  ["1.2.840.113549.1.1.11", SigAlg.SHA256WithRSA],
  ["1.2.840.113549.1.1.12", SigAlg.SHA384WithRSA],
  ["1.2.840.113549.1.1.13", SigAlg.SHA512WithRSA],
  ["1.2.840.10040.4.3", SigAlg.DSAWithSHA1],
  ["2.16.840.1.101.3.4.3.2", SigAlg.DSAWithSHA256],
  ["1.2.840.10045.4.1", SigAlg.ECDSAWithSHA1],
  ["1.2.840.10045.4.3.2", SigAlg.ECDSAWithSHA256],
  ["1.2.840.10045.4.3.3", SigAlg.ECDSAWithSHA384],
  ["1.2.840.10045.4.3.4", SigAlg.ECDSAWithSHA512],
  ["1.3.101.112", SigAlg.PureEd25519]
])

const OID_RSAPSS = "1.2.840.113549.1.1.10"

const OID_MGF1 = "1.2.840.113549.1.1.8"

const PSS_HASHES: ReadonlyMap<string, [number, number]> = new Map([
  ["2.16.840.1.101.3.4.2.1", [SigAlg.SHA256WithRSAPSS, 32]],
  ["2.16.840.1.101.3.4.2.2", [SigAlg.SHA384WithRSAPSS, 48]],
  ["2.16.840.1.101.3.4.2.3", [SigAlg.SHA512WithRSAPSS, 64]]
])

const PUBLIC_KEY_OIDS: ReadonlyMap<string, number> = new Map([
  ["1.2.840.113549.1.1.1", PkAlg.RSA],
  ["1.2.840.10040.4.1", PkAlg.DSA],
  ["1.2.840.10045.2.1", PkAlg.ECDSA],
  ["1.3.101.112", PkAlg.Ed25519]
])

const NAMED_CURVES: ReadonlyMap<string, { name: string; bits: number }> = new Map([
  ["1.3.132.0.33", { name: "P-224", bits: 224 }],
  ["1.2.840.10045.3.1.7", { name: "P-256", bits: 256 }],
  ["1.3.132.0.34", { name: "P-384", bits: 384 }],
  ["1.3.132.0.35", { name: "P-521", bits: 521 }]
])

interface AlgorithmIdentifier {
  readonly oid: number[]
  /** The parameters element, if any. */
  readonly params: Element | undefined
}

export const parseAI = (content: Buffer): AlgorithmIdentifier => {
  const d = new Der(content)
  const oid = must(d.oid(), "x509: malformed OID")
  if (d.empty) return { oid, params: undefined }
  return { oid, params: must(d.any(), "x509: malformed parameters") }
}

const isNull = (e: Element | undefined): boolean => e === undefined || (e.tag === TAG.NULL && e.content.length === 0)

export const signatureAlgorithmOf = (ai: AlgorithmIdentifier): number => {
  const id = oidString(ai.oid)
  if (id === "1.3.101.112" && ai.params !== undefined) return SigAlg.Unknown
  if (id !== OID_RSAPSS) return SIGNATURE_OIDS.get(id) ?? SigAlg.Unknown
  // RSASSA-PSS: only MGF1 with the message hash, salt length equal to the hash length and the
  // default trailer are recognised (Go's three buckets).
  try {
    if (ai.params === undefined || ai.params.tag !== TAG.SEQUENCE) return SigAlg.Unknown
    const p = new Der(ai.params.content)
    const hashEl = p.optional(ctxCons(0))
    const mgfEl = p.optional(ctxCons(1))
    const saltEl = p.optional(ctxCons(2))
    const trailerEl = p.optional(ctxCons(3))
    if (hashEl === undefined || mgfEl === undefined || saltEl === undefined || trailerEl === undefined || !p.empty) return SigAlg.Unknown
    if (hashEl === null || mgfEl === null) return SigAlg.Unknown
    const hash = parseAI(must(new Der(hashEl.content).enter(TAG.SEQUENCE), "").remaining())
    const mgf = parseAI(must(new Der(mgfEl.content).enter(TAG.SEQUENCE), "").remaining())
    if (mgf.params === undefined || mgf.params.tag !== TAG.SEQUENCE) return SigAlg.Unknown
    const mgfHash = parseAI(mgf.params.content)
    const salt = saltEl === null ? 20 : new Der(saltEl.content).smallInteger()
    const trailer = trailerEl === null ? 1 : new Der(trailerEl.content).smallInteger()
    if (!isNull(hash.params) || oidString(mgf.oid) !== OID_MGF1 || oidString(mgfHash.oid) !== oidString(hash.oid) || !isNull(mgfHash.params) || trailer !== 1) return SigAlg.Unknown
    const bucket = PSS_HASHES.get(oidString(hash.oid))
    return bucket !== undefined && bucket[1] === salt ? bucket[0] : SigAlg.Unknown
  } catch {
    return SigAlg.Unknown
  }
}

/** x509.parsePublicKey; spki is the whole SubjectPublicKeyInfo element. */
const parsePublicKey = (algorithm: number, ai: AlgorithmIdentifier, key: BitString, spki: Buffer): PublicKey => {
  const keyObject = (): crypto.KeyObject => crypto.createPublicKey({ key: spki, format: "der", type: "spki" })
  switch (algorithm) {
    case PkAlg.RSA: {
      if (ai.params === undefined || !isNull(ai.params)) fail("x509: RSA key missing NULL parameters")
      const d = must(new Der(key.bytes).enter(TAG.SEQUENCE), "x509: invalid RSA public key")
      const n = must(d.integer(), "x509: invalid RSA modulus")
      const e = must(d.smallInteger(), "x509: invalid RSA public exponent")
      if (n <= 0n) fail("x509: RSA modulus is not a positive number")
      if (e <= 0) fail("x509: RSA public exponent is not a positive number")
      return { type: "rsa", n, e, key: keyObject() }
    }
    case PkAlg.ECDSA: {
      const params = must(ai.params, "x509: invalid ECDSA parameters")
      const curveOid = params.tag === TAG.OID ? parseOid(params.content) : undefined
      const curve = NAMED_CURVES.get(oidString(must(curveOid, "x509: invalid ECDSA parameters")))
      if (curve === undefined) fail("x509: unsupported elliptic curve")
      const size = Math.ceil((curve as { bits: number }).bits / 8)
      const b = key.bytes
      if (b.length !== 1 + 2 * size || b[0] !== 4) fail("x509: failed to unmarshal elliptic curve point")
      let k: crypto.KeyObject
      try {
        k = keyObject()
      } catch {
        return fail("x509: failed to unmarshal elliptic curve point")
      }
      return { type: "ecdsa", curve: (curve as { name: string }).name, x: bytesToBig(b.subarray(1, 1 + size)), y: bytesToBig(b.subarray(1 + size)), key: k }
    }
    case PkAlg.Ed25519:
      if (ai.params !== undefined) fail("x509: Ed25519 key encoded with illegal parameters")
      if (key.bytes.length !== 32) fail("x509: wrong Ed25519 public key size")
      return { type: "ed25519", bytes: Buffer.from(key.bytes), key: keyObject() }
    default: {
      // DSA
      const y = must(new Der(key.bytes).integer(), "x509: invalid DSA public key")
      const pd = ai.params?.tag === TAG.SEQUENCE ? new Der(ai.params.content) : undefined
      const p = pd?.integer()
      const q = pd?.integer()
      const g = pd?.integer()
      if (p === undefined || q === undefined || g === undefined) return fail("x509: invalid DSA parameters")
      if (y <= 0n || p <= 0n || q <= 0n || g <= 0n) fail("x509: zero or negative DSA parameter")
      return { type: "dsa", p, q, g, y }
    }
  }
}

const isPrintable = (c: number): boolean =>
  (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || (c >= 0x27 && c <= 0x29) || (c >= 0x2b && c <= 0x2f) || c === 0x20 || c === 0x3a || c === 0x3d || c === 0x3f || c === 0x2a || c === 0x26

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** Go's x509 parseASN1String. */
export const parseASN1String = (tag: number, b: Buffer): string => {
  switch (tag) {
    case TAG.T61_STRING:
      // Go keeps the bytes as they are; invalid UTF-8 becomes U+FFFD once marshalled.
      return b.toString("utf8")
    case TAG.PRINTABLE_STRING:
      for (const c of b) if (!isPrintable(c)) fail("invalid PrintableString")
      return b.toString("latin1")
    case TAG.UTF8_STRING:
      try {
        return utf8.decode(b)
      } catch {
        return fail("invalid UTF-8 string")
      }
    case TAG.BMP_STRING: {
      if (b.length % 2 !== 0) fail("invalid BMPString")
      // Strip a terminating NUL, if present.
      let end = b.length
      if (end >= 2 && b[end - 1] === 0 && b[end - 2] === 0) end -= 2
      let s = ""
      for (let i = 0; i < end; i += 2) s += String.fromCharCode((b[i] << 8) | b[i + 1])
      return s
    }
    case TAG.IA5_STRING:
      for (const c of b) if (c > 0x7f) fail("invalid IA5String")
      return b.toString("latin1")
    case TAG.NUMERIC_STRING:
      for (const c of b) if (!((c >= 0x30 && c <= 0x39) || c === 0x20)) fail("invalid NumericString")
      return b.toString("latin1")
    default:
      return fail(`unsupported string type: ${tag}`)
  }
}

/** Go's x509 parseName over the whole Name element. */
export const parseName = (raw: Buffer): Name => {
  const seq = must(new Der(raw).enter(TAG.SEQUENCE), "x509: invalid RDNSequence")
  const attributes: Attribute[] = []
  while (!seq.empty) {
    const set = must(seq.enter(TAG.SET), "x509: invalid RDNSequence")
    while (!set.empty) {
      const atv = must(set.enter(TAG.SEQUENCE), "x509: invalid RDNSequence: invalid attribute")
      const type = must(atv.oid(), "x509: invalid RDNSequence: invalid attribute type")
      const v = must(atv.any(), "x509: invalid RDNSequence: invalid attribute value")
      let value: string
      try {
        value = parseASN1String(v.tag, v.content)
      } catch (e) {
        return fail(`x509: invalid RDNSequence: invalid attribute value: ${(e as Error).message}`)
      }
      attributes.push({ type, value })
    }
  }
  return { attributes }
}

/** UTCTime or GeneralizedTime, as strict as cryptobyte (the text must round-trip). */
export const parseTime = (e: Element): GoTime | undefined => {
  const s = e.content.toString("latin1")
  let m: RegExpExecArray | null
  let year: number
  let rest: string
  if (e.tag === TAG.UTC_TIME) {
    m = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})?(Z|[+-]\d{4})$/.exec(s)
    if (m === null) return undefined
    year = Number(m[1])
    year += year >= 50 ? 1900 : 2000
    rest = ""
  } else if (e.tag === TAG.GENERALIZED_TIME) {
    m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.(\d*[1-9]))?(Z|[+-]\d{4})$/.exec(s)
    if (m === null) return undefined
    year = Number(m[1])
    rest = m[7] ?? ""
  } else return undefined
  const [mo, d, h, mi] = [m[2], m[3], m[4], m[5]].map(Number)
  const sec = e.tag === TAG.UTC_TIME ? (m[6] === undefined ? 0 : Number(m[6])) : Number(m[6])
  const zone = e.tag === TAG.UTC_TIME ? m[7] : m[8]
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59) return undefined
  const ms = Date.UTC(year, mo - 1, d, h, mi, sec)
  const check = new Date(ms)
  if (check.getUTCDate() !== d || check.getUTCMonth() !== mo - 1) return undefined
  // Go re-formats the parsed time and requires the same text: a zero offset must be "Z".
  if (zone === "+0000" || zone === "-0000") return undefined
  const offsetMinutes = zone === "Z" ? 0 : (zone[0] === "-" ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(3, 5)))
  const frac = rest === "" ? 0n : BigInt(rest.padEnd(9, "0").slice(0, 9))
  const ns = (BigInt(ms) - BigInt(offsetMinutes) * 60_000n) * 1_000_000n + frac
  return { ns, offsetMinutes }
}

/** Reads the SubjectPublicKeyInfo element (already read as a whole) into algorithm and key. */
export const readSPKI = (spki: Element): { algorithm: number; publicKey: PublicKey | undefined } => {
  const d = must(new Der(spki.raw).enter(TAG.SEQUENCE), "x509: malformed spki")
  const aiSeq = must(d.read(TAG.SEQUENCE), "x509: malformed public key algorithm identifier")
  const ai = parseAI(aiSeq.content)
  const algorithm = PUBLIC_KEY_OIDS.get(oidString(ai.oid)) ?? PkAlg.Unknown
  const key = must(d.bitString(), "x509: malformed subjectPublicKey")
  return { algorithm, publicKey: algorithm === PkAlg.Unknown ? undefined : parsePublicKey(algorithm, ai, key, Buffer.from(spki.raw)) }
}

/** Go's parseCertificate: the first certificate in der (trailing bytes are left to the caller). */
const parseCertificate = (der: Buffer): Certificate => {
  const input = new Der(der)
  const outer = must(input.read(TAG.SEQUENCE), "x509: malformed certificate")
  const c = new Der(outer.content)
  const tbsEl = must(c.read(TAG.SEQUENCE), "x509: malformed tbs certificate")
  const tbs = new Der(tbsEl.content)

  let version = 0
  const vEl = optional(tbs, ctxCons(0), "x509: malformed version")
  if (vEl !== null) {
    const vd = new Der(vEl.content)
    version = must(vd.smallInteger(), "x509: malformed version")
    if (!vd.empty) fail("x509: malformed version")
  }
  if (version < 0) fail("x509: malformed version")
  version++
  if (version > 3) fail("x509: invalid version")

  const serialNumber = must(tbs.integer(), "x509: malformed serial number")
  // Go accepts negative serial numbers only with GODEBUG=x509negativeserial=1 (since Go 1.23).
  if (serialNumber < 0n) fail("x509: negative serial number")
  const sigAI = must(tbs.read(TAG.SEQUENCE), "x509: malformed signature algorithm identifier")
  const outerSigAI = must(c.read(TAG.SEQUENCE), "x509: malformed algorithm identifier")
  if (!outerSigAI.content.equals(sigAI.content)) fail("x509: inner and outer signature algorithm identifiers don't match")
  const signatureAlgorithm = signatureAlgorithmOf(parseAI(sigAI.content))

  const issuerEl = must(tbs.read(TAG.SEQUENCE), "x509: malformed issuer")
  const issuer = parseName(issuerEl.raw)
  const validity = new Der(must(tbs.read(TAG.SEQUENCE), "x509: malformed validity").content)
  const nbEl = validity.any()
  const naEl = validity.any()
  const notBefore = nbEl === undefined ? undefined : parseTime(nbEl)
  if (notBefore === undefined) return fail("x509: malformed notBefore")
  const notAfter = naEl === undefined ? undefined : parseTime(naEl)
  if (notAfter === undefined) return fail("x509: malformed notAfter")

  const subjectEl = must(tbs.read(TAG.SEQUENCE), "x509: malformed issuer")
  const subject = parseName(subjectEl.raw)
  const spkiEl = must(tbs.read(TAG.SEQUENCE), "x509: malformed spki")
  const { algorithm: publicKeyAlgorithm, publicKey } = readSPKI(spkiEl)

  const cert: Certificate = {
    raw: Buffer.from(outer.raw),
    rawTBSCertificate: Buffer.from(tbsEl.raw),
    rawSubjectPublicKeyInfo: Buffer.from(spkiEl.raw),
    rawSubject: Buffer.from(subjectEl.raw),
    rawIssuer: Buffer.from(issuerEl.raw),
    signature: Buffer.alloc(0),
    signatureAlgorithm,
    publicKeyAlgorithm,
    publicKey,
    version,
    serialNumber,
    issuer,
    subject,
    notBefore,
    notAfter,
    keyUsage: 0,
    basicConstraintsValid: false,
    isCA: false,
    maxPathLen: 0,
    maxPathLenZero: false,
    permittedDNSDomainsCritical: false,
    inhibitAnyPolicy: 0,
    inhibitAnyPolicyZero: false,
    inhibitPolicyMapping: 0,
    inhibitPolicyMappingZero: false,
    requireExplicitPolicy: 0,
    requireExplicitPolicyZero: false
  }

  if (version > 1) {
    optional(tbs, ctx(1), "x509: malformed issuerUniqueID")
    optional(tbs, ctx(2), "x509: malformed subjectUniqueID")
    if (version === 3) {
      const extEl = optional(tbs, ctxCons(3), "x509: malformed extensions")
      if (extEl !== null) {
        const exts = must(new Der(extEl.content).enter(TAG.SEQUENCE), "x509: malformed extensions")
        const seen = new Set<string>()
        while (!exts.empty) {
          const ext = parseExtension(must(exts.read(TAG.SEQUENCE), "x509: malformed extension").content)
          const key = oidString(ext.id)
          if (seen.has(key)) fail(`x509: certificate contains duplicate extension with OID ${JSON.stringify(key)}`)
          seen.add(key)
          ;(cert.extensions ??= []).push(ext)
        }
        processExtensions(cert)
      }
    }
  }

  const sig = must(c.bitString(), "x509: malformed signature")
  ;(cert as { signature: Buffer }).signature = rightAlign(sig)
  return cert
}

/** asn1.BitString.RightAlign */
export const rightAlign = (b: BitString): Buffer => {
  const shift = (8 - (b.bitLength % 8)) % 8
  if (shift === 0 || b.bytes.length === 0) return Buffer.from(b.bytes)
  const out = Buffer.alloc(b.bytes.length)
  out[0] = b.bytes[0] >> shift
  for (let i = 1; i < b.bytes.length; i++) {
    out[i] = ((b.bytes[i - 1] << (8 - shift)) & 0xff) | (b.bytes[i] >> shift)
  }
  return out
}

/** x509.ParseCertificates: every certificate of concatenated DER. */
export const parseCertificates = (der: Buffer): Certificate[] => {
  const out: Certificate[] = []
  let rest = der
  while (rest.length > 0) {
    const c = parseCertificate(rest)
    out.push(c)
    rest = rest.subarray(c.raw.length)
  }
  return out
}

/** x509.ParseCertificate: exactly one certificate. */
export const parseSingleCertificate = (der: Buffer): Certificate => {
  const c = parseCertificate(der)
  if (c.raw.length !== der.length) fail("x509: trailing data")
  return c
}

/** x509.ParsePKIXPublicKey, for the key types Go supports. */
export const parsePKIXPublicKey = (der: Buffer): crypto.KeyObject => {
  const spki = new Der(der).read(TAG.SEQUENCE)
  if (spki === undefined) return fail("x509: malformed public key")
  const ai = parseAI(must(new Der(spki.content).read(TAG.SEQUENCE), "x509: malformed public key algorithm identifier").content)
  const id = oidString(ai.oid)
  if (id === "1.3.101.110") return crypto.createPublicKey({ key: der, format: "der", type: "spki" }) // X25519
  const { algorithm, publicKey } = readSPKI(spki)
  if (publicKey === undefined || algorithm === PkAlg.Unknown) return fail("x509: unknown public key algorithm")
  if (publicKey.type === "dsa") return crypto.createPublicKey({ key: der, format: "der", type: "spki" })
  return publicKey.key
}
