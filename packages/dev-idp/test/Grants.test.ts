import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { DevIdp } from "../src/DevIdp.js"
import { basic, getJson, postForm, verifyRemote } from "./helpers.js"

layer(DevIdp.layerTest, { excludeTestServices: true })("dev identity provider over HTTP", (it) => {
  describe("discovery and keys", () => {
    it.effect("publishes an OpenID configuration on the Keycloak endpoint layout", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const { body, status } = yield* getJson(idp.discoveryUrl)
        expect(status).toBe(200)
        expect(body.issuer).toBe(idp.issuer)
        expect(idp.issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
        expect(body.token_endpoint).toBe(`${idp.issuer}/protocol/openid-connect/token`)
        expect(body.jwks_uri).toBe(`${idp.issuer}/protocol/openid-connect/certs`)
        expect(body.grant_types_supported).toEqual(
          expect.arrayContaining(["client_credentials", "password", "authorization_code", "refresh_token"])
        )
        expect(body.token_endpoint_auth_methods_supported).toEqual(
          expect.arrayContaining(["client_secret_basic", "client_secret_post"])
        )
        expect(body.id_token_signing_alg_values_supported).toEqual(["RS256"])
        expect(body.scopes_supported).toEqual(expect.arrayContaining(["openid", "dt.read", "mqtt.admin"]))
      }))

    it.effect("serves only public RSA keys", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const { body } = yield* getJson(idp.jwksUri)
        const keys = body.keys as Array<Record<string, unknown>>
        expect(keys.length).toBe(1)
        expect(keys[0]).toMatchObject({ kty: "RSA", alg: "RS256" })
        expect(typeof keys[0]!.kid).toBe("string")
        for (const privateField of ["d", "p", "q", "dp", "dq", "qi"]) expect(keys[0]).not.toHaveProperty(privateField)
      }))

    it.effect("answers health checks", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        expect(yield* getJson(`${idp.issuer}/health`)).toMatchObject({ status: 200, body: { status: "ok" } })
      }))
  })

  describe("client_credentials", () => {
    it.effect("issues every service client a service-account token that verifies against the JWKS", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const services = [...idp.identities.clients.values()].filter((c) => c.grants.includes("client_credentials"))
        expect(services.map((c) => c.clientId)).toEqual(
          expect.arrayContaining(["svc-digital-twin", "svc-pipelines", "svc-rec-registry", "svc-nudging", "svc-grid"])
        )
        for (const client of services) {
          const { body, status } = yield* postForm(idp.tokenEndpoint, { grant_type: "client_credentials" }, {
            authorization: basic(client.clientId, client.secret!)
          })
          expect(status).toBe(200)
          expect(body).toMatchObject({ token_type: "Bearer", expires_in: idp.tokenTtlSeconds })
          expect(body).not.toHaveProperty("refresh_token")
          const claims = yield* verifyRemote(idp, body.access_token as string)
          expect(claims).toMatchObject({
            iss: idp.issuer,
            sub: client.serviceAccountId,
            client_id: client.clientId,
            azp: client.clientId,
            preferred_username: `service-account-${client.clientId}`,
            scope: client.scopes.join(" "),
            aud: "rec-platform"
          })
          expect(typeof claims.jti).toBe("string")
          expect(claims.exp! - claims.iat!).toBe(idp.tokenTtlSeconds)
          expect(claims).not.toHaveProperty("email")
          expect(claims).not.toHaveProperty("groups")
        }
      }))

    it.effect("accepts credentials in the body and narrows scopes to the requested ones", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const { body, status } = yield* postForm(idp.tokenEndpoint, {
          grant_type: "client_credentials",
          client_id: "svc-grid",
          client_secret: "dev-only-secret-svc-grid",
          scope: "dt.read"
        })
        expect(status).toBe(200)
        expect(body.scope).toBe("dt.read")
        expect((yield* verifyRemote(idp, body.access_token as string)).scope).toBe("dt.read")
      }))

    it.effect("refuses scopes the client does not hold", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const { body, status } = yield* postForm(idp.tokenEndpoint, { grant_type: "client_credentials", scope: "dt.read dataset.admin" }, {
          authorization: basic("svc-grid", "dev-only-secret-svc-grid")
        })
        expect(status).toBe(400)
        expect(body.error).toBe("invalid_scope")
        expect(body.error_description).toContain("dataset.admin")
      }))

    it.effect("rejects a wrong secret, an unknown client and missing credentials with 401 invalid_client", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const attempts: Array<Record<string, string>> = [
          { authorization: basic("svc-grid", "wrong") },
          { authorization: basic("svc-unknown", "x") },
          {}
        ]
        for (const headers of attempts) {
          const response = yield* postForm(idp.tokenEndpoint, { grant_type: "client_credentials" }, headers)
          expect(response.status).toBe(401)
          expect(response.body.error).toBe("invalid_client")
          expect(response.headers.get("www-authenticate")).toContain("Basic")
        }
      }))

    it.effect("keeps a public client and user-only clients away from client_credentials", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const frontend = yield* postForm(idp.tokenEndpoint, { grant_type: "client_credentials", client_id: "rec-frontend" })
        expect(frontend).toMatchObject({ status: 400, body: { error: "unauthorized_client" } })
        const cli = yield* postForm(idp.tokenEndpoint, { grant_type: "client_credentials" }, {
          authorization: basic("rec-cli", "dev-only-secret-rec-cli")
        })
        expect(cli).toMatchObject({ status: 400, body: { error: "unauthorized_client" } })
      }))

    it.effect("rejects unknown grants and malformed bodies", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const auth = { authorization: basic("svc-grid", "dev-only-secret-svc-grid") }
        expect(yield* postForm(idp.tokenEndpoint, { grant_type: "implicit" }, auth)).toMatchObject({
          status: 400,
          body: { error: "unsupported_grant_type" }
        })
        expect(yield* postForm(idp.tokenEndpoint, {}, auth)).toMatchObject({ status: 400, body: { error: "invalid_request" } })
        const notJson = yield* Effect.promise(() =>
          fetch(idp.tokenEndpoint, { method: "POST", headers: { "content-type": "application/json", ...auth }, body: "{" })
        )
        expect(notJson.status).toBe(400)
        expect(yield* Effect.promise(() => notJson.json())).toMatchObject({ error: "invalid_request" })
      }))
  })

  describe("password", () => {
    it.effect("issues every user a token with the claims the platform reads", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const cli = idp.identities.defaultClient
        for (const user of idp.identities.users.values()) {
          const { body, status } = yield* postForm(idp.tokenEndpoint, {
            grant_type: "password",
            username: user.username,
            password: user.password
          }, { authorization: basic(cli.clientId, cli.secret!) })
          expect(status).toBe(200)
          const claims = yield* verifyRemote(idp, body.access_token as string)
          expect(claims).toMatchObject({
            sub: user.id,
            preferred_username: user.username,
            email: user.email,
            name: user.fullName,
            azp: cli.clientId,
            groups: user.groups.map((g) => `/${g}`),
            realm_access: { roles: [...idp.identities.defaultRealmRoles, ...user.realmRoles] }
          })
          expect(claims).not.toHaveProperty("client_id")
          expect(String(claims.scope).split(" ")).toEqual(expect.arrayContaining([...cli.scopes]))
          if (user.organizations.length === 0) expect(claims).not.toHaveProperty("organization")
          else expect(Object.keys(claims.organization as object)).toEqual(user.organizations)
        }
      }))

    it.effect("covers every role the policies distinguish", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const groupsOf = (name: string) => idp.identities.users.get(name)!.groups
        expect(groupsOf("viewer")).toEqual(["viewers"])
        expect(groupsOf("editor")).toEqual(["editors"])
        expect(groupsOf("manager")).toEqual(["managers"])
        expect(groupsOf("admin")).toEqual(["admins"])
        expect(groupsOf("nogroup")).toEqual([])
        // Realm roles become policy groups too: none may grant a group level by accident.
        for (const user of idp.identities.users.values()) {
          for (const role of [...idp.identities.defaultRealmRoles, ...user.realmRoles]) {
            expect(["viewers", "editors", "managers", "admins"]).not.toContain(role)
          }
        }
      }))

    it.effect("gives a DSO operator the Keycloak 26 organization claim with the DSO type", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const { body } = yield* postForm(idp.tokenEndpoint, {
          grant_type: "password",
          username: "dso-operator",
          password: "dso-operator"
        }, { authorization: basic("rec-cli", "dev-only-secret-rec-cli") })
        const claims = yield* verifyRemote(idp, body.access_token as string)
        expect(claims.organization).toEqual({
          "dso-alto-garda": {
            id: idp.identities.organizations.get("dso-alto-garda")!.id,
            name: "Alto Garda Distribuzione (simulated DSO)",
            type: ["dso"],
            region: ["Trentino"]
          }
        })
        const participant = yield* idp.mint("participant")
        const participantClaims = yield* verifyRemote(idp, participant)
        expect(participantClaims.organization).toMatchObject({ "it-energy-community": { type: ["rec"] } })
      }))

    it.effect("logs in by e-mail too, and rejects wrong passwords with invalid_grant", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const auth = { authorization: basic("rec-cli", "dev-only-secret-rec-cli") }
        const byEmail = yield* postForm(idp.tokenEndpoint, {
          grant_type: "password",
          username: "vittoria.bianchi@rec.example",
          password: "viewer"
        }, auth)
        expect((yield* verifyRemote(idp, byEmail.body.access_token as string)).preferred_username).toBe("viewer")
        for (const [username, password] of [["viewer", "admin"], ["nobody", "nobody"]] as const) {
          const refused = yield* postForm(idp.tokenEndpoint, { grant_type: "password", username, password }, auth)
          expect(refused).toMatchObject({ status: 400, body: { error: "invalid_grant" } })
        }
        const missing = yield* postForm(idp.tokenEndpoint, { grant_type: "password", username: "viewer" }, auth)
        expect(missing).toMatchObject({ status: 400, body: { error: "invalid_request" } })
      }))

    it.effect("lets a public client log users in with its client id alone, with an id token for openid", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const { body, status } = yield* postForm(idp.tokenEndpoint, {
          grant_type: "password",
          client_id: "rec-frontend",
          username: "participant",
          password: "participant",
          scope: "openid dt.read"
        })
        expect(status).toBe(200)
        const access = yield* verifyRemote(idp, body.access_token as string)
        expect(access.scope).toBe("openid profile email dt.read")
        expect(access.azp).toBe("rec-frontend")
        const id = yield* verifyRemote(idp, body.id_token as string, "rec-frontend")
        expect(id).toMatchObject({ sub: idp.identities.users.get("participant")!.id, typ: "ID", azp: "rec-frontend" })
        expect(typeof body.refresh_token).toBe("string")
      }))

    it.effect("refuses service-only clients for user logins", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const response = yield* postForm(idp.tokenEndpoint, { grant_type: "password", username: "admin", password: "admin" }, {
          authorization: basic("svc-grid", "dev-only-secret-svc-grid")
        })
        expect(response).toMatchObject({ status: 400, body: { error: "unauthorized_client" } })
      }))
  })

  describe("refresh_token", () => {
    it.effect("rotates refresh tokens and keeps the session", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const first = yield* postForm(idp.tokenEndpoint, {
          grant_type: "password",
          client_id: "rec-frontend",
          username: "editor",
          password: "editor"
        })
        const refreshed = yield* postForm(idp.tokenEndpoint, {
          grant_type: "refresh_token",
          client_id: "rec-frontend",
          refresh_token: first.body.refresh_token as string
        })
        expect(refreshed.status).toBe(200)
        const before = yield* verifyRemote(idp, first.body.access_token as string)
        const after = yield* verifyRemote(idp, refreshed.body.access_token as string)
        expect(after.sub).toBe(before.sub)
        expect(after.sid).toBe(before.sid)
        expect(after.jti).not.toBe(before.jti)
        const replay = yield* postForm(idp.tokenEndpoint, {
          grant_type: "refresh_token",
          client_id: "rec-frontend",
          refresh_token: first.body.refresh_token as string
        })
        expect(replay).toMatchObject({ status: 400, body: { error: "invalid_grant" } })
      }))
  })

  describe("authorization_code", () => {
    const redirectUri = "http://localhost:5173/callback"
    const authorizeUrl = (issuer: string, params: Record<string, string>) =>
      `${issuer}/protocol/openid-connect/auth?${new URLSearchParams({
        client_id: "rec-frontend",
        redirect_uri: redirectUri,
        response_type: "code",
        ...params
      })}`

    it.effect("shows a user picker, then redirects with a code that PKCE exchanges once", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const verifier = randomBytes(32).toString("base64url")
        const challenge = createHash("sha256").update(verifier).digest("base64url")
        const params = { scope: "openid", state: "s-1", nonce: "n-1", code_challenge: challenge, code_challenge_method: "S256" }
        const page = yield* Effect.promise(() => fetch(authorizeUrl(idp.issuer, params)).then((r) => r.text()))
        expect(page).toContain("login_hint=dso-operator")
        const redirect = yield* Effect.promise(() =>
          fetch(authorizeUrl(idp.issuer, { ...params, login_hint: "dso-operator" }), { redirect: "manual" })
        )
        expect(redirect.status).toBe(302)
        const location = new URL(redirect.headers.get("location")!)
        expect(location.origin + location.pathname).toBe(redirectUri)
        expect(location.searchParams.get("state")).toBe("s-1")
        const code = location.searchParams.get("code")!
        const exchange = (codeVerifier: string) =>
          postForm(idp.tokenEndpoint, {
            grant_type: "authorization_code",
            client_id: "rec-frontend",
            code,
            redirect_uri: redirectUri,
            code_verifier: codeVerifier
          })
        const tokens = yield* exchange(verifier)
        expect(tokens.status).toBe(200)
        const id = yield* verifyRemote(idp, tokens.body.id_token as string, "rec-frontend")
        expect(id).toMatchObject({ preferred_username: "dso-operator", nonce: "n-1" })
        expect(yield* exchange(verifier)).toMatchObject({ status: 400, body: { error: "invalid_grant" } })
      }))

    it.effect("refuses a wrong code verifier", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const challenge = createHash("sha256").update(randomBytes(32).toString("base64url")).digest("base64url")
        const redirect = yield* Effect.promise(() =>
          fetch(authorizeUrl(idp.issuer, { login_hint: "viewer", code_challenge: challenge, code_challenge_method: "S256" }), {
            redirect: "manual"
          })
        )
        const code = new URL(redirect.headers.get("location")!).searchParams.get("code")!
        const tokens = yield* postForm(idp.tokenEndpoint, {
          grant_type: "authorization_code",
          client_id: "rec-frontend",
          code,
          redirect_uri: redirectUri,
          code_verifier: randomBytes(32).toString("base64url")
        })
        expect(tokens).toMatchObject({ status: 400, body: { error: "invalid_grant" } })
      }))

    it.effect("never redirects to an unregistered URI", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const response = yield* Effect.promise(() =>
          fetch(authorizeUrl(idp.issuer, { login_hint: "viewer", redirect_uri: "https://evil.example/cb" }), {
            redirect: "manual"
          })
        )
        expect(response.status).toBe(400)
        expect(response.headers.get("location")).toBeNull()
      }))
  })

  describe("userinfo and introspection", () => {
    it.effect("returns the profile of a valid token and 401 otherwise", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const token = yield* idp.mint("dso-operator")
        const info = yield* getJson(`${idp.issuer}/protocol/openid-connect/userinfo`, { authorization: `Bearer ${token}` })
        expect(info.status).toBe(200)
        expect(info.body).toMatchObject({ preferred_username: "dso-operator", organization: { "dso-alto-garda": { type: ["dso"] } } })
        const expired = yield* idp.mint("dso-operator", { expired: true })
        for (const headers of [{}, { authorization: `Bearer ${expired}` }] as Array<Record<string, string>>) {
          const refused = yield* getJson(`${idp.issuer}/protocol/openid-connect/userinfo`, headers)
          expect(refused.status).toBe(401)
          expect(refused.headers.get("www-authenticate")).toContain("Bearer")
        }
      }))

    it.effect("userinfo takes access tokens only, not an ID token", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const { body } = yield* postForm(idp.tokenEndpoint, {
          grant_type: "password",
          client_id: "rec-frontend",
          username: "viewer",
          password: "viewer",
          scope: "openid"
        })
        const url = `${idp.issuer}/protocol/openid-connect/userinfo`
        expect((yield* getJson(url, { authorization: `Bearer ${body.access_token as string}` })).status).toBe(200)
        const refused = yield* getJson(url, { authorization: `Bearer ${body.id_token as string}` })
        expect(refused).toMatchObject({ status: 401, body: { error: "invalid_token", error_description: "not an access token (typ \"ID\")" } })
      }))

    it.effect("introspects tokens for confidential clients", () =>
      Effect.gen(function*() {
        const idp = yield* DevIdp
        const url = `${idp.issuer}/protocol/openid-connect/token/introspect`
        const auth = { authorization: basic("svc-grid", "dev-only-secret-svc-grid") }
        const active = yield* postForm(url, { token: yield* idp.mint("svc-nudging") }, auth)
        expect(active.body).toMatchObject({ active: true, client_id: "svc-nudging", username: "service-account-svc-nudging" })
        const inactive = yield* postForm(url, { token: yield* idp.mint("viewer", { expired: true }) }, auth)
        expect(inactive.body).toEqual({ active: false })
        const publicClient = yield* postForm(url, { token: "x", client_id: "rec-frontend" })
        expect(publicClient.status).toBe(401)
      }))
  })
})
