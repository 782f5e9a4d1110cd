import { Effect } from "effect"
import * as Jose from "jose"
import type { DevIdpService } from "../src/DevIdp.js"

export interface JsonResponse {
  readonly status: number
  readonly headers: Headers
  readonly body: Record<string, unknown>
}

const toJson = async (response: Response): Promise<JsonResponse> => {
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text === "" ? {} : JSON.parse(text) as Record<string, unknown> }
}

export const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`

/** POSTs a form to the token endpoint (or another form endpoint). */
export const postForm = (url: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
  Effect.promise(() =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams(form).toString()
    }).then(toJson)
  )

export const getJson = (url: string, headers: Record<string, string> = {}) =>
  Effect.promise(() => fetch(url, { headers }).then(toJson))

/** Verifies like a platform service would: the provider's JWKS over HTTP, issuer, audience, RS256 only. */
export const verifyRemote = (idp: DevIdpService, token: string, audience: string | undefined = "rec-platform") =>
  Effect.tryPromise(() =>
    Jose.jwtVerify(token, Jose.createRemoteJWKSet(new URL(idp.jwksUri)), {
      issuer: idp.issuer,
      algorithms: ["RS256"],
      requiredClaims: ["exp", "iat", "sub"],
      ...(audience === undefined ? {} : { audience })
    }).then((result) => result.payload)
  )
