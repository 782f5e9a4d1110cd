// io.jwt.*: decoding, signature verification (HS/RS/PS/ES/EdDSA), full validation with
// decode_verify, and signing. Semantics and error texts follow OPA's topdown/tokens.go: the
// verify_* builtins use Go's crypto primitives directly, while decode_verify and encode_sign go
// through lestrrat-go/jwx (see jwk.ts), and the two differ in small ways that are kept here
// (PSS salt length, ECDSA signature length, private keys in a JWK set).

import * as crypto from "node:crypto"
import { type RegoObject, type Value, compareNumbers, isObject, objectEach, objectGet } from "../value.js"
import { obj, str } from "./args.js"
import { derElement, derUnsignedInteger, bytesToBig, pemDecode, TAG } from "./asn1.js"
import { base64UrlDecode, base64UrlEncode } from "./gobase64.js"
import { decodeGoJSON, fastjsonGetString, isGoJSON, marshalGoJSON } from "./gojson.js"
import { type JoseKey, JWS_ALGORITHMS, jwsSign, jwsVerify, parseJWKs, rsaKeyAllowed } from "./jwk.js"
import { type BuiltinContext, type BuiltinDef, builtinError } from "./registry.js"
import { parsePKIXPublicKey, parseSingleCertificate } from "./x509/certificate.js"
import { trimASCII } from "./strings.js"

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e))
const utf8 = new TextDecoder("utf-8")

// ---------------------------------------------------------------------------------------------
// Token structure

interface Token {
  readonly header: string
  readonly payload: string
  readonly signature: string
}

/** OPA's decodeJWT: the three base64url sections of a compact JWS. */
const splitToken = (v: Value): Token => {
  const s = str(v, 1)
  if (!s.includes(".")) throw builtinError("encoded JWT had no period separators")
  const parts = s.split(".")
  if (parts.length !== 3) throw builtinError(`encoded JWT must have 3 sections, found ${parts.length}`)
  return { header: parts[0], payload: parts[1], signature: parts[2] }
}

const signingInput = (t: Token): Buffer => Buffer.from(t.header + "." + t.payload, "latin1")

const extractJSONObject = (text: string): RegoObject => {
  let v: Value
  try {
    v = decodeGoJSON(text)
  } catch (e) {
    throw new Error(`invalid JSON: ${message(e)}`)
  }
  if (!isObject(v)) throw new Error("decoded JSON type was not an Object")
  return v
}

const decodeHeader = (t: Token): RegoObject => {
  let bytes: Buffer
  try {
    bytes = base64UrlDecode(t.header)
  } catch (e) {
    throw builtinError(`JWT header had invalid encoding: ${message(e)}`)
  }
  let header: RegoObject
  try {
    header = extractJSONObject(utf8.decode(bytes))
  } catch (e) {
    throw builtinError(`bad JWT header: ${message(e)}`)
  }
  if (objectGet(header, "enc") !== undefined) throw builtinError("JWT is a JWE object, which is not supported")
  return header
}

/** The payload section as text (Go keeps the decoded bytes in a string). */
const decodePayload = (t: Token): string => {
  try {
    return utf8.decode(base64UrlDecode(t.payload))
  } catch (e) {
    throw builtinError(`JWT payload had invalid encoding: ${message(e)}`)
  }
}

const payloadObject = (text: string): RegoObject => {
  try {
    return extractJSONObject(text)
  } catch (e) {
    throw builtinError(message(e))
  }
}

const decodeSignature = (t: Token): Buffer => {
  try {
    return base64UrlDecode(t.signature)
  } catch (e) {
    throw builtinError(message(e))
  }
}

interface Header {
  alg: string
  kid: string
  typ: string
  cty: string
  crit: Set<string>
  unknown: string[]
}

/** OPA's parseTokenHeader: the registered parameters, type-checked. */
const parseHeader = (h: RegoObject): Header => {
  const out: Header = { alg: "", kid: "", typ: "", cty: "", crit: new Set(), unknown: [] }
  objectEach(h, (k, v) => {
    const name = k as string
    switch (name) {
      case "alg":
      case "kid":
      case "typ":
      case "cty":
        if (typeof v !== "string") throw builtinError(`${name}: must be a string`)
        out[name] = v
        break
      case "crit":
        if (!Array.isArray(v)) throw builtinError("crit: must be a list")
        for (const x of v) {
          if (typeof x !== "string") break
          out.crit.add(x)
        }
        if (out.crit.size === 0) throw builtinError("crit: must be a nonempty list")
        break
      default:
        out.unknown.push(name)
    }
    return false
  })
  return out
}

/** RFC 7515: `alg` is required and every critical parameter must be understood. */
const headerValid = (h: Header): boolean => h.alg !== "" && !h.unknown.some((u) => h.crit.has(u))

// ---------------------------------------------------------------------------------------------
// Keys

/**
 * OPA's getKeysFromCertOrJWK: the public key of a PEM certificate or PEM public key, or the
 * keys of a JWK / JWK set (keys naming an algorithm OPA does not know are dropped).
 */
/** Parsed keys by their text. Parsing is pure and KeyObjects are immutable, so evaluations share them. */
const keyCache = new Map<string, JoseKey[]>()
const KEY_CACHE_SIZE = 64

const keysFromCertOrJWK = (text: string): JoseKey[] => {
  let keys = keyCache.get(text)
  if (keys === undefined) {
    keys = parseKeys(text)
    if (keyCache.size >= KEY_CACHE_SIZE) keyCache.delete(keyCache.keys().next().value as string)
    keyCache.set(text, keys)
  }
  return keys
}

const parseKeys = (text: string): JoseKey[] => {
  const { block, rest } = pemDecode(Buffer.from(text, "utf8"))
  if (block !== undefined) {
    if (rest.length > 0) throw builtinError("extra data after a PEM certificate block")
    if (block.type === "CERTIFICATE") {
      let key
      try {
        key = parseSingleCertificate(block.bytes).publicKey
      } catch (e) {
        throw builtinError(`failed to parse a PEM certificate: ${message(e)}`)
      }
      // A certificate whose key type Go cannot use yields a key that never verifies.
      return key === undefined || key.type === "dsa" ? [] : [{ kind: "asymmetric", key: key.key, alg: "", kid: "" }]
    }
    if (block.type === "PUBLIC KEY") {
      try {
        return [{ kind: "asymmetric", key: parsePKIXPublicKey(block.bytes), alg: "", kid: "" }]
      } catch (e) {
        throw builtinError(`failed to parse a PEM public key: ${message(e)}`)
      }
    }
    throw builtinError("failed to extract a Key from the PEM certificate")
  }
  let keys: JoseKey[]
  try {
    keys = parseJWKs(text)
  } catch (e) {
    throw builtinError(`failed to parse a JWK key (set): ${message(e)}`)
  }
  return keys.filter((k) => k.alg === "" || JWS_ALGORITHMS.has(k.alg))
}

// ---------------------------------------------------------------------------------------------
// io.jwt.verify_*: Go's crypto primitives, public keys only

type Verifier = (key: JoseKey, input: Buffer, sig: Buffer) => boolean

const publicKeyOf = (key: JoseKey, type: string): crypto.KeyObject | undefined =>
  key.kind === "asymmetric" && key.key.type === "public" && key.key.asymmetricKeyType === type ? key.key : undefined

const rsaVerifier =
  (hash: string, pss: boolean): Verifier =>
  (key, input, sig) => {
    const k = publicKeyOf(key, "rsa")
    if (k === undefined || !rsaKeyAllowed(k)) return false
    return pss
      ? crypto.verify(hash, input, { key: k, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: crypto.constants.RSA_PSS_SALTLEN_AUTO }, sig)
      : crypto.verify(hash, input, { key: k, padding: crypto.constants.RSA_PKCS1_PADDING }, sig)
  }

/** OPA splits the signature in two halves whatever its length, as big-endian r and s. */
const ecdsaVerifier =
  (hash: string): Verifier =>
  (key, input, sig) => {
    const k = publicKeyOf(key, "ec")
    if (k === undefined) return false
    const n = sig.length >> 1
    const der = derElement(TAG.SEQUENCE, Buffer.concat([derUnsignedInteger(bytesToBig(sig.subarray(0, n))), derUnsignedInteger(bytesToBig(sig.subarray(n)))]))
    return crypto.verify(hash, input, { key: k, dsaEncoding: "der" }, der)
  }

const eddsaVerifier: Verifier = (key, input, sig) => {
  const k = publicKeyOf(key, "ed25519")
  return k !== undefined && crypto.verify(null, input, k, sig)
}

const verifyWithKeys = (args: Value[], verify: Verifier): boolean => {
  const t = splitToken(args[0])
  const keys = keysFromCertOrJWK(str(args[1], 2))
  const sig = decodeSignature(t)
  const header = parseHeader(decodeHeader(t))
  const input = signingInput(t)
  const attempt = (k: JoseKey): boolean => {
    try {
      return verify(k, input, sig)
    } catch {
      return false
    }
  }
  if (header.kid !== "") {
    const k = keys.find((x) => x.kid === header.kid)
    if (k !== undefined) return attempt(k)
  }
  for (const k of keys) {
    if (k.alg !== "" && k.alg !== header.alg) continue
    if (attempt(k)) return true
  }
  return false
}

const verifyHMAC = (args: Value[], hash: string): boolean => {
  str(args[0], 1)
  const secret = str(args[1], 2)
  const t = splitToken(args[0])
  const mac = crypto.createHmac(hash, Buffer.from(secret, "utf8")).update(signingInput(t)).digest()
  const sig = decodeSignature(t)
  return sig.length === mac.length && crypto.timingSafeEqual(sig, mac)
}

// ---------------------------------------------------------------------------------------------
// io.jwt.decode_verify

interface Constraints {
  secret: string
  alg: string
  iss: string
  aud: string
  keys: JoseKey[] | undefined
  /** Nanoseconds since the epoch, as a float (OPA's float64). */
  time: number
}

const timeFromValue = (v: Value): number => {
  if (typeof v !== "number" && typeof v !== "bigint") throw builtinError("token time constraint: must be a number")
  const t = Number(v)
  if (t < 0) throw builtinError("token time constraint: must not be negative")
  return t
}

const parseConstraints = (o: RegoObject, ctx: BuiltinContext): Constraints => {
  const c: Constraints = { secret: "", alg: "", iss: "", aud: "", keys: undefined, time: -1 }
  objectEach(o, (k, v) => {
    switch (k) {
      case "cert":
        if (typeof v !== "string") throw builtinError("cert constraint: must be a string")
        c.keys = keysFromCertOrJWK(v)
        break
      case "secret":
      case "alg":
      case "iss":
      case "aud":
        if (typeof v !== "string") throw builtinError(`${k} constraint: must be a string`)
        c[k] = v
        break
      case "time":
        c.time = timeFromValue(v)
        break
      default:
        throw builtinError(`unknown token validation constraint: ${typeof k === "string" ? k : marshalGoJSON(k)}`)
    }
    return false
  })
  if (c.time === -1) c.time = Number(ctx.nowNs)
  const n = (c.keys !== undefined ? 1 : 0) + (c.secret !== "" ? 1 : 0)
  if (n > 1) throw builtinError("duplicate key constraints")
  if (n < 1) throw builtinError("no key constraint")
  return c
}

/** The signature check of decode_verify (jwsbb.Verify with the header's algorithm). */
const verifyConstraints = (c: Constraints, kid: string, alg: string, input: Buffer, sig: Buffer): boolean => {
  if (c.keys !== undefined) {
    if (kid !== "") {
      const k = c.keys.find((x) => x.kid === kid)
      if (k !== undefined) return jwsVerify(k, alg, input, sig)
    }
    return c.keys.some((k) => (k.alg === "" || k.alg === alg) && jwsVerify(k, alg, input, sig))
  }
  return jwsVerify({ kind: "secret", bytes: Buffer.from(c.secret, "utf8"), alg: "", kid: "" }, alg, input, sig)
}

const validAudience = (aud: Value, want: string): boolean => {
  if (typeof aud === "string") return aud === want
  return Array.isArray(aud) && aud.some((x) => x === want)
}

const UNVERIFIED: Value = [false, {}, {}]

const decodeVerify = (args: Value[], ctx: BuiltinContext): Value => {
  const c = parseConstraints(obj(args[1], 2), ctx)
  let current: Value = args[0]
  let header: RegoObject
  let payloadText: string
  // Nested tokens (cty JWT) are unwrapped, each level verified with the same constraints.
  for (;;) {
    const t = splitToken(current)
    header = decodeHeader(t)
    const h = parseHeader(header)
    if (!headerValid(h)) return UNVERIFIED
    if (c.alg !== "" && c.alg !== h.alg) return UNVERIFIED
    const sig = decodeSignature(t)
    if (!verifyConstraints(c, h.kid, h.alg, signingInput(t), sig)) return UNVERIFIED
    payloadText = decodePayload(t)
    if (h.cty.toUpperCase() !== "JWT") break
    current = payloadText
  }
  const payload = payloadObject(payloadText)

  if (c.iss !== "" && objectGet(payload, "iss") !== c.iss) return UNVERIFIED
  const aud = objectGet(payload, "aud")
  if (aud !== undefined ? !validAudience(aud, c.aud) : c.aud !== "") return UNVERIFIED
  const now = c.time / 1e9
  const exp = objectGet(payload, "exp")
  if (exp !== undefined) {
    if (typeof exp !== "number" && typeof exp !== "bigint") throw builtinError("exp value must be a number")
    if (compareNumbers(now, exp) !== -1) return UNVERIFIED
  }
  const nbf = objectGet(payload, "nbf")
  if (nbf !== undefined) {
    if (typeof nbf !== "number" && typeof nbf !== "bigint") throw builtinError("nbf value must be a number")
    if (compareNumbers(now, nbf) === -1) return UNVERIFIED
  }
  return [true, header, payload]
}

// ---------------------------------------------------------------------------------------------
// io.jwt.decode

const decode = (v: Value): Value => {
  const t = splitToken(v)
  const header = decodeHeader(t)
  const payloadText = decodePayload(t)
  const cty = objectGet(header, "cty")
  if (cty === "JWT") {
    // A nested token is often a quoted string (jwt.io does this).
    return decode(trimASCII(payloadText, "\"'"))
  }
  const payload = payloadObject(payloadText)
  let sig: Buffer
  try {
    sig = base64UrlDecode(t.signature)
  } catch (e) {
    throw builtinError(`JWT signature had invalid encoding: ${message(e)}`)
  }
  return [header, payload, sig.toString("hex")]
}

// ---------------------------------------------------------------------------------------------
// io.jwt.encode_sign and encode_sign_raw

const encodeSign = (header: string, payload: string, jwk: string): string => {
  let keys: JoseKey[]
  try {
    keys = parseJWKs(jwk)
  } catch (e) {
    throw builtinError(message(e))
  }
  if (keys.length === 0) throw builtinError("no keys found in JWK set")
  const alg = fastjsonGetString(header, "alg")
  if (alg instanceof Error) throw builtinError(`missing or invalid 'alg' header: ${alg.message}`)
  if (!JWS_ALGORITHMS.has(alg)) throw builtinError(`unknown JWS algorithm: ${alg}`)
  const typ = fastjsonGetString(header, "typ")
  if ((typ instanceof Error || typ === "JWT") && !isGoJSON(payload)) throw builtinError("type is JWT but payload is not JSON")
  const input = base64UrlEncode(Buffer.from(header, "utf8")) + "." + base64UrlEncode(Buffer.from(payload, "utf8"))
  let sig: Buffer
  try {
    sig = jwsSign(keys[0], alg, Buffer.from(input, "latin1"))
  } catch (e) {
    throw builtinError(message(e))
  }
  return input + "." + base64UrlEncode(sig)
}

// ---------------------------------------------------------------------------------------------

const verifier = (name: string, verify: Verifier): BuiltinDef => ({ name, arity: 2, fn: (args) => verifyWithKeys(args, verify) })

export const jwt: BuiltinDef[] = [
  { name: "io.jwt.decode", arity: 1, fn: ([a]) => decode(a) },
  // Reads the clock when no time constraint is given (OPA marks it non-deterministic).
  { name: "io.jwt.decode_verify", arity: 2, nondeterministic: true, fn: decodeVerify },
  verifier("io.jwt.verify_rs256", rsaVerifier("sha256", false)),
  verifier("io.jwt.verify_rs384", rsaVerifier("sha384", false)),
  verifier("io.jwt.verify_rs512", rsaVerifier("sha512", false)),
  verifier("io.jwt.verify_ps256", rsaVerifier("sha256", true)),
  verifier("io.jwt.verify_ps384", rsaVerifier("sha384", true)),
  verifier("io.jwt.verify_ps512", rsaVerifier("sha512", true)),
  verifier("io.jwt.verify_es256", ecdsaVerifier("sha256")),
  verifier("io.jwt.verify_es384", ecdsaVerifier("sha384")),
  verifier("io.jwt.verify_es512", ecdsaVerifier("sha512")),
  verifier("io.jwt.verify_eddsa", eddsaVerifier),
  { name: "io.jwt.verify_hs256", arity: 2, fn: (args) => verifyHMAC(args, "sha256") },
  { name: "io.jwt.verify_hs384", arity: 2, fn: (args) => verifyHMAC(args, "sha384") },
  { name: "io.jwt.verify_hs512", arity: 2, fn: (args) => verifyHMAC(args, "sha512") },
  {
    name: "io.jwt.encode_sign",
    arity: 3,
    // PS* and ES* signatures are randomised (OPA marks both builtins non-deterministic).
    nondeterministic: true,
    fn: ([h, p, k]) => encodeSign(marshalGoJSON(obj(h, 1)), marshalGoJSON(obj(p, 2)), marshalGoJSON(obj(k, 3)))
  },
  {
    name: "io.jwt.encode_sign_raw",
    arity: 3,
    nondeterministic: true,
    // OPA checks the key operand first.
    fn: ([h, p, k]) => {
      const key = str(k, 3)
      return encodeSign(str(h, 1), str(p, 2), key)
    }
  }
]
