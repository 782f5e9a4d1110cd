/**
 * Forged bearer tokens, each one attack a token verifier must refuse. Built from a valid access
 * token of the identity provider (its claims reused, so only the attack differs) and the
 * provider's JWKS (the public key an attacker can read):
 *
 * - `alg none`: the header says `none`, no signature;
 * - HS/RS confusion: `HS256`, signed with the public key as the HMAC secret (as PEM and as JWK);
 * - a key the JWKS does not hold: an unknown `kid`, and the real `kid` signed by another key;
 * - a payload changed after signing (the `sub` of someone else);
 * - oversized: 12 KB (under Node's 16 KB header limit) and 54 KB (over it);
 * - malformed: not three segments, segments that are not base64url JSON.
 *
 * The attacks that need the provider's own key (expired, not yet valid, wrong issuer, wrong
 * audience, an ID token) are minted by the provider itself; see the hardening tests.
 */
import * as crypto from "node:crypto"
import * as Jose from "jose"

export interface Attack {
  readonly name: string
  readonly token: string
}

const b64 = (value: unknown) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url")

/** The decoded header and payload of a compact JWS (no verification). */
export const decode = (token: string): { readonly header: Record<string, unknown>; readonly payload: Record<string, unknown> } => {
  const [header = "", payload = ""] = token.split(".")
  return {
    header: JSON.parse(Buffer.from(header, "base64url").toString("utf8")) as Record<string, unknown>,
    payload: JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>
  }
}

const hmac = (header: Record<string, unknown>, payload: Record<string, unknown>, secret: string | Buffer) => {
  const input = `${b64(header)}.${b64(payload)}`
  return `${input}.${crypto.createHmac("sha256", secret).update(input).digest("base64url")}`
}

/** The forged tokens for `valid` (an access token) and the JWKS document it verifies against. */
export const forge = async (valid: string, jwks: { readonly keys: ReadonlyArray<Jose.JWK> }): Promise<ReadonlyArray<Attack>> => {
  const { header, payload } = decode(valid)
  const kid = typeof header.kid === "string" ? header.kid : undefined
  const jwk = jwks.keys.find((k) => kid === undefined || k.kid === kid) ?? jwks.keys[0]
  if (jwk === undefined) throw new Error("the JWKS has no key")
  const publicKey = crypto.createPublicKey({ key: jwk as crypto.JsonWebKey, format: "jwk" })
  const pem = publicKey.export({ type: "spki", format: "pem" }).toString()
  const other = await Jose.generateKeyPair("RS256", { extractable: true })
  const signWithOther = (kidValue: string, claims: Record<string, unknown> = payload) =>
    new Jose.SignJWT(claims).setProtectedHeader({ alg: "RS256", typ: "JWT", kid: kidValue }).sign(other.privateKey)
  const [headerPart, , signature] = valid.split(".")
  const padded = (bytes: number) => {
    const claims = { ...payload, padding: "p".repeat(bytes) }
    return `${b64(header)}.${b64(claims)}.${signature}`
  }
  return [
    { name: "alg none", token: `${b64({ alg: "none", typ: "JWT" })}.${b64(payload)}.` },
    { name: "alg none, kid kept", token: `${b64({ ...header, alg: "none" })}.${b64(payload)}.` },
    { name: "HS256 with the JWKS public key (PEM) as secret", token: hmac({ ...header, alg: "HS256" }, payload, pem) },
    { name: "HS256 with the JWKS public key (JWK JSON) as secret", token: hmac({ ...header, alg: "HS256" }, payload, JSON.stringify(jwk)) },
    { name: "unknown kid", token: await signWithOther("hardening-unknown-kid") },
    { name: "key not in the JWKS (real kid)", token: await signWithOther(kid ?? "") },
    {
      name: "payload changed after signing",
      token: `${headerPart}.${b64({ ...payload, sub: "00000000-0000-4000-8000-000000000001" })}.${signature}`
    },
    { name: "oversized (12 KB)", token: padded(9 * 1024) },
    { name: "oversized (54 KB, past the HTTP header limit)", token: padded(40 * 1024) },
    { name: "malformed (two segments)", token: `${headerPart}.${b64(payload)}` },
    { name: "malformed (not base64url JSON)", token: "eyJ!!!.***.@@@" }
  ]
}
