/**
 * The OpenID Connect provider behind the dev identity provider: client authentication, the
 * grants, token minting and token verification, as plain functions from a parsed request to
 * an OAuth response. `Server.ts` wires it to HTTP.
 *
 * oauth2-mock-server supplies the key store, JWT signing and the JWKS, revocation and logout
 * endpoints. Its own token endpoint accepts any client and any password and names every user
 * "johndoe", so the token, authorization, userinfo and introspection endpoints are ours:
 * credentials are checked against dev/identities.yaml and the claims come from `Claims.ts`.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto"
import * as Jose from "jose"
import type { OAuth2Issuer } from "oauth2-mock-server"
import type { Claims, ScopeGrant } from "./Claims.js"
import { grantScopes, oidcScopes, serviceAccessClaims, userAccessClaims, userIdClaims, userInfoClaims } from "./Claims.js"
import { Schema } from "effect"
import type { Client, Identities, User } from "./Identities.js"
import { Grant } from "./Identities.js"

/** Keycloak's endpoint layout, so anything configured for Keycloak paths finds them here too. */
export const endpoints = {
  discovery: "/.well-known/openid-configuration",
  authorize: "/protocol/openid-connect/auth",
  token: "/protocol/openid-connect/token",
  jwks: "/protocol/openid-connect/certs",
  userinfo: "/protocol/openid-connect/userinfo",
  introspect: "/protocol/openid-connect/token/introspect",
  revoke: "/protocol/openid-connect/revoke",
  logout: "/protocol/openid-connect/logout"
} as const

export interface OAuthResponse {
  readonly status: number
  readonly body: Record<string, unknown>
  readonly headers?: Record<string, string>
}

const oauthError = (status: number, error: string, description: string, headers?: Record<string, string>) => ({
  status,
  body: { error, error_description: description },
  ...(headers === undefined ? {} : { headers })
})

const invalidClient = (description: string) =>
  oauthError(401, "invalid_client", description, { "www-authenticate": `Basic realm="dev-idp"` })

/** Compares secrets in constant time (hashing first so lengths do not leak either). */
const sameSecret = (given: string, expected: string): boolean =>
  timingSafeEqual(createHash("sha256").update(given).digest(), createHash("sha256").update(expected).digest())

/** RFC 6749 §2.3.1: Basic credentials are form-urlencoded before base64. */
const parseBasic = (authorization: string | undefined): { id: string; secret: string } | "none" | "malformed" => {
  if (authorization === undefined) return "none"
  const match = /^Basic\s+(\S+)$/i.exec(authorization.trim())
  if (match === null) return "none"
  const decoded = Buffer.from(match[1]!, "base64").toString("utf8")
  const colon = decoded.indexOf(":")
  if (colon < 0) return "malformed"
  try {
    return {
      id: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, " ")),
      secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, " "))
    }
  } catch {
    return "malformed"
  }
}

const redirectAllowed = (client: Client, uri: string): boolean =>
  client.redirectUris.some((pattern) => {
    const regex = new RegExp(`^${pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`)
    return regex.test(uri)
  })

interface PendingCode {
  readonly username: string
  readonly clientId: string
  readonly redirectUri: string
  readonly scope: string | undefined
  readonly nonce: string | undefined
  readonly challenge: { readonly value: string; readonly method: "plain" | "S256" } | undefined
  readonly expiresAt: number
}

interface RefreshGrant {
  readonly username: string
  readonly clientId: string
  readonly scope: string | undefined
  readonly sessionId: string
  readonly expiresAt: number
}

export interface ProviderOptions {
  readonly identities: Identities
  readonly issuer: OAuth2Issuer
  /** Access and id token lifetime in seconds. */
  readonly tokenTtlSeconds: number
  /** Refresh token lifetime in seconds. */
  readonly refreshTtlSeconds: number
}

/** What the verification of an access token yields. */
export type Verified =
  | { readonly _tag: "Valid"; readonly claims: Jose.JWTPayload }
  | { readonly _tag: "Invalid"; readonly reason: string }

export class Provider {
  readonly identities: Identities
  readonly #issuer: OAuth2Issuer
  readonly #ttl: number
  readonly #refreshTtl: number
  readonly #codes = new Map<string, PendingCode>()
  readonly #refreshTokens = new Map<string, RefreshGrant>()

  constructor(options: ProviderOptions) {
    this.identities = options.identities
    this.#issuer = options.issuer
    this.#ttl = options.tokenTtlSeconds
    this.#refreshTtl = options.refreshTtlSeconds
  }

  get issuerUrl(): string {
    const url = this.#issuer.url
    if (url === undefined) throw new Error("dev-idp: the issuer URL is not set before the server listens")
    return url
  }

  get tokenTtlSeconds(): number {
    return this.#ttl
  }

  /** The public keys (a JWK Set). */
  jwks(): Jose.JSONWebKeySet {
    return { keys: this.#issuer.keys.toJSON() as Array<Jose.JWK> }
  }

  discovery(): Record<string, unknown> {
    const base = this.issuerUrl.replace(/\/$/, "")
    const platformScopes = [...new Set([...this.identities.clients.values()].flatMap((c) => c.scopes))].sort()
    return {
      issuer: this.issuerUrl,
      authorization_endpoint: base + endpoints.authorize,
      token_endpoint: base + endpoints.token,
      userinfo_endpoint: base + endpoints.userinfo,
      jwks_uri: base + endpoints.jwks,
      introspection_endpoint: base + endpoints.introspect,
      revocation_endpoint: base + endpoints.revoke,
      end_session_endpoint: base + endpoints.logout,
      grant_types_supported: ["authorization_code", "client_credentials", "password", "refresh_token"],
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      subject_types_supported: ["public"],
      id_token_signing_alg_values_supported: ["RS256"],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none"],
      introspection_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      code_challenge_methods_supported: ["plain", "S256"],
      scopes_supported: [...oidcScopes, ...platformScopes],
      claims_supported: [
        "iss", "sub", "aud", "exp", "iat", "jti", "azp", "sid", "scope", "client_id", "preferred_username",
        "email", "email_verified", "name", "given_name", "family_name", "groups", "realm_access", "organization"
      ]
    }
  }

  /** Signs `claims` with the current key; `iss`, `iat`, `nbf` and `exp` are set unless `claims` sets them. */
  sign(claims: Claims, expiresInSeconds: number = this.#ttl): Promise<string> {
    return this.#issuer.buildToken({
      // JWT times are whole seconds (RFC 7519 NumericDate as Keycloak writes it).
      expiresIn: Math.max(1, Math.round(expiresInSeconds)),
      scopesOrTransform: (_header, payload) => {
        Object.assign(payload, { jti: randomUUID() }, claims)
        for (const [key, value] of Object.entries(payload)) {
          if (value === undefined) delete payload[key]
        }
      }
    })
  }

  /** Verifies a token issued here: signature, issuer, expiry, RS256 only. */
  async verify(token: string): Promise<Verified> {
    try {
      const { payload } = await Jose.jwtVerify(token, Jose.createLocalJWKSet(this.jwks()), {
        issuer: this.issuerUrl,
        algorithms: ["RS256"]
      })
      return { _tag: "Valid", claims: payload }
    } catch (error) {
      return { _tag: "Invalid", reason: error instanceof Error ? error.message : String(error) }
    }
  }

  /** A user found by username or e-mail (Keycloak accepts both at login). */
  findUser(login: string): User | undefined {
    return this.identities.users.get(login) ??
      [...this.identities.users.values()].find((u) => u.email.toLowerCase() === login.toLowerCase())
  }

  /** RFC 6749 §2.3: Basic or body credentials for confidential clients, `client_id` alone for public ones. */
  authenticateClient(params: URLSearchParams, authorization: string | undefined): Client | OAuthResponse {
    const basic = parseBasic(authorization)
    if (basic === "malformed") return invalidClient("malformed Basic credentials")
    const bodyId = params.get("client_id") ?? undefined
    if (basic !== "none" && bodyId !== undefined && bodyId !== basic.id) {
      return oauthError(400, "invalid_request", "client_id differs from the Basic credentials")
    }
    if (basic !== "none" && params.has("client_secret")) {
      return oauthError(400, "invalid_request", "use one client authentication method, not two")
    }
    const clientId = basic === "none" ? bodyId : basic.id
    const secret = basic === "none" ? params.get("client_secret") ?? undefined : basic.secret
    if (clientId === undefined || clientId === "") return invalidClient("client authentication is required")
    const client = this.identities.clients.get(clientId)
    if (client === undefined) return invalidClient(`unknown client '${clientId}'`)
    if (client.public) return client
    if (secret === undefined || client.secret === undefined || !sameSecret(secret, client.secret)) {
      return invalidClient(`invalid credentials for client '${clientId}'`)
    }
    return client
  }

  /** The token endpoint (RFC 6749 §3.2, §4.1.3, §4.3, §4.4, §6). */
  async token(params: URLSearchParams, authorization: string | undefined): Promise<OAuthResponse> {
    const client = this.authenticateClient(params, authorization)
    if (!("clientId" in client)) return client
    const grantType = params.get("grant_type")
    if (grantType === null || grantType === "") return oauthError(400, "invalid_request", "grant_type is required")
    if (!Schema.is(Grant)(grantType)) {
      return oauthError(400, "unsupported_grant_type", `grant_type '${grantType}' is not supported`)
    }
    if (!client.grants.includes(grantType)) {
      return oauthError(400, "unauthorized_client", `client '${client.clientId}' may not use the ${grantType} grant`)
    }
    switch (grantType) {
      case "client_credentials":
        return this.#clientCredentials(client, params)
      case "password":
        return this.#password(client, params)
      case "authorization_code":
        return this.#authorizationCode(client, params)
      case "refresh_token":
        return this.#refresh(client, params)
    }
  }

  async #clientCredentials(client: Client, params: URLSearchParams): Promise<OAuthResponse> {
    const grant = grantScopes(client, params.get("scope") ?? undefined)
    if (grant._tag === "Refused") return this.#refusedScopes(client, grant)
    const access = await this.sign(serviceAccessClaims(this.identities, client, grant.scopes))
    return {
      status: 200,
      body: { access_token: access, token_type: "Bearer", expires_in: this.#ttl, scope: grant.scopes.join(" ") }
    }
  }

  async #password(client: Client, params: URLSearchParams): Promise<OAuthResponse> {
    const username = params.get("username")
    const password = params.get("password")
    if (username === null || password === null) {
      return oauthError(400, "invalid_request", "username and password are required")
    }
    const user = this.findUser(username)
    if (user === undefined || !sameSecret(password, user.password)) {
      return oauthError(400, "invalid_grant", "invalid user credentials")
    }
    return this.#userTokens(user, client, params.get("scope") ?? undefined, randomUUID(), undefined)
  }

  async #authorizationCode(client: Client, params: URLSearchParams): Promise<OAuthResponse> {
    const code = params.get("code")
    if (code === null) return oauthError(400, "invalid_request", "code is required")
    const pending = this.#codes.get(code)
    this.#codes.delete(code)
    if (pending === undefined || pending.expiresAt < Date.now()) {
      return oauthError(400, "invalid_grant", "unknown, used or expired authorization code")
    }
    if (pending.clientId !== client.clientId) {
      return oauthError(400, "invalid_grant", "the code was issued to another client")
    }
    if (params.get("redirect_uri") !== pending.redirectUri) {
      return oauthError(400, "invalid_grant", "redirect_uri differs from the authorization request")
    }
    const verifier = params.get("code_verifier")
    if (pending.challenge !== undefined) {
      if (verifier === null || !/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) {
        return oauthError(400, "invalid_grant", "a valid code_verifier is required (RFC 7636)")
      }
      const computed = pending.challenge.method === "S256"
        ? createHash("sha256").update(verifier).digest("base64url")
        : verifier
      if (computed !== pending.challenge.value) {
        return oauthError(400, "invalid_grant", "code_verifier does not match the code_challenge")
      }
    }
    const user = this.identities.users.get(pending.username)
    if (user === undefined) return oauthError(400, "invalid_grant", "the user no longer exists")
    return this.#userTokens(user, client, pending.scope, randomUUID(), pending.nonce)
  }

  async #refresh(client: Client, params: URLSearchParams): Promise<OAuthResponse> {
    const token = params.get("refresh_token")
    if (token === null) return oauthError(400, "invalid_request", "refresh_token is required")
    const grant = this.#refreshTokens.get(token)
    this.#refreshTokens.delete(token)
    if (grant === undefined || grant.expiresAt < Date.now()) {
      return oauthError(400, "invalid_grant", "unknown, used or expired refresh token")
    }
    if (grant.clientId !== client.clientId) {
      return oauthError(400, "invalid_grant", "the refresh token was issued to another client")
    }
    const user = this.identities.users.get(grant.username)
    if (user === undefined) return oauthError(400, "invalid_grant", "the user no longer exists")
    return this.#userTokens(user, client, grant.scope, grant.sessionId, undefined)
  }

  #refusedScopes(client: Client, grant: Extract<ScopeGrant, { _tag: "Refused" }>): OAuthResponse {
    return oauthError(400, "invalid_scope", `client '${client.clientId}' may not request: ${grant.refused.join(" ")}`)
  }

  async #userTokens(
    user: User,
    client: Client,
    scope: string | undefined,
    sessionId: string,
    nonce: string | undefined
  ): Promise<OAuthResponse> {
    const grant = grantScopes(client, scope)
    if (grant._tag === "Refused") return this.#refusedScopes(client, grant)
    const claims = userAccessClaims(this.identities, user, client, grant, sessionId)
    const access = await this.sign(claims)
    const idToken = grant.openid ? await this.sign(userIdClaims(user, client, sessionId, nonce)) : undefined
    const body: Record<string, unknown> = {
      access_token: access,
      token_type: "Bearer",
      expires_in: this.#ttl,
      scope: claims.scope,
      session_state: sessionId
    }
    if (idToken !== undefined) body.id_token = idToken
    if (client.grants.includes("refresh_token")) {
      const refresh = randomBytes(32).toString("base64url")
      this.#refreshTokens.set(refresh, {
        username: user.username,
        clientId: client.clientId,
        scope,
        sessionId,
        expiresAt: Date.now() + this.#refreshTtl * 1000
      })
      body.refresh_token = refresh
      body.refresh_expires_in = this.#refreshTtl
    }
    return { status: 200, body }
  }

  /**
   * The authorization endpoint. Without `login_hint` the caller gets a page to pick a user
   * (`_tag: "Login"`); with one, a redirect carrying a one-time code. Client and redirect URI
   * are checked first, and a bad one is never redirected to.
   */
  authorize(query: URLSearchParams):
    | { readonly _tag: "Error"; readonly status: number; readonly message: string }
    | { readonly _tag: "Login"; readonly client: Client; readonly users: ReadonlyArray<User> }
    | { readonly _tag: "Redirect"; readonly location: string }
  {
    const clientId = query.get("client_id")
    const client = clientId === null ? undefined : this.identities.clients.get(clientId)
    if (client === undefined) return { _tag: "Error", status: 400, message: `unknown client '${clientId ?? ""}'` }
    if (!client.grants.includes("authorization_code")) {
      return { _tag: "Error", status: 400, message: `client '${client.clientId}' may not use the authorization code flow` }
    }
    const redirectUri = query.get("redirect_uri")
    if (redirectUri === null || !redirectAllowed(client, redirectUri)) {
      return { _tag: "Error", status: 400, message: `redirect_uri is not registered for client '${client.clientId}'` }
    }
    const redirect = new URL(redirectUri)
    const state = query.get("state")
    if (state !== null) redirect.searchParams.set("state", state)
    const fail = (error: string, description: string) => {
      redirect.searchParams.set("error", error)
      redirect.searchParams.set("error_description", description)
      return { _tag: "Redirect", location: redirect.href } as const
    }
    if (query.get("response_type") !== "code") return fail("unsupported_response_type", "only response_type=code is supported")
    const scope = query.get("scope") ?? undefined
    const scopes = grantScopes(client, scope)
    if (scopes._tag === "Refused") return fail("invalid_scope", `not allowed: ${scopes.refused.join(" ")}`)
    const challenge = query.get("code_challenge")
    const method = query.get("code_challenge_method") ?? "plain"
    if (challenge !== null && method !== "plain" && method !== "S256") {
      return fail("invalid_request", "code_challenge_method must be plain or S256")
    }
    const login = query.get("login_hint")
    const user = login === null ? undefined : this.findUser(login)
    if (user === undefined) return { _tag: "Login", client, users: [...this.identities.users.values()] }
    const code = randomBytes(24).toString("base64url")
    this.#codes.set(code, {
      username: user.username,
      clientId: client.clientId,
      redirectUri,
      scope,
      nonce: query.get("nonce") ?? undefined,
      challenge: challenge === null ? undefined : { value: challenge, method: method as "plain" | "S256" },
      expiresAt: Date.now() + 60_000
    })
    redirect.searchParams.set("code", code)
    return { _tag: "Redirect", location: redirect.href }
  }

  /** The userinfo endpoint: the profile of the token's subject. */
  async userinfo(authorization: string | undefined): Promise<OAuthResponse> {
    const bearer = /^Bearer\s+(\S+)$/i.exec(authorization?.trim() ?? "")
    const challenge = (error: string, description: string) =>
      oauthError(401, error, description, {
        "www-authenticate": `Bearer realm="dev-idp", error="${error}", error_description="${description.replace(/["\\]/g, "")}"`
      })
    if (bearer === null) return challenge("invalid_request", "a Bearer token is required")
    const verified = await this.verify(bearer[1]!)
    if (verified._tag === "Invalid") return challenge("invalid_token", verified.reason)
    // As Keycloak: an ID token is signed by the same key but is not an access token.
    if (verified.claims.typ !== "Bearer") {
      return challenge("invalid_token", `not an access token (typ ${JSON.stringify(verified.claims.typ ?? null)})`)
    }
    const user = [...this.identities.users.values()].find((u) => u.id === verified.claims.sub)
    if (user !== undefined) return { status: 200, body: userInfoClaims(this.identities, user) }
    return {
      status: 200,
      body: { sub: verified.claims.sub, preferred_username: verified.claims.preferred_username }
    }
  }

  /** Token introspection (RFC 7662), for registered confidential clients. */
  async introspect(params: URLSearchParams, authorization: string | undefined): Promise<OAuthResponse> {
    const client = this.authenticateClient(params, authorization)
    if (!("clientId" in client)) return client
    if (client.public) return invalidClient("public clients may not introspect tokens")
    const token = params.get("token")
    if (token === null) return oauthError(400, "invalid_request", "token is required")
    const verified = await this.verify(token)
    if (verified._tag === "Invalid") return { status: 200, body: { active: false } }
    const claims = verified.claims
    return {
      status: 200,
      body: {
        ...claims,
        active: true,
        token_type: "Bearer",
        client_id: claims.azp,
        username: claims.preferred_username
      }
    }
  }
}
