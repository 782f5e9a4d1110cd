// The JSON documents Go's encoding/json makes of x509.Certificate and x509.CertificateRequest:
// what OPA's crypto.x509.* builtins return, since OPA round-trips the Go structs through JSON.
// []byte fields are base64, big integers are numbers, nil slices are null.

import { type Value, normBig, ObjectBuilder } from "../../value.js"
import { base64StdEncode } from "../gobase64.js"
import type { Certificate, CertificateRequest, Extension, GoTime, GoURL, IPNet, Name, PublicKey, SANs } from "./model.js"
import { ipString } from "./names.js"

const b64 = (b: Buffer | undefined): Value => (b === undefined ? null : base64StdEncode(b))

const strs = (xs: readonly string[] | undefined): Value => (xs === undefined ? null : [...xs])

const big = (v: bigint): Value => normBig(v)

const NAME_FIELDS: ReadonlyArray<[number, string]> = [
  [6, "Country"],
  [10, "Organization"],
  [11, "OrganizationalUnit"],
  [7, "Locality"],
  [8, "Province"],
  [9, "StreetAddress"],
  [17, "PostalCode"]
]

/** pkix.Name after FillFromRDNSequence. */
const nameValue = (n: Name): Value => {
  const o = new ObjectBuilder()
  const lists = new Map<number, string[]>()
  let cn = ""
  let serial = ""
  for (const a of n.attributes) {
    if (typeof a.value !== "string") continue
    const t = a.type
    if (t.length === 4 && t[0] === 2 && t[1] === 5 && t[2] === 4) {
      if (t[3] === 3) cn = a.value
      else if (t[3] === 5) serial = a.value
      else if (NAME_FIELDS.some(([k]) => k === t[3])) {
        const l = lists.get(t[3]) ?? []
        l.push(a.value)
        lists.set(t[3], l)
      }
    }
  }
  for (const [k, field] of NAME_FIELDS) o.set(field, strs(lists.get(k)))
  o.set("SerialNumber", serial)
  o.set("CommonName", cn)
  o.set("Names", n.attributes.length === 0 ? null : n.attributes.map((a) => ({ Type: [...a.type], Value: a.value })))
  o.set("ExtraNames", null)
  return o.build()
}

const pad = (n: number, w = 2): string => String(n).padStart(w, "0")

/** time.Time.MarshalJSON (RFC 3339 with nanoseconds, trailing zeros trimmed). */
export const formatGoTime = (t: GoTime): string => {
  const localNs = t.ns + BigInt(t.offsetMinutes) * 60_000_000_000n
  let ms = localNs / 1_000_000n
  let frac = localNs % 1_000_000_000n
  if (frac < 0n) frac += 1_000_000_000n
  if (localNs < 0n && localNs % 1_000_000n !== 0n) ms -= 1n
  const d = new Date(Number(ms))
  const y = d.getUTCFullYear()
  let s = `${y < 0 ? "-" + pad(-y, 4) : pad(y, 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  if (frac !== 0n) s += "." + frac.toString().padStart(9, "0").replace(/0+$/, "")
  if (t.offsetMinutes === 0) return s + "Z"
  const o = Math.abs(t.offsetMinutes)
  return s + (t.offsetMinutes < 0 ? "-" : "+") + pad(Math.floor(o / 60)) + ":" + pad(o % 60)
}

const publicKeyValue = (k: PublicKey | undefined): Value => {
  if (k === undefined) return null
  switch (k.type) {
    case "rsa":
      return { N: big(k.n), E: k.e }
    case "ecdsa":
      // elliptic.Curve implementations have no exported fields.
      return { Curve: {}, X: big(k.x), Y: big(k.y) }
    case "ed25519":
      return base64StdEncode(k.bytes)
    case "dsa":
      return { Parameters: { P: big(k.p), Q: big(k.q), G: big(k.g) }, Y: big(k.y) }
  }
}

const urlValue = (u: GoURL): Value => ({
  Scheme: u.scheme,
  Opaque: u.opaque,
  User: u.user ? {} : null,
  Host: u.host,
  Path: u.path,
  RawPath: u.rawPath,
  OmitHost: u.omitHost,
  ForceQuery: u.forceQuery,
  RawQuery: u.rawQuery,
  Fragment: u.fragment,
  RawFragment: u.rawFragment
})

const extensionsValue = (exts: readonly Extension[] | undefined): Value =>
  exts === undefined ? null : exts.map((e) => ({ Id: [...e.id], Critical: e.critical, Value: base64StdEncode(e.value) }))

const ipNets = (xs: readonly IPNet[] | undefined): Value => (xs === undefined ? null : xs.map((n) => ({ IP: ipString(n.ip), Mask: base64StdEncode(n.mask) })))

const sanFields = (o: ObjectBuilder, s: SANs): void => {
  o.set("DNSNames", strs(s.dnsNames))
  o.set("EmailAddresses", strs(s.emailAddresses))
  o.set("IPAddresses", s.ipAddresses === undefined ? null : s.ipAddresses.map(ipString))
  o.set("URIs", s.uris === undefined ? null : s.uris.map(urlValue))
}

/**
 * The JSON document of an x509.Certificate. OPA's parse_certificates and
 * parse_and_verify_certificates add `URIStrings` (the SAN URIs as text).
 */
export const certificateValue = (c: Certificate, withURIStrings: boolean): Value => {
  const o = new ObjectBuilder()
  o.set("Raw", b64(c.raw))
  o.set("RawTBSCertificate", b64(c.rawTBSCertificate))
  o.set("RawSubjectPublicKeyInfo", b64(c.rawSubjectPublicKeyInfo))
  o.set("RawSubject", b64(c.rawSubject))
  o.set("RawIssuer", b64(c.rawIssuer))
  o.set("Signature", b64(c.signature))
  o.set("SignatureAlgorithm", c.signatureAlgorithm)
  o.set("PublicKeyAlgorithm", c.publicKeyAlgorithm)
  o.set("PublicKey", publicKeyValue(c.publicKey))
  o.set("Version", c.version)
  o.set("SerialNumber", big(c.serialNumber))
  o.set("Issuer", nameValue(c.issuer))
  o.set("Subject", nameValue(c.subject))
  o.set("NotBefore", formatGoTime(c.notBefore))
  o.set("NotAfter", formatGoTime(c.notAfter))
  o.set("KeyUsage", c.keyUsage)
  o.set("Extensions", extensionsValue(c.extensions))
  o.set("ExtraExtensions", null)
  o.set("UnhandledCriticalExtensions", c.unhandledCriticalExtensions === undefined ? null : c.unhandledCriticalExtensions.map((x) => [...x]))
  o.set("ExtKeyUsage", c.extKeyUsage === undefined ? null : [...c.extKeyUsage])
  o.set("UnknownExtKeyUsage", c.unknownExtKeyUsage === undefined ? null : c.unknownExtKeyUsage.map((x) => [...x]))
  o.set("BasicConstraintsValid", c.basicConstraintsValid)
  o.set("IsCA", c.isCA)
  o.set("MaxPathLen", c.maxPathLen)
  o.set("MaxPathLenZero", c.maxPathLenZero)
  o.set("SubjectKeyId", b64(c.subjectKeyId))
  o.set("AuthorityKeyId", b64(c.authorityKeyId))
  o.set("OCSPServer", strs(c.ocspServer))
  o.set("IssuingCertificateURL", strs(c.issuingCertificateURL))
  sanFields(o, c)
  o.set("PermittedDNSDomainsCritical", c.permittedDNSDomainsCritical)
  o.set("PermittedDNSDomains", strs(c.permittedDNSDomains))
  o.set("ExcludedDNSDomains", strs(c.excludedDNSDomains))
  o.set("PermittedIPRanges", ipNets(c.permittedIPRanges))
  o.set("ExcludedIPRanges", ipNets(c.excludedIPRanges))
  o.set("PermittedEmailAddresses", strs(c.permittedEmailAddresses))
  o.set("ExcludedEmailAddresses", strs(c.excludedEmailAddresses))
  o.set("PermittedURIDomains", strs(c.permittedURIDomains))
  o.set("ExcludedURIDomains", strs(c.excludedURIDomains))
  o.set("CRLDistributionPoints", strs(c.crlDistributionPoints))
  o.set("PolicyIdentifiers", c.policyIdentifiers === undefined ? null : c.policyIdentifiers.map((x) => [...x]))
  o.set("Policies", strs(c.policies))
  o.set("InhibitAnyPolicy", c.inhibitAnyPolicy)
  o.set("InhibitAnyPolicyZero", c.inhibitAnyPolicyZero)
  o.set("InhibitPolicyMapping", c.inhibitPolicyMapping)
  o.set("InhibitPolicyMappingZero", c.inhibitPolicyMappingZero)
  o.set("RequireExplicitPolicy", c.requireExplicitPolicy)
  o.set("RequireExplicitPolicyZero", c.requireExplicitPolicyZero)
  o.set(
    "PolicyMappings",
    c.policyMappings === undefined ? null : c.policyMappings.map((m) => ({ IssuerDomainPolicy: m.issuerDomainPolicy, SubjectDomainPolicy: m.subjectDomainPolicy }))
  )
  if (withURIStrings) o.set("URIStrings", c.uris === undefined ? null : c.uris.map((u) => u.text))
  return o.build()
}

/** The JSON document of an x509.CertificateRequest. */
export const certificateRequestValue = (r: CertificateRequest): Value => {
  const o = new ObjectBuilder()
  o.set("Raw", b64(r.raw))
  o.set("RawTBSCertificateRequest", b64(r.rawTBSCertificateRequest))
  o.set("RawSubjectPublicKeyInfo", b64(r.rawSubjectPublicKeyInfo))
  o.set("RawSubject", b64(r.rawSubject))
  o.set("Version", r.version)
  o.set("Signature", b64(r.signature))
  o.set("SignatureAlgorithm", r.signatureAlgorithm)
  o.set("PublicKeyAlgorithm", r.publicKeyAlgorithm)
  o.set("PublicKey", publicKeyValue(r.publicKey))
  o.set("Subject", nameValue(r.subject))
  o.set(
    "Attributes",
    r.attributes === undefined ? null : r.attributes.map((a) => ({ Type: [...a.type], Value: a.value.map((set) => set.map((atv) => ({ Type: [...atv.type], Value: atv.value }))) }))
  )
  o.set("Extensions", extensionsValue(r.extensions))
  o.set("ExtraExtensions", null)
  sanFields(o, r)
  return o.build()
}
