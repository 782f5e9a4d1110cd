// JSON Web Keys and JWS signatures with node:crypto, following the library OPA uses
// (lestrrat-go/jwx v3: jwk.Parse, jwsbb.Sign, jwsbb.Verify).

import * as crypto from "node:crypto"
import { base64UrlDecode } from "./gobase64.js"
import { decodeGoJSON } from "./gojson.js"
import { type Value, isObject, objectGet } from "../value.js"
import { trimASCII } from "./strings.js"

/** A key as jwk.Parse exports it: raw bytes for `oct`, a KeyObject otherwise. */
export type JoseKey =
  | { readonly kind: "secret"; readonly bytes: Buffer; readonly alg: string; readonly kid: string }
  | { readonly kind: "asymmetric"; readonly key: crypto.KeyObject; readonly alg: string; readonly kid: string }

/** The signature algorithms OPA accepts (tokenAlgorithms in OPA's tokens.go). */
export const JWS_ALGORITHMS: ReadonlySet<string> = new Set(["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "HS256", "HS384", "HS512", "EdDSA"])

const HASHES: Readonly<Record<string, string>> = { "256": "sha256", "384": "sha384", "512": "sha512" }

/** The digest of an RS/PS/ES/HS algorithm name (`sha256` for `RS256`). */
const hashOf = (alg: string): string | undefined => (JWS_ALGORITHMS.has(alg) && alg !== "EdDSA" ? HASHES[alg.slice(2)] : undefined)

const EC_CURVES = new Set(["P-256", "P-384", "P-521"])

const str = (o: Value, k: string): string | undefined => {
  const v = isObject(o) ? objectGet(o, k) : undefined
  return typeof v === "string" ? v : undefined
}

const parseKey = (o: Value): JoseKey => {
  if (!isObject(o)) throw new Error("failed to parse key: expected a JSON object")
  const kty = str(o, "kty")
  const alg = str(o, "alg") ?? ""
  const kid = str(o, "kid") ?? ""
  if (kty === undefined || kty === "") throw new Error(`failed to parse key: missing "kty" field`)
  const jwk: Record<string, string> = { kty }
  const need = (...fields: string[]): void => {
    for (const f of fields) {
      const v = str(o, f)
      if (v === undefined) throw new Error(`failed to parse key: required field ${JSON.stringify(f)} is missing`)
      jwk[f] = v
    }
  }
  const optional = (...fields: string[]): void => {
    for (const f of fields) {
      const v = str(o, f)
      if (v !== undefined) jwk[f] = v
    }
  }
  switch (kty) {
    case "oct": {
      const k = str(o, "k")
      if (k === undefined) throw new Error(`failed to parse key: required field "k" is missing`)
      return { kind: "secret", bytes: decodeField("k", k), alg, kid }
    }
    case "RSA":
      need("n", "e")
      optional("d", "p", "q", "dp", "dq", "qi")
      break
    case "EC":
      need("crv", "x", "y")
      if (!EC_CURVES.has(jwk.crv)) throw new Error(`failed to parse key: unsupported elliptic curve ${JSON.stringify(jwk.crv)}`)
      optional("d")
      break
    case "OKP":
      need("crv", "x")
      if (jwk.crv !== "Ed25519") throw new Error(`failed to parse key: unsupported curve ${JSON.stringify(jwk.crv)}`)
      optional("d")
      break
    default:
      throw new Error(`failed to parse key: invalid key type ${JSON.stringify(kty)}`)
  }
  try {
    const key = jwk.d !== undefined ? crypto.createPrivateKey({ key: jwk, format: "jwk" }) : crypto.createPublicKey({ key: jwk, format: "jwk" })
    return { kind: "asymmetric", key, alg, kid }
  } catch (e) {
    throw new Error(`failed to parse key: invalid ${kty} key: ${e instanceof Error ? e.message : String(e)}`)
  }
}

const decodeField = (name: string, v: string): Buffer => {
  try {
    return base64UrlDecode(trimASCII(v, "=", false, true))
  } catch {
    throw new Error(`failed to parse key: failed to decode ${JSON.stringify(name)}`)
  }
}

/** jwk.Parse: a single key, or every key of a `{"keys": [...]}` set. */
export const parseJWKs = (text: string): JoseKey[] => {
  let doc: Value
  try {
    doc = decodeGoJSON(text)
  } catch (e) {
    throw new Error(`failed to unmarshal JWK: ${(e as Error).message}`)
  }
  if (isObject(doc)) {
    const keys = objectGet(doc, "keys")
    if (keys !== undefined) {
      if (!Array.isArray(keys)) throw new Error(`failed to parse JWK set: "keys" must be an array`)
      return keys.map(parseKey)
    }
  }
  return [parseKey(doc)]
}

// ---------------------------------------------------------------------------------------------
// jwsbb.Sign and jwsbb.Verify

/** Go's crypto/rsa refuses keys below 1024 bits, for signing and for verification. */
export const rsaKeyAllowed = (k: crypto.KeyObject): boolean => (k.asymmetricKeyDetails?.modulusLength ?? 0) >= 1024

const publicOf = (k: crypto.KeyObject): crypto.KeyObject => (k.type === "private" ? crypto.createPublicKey(k) : k)

const ecCoordinateSize = (k: crypto.KeyObject): number => {
  const bits = { "prime256v1": 256, "secp384r1": 384, "secp521r1": 521 }[k.asymmetricKeyDetails?.namedCurve ?? ""] ?? 0
  return Math.ceil(bits / 8)
}

/** jwsbb.Verify: whether sig is a valid `alg` signature of input under key. Never throws. */
export const jwsVerify = (key: JoseKey, alg: string, input: Buffer, sig: Buffer): boolean => {
  try {
    if (alg.startsWith("HS")) {
      const h = hashOf(alg)
      if (h === undefined || key.kind !== "secret") return false
      const mac = crypto.createHmac(h, key.bytes).update(input).digest()
      return mac.length === sig.length && crypto.timingSafeEqual(mac, sig)
    }
    if (key.kind !== "asymmetric") return false
    const pub = publicOf(key.key)
    const type = pub.asymmetricKeyType
    if (alg === "EdDSA") return type === "ed25519" && crypto.verify(null, input, pub, sig)
    const h = hashOf(alg)
    if (h === undefined) return false
    switch (alg[0]) {
      case "R":
        return type === "rsa" && rsaKeyAllowed(pub) && crypto.verify(h, input, { key: pub, padding: crypto.constants.RSA_PKCS1_PADDING }, sig)
      case "P":
        return type === "rsa" && rsaKeyAllowed(pub) && crypto.verify(h, input, { key: pub, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: crypto.constants.RSA_PSS_SALTLEN_DIGEST }, sig)
      case "E":
        return type === "ec" && sig.length === 2 * ecCoordinateSize(pub) && crypto.verify(h, input, { key: pub, dsaEncoding: "ieee-p1363" }, sig)
      default:
        return false
    }
  } catch {
    return false
  }
}

/** jwsbb.Sign: the `alg` signature of input; throws an Error when key and algorithm do not fit. */
export const jwsSign = (key: JoseKey, alg: string, input: Buffer): Buffer => {
  if (alg.startsWith("HS")) {
    const h = hashOf(alg)
    if (h === undefined || key.kind !== "secret") throw new Error(`jwsbb.Sign: invalid key type for ${alg}. []byte is required`)
    return crypto.createHmac(h, key.bytes).update(input).digest()
  }
  if (key.kind !== "asymmetric" || key.key.type !== "private") throw new Error(`jwsbb.Sign: a private key is required for ${alg}`)
  const k = key.key
  const type = k.asymmetricKeyType
  if (alg === "EdDSA") {
    if (type !== "ed25519") throw new Error("jwsbb.Sign: invalid key type. ed25519.PrivateKey is required")
    return crypto.sign(null, input, k)
  }
  const h = hashOf(alg)
  if (h === undefined) throw new Error(`jwsbb.Sign: unsupported signature algorithm ${JSON.stringify(alg)}`)
  switch (alg[0]) {
    case "R":
    case "P":
      if (type !== "rsa") throw new Error("jwsbb.Sign: invalid key type. *rsa.PrivateKey is required")
      if (!rsaKeyAllowed(k)) throw new Error("crypto/rsa: 1024-bit or larger RSA keys required")
      return alg[0] === "R"
        ? crypto.sign(h, input, { key: k, padding: crypto.constants.RSA_PKCS1_PADDING })
        : crypto.sign(h, input, { key: k, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: crypto.constants.RSA_PSS_SALTLEN_DIGEST })
    default:
      if (type !== "ec") throw new Error("jwsbb.Sign: invalid key type. *ecdsa.PrivateKey is required")
      return crypto.sign(h, input, { key: k, dsaEncoding: "ieee-p1363" })
  }
}
