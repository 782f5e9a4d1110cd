// Certificate extensions: Go's processExtensions, which fills the certificate fields the known
// extensions carry and records the critical ones it does not understand.

import { type Element, bitAt, ctx, ctxCons, Der, oidString, parseOid, TAG } from "../asn1.js"
import { type Certificate, type Extension, type GoURL, type IPNet, type SANs, fail, must, optional } from "./model.js"
import { domainToReverseLabels, parseIP, parseMailbox, parseURL } from "./names.js"

/** x509.ExtKeyUsage by OID. */
const EXT_KEY_USAGES: ReadonlyMap<string, number> = new Map([
  ["2.5.29.37.0", 0],
  ["1.3.6.1.5.5.7.3.1", 1],
  ["1.3.6.1.5.5.7.3.2", 2],
  ["1.3.6.1.5.5.7.3.3", 3],
  ["1.3.6.1.5.5.7.3.4", 4],
  ["1.3.6.1.5.5.7.3.5", 5],
  ["1.3.6.1.5.5.7.3.6", 6],
  ["1.3.6.1.5.5.7.3.7", 7],
  ["1.3.6.1.5.5.7.3.8", 8],
  ["1.3.6.1.5.5.7.3.9", 9],
  ["1.3.6.1.4.1.311.10.3.3", 10],
  ["2.16.840.1.113730.4.1", 11],
  ["1.3.6.1.4.1.311.2.1.22", 12],
  ["1.3.6.1.4.1.311.61.1.1", 13]
])

const isIA5 = (b: Buffer): boolean => b.every((c) => c <= 0x7f)

/** Calls f for every GeneralName of a subjectAltName value: (tag number, content). */
export const forEachSAN = (value: Buffer, f: (tag: number, data: Buffer) => void): void => {
  const d = must(new Der(value).enter(TAG.SEQUENCE), "x509: invalid subject alternative names")
  while (!d.empty) {
    const e = must(d.any(), "x509: invalid subject alternative name")
    f(e.tag ^ 0x80, e.content)
  }
}

export const parseSAN = (value: Buffer, into: SANs): void => {
  forEachSAN(value, (tag, data) => {
    switch (tag) {
      case 1:
        if (!isIA5(data)) fail("x509: SAN rfc822Name is malformed")
        ;(into.emailAddresses ??= []).push(data.toString("latin1"))
        break
      case 2:
        if (!isIA5(data)) fail("x509: SAN dNSName is malformed")
        ;(into.dnsNames ??= []).push(data.toString("latin1"))
        break
      case 6: {
        if (!isIA5(data)) fail("x509: SAN uniformResourceIdentifier is malformed")
        const s = data.toString("latin1")
        let uri: GoURL
        try {
          uri = parseURL(s)
        } catch (e) {
          return fail(`x509: cannot parse URI ${JSON.stringify(s)}: ${(e as Error).message}`)
        }
        if (uri.host.length > 0 && domainToReverseLabels(uri.host) === undefined) fail(`x509: cannot parse URI ${JSON.stringify(s)}: invalid domain`)
        ;(into.uris ??= []).push(uri)
        break
      }
      case 7:
        if (data.length !== 4 && data.length !== 16) fail(`x509: cannot parse IP address of length ${data.length}`)
        ;(into.ipAddresses ??= []).push(Buffer.from(data))
        break
    }
  })
}

const isValidIPMask = (mask: Buffer): boolean => {
  let seenZero = false
  for (const b of mask) {
    if (seenZero) {
      if (b !== 0) return false
      continue
    }
    switch (b) {
      case 0x00:
      case 0x80:
      case 0xc0:
      case 0xe0:
      case 0xf0:
      case 0xf8:
      case 0xfc:
      case 0xfe:
        seenZero = true
        break
      case 0xff:
        break
      default:
        return false
    }
  }
  return true
}

const parseNameConstraints = (cert: Certificate, ext: Extension): boolean => {
  let unhandled = false
  const outer = new Der(ext.value)
  const top = outer.enter(TAG.SEQUENCE)
  if (top === undefined || !outer.empty) return fail("x509: invalid NameConstraints extension")
  const permitted = top.optional(ctxCons(0))
  const excluded = top.optional(ctxCons(1))
  if (permitted === undefined || excluded === undefined || !top.empty) return fail("x509: invalid NameConstraints extension")
  if ((permitted === null && excluded === null) || ((permitted?.content.length ?? 0) === 0 && (excluded?.content.length ?? 0) === 0)) {
    return fail("x509: empty name constraints extension")
  }
  const values = (subtrees: Element | null): { dns?: string[]; ips?: IPNet[]; emails?: string[]; uris?: string[] } => {
    const out: { dns?: string[]; ips?: IPNet[]; emails?: string[]; uris?: string[] } = {}
    if (subtrees === null) return out
    const d = new Der(subtrees.content)
    while (!d.empty) {
      const seq = d.enter(TAG.SEQUENCE)
      const v = seq?.any()
      if (v === undefined) return fail("x509: invalid NameConstraints extension")
      const text = v.content.toString("latin1")
      switch (v.tag) {
        case ctx(2): {
          if (!isIA5(v.content)) fail("x509: invalid constraint value: invalid IA5String")
          const trimmed = text.startsWith(".") ? text.slice(1) : text
          if (domainToReverseLabels(trimmed) === undefined) fail(`x509: failed to parse dnsName constraint ${JSON.stringify(text)}`)
          ;(out.dns ??= []).push(text)
          break
        }
        case ctx(7): {
          const l = v.content.length
          if (l !== 8 && l !== 32) fail(`x509: IP constraint contained value of length ${l}`)
          const ip = Buffer.from(v.content.subarray(0, l / 2))
          const mask = Buffer.from(v.content.subarray(l / 2))
          if (!isValidIPMask(mask)) fail(`x509: IP constraint contained invalid mask ${mask.toString("hex")}`)
          ;(out.ips ??= []).push({ ip, mask })
          break
        }
        case ctx(1): {
          if (!isIA5(v.content)) fail("x509: invalid constraint value: invalid IA5String")
          if (text.includes("@")) {
            if (parseMailbox(text) === undefined) fail(`x509: failed to parse rfc822Name constraint ${JSON.stringify(text)}`)
          } else if (domainToReverseLabels(text.startsWith(".") ? text.slice(1) : text) === undefined) {
            fail(`x509: failed to parse rfc822Name constraint ${JSON.stringify(text)}`)
          }
          ;(out.emails ??= []).push(text)
          break
        }
        case ctx(6): {
          if (!isIA5(v.content)) fail("x509: invalid constraint value: invalid IA5String")
          if (parseIP(text) !== undefined) fail(`x509: failed to parse URI constraint ${JSON.stringify(text)}: cannot be IP address`)
          if (domainToReverseLabels(text.startsWith(".") ? text.slice(1) : text) === undefined) fail(`x509: failed to parse URI constraint ${JSON.stringify(text)}`)
          ;(out.uris ??= []).push(text)
          break
        }
        default:
          unhandled = true
      }
    }
    return out
  }
  const p = values(permitted)
  const x = values(excluded)
  cert.permittedDNSDomains = p.dns
  cert.permittedIPRanges = p.ips
  cert.permittedEmailAddresses = p.emails
  cert.permittedURIDomains = p.uris
  cert.excludedDNSDomains = x.dns
  cert.excludedIPRanges = x.ips
  cert.excludedEmailAddresses = x.emails
  cert.excludedURIDomains = x.uris
  cert.permittedDNSDomainsCritical = ext.critical
  return unhandled
}

/** Go's processExtensions: fills the certificate fields the known extensions carry. */
export const processExtensions = (cert: Certificate): void => {
  for (const e of cert.extensions ?? []) {
    let unhandled = false
    const id = oidString(e.id)
    if (e.id.length === 4 && e.id[0] === 2 && e.id[1] === 5 && e.id[2] === 29) {
      const val = new Der(e.value)
      switch (e.id[3]) {
        case 15: {
          const bits = must(val.bitString(), "x509: invalid key usage")
          let usage = 0
          for (let i = 0; i < 9; i++) if (bitAt(bits, i) !== 0) usage |= 1 << i
          cert.keyUsage = usage
          break
        }
        case 19: {
          const d = must(val.enter(TAG.SEQUENCE), "x509: invalid basic constraints")
          let isCA = false
          if (d.peekTag() === TAG.BOOLEAN) isCA = must(d.boolean(), "x509: invalid basic constraints")
          let maxPathLen = -1
          if (d.peekTag() === TAG.INTEGER) maxPathLen = must(d.smallInteger(), "x509: invalid basic constraints")
          cert.isCA = isCA
          cert.maxPathLen = maxPathLen
          cert.basicConstraintsValid = true
          cert.maxPathLenZero = maxPathLen === 0
          break
        }
        case 17:
          parseSAN(e.value, cert)
          cert.sanExtension = e.value
          if (cert.dnsNames === undefined && cert.emailAddresses === undefined && cert.ipAddresses === undefined && cert.uris === undefined) unhandled = true
          break
        case 30:
          unhandled = parseNameConstraints(cert, e)
          break
        case 31: {
          const d = must(val.enter(TAG.SEQUENCE), "x509: invalid CRL distribution points")
          while (!d.empty) {
            const dp = must(d.enter(TAG.SEQUENCE), "x509: invalid CRL distribution point")
            const name = optional(dp, ctxCons(0), "x509: invalid CRL distribution point")
            if (name === null) continue
            const full = must(new Der(name.content).enter(ctxCons(0)), "x509: invalid CRL distribution point")
            while (!full.empty) {
              if (full.peekTag() !== ctx(6)) break
              const uri = must(full.read(ctx(6)), "x509: invalid CRL distribution point")
              ;(cert.crlDistributionPoints ??= []).push(uri.content.toString("latin1"))
            }
          }
          break
        }
        case 35: {
          const akid = must(val.enter(TAG.SEQUENCE), "x509: invalid authority key identifier")
          if (akid.peekTag() === ctx(0)) cert.authorityKeyId = Buffer.from(must(akid.read(ctx(0)), "x509: invalid authority key identifier").content)
          break
        }
        case 37: {
          const d = must(val.enter(TAG.SEQUENCE), "x509: invalid extended key usages")
          while (!d.empty) {
            const oid = must(d.oid(), "x509: invalid extended key usages")
            const known = EXT_KEY_USAGES.get(oidString(oid))
            if (known !== undefined) (cert.extKeyUsage ??= []).push(known)
            else (cert.unknownExtKeyUsage ??= []).push(oid)
          }
          break
        }
        case 14:
          cert.subjectKeyId = Buffer.from(must(val.read(TAG.OCTET_STRING), "x509: invalid subject key identifier").content)
          break
        case 32: {
          const d = must(val.enter(TAG.SEQUENCE), "x509: invalid certificate policies")
          const seen = new Set<string>()
          const policies: string[] = []
          const identifiers: number[][] = []
          while (!d.empty) {
            const cp = d.enter(TAG.SEQUENCE)
            const oidEl = cp?.read(TAG.OID)
            if (oidEl === undefined) return fail("x509: invalid certificate policies")
            const key = oidEl.content.toString("hex")
            if (seen.has(key)) fail("x509: invalid certificate policies")
            seen.add(key)
            const oid = parseOid(oidEl.content)
            if (oid === undefined) return fail("x509: invalid certificate policies")
            policies.push(oidString(oid))
            identifiers.push(oid)
          }
          cert.policies = policies.length > 0 ? policies : undefined
          cert.policyIdentifiers = identifiers
          break
        }
        case 33: {
          const d = must(val.enter(TAG.SEQUENCE), "x509: invalid policy mappings extension")
          while (!d.empty) {
            const s = d.enter(TAG.SEQUENCE)
            const issuer = s?.oid()
            const subject = s?.oid()
            if (issuer === undefined || subject === undefined) return fail("x509: invalid policy mappings extension")
            ;(cert.policyMappings ??= []).push({ issuerDomainPolicy: oidString(issuer), subjectDomainPolicy: oidString(subject) })
          }
          break
        }
        case 36: {
          const d = must(val.enter(TAG.SEQUENCE), "x509: invalid policy constraints extension")
          if (d.peekTag() === ctx(0)) {
            cert.requireExplicitPolicy = must(d.smallInteger(ctx(0)), "x509: invalid policy constraints extension")
            cert.requireExplicitPolicyZero = cert.requireExplicitPolicy === 0
          }
          if (d.peekTag() === ctx(1)) {
            cert.inhibitPolicyMapping = must(d.smallInteger(ctx(1)), "x509: invalid policy constraints extension")
            cert.inhibitPolicyMappingZero = cert.inhibitPolicyMapping === 0
          }
          break
        }
        case 54:
          cert.inhibitAnyPolicy = must(val.smallInteger(), "x509: invalid inhibit any policy extension")
          cert.inhibitAnyPolicyZero = cert.inhibitAnyPolicy === 0
          break
        default:
          unhandled = true
      }
    } else if (id === "1.3.6.1.5.5.7.1.1") {
      if (e.critical) fail("x509: authority info access incorrectly marked critical")
      const d = must(new Der(e.value).enter(TAG.SEQUENCE), "x509: invalid authority info access")
      while (!d.empty) {
        const aia = must(d.enter(TAG.SEQUENCE), "x509: invalid authority info access")
        const method = must(aia.oid(), "x509: invalid authority info access")
        if (aia.peekTag() !== ctx(6)) continue
        const loc = must(aia.read(ctx(6)), "x509: invalid authority info access").content.toString("latin1")
        const m = oidString(method)
        if (m === "1.3.6.1.5.5.7.48.1") (cert.ocspServer ??= []).push(loc)
        else if (m === "1.3.6.1.5.5.7.48.2") (cert.issuingCertificateURL ??= []).push(loc)
      }
    } else unhandled = true
    if (e.critical && unhandled) (cert.unhandledCriticalExtensions ??= []).push(e.id)
  }
}

export const parseExtension = (content: Buffer): Extension => {
  const d = new Der(content)
  const id = must(d.oid(), "x509: malformed extension OID field")
  let critical = false
  if (d.peekTag() === TAG.BOOLEAN) critical = must(d.boolean(), "x509: malformed extension critical field")
  const value = must(d.read(TAG.OCTET_STRING), "x509: malformed extension value field")
  return { id, critical, value: Buffer.from(value.content) }
}
