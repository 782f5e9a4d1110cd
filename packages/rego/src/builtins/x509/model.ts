// The parsed forms of certificates and certificate requests, Go's enumerations, and the error
// type every X.509 failure is reported with (its message is Go's).

import type * as crypto from "node:crypto"
import type { Value } from "../../value.js"
import type { Der, Element } from "../asn1.js"

/** x509.SignatureAlgorithm */
export const SigAlg = {
  Unknown: 0,
  MD2WithRSA: 1,
  MD5WithRSA: 2,
  SHA1WithRSA: 3,
  SHA256WithRSA: 4,
  SHA384WithRSA: 5,
  SHA512WithRSA: 6,
  DSAWithSHA1: 7,
  DSAWithSHA256: 8,
  ECDSAWithSHA1: 9,
  ECDSAWithSHA256: 10,
  ECDSAWithSHA384: 11,
  ECDSAWithSHA512: 12,
  SHA256WithRSAPSS: 13,
  SHA384WithRSAPSS: 14,
  SHA512WithRSAPSS: 15,
  PureEd25519: 16
} as const

/** x509.PublicKeyAlgorithm */
export const PkAlg = { Unknown: 0, RSA: 1, DSA: 2, ECDSA: 3, Ed25519: 4 } as const

export const ExtKeyUsage = { Any: 0, ServerAuth: 1 } as const

export const KEY_USAGE_CERT_SIGN = 1 << 5

export class X509Error extends Error {}

export const fail = (msg: string): never => {
  throw new X509Error(msg)
}

/** `x` or a failure with Go's message. */
export const must = <T>(x: T | undefined | null, msg: string): T => (x === undefined || x === null ? fail(msg) : x)

/** An optional element: null when absent, a failure when malformed. */
export const optional = (d: Der, tag: number, msg: string): Element | null => {
  const e = d.optional(tag)
  return e === undefined ? fail(msg) : e
}

export type PublicKey =
  | { readonly type: "rsa"; readonly n: bigint; readonly e: number; readonly key: crypto.KeyObject }
  | { readonly type: "ecdsa"; readonly curve: string; readonly x: bigint; readonly y: bigint; readonly key: crypto.KeyObject }
  | { readonly type: "ed25519"; readonly bytes: Buffer; readonly key: crypto.KeyObject }
  | { readonly type: "dsa"; readonly p: bigint; readonly q: bigint; readonly g: bigint; readonly y: bigint }

export interface Attribute {
  readonly type: number[]
  readonly value: Value
}

/** pkix.Name */
export interface Name {
  readonly attributes: readonly Attribute[]
}

/** A time.Time: nanoseconds since the epoch and the zone offset it was written with. */
export interface GoTime {
  readonly ns: bigint
  readonly offsetMinutes: number
}

export interface Extension {
  readonly id: number[]
  readonly critical: boolean
  readonly value: Buffer
}

export interface GoURL {
  readonly scheme: string
  readonly opaque: string
  readonly user: boolean
  readonly host: string
  readonly path: string
  readonly rawPath: string
  readonly omitHost: boolean
  readonly forceQuery: boolean
  readonly rawQuery: string
  readonly fragment: string
  readonly rawFragment: string
  /** url.String() */
  readonly text: string
}

export interface IPNet {
  readonly ip: Buffer
  readonly mask: Buffer
}

export interface SANs {
  dnsNames?: string[]
  emailAddresses?: string[]
  ipAddresses?: Buffer[]
  uris?: GoURL[]
}

export interface Certificate extends SANs {
  readonly raw: Buffer
  readonly rawTBSCertificate: Buffer
  readonly rawSubjectPublicKeyInfo: Buffer
  readonly rawSubject: Buffer
  readonly rawIssuer: Buffer
  readonly signature: Buffer
  readonly signatureAlgorithm: number
  readonly publicKeyAlgorithm: number
  readonly publicKey: PublicKey | undefined
  readonly version: number
  readonly serialNumber: bigint
  readonly issuer: Name
  readonly subject: Name
  readonly notBefore: GoTime
  readonly notAfter: GoTime
  keyUsage: number
  extensions?: Extension[]
  unhandledCriticalExtensions?: number[][]
  extKeyUsage?: number[]
  unknownExtKeyUsage?: number[][]
  basicConstraintsValid: boolean
  isCA: boolean
  maxPathLen: number
  maxPathLenZero: boolean
  subjectKeyId?: Buffer
  authorityKeyId?: Buffer
  ocspServer?: string[]
  issuingCertificateURL?: string[]
  permittedDNSDomainsCritical: boolean
  permittedDNSDomains?: string[]
  excludedDNSDomains?: string[]
  permittedIPRanges?: IPNet[]
  excludedIPRanges?: IPNet[]
  permittedEmailAddresses?: string[]
  excludedEmailAddresses?: string[]
  permittedURIDomains?: string[]
  excludedURIDomains?: string[]
  crlDistributionPoints?: string[]
  policyIdentifiers?: number[][]
  policies?: string[]
  inhibitAnyPolicy: number
  inhibitAnyPolicyZero: boolean
  inhibitPolicyMapping: number
  inhibitPolicyMappingZero: boolean
  requireExplicitPolicy: number
  requireExplicitPolicyZero: boolean
  policyMappings?: Array<{ issuerDomainPolicy: string; subjectDomainPolicy: string }>
  /** The subjectAltName extension's value, when present (name constraints are checked against it). */
  sanExtension?: Buffer
}

export interface CertificateRequest extends SANs {
  readonly raw: Buffer
  readonly rawTBSCertificateRequest: Buffer
  readonly rawSubjectPublicKeyInfo: Buffer
  readonly rawSubject: Buffer
  readonly version: number
  readonly signature: Buffer
  readonly signatureAlgorithm: number
  readonly publicKeyAlgorithm: number
  readonly publicKey: PublicKey | undefined
  readonly subject: Name
  readonly attributes: Array<{ type: number[]; value: Attribute[][] }> | undefined
  readonly extensions: Extension[] | undefined
}
