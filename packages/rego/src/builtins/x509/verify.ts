// Certificate chain verification with the semantics of Go's x509.Certificate.Verify, which OPA's
// crypto.x509.parse_and_verify_certificates calls with the first certificate as the only root,
// the last as the leaf and the ones between as intermediates.
//
// Covered: signatures (RSA PKCS#1 v1.5 and PSS, ECDSA, Ed25519; MD5 and SHA-1 rejected as Go
// does), issuer/subject chaining with key-identifier preference, validity periods, CA and
// path-length constraints, key usage for certificate signing, name constraints (DNS, IP, email,
// URI), unhandled critical extensions, extended key usage (server auth unless told otherwise),
// the DNS name check, and certificate policies as a set of policy identifiers (RFC 5280 6.1
// without policy qualifiers; enough to honour requireExplicitPolicy, inhibitAnyPolicy and
// policy mappings).

import * as crypto from "node:crypto"
import { forEachSAN } from "./extensions.js"
import { type Certificate, type GoURL, type IPNet, ExtKeyUsage, KEY_USAGE_CERT_SIGN, PkAlg, SigAlg, X509Error } from "./model.js"
import { domainToReverseLabels, parseIP, parseMailbox, parseURL } from "./names.js"

export interface VerifyOptions {
  /** Checked against the leaf's names when set. */
  readonly dnsName?: string
  /** The time the chain must be valid at, in nanoseconds since the epoch. */
  readonly currentTimeNs: bigint
  /** Extended key usages the chain must allow (default: server authentication). */
  readonly keyUsages?: readonly number[]
  /** Bound on name-constraint comparisons (default 250,000, as Go). */
  readonly maxConstraintComparisons?: number
}

const LEAF = 0
const INTERMEDIATE = 1
const ROOT = 2
const MAX_SIGNATURE_CHECKS = 100

const invalid = (msg: string): X509Error => new X509Error(msg)

/** Hash and key type per signature algorithm (Go's signatureAlgorithmDetails). */
const SIGNATURE_DETAILS: ReadonlyMap<number, { hash: string | null | "insecure"; pk: number; pss?: boolean }> = new Map([
  [SigAlg.MD2WithRSA, { hash: null, pk: PkAlg.RSA }],
  [SigAlg.MD5WithRSA, { hash: "insecure", pk: PkAlg.RSA }],
  [SigAlg.SHA1WithRSA, { hash: "insecure", pk: PkAlg.RSA }],
  [SigAlg.SHA256WithRSA, { hash: "sha256", pk: PkAlg.RSA }],
  [SigAlg.SHA384WithRSA, { hash: "sha384", pk: PkAlg.RSA }],
  [SigAlg.SHA512WithRSA, { hash: "sha512", pk: PkAlg.RSA }],
  [SigAlg.SHA256WithRSAPSS, { hash: "sha256", pk: PkAlg.RSA, pss: true }],
  [SigAlg.SHA384WithRSAPSS, { hash: "sha384", pk: PkAlg.RSA, pss: true }],
  [SigAlg.SHA512WithRSAPSS, { hash: "sha512", pk: PkAlg.RSA, pss: true }],
  [SigAlg.DSAWithSHA1, { hash: "insecure", pk: PkAlg.DSA }],
  [SigAlg.DSAWithSHA256, { hash: "sha256", pk: PkAlg.DSA }],
  [SigAlg.ECDSAWithSHA1, { hash: "insecure", pk: PkAlg.ECDSA }],
  [SigAlg.ECDSAWithSHA256, { hash: "sha256", pk: PkAlg.ECDSA }],
  [SigAlg.ECDSAWithSHA384, { hash: "sha384", pk: PkAlg.ECDSA }],
  [SigAlg.ECDSAWithSHA512, { hash: "sha512", pk: PkAlg.ECDSA }],
  [SigAlg.PureEd25519, { hash: null, pk: PkAlg.Ed25519 }]
])

/** Go's checkSignature for certificates (SHA-1 not allowed). */
const checkSignature = (c: Certificate, parent: Certificate): void => {
  const d = SIGNATURE_DETAILS.get(c.signatureAlgorithm)
  if (d === undefined) throw invalid("x509: cannot verify signature: algorithm unimplemented")
  if (d.hash === "insecure") throw invalid("x509: cannot verify signature: insecure algorithm")
  if (d.hash === null && d.pk !== PkAlg.Ed25519) throw invalid("x509: cannot verify signature: algorithm unimplemented")
  const k = parent.publicKey
  if (k === undefined || k.type === "dsa") throw invalid("x509: cannot verify signature: algorithm unimplemented")
  const expected = { rsa: PkAlg.RSA, ecdsa: PkAlg.ECDSA, ed25519: PkAlg.Ed25519 }[k.type]
  if (expected !== d.pk) throw invalid("x509: signature algorithm specifies a different public key algorithm than the key")
  let ok: boolean
  try {
    switch (k.type) {
      case "rsa":
        // Go refuses RSA keys below 1024 bits.
        if (k.n.toString(2).length < 1024) throw invalid("crypto/rsa: 1024-bit or larger RSA keys required")
        ok = crypto.verify(
          d.hash,
          c.rawTBSCertificate,
          d.pss === true
            ? { key: k.key, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: crypto.constants.RSA_PSS_SALTLEN_DIGEST }
            : { key: k.key, padding: crypto.constants.RSA_PKCS1_PADDING },
          c.signature
        )
        break
      case "ecdsa":
        ok = crypto.verify(d.hash, c.rawTBSCertificate, { key: k.key, dsaEncoding: "der" }, c.signature)
        break
      case "ed25519":
        ok = crypto.verify(null, c.rawTBSCertificate, k.key, c.signature)
        break
    }
  } catch (e) {
    if (e instanceof X509Error) throw e
    ok = false
  }
  if (!ok) throw invalid("x509: signature verification failure")
}

/** Go's CheckSignatureFrom: parent must be allowed to sign certificates. */
const checkSignatureFrom = (c: Certificate, parent: Certificate): void => {
  if ((parent.version === 3 && !parent.basicConstraintsValid) || (parent.basicConstraintsValid && !parent.isCA)) throw invalid("x509: invalid signature: parent certificate cannot sign this kind of certificate")
  if (parent.keyUsage !== 0 && (parent.keyUsage & KEY_USAGE_CERT_SIGN) === 0) throw invalid("x509: invalid signature: parent certificate cannot sign this kind of certificate")
  if (parent.publicKeyAlgorithm === PkAlg.Unknown) throw invalid("x509: cannot verify signature: algorithm unimplemented")
  checkSignature(c, parent)
}

// ---------------------------------------------------------------------------------------------
// Name constraints

const matchDomainConstraint = (domain: string, constraint: string): boolean => {
  if (constraint.length === 0) return true
  const domainLabels = domainToReverseLabels(domain)
  if (domainLabels === undefined) throw invalid(`x509: internal error: cannot parse domain ${JSON.stringify(domain)}`)
  let mustHaveSubdomains = false
  let c = constraint
  if (c[0] === ".") {
    mustHaveSubdomains = true
    c = c.slice(1)
  }
  const constraintLabels = domainToReverseLabels(c)
  if (constraintLabels === undefined) throw invalid(`x509: internal error: cannot parse domain ${JSON.stringify(c)}`)
  if (domainLabels.length < constraintLabels.length || (mustHaveSubdomains && domainLabels.length === constraintLabels.length)) return false
  return constraintLabels.every((l, i) => l.toLowerCase() === domainLabels[i].toLowerCase())
}

const matchEmailConstraint = (mailbox: { local: string; domain: string }, constraint: string): boolean => {
  if (constraint.includes("@")) {
    const m = parseMailbox(constraint)
    if (m === undefined) throw invalid(`x509: internal error: cannot parse constraint ${JSON.stringify(constraint)}`)
    return mailbox.local === m.local && mailbox.domain.toLowerCase() === m.domain.toLowerCase()
  }
  return matchDomainConstraint(mailbox.domain, constraint)
}

const matchURIConstraint = (uri: GoURL, constraint: string): boolean => {
  let host = uri.host
  if (host.length === 0) throw invalid(`URI with empty host (${JSON.stringify(uri.text)}) cannot be matched against constraints`)
  if (host.includes(":") && !host.endsWith("]")) host = host.slice(0, host.lastIndexOf(":"))
  if ((host.startsWith("[") && host.endsWith("]")) || parseIP(host) !== undefined) throw invalid(`URI with IP (${JSON.stringify(uri.text)}) cannot be matched against constraints`)
  return matchDomainConstraint(host, constraint)
}

const matchIPConstraint = (ip: Buffer, c: IPNet): boolean => {
  if (ip.length !== c.ip.length) return false
  for (let i = 0; i < ip.length; i++) if ((ip[i] & c.mask[i]) !== (c.ip[i] & c.mask[i])) return false
  return true
}

const hasNameConstraints = (c: Certificate): boolean =>
  [c.permittedDNSDomains, c.excludedDNSDomains, c.permittedIPRanges, c.excludedIPRanges, c.permittedEmailAddresses, c.excludedEmailAddresses, c.permittedURIDomains, c.excludedURIDomains].some(
    (l) => l !== undefined && l.length > 0
  )

class Budget {
  count = 0
  constructor(readonly max: number) {}
}

const checkNameConstraints = <N, C>(
  budget: Budget,
  nameType: string,
  name: string,
  parsed: N,
  match: (n: N, c: C) => boolean,
  permitted: readonly C[] | undefined,
  excluded: readonly C[] | undefined
): void => {
  const ex = excluded ?? []
  budget.count += ex.length
  if (budget.count > budget.max) throw invalid("x509: too many name constraints")
  for (const c of ex) if (match(parsed, c)) throw invalid(`x509: ${nameType} ${JSON.stringify(name)} is excluded by constraint ${JSON.stringify(c)}`)
  const pe = permitted ?? []
  budget.count += pe.length
  if (budget.count > budget.max) throw invalid("x509: too many name constraints")
  if (pe.length > 0 && !pe.some((c) => match(parsed, c))) throw invalid(`x509: ${nameType} ${JSON.stringify(name)} is not permitted by any constraint`)
}

const checkChainNames = (ca: Certificate, chain: readonly Certificate[], budget: Budget): void => {
  for (const cert of chain) {
    if (cert.sanExtension === undefined) continue
    forEachSAN(cert.sanExtension, (tag, data) => {
      const name = data.toString("latin1")
      switch (tag) {
        case 1: {
          const mailbox = parseMailbox(name)
          if (mailbox === undefined) throw invalid(`x509: cannot parse rfc822Name ${JSON.stringify(name)}`)
          checkNameConstraints(budget, "email address", name, mailbox, matchEmailConstraint, ca.permittedEmailAddresses, ca.excludedEmailAddresses)
          break
        }
        case 2:
          if (domainToReverseLabels(name) === undefined) throw invalid(`x509: cannot parse dnsName ${JSON.stringify(name)}`)
          checkNameConstraints(budget, "DNS name", name, name, matchDomainConstraint, ca.permittedDNSDomains, ca.excludedDNSDomains)
          break
        case 6: {
          let uri: GoURL
          try {
            uri = parseURL(name)
          } catch {
            throw invalid(`x509: internal error: URI SAN ${JSON.stringify(name)} failed to parse`)
          }
          checkNameConstraints(budget, "URI", name, uri, matchURIConstraint, ca.permittedURIDomains, ca.excludedURIDomains)
          break
        }
        case 7:
          if (data.length !== 4 && data.length !== 16) throw invalid(`x509: internal error: IP SAN ${data.toString("hex")} failed to parse`)
          checkNameConstraints(budget, "IP address", name, Buffer.from(data), matchIPConstraint, ca.permittedIPRanges, ca.excludedIPRanges)
          break
      }
    })
  }
}

// ---------------------------------------------------------------------------------------------
// Chain building

/** Go's isValid for a certificate about to be appended to chain. */
const isValid = (c: Certificate, certType: number, chain: readonly Certificate[], o: VerifyOptions): void => {
  if (c.unhandledCriticalExtensions !== undefined && c.unhandledCriticalExtensions.length > 0) throw invalid("x509: unhandled critical extension")
  if (chain.length > 0 && !chain[chain.length - 1].rawIssuer.equals(c.rawSubject)) throw invalid("x509: issuer name does not match subject from issuing certificate")
  if (o.currentTimeNs < c.notBefore.ns || o.currentTimeNs > c.notAfter.ns) throw invalid("x509: certificate has expired or is not yet valid")
  if ((certType === INTERMEDIATE || certType === ROOT) && hasNameConstraints(c)) {
    checkChainNames(c, chain, new Budget(o.maxConstraintComparisons !== undefined && o.maxConstraintComparisons !== 0 ? o.maxConstraintComparisons : 250_000))
  }
  if (certType === INTERMEDIATE && (!c.basicConstraintsValid || !c.isCA)) throw invalid("x509: certificate is not authorized to sign other certificates")
  if (c.basicConstraintsValid && c.maxPathLen >= 0 && chain.length - 1 > c.maxPathLen) throw invalid("x509: too many intermediates for path length constraint")
}

const sanOf = (c: Certificate): Buffer | undefined => c.extensions?.find((e) => e.id.join(".") === "2.5.29.17")?.value

const alreadyInChain = (candidate: Certificate, chain: readonly Certificate[]): boolean => {
  const cSAN = sanOf(candidate)
  for (const cert of chain) {
    if (!candidate.rawSubject.equals(cert.rawSubject) || !candidate.rawSubjectPublicKeyInfo.equals(cert.rawSubjectPublicKeyInfo)) continue
    const s = sanOf(cert)
    if (cSAN === undefined && s === undefined) return true
    if (cSAN === undefined || s === undefined) return false
    if (cSAN.equals(s)) return true
  }
  return false
}

/** Candidate issuers of c in pool, best key-identifier match first. */
const potentialParents = (pool: readonly Certificate[], c: Certificate): Certificate[] => {
  const matching: Certificate[] = []
  const one: Certificate[] = []
  const mismatch: Certificate[] = []
  for (const p of pool) {
    if (!p.rawSubject.equals(c.rawIssuer)) continue
    const ski = p.subjectKeyId ?? Buffer.alloc(0)
    const aki = c.authorityKeyId ?? Buffer.alloc(0)
    if (ski.equals(aki)) matching.push(p)
    else if ((ski.length === 0 && aki.length > 0) || (ski.length > 0 && aki.length === 0)) one.push(p)
    else mismatch.push(p)
  }
  return [...matching, ...one, ...mismatch]
}

interface Pools {
  readonly roots: readonly Certificate[]
  readonly intermediates: readonly Certificate[]
  readonly cache: Map<Certificate, Certificate[][]>
  sigChecks: number
}

const buildChains = (chain: Certificate[], pools: Pools, o: VerifyOptions): Certificate[][] => {
  const c = chain[chain.length - 1]
  const chains: Certificate[][] = []
  let hint: Error | undefined
  let limit: Error | undefined
  const consider = (certType: number, candidate: Certificate): void => {
    if (candidate.publicKey === undefined || alreadyInChain(candidate, chain)) return
    pools.sigChecks++
    if (pools.sigChecks > MAX_SIGNATURE_CHECKS) {
      limit = invalid("x509: signature check attempts limit reached while verifying certificate chain")
      return
    }
    try {
      checkSignatureFrom(c, candidate)
      isValid(candidate, certType, chain, o)
    } catch (e) {
      hint ??= e as Error
      return
    }
    if (certType === ROOT) {
      chains.push([...chain, candidate])
      return
    }
    let sub = pools.cache.get(candidate)
    if (sub === undefined) {
      try {
        sub = buildChains([...chain, candidate], pools, o)
      } catch (e) {
        hint ??= e as Error
        sub = []
      }
      pools.cache.set(candidate, sub)
    }
    chains.push(...sub)
  }
  for (const r of potentialParents(pools.roots, c)) consider(ROOT, r)
  for (const i of potentialParents(pools.intermediates, c)) consider(INTERMEDIATE, i)
  if (chains.length === 0) throw limit ?? invalid(`x509: certificate signed by unknown authority${hint !== undefined ? ` (${hint.message})` : ""}`)
  return chains
}

// ---------------------------------------------------------------------------------------------
// Extended key usage and policies

const checkChainForKeyUsage = (chain: readonly Certificate[], keyUsages: readonly number[]): boolean => {
  const usages: Array<number | undefined> = [...keyUsages]
  let remaining = usages.length
  for (let i = chain.length - 1; i >= 0; i--) {
    const cert = chain[i]
    if ((cert.extKeyUsage ?? []).length === 0 && (cert.unknownExtKeyUsage ?? []).length === 0) continue
    if ((cert.extKeyUsage ?? []).includes(ExtKeyUsage.Any)) continue
    for (let j = 0; j < usages.length; j++) {
      const u = usages[j]
      if (u === undefined || (cert.extKeyUsage ?? []).includes(u)) continue
      usages[j] = undefined
      if (--remaining === 0) return false
    }
  }
  return true
}

const ANY_POLICY = "2.5.29.32.0"

/** RFC 5280 6.1.3-6.1.5 policy processing, with the policy tree reduced to its set of policies. */
const policiesValid = (chain: readonly Certificate[]): boolean => {
  if (chain.length <= 1) return true
  const path = chain.slice(0, -1).reverse() // below the trust anchor, down to the leaf
  const n = path.length
  let explicit = n + 1
  let mapping = n + 1
  let inhibitAny = n + 1
  let valid = "any" as Set<string> | "any" | null
  const present = (v: number, zero: boolean): boolean => v > 0 || zero
  for (let i = 0; i < n; i++) {
    const cert = path[i]
    const last = i === n - 1
    const selfIssued = cert.rawSubject.equals(cert.rawIssuer)
    if (cert.policies === undefined || valid === null) valid = null
    else {
      const asserted = new Set(cert.policies)
      const anyAllowed = asserted.delete(ANY_POLICY) && (inhibitAny > 0 || (!last && selfIssued))
      if (valid === "any") valid = anyAllowed ? "any" : asserted
      else if (!anyAllowed) valid = new Set([...valid].filter((p) => asserted.has(p)))
      if (valid !== "any" && valid.size === 0) valid = null
    }
    if (explicit === 0 && valid === null) return false
    if (!last) {
      for (const m of cert.policyMappings ?? []) {
        if (m.issuerDomainPolicy === ANY_POLICY || m.subjectDomainPolicy === ANY_POLICY) return false
      }
      if (cert.policyMappings !== undefined && valid instanceof Set) {
        const mapped = new Set<string>()
        for (const p of valid) {
          const targets = cert.policyMappings.filter((m) => m.issuerDomainPolicy === p).map((m) => m.subjectDomainPolicy)
          if (targets.length === 0) mapped.add(p)
          else if (mapping > 0) for (const t of targets) mapped.add(t)
        }
        valid = mapped.size === 0 ? null : mapped
      }
      if (!selfIssued) {
        if (explicit > 0) explicit--
        if (mapping > 0) mapping--
        if (inhibitAny > 0) inhibitAny--
      }
      if (present(cert.requireExplicitPolicy, cert.requireExplicitPolicyZero)) explicit = Math.min(explicit, cert.requireExplicitPolicy)
      if (present(cert.inhibitPolicyMapping, cert.inhibitPolicyMappingZero)) mapping = Math.min(mapping, cert.inhibitPolicyMapping)
      if (present(cert.inhibitAnyPolicy, cert.inhibitAnyPolicyZero)) inhibitAny = Math.min(inhibitAny, cert.inhibitAnyPolicy)
    } else {
      if (explicit > 0) explicit--
      if (cert.requireExplicitPolicyZero) explicit = 0
    }
  }
  return explicit > 0 || valid !== null
}

// ---------------------------------------------------------------------------------------------
// Host names

const validHostname = (host: string, isPattern: boolean): boolean => {
  let h = host
  if (!isPattern && h.endsWith(".")) h = h.slice(0, -1)
  if (h.length === 0) return false
  if (h === "*") return false
  const labels = h.split(".")
  for (let i = 0; i < labels.length; i++) {
    const part = labels[i]
    if (part === "") return false
    if (isPattern && i === 0 && part === "*") continue
    for (let j = 0; j < part.length; j++) {
      const c = part[j]
      if (/[a-zA-Z0-9]/.test(c)) continue
      if (c === "-" && j !== 0) continue
      if (c === "_") continue
      return false
    }
  }
  return true
}

const matchHostnames = (pattern: string, host: string): boolean => {
  const p = pattern.replace(/\.$/, "")
  const h = host.replace(/\.$/, "")
  if (p.length === 0 || h.length === 0) return false
  const pl = p.split(".")
  const hl = h.split(".")
  if (pl.length !== hl.length) return false
  return pl.every((x, i) => (i === 0 && x === "*") || x.toLowerCase() === hl[i].toLowerCase())
}

/** Go's Certificate.VerifyHostname. */
const verifyHostname = (c: Certificate, h: string): void => {
  const candidateIP = h.length >= 3 && h.startsWith("[") && h.endsWith("]") ? h.slice(1, -1) : h
  const ip = parseIP(candidateIP)
  if (ip !== undefined) {
    for (const a of c.ipAddresses ?? []) {
      const x = a.length === 4 ? Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...a]) : a
      if (x.equals(ip)) return
    }
    throw invalid(`x509: certificate is not valid for ${candidateIP}`)
  }
  const name = h.replace(/[A-Z]/g, (x) => x.toLowerCase())
  const validName = validHostname(name, false)
  for (const m of c.dnsNames ?? []) {
    if (validName && validHostname(m, true) ? matchHostnames(m.toLowerCase(), name) : m.toLowerCase() === name.toLowerCase()) return
  }
  throw invalid(`x509: certificate is not valid for ${h}`)
}

/**
 * Verifies the chain OPA builds from certs (root first, leaf last) and returns the first valid
 * chain, leaf first. Throws X509Error when there is none.
 */
export const verifyChain = (certs: readonly Certificate[], o: VerifyOptions): Certificate[] => {
  if (certs.length < 2) throw invalid("must supply at least two certificates to be able to verify")
  const leaf = certs[certs.length - 1]
  const pools: Pools = { roots: [certs[0]], intermediates: certs.slice(1, -1), cache: new Map(), sigChecks: 0 }
  isValid(leaf, LEAF, [], o)
  if (o.dnsName !== undefined && o.dnsName.length > 0) verifyHostname(leaf, o.dnsName)
  const candidates = pools.roots.some((r) => r.raw.equals(leaf.raw)) ? [[leaf]] : buildChains([leaf], pools, o)
  let chains = candidates.filter(policiesValid)
  if (chains.length === 0) throw invalid("x509: no valid chains built: all candidate chains have invalid policies")
  const usages = o.keyUsages ?? []
  if (usages.includes(ExtKeyUsage.Any)) return chains[0]
  chains = chains.filter((ch) => checkChainForKeyUsage(ch, usages.length === 0 ? [ExtKeyUsage.ServerAuth] : usages))
  if (chains.length === 0) throw invalid("x509: certificate specifies an incompatible key usage")
  return chains[0]
}
