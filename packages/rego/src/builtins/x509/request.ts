// Certificate requests: x509.ParseCertificateRequest. Go decodes these with encoding/asn1
// rather than cryptobyte, hence the asn1: error texts.

import { type Value, normBig } from "../../value.js"
import { type Element, ctxCons, Der, oidString, parseInteger, parseOid, TAG } from "../asn1.js"
import { base64StdEncode } from "../gobase64.js"
import { parseAI, parseASN1String, parseName, parseTime, readSPKI, rightAlign, signatureAlgorithmOf } from "./certificate.js"
import { parseExtension, parseSAN } from "./extensions.js"
import { formatGoTime } from "./json.js"
import { type Attribute, type CertificateRequest, type Extension, fail, must } from "./model.js"

/** encoding/asn1's StructuralError for a tag mismatch, as Go formats it. */
const tagMismatch = (expected: number, tag: number, length: number, name: string, offset: number): never =>
  fail(
    `asn1: structure error: tags don't match (${expected} vs {class:${tag >> 6} tag:${tag & 0x1f} length:${length} isCompound:${(tag & 0x20) !== 0}}) ` +
      `{optional:false explicit:false application:false private:false defaultValue:<nil> tag:<nil> stringType:0 timeType:0 set:false omitEmpty:false} ${name} @${offset}`
  )

/** The SEQUENCE at the start of b, with encoding/asn1's errors. */
const expectSequence = (b: Buffer, name: string): Element => {
  if (b.length < 2) return fail("asn1: syntax error: data truncated")
  const tag = b[0]
  let length = b[1]
  let header = 2
  if (length & 0x80) {
    const n = length & 0x7f
    if (n === 0 || b.length - 2 < n) return fail("asn1: syntax error: data truncated")
    length = 0
    for (let i = 0; i < n; i++) length = length * 256 + b[2 + i]
    header += n
  }
  if (tag !== TAG.SEQUENCE) return tagMismatch(16, tag, length, name, header)
  return must(new Der(b).read(TAG.SEQUENCE), "asn1: syntax error: data truncated")
}

/** Go's encoding/asn1 decoding of a value into `any`. */
const asn1Any = (e: Element): Value => {
  switch (e.tag) {
    case TAG.PRINTABLE_STRING:
    case TAG.IA5_STRING:
    case TAG.T61_STRING:
    case TAG.UTF8_STRING:
    case TAG.NUMERIC_STRING:
    case TAG.BMP_STRING:
      try {
        return parseASN1String(e.tag, e.content)
      } catch {
        return null
      }
    case TAG.INTEGER: {
      const v = parseInteger(e.content)
      return v === undefined ? null : normBig(v)
    }
    case TAG.BOOLEAN:
      return e.content.length === 1 ? e.content[0] !== 0 : null
    case TAG.OID:
      return parseOid(e.content) ?? null
    case TAG.OCTET_STRING:
      return base64StdEncode(e.content)
    case TAG.UTC_TIME:
    case TAG.GENERALIZED_TIME: {
      const t = parseTime(e)
      return t === undefined ? null : formatGoTime(t)
    }
    default:
      return null
  }
}

const OID_EXTENSION_REQUEST = "1.2.840.113549.1.9.14"

/** x509.ParseCertificateRequest */
export const parseCertificateRequest = (der: Buffer): CertificateRequest => {
  const outer = expectSequence(der, "certificateRequest")
  if (outer.raw.length !== der.length) fail("asn1: syntax error: trailing data")
  const c = new Der(outer.content)
  const tbsEl = expectSequence(outer.content, "tbsCertificateRequest")
  c.read(TAG.SEQUENCE)
  const tbs = new Der(tbsEl.content)
  const version = must(tbs.smallInteger(), "asn1: structure error: tags don't match (2 vs version)")
  const subjectEl = must(tbs.any(), "asn1: syntax error: data truncated")
  const spkiEl = must(tbs.read(TAG.SEQUENCE), "asn1: structure error: tags don't match (16 vs publicKeyInfo)")
  const attrsEl = must(tbs.read(ctxCons(0)), "asn1: structure error: tags don't match (0 vs RawAttributes)")
  const sigAI = must(c.read(TAG.SEQUENCE), "asn1: structure error: tags don't match (16 vs AlgorithmIdentifier)")
  const sig = must(c.bitString(), "asn1: structure error: tags don't match (3 vs BitString)")

  const rawAttributes: Element[] = []
  const ad = new Der(attrsEl.content)
  while (!ad.empty) rawAttributes.push(must(ad.any(), "asn1: syntax error: data truncated"))

  // Attributes (deprecated in Go, still marshalled): SEQUENCE { type, SET OF SET OF atv } forms.
  let attributes: Array<{ type: number[]; value: Attribute[][] }> | undefined
  for (const raw of rawAttributes) {
    try {
      const d = must(new Der(raw.raw).enter(TAG.SEQUENCE), "")
      const type = must(d.oid(), "")
      const values = must(d.enter(TAG.SET), "")
      const sets: Attribute[][] = []
      while (!values.empty) {
        const inner = must(values.enter(TAG.SEQUENCE), "")
        const atvs: Attribute[] = []
        while (!inner.empty) {
          const atv = must(inner.enter(TAG.SEQUENCE), "")
          atvs.push({ type: must(atv.oid(), ""), value: asn1Any(must(atv.any(), "")) })
        }
        sets.push(atvs)
      }
      if (!d.empty) continue
      ;(attributes ??= []).push({ type, value: sets })
    } catch {
      // Go skips attributes that do not parse this way.
    }
  }

  const { algorithm: publicKeyAlgorithm, publicKey } = readSPKI(spkiEl)
  const subject = parseName(subjectEl.raw)

  let extensions: Extension[] | undefined
  const requested = new Set<string>()
  for (const raw of rawAttributes) {
    let id: number[] | undefined
    let first: Element | undefined
    try {
      const d = must(new Der(raw.raw).enter(TAG.SEQUENCE), "")
      id = must(d.oid(), "")
      const values = must(d.enter(TAG.SET), "")
      first = must(values.any(), "")
    } catch {
      continue
    }
    if (oidString(id) !== OID_EXTENSION_REQUEST) continue
    const list = must(new Der(first.raw).enter(TAG.SEQUENCE), "asn1: structure error: tags don't match (16 vs extensions)")
    while (!list.empty) {
      const ext = parseExtension(must(list.read(TAG.SEQUENCE), "asn1: structure error: tags don't match (16 vs Extension)").content)
      const key = oidString(ext.id)
      if (requested.has(key)) fail("x509: certificate request contains duplicate requested extensions")
      requested.add(key)
      ;(extensions ??= []).push(ext)
    }
  }

  const csr: CertificateRequest = {
    raw: Buffer.from(outer.raw),
    rawTBSCertificateRequest: Buffer.from(tbsEl.raw),
    rawSubjectPublicKeyInfo: Buffer.from(spkiEl.raw),
    rawSubject: Buffer.from(subjectEl.raw),
    version,
    signature: rightAlign(sig),
    signatureAlgorithm: signatureAlgorithmOf(parseAI(sigAI.content)),
    publicKeyAlgorithm,
    publicKey,
    subject,
    attributes,
    extensions
  }
  for (const e of extensions ?? []) if (oidString(e.id) === "2.5.29.17") parseSAN(e.value, csr)
  return csr
}
