import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { describe, expect, layer } from "@effect/vitest"
import { Authentication, AuthFailure, TokenVerifier } from "@rec/auth"
import { Logging, ServiceKit, Tracing } from "@rec/platform"
import { SpanKind } from "@opentelemetry/api"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Validator } from "@seriousme/openapi-schema-validator"
import * as Logger from "effect/Logger"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Jose from "jose"
import { AuthApi, MaybeLive, ProtectedLive } from "./fixtures/AuthApi.js"
import * as TestIdp from "./fixtures/TestIdp.js"

const VerifierLive = Layer.unwrapEffect(Effect.map(TestIdp.Idp, (idp) =>
  TokenVerifier.layerWith({
    issuer: idp.issuer,
    jwksUri: Option.none(),
    audience: [TestIdp.audience],
    algorithms: ["RS256", "ES256"],
    clockTolerance: Duration.seconds(30),
    jwtHeaderName: "x-auth-request-access-token"
  })))

const ServerLive = ServiceKit.serveTest(AuthApi, { service: { name: "auth-test", version: "0.0.0" }, port: 0 }).pipe(
  Layer.provide([ProtectedLive, MaybeLive]),
  Layer.provide([Authentication.layer, Authentication.layerOptional]),
  Layer.provide(VerifierLive),
  Layer.provideMerge(TestIdp.layer)
)

const call = (path: string, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(HttpClientRequest.get(path).pipe(HttpClientRequest.setHeaders(headers)))
    const body = (yield* response.json) as Record<string, unknown>
    return { status: response.status, headers: response.headers, body }
  })

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/**
 * The failure a 401 body stands for: its `detail` is the failure's message (`AuthFailure.messages`,
 * or the two messages that name the algorithm or the claim).
 */
const reasonOf = (body: Record<string, unknown>): string | undefined => {
  const detail = String(body.detail)
  if (detail.startsWith("Token algorithm ")) return "algorithm_not_allowed"
  if (detail.startsWith("Token is missing the required claim ")) return "missing_claim"
  return Object.entries(AuthFailure.messages).find(([, message]) => message === detail)?.[0]
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")

layer(ServerLive, { excludeTestServices: true })("Authentication middleware", (it) => {
    it.effect("accepts a valid RS256 token in Authorization: Bearer and provides the subject", () =>
      Effect.gen(function*() {
        const idp = yield* TestIdp.Idp
        const token = yield* idp.sign({ sub: "alice", groups: ["/editors"], scope: "dataset.query openid" })
        const { body, headers, status } = yield* call("/me", bearer(token))
        expect(status).toBe(200)
        expect(body).toMatchObject({
          id: "alice",
          type: "user",
          groups: ["editors"],
          scopes: ["dataset.query", "openid"]
        })
        expect(body.request_id).toBe(headers["x-request-id"])
      }))

    it.effect("accepts the token from the proxy header (x-auth-request-access-token)", () =>
      Effect.gen(function*() {
        const idp = yield* TestIdp.Idp
        const token = yield* idp.sign({ sub: "bob" })
        const { body, status } = yield* call("/me", { "x-auth-request-access-token": token })
        expect(status).toBe(200)
        expect(body.id).toBe("bob")
        // The proxy header wins over Authorization, and a leading "Bearer " inside it is tolerated.
        const other = yield* idp.sign({ sub: "carol" })
        const both = yield* call("/me", { "x-auth-request-access-token": `Bearer ${token}`, ...bearer(other) })
        expect(both.body.id).toBe("bob")
      }))

    it.effect("accepts an ES256 token", () =>
      Effect.gen(function*() {
        const idp = yield* TestIdp.Idp
        const ec = yield* TestIdp.makeKey("ec-1", "ES256")
        idp.keys.current = [...idp.keys.current, ec]
        const token = yield* idp.sign({ sub: "ec-user" }, { key: ec })
        // A fresh verifier: the shared one may have fetched the keys less than a cooldown ago.
        const verifier = yield* TokenVerifier.make({
          issuer: idp.issuer,
          jwksUri: Option.none(),
          audience: [TestIdp.audience],
          algorithms: ["ES256"],
          clockTolerance: Duration.seconds(30),
          jwtHeaderName: "x-auth-request-access-token"
        })
        expect((yield* verifier.verify(token)).id).toBe("ec-user")
        // RS256 is not in this verifier's list.
        const rs = yield* idp.sign({ sub: "rs-user" })
        const refused = yield* Effect.flip(verifier.verify(rs))
        expect(refused.reason).toBe("algorithm_not_allowed")
      }).pipe(Effect.provide(NodeHttpClient.layerUndici)))

    it.effect("401 missing_token without a token, with a WWW-Authenticate challenge", () =>
      Effect.gen(function*() {
        const { body, headers, status } = yield* call("/me")
        expect(status).toBe(401)
        expect(body).toEqual({ detail: "Missing bearer token" })
        expect(reasonOf(body)).toBe("missing_token")
        expect(headers["www-authenticate"]).toBe("Bearer")
      }))

    it.effect("401 expired beyond the leeway; accepted within it", () =>
      Effect.gen(function*() {
        const idp = yield* TestIdp.Idp
        const expired = yield* idp.sign({}, { expiresIn: -120 })
        const r = yield* call("/me", bearer(expired))
        expect(r.status).toBe(401)
        expect(reasonOf(r.body)).toBe("expired")
        expect(r.body.detail).toBe("Token has expired")
        expect(r.headers["www-authenticate"]).toContain('error="invalid_token"')
        const justExpired = yield* idp.sign({}, { expiresIn: -10 })
        expect((yield* call("/me", bearer(justExpired))).status).toBe(200)
      }))

    it.effect("401 not_yet_valid when nbf is in the future beyond the leeway", () =>
      Effect.gen(function*() {
        const idp = yield* TestIdp.Idp
        const early = yield* idp.sign({}, { notBefore: 600 })
        const r = yield* call("/me", bearer(early))
        expect(r.status).toBe(401)
        expect(reasonOf(r.body)).toBe("not_yet_valid")
      }))

    it.effect("401 wrong_issuer", () =>
      Effect.gen(function*() {
        const idp = yield* TestIdp.Idp
        const token = yield* idp.sign({}, { issuer: "http://evil.example/realms/rec" })
        const r = yield* call("/me", bearer(token))
        expect(r.status).toBe(401)
        expect(reasonOf(r.body)).toBe("wrong_issuer")
        expect(r.body.detail).toBe("Invalid issuer")
      }))

    it.effect("401 wrong_audience, also when aud is absent", () =>
      Effect.gen(function*() {
        const idp = yield* TestIdp.Idp
        const other = yield* idp.sign({}, { audience: "another-api" })
        const r = yield* call("/me", bearer(other))
        expect(r.status).toBe(401)
        expect(reasonOf(r.body)).toBe("wrong_audience")
        const none = yield* idp.sign({}, { omit: ["aud"] })
        expect(reasonOf((yield* call("/me", bearer(none))).body)).toBe("wrong_audience")
        const several = yield* idp.sign({}, { audience: ["account", TestIdp.audience] })
        expect((yield* call("/me", bearer(several))).status).toBe(200)
      }))

    it.effect("401 missing_claim without sub", () =>
      Effect.gen(function*() {
        const idp = yield* TestIdp.Idp
        const token = yield* idp.sign({}, { omit: ["sub"] })
        const r = yield* call("/me", bearer(token))
        expect(r.status).toBe(401)
        expect(reasonOf(r.body)).toBe("missing_claim")
        expect(r.body.detail).toContain('"sub"')
      }))

    it.effect("401 algorithm_not_allowed for alg none", () =>
      Effect.gen(function*() {
        const idp = yield* TestIdp.Idp
        const now = Math.floor(Date.now() / 1000)
        const unsigned = `${b64({ alg: "none", typ: "JWT" })}.${
          b64({ iss: idp.issuer, aud: TestIdp.audience, sub: "mallory", exp: now + 300 })
        }.`
        const r = yield* call("/me", bearer(unsigned))
        expect(r.status).toBe(401)
        expect(reasonOf(r.body)).toBe("algorithm_not_allowed")
      }))

    it.effect("401 algorithm_not_allowed for HS256 signed with the RSA public key (key confusion)", () =>
      Effect.gen(function*() {
        const idp = yield* TestIdp.Idp
        const key = idp.keys.current[0]
        const forged = yield* Effect.promise(() =>
          new Jose.SignJWT({ iss: idp.issuer, aud: TestIdp.audience, sub: "mallory" })
            .setProtectedHeader({ alg: "HS256", kid: key.kid })
            .setExpirationTime("5m")
            .sign(new TextEncoder().encode(key.publicPem))
        )
        const r = yield* call("/me", bearer(forged))
        expect(r.status).toBe(401)
        expect(reasonOf(r.body)).toBe("algorithm_not_allowed")
      }))

    it.effect("401 bad_signature for a token signed by another key under a known kid", () =>
      Effect.gen(function*() {
        const idp = yield* TestIdp.Idp
        const impostor = yield* TestIdp.makeKey("key-1")
        const token = yield* idp.sign({}, { key: impostor })
        const r = yield* call("/me", bearer(token))
        expect(r.status).toBe(401)
        expect(reasonOf(r.body)).toBe("bad_signature")
        // A payload altered after signing fails the same way.
        const good = yield* idp.sign({ sub: "alice" })
        const [h, , s] = good.split(".")
        const tampered = `${h}.${b64({ iss: idp.issuer, aud: TestIdp.audience, sub: "admin", exp: 9999999999 })}.${s}`
        expect(reasonOf((yield* call("/me", bearer(tampered))).body)).toBe("bad_signature")
      }))

    it.effect("401 malformed_token for garbage in either header", () =>
      Effect.gen(function*() {
        for (const headers of [
          bearer("garbage"),
          bearer("a.b.c"),
          bearer("%%%.%%%.%%%"),
          bearer(`${b64({ alg: "RS256", kid: "key-1" })}.${b64({ sub: "x" })}`),
          { "x-auth-request-access-token": "not-a-jwt" }
        ]) {
          const r = yield* call("/me", headers)
          expect(r.status, JSON.stringify(headers)).toBe(401)
          expect(reasonOf(r.body), JSON.stringify(headers)).toBe("malformed_token")
        }
        for (const authorization of ["Bearer", "Bearer two tokens", "Token abc"]) {
          expect(reasonOf((yield* call("/me", { authorization })).body)).toBe("invalid_authorization_header")
        }
        const basic = yield* call("/me", { authorization: "Basic dXNlcjpwYXNz" })
        expect(basic.status).toBe(401)
        expect(reasonOf(basic.body)).toBe("invalid_authorization_header")
        expect(basic.body.detail).toBe("Invalid authorization header format")
      }))

    it.effect("OptionalAuthentication: anonymous without a token, subject with one, 401 with a bad one", () =>
      Effect.gen(function*() {
        const idp = yield* TestIdp.Idp
        const anonymous = yield* call("/maybe")
        expect(anonymous).toMatchObject({ status: 200, body: { anonymous: true } })
        const token = yield* idp.sign({ sub: "dave" })
        expect((yield* call("/maybe", bearer(token))).body).toEqual({ anonymous: false, id: "dave" })
        const expired = yield* idp.sign({}, { expiresIn: -3600 })
        const bad = yield* call("/maybe", bearer(expired))
        expect(bad.status).toBe(401)
        expect(reasonOf(bad.body)).toBe("expired")
      }))
})

describe("Authentication when the identity provider is unreachable", () => {
  const Unreachable = ServiceKit.serveTest(AuthApi, { service: { name: "auth-test", version: "0.0.0" }, port: 0 }).pipe(
    Layer.provide([ProtectedLive, MaybeLive]),
    Layer.provide([Authentication.layer, Authentication.layerOptional]),
    Layer.provide(TokenVerifier.layerWith({
      // Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
      issuer: "http://127.0.0.1:9/realms/rec",
      jwksUri: Option.none(),
      audience: [],
      algorithms: ["RS256"],
      clockTolerance: Duration.seconds(30),
      jwtHeaderName: "x-auth-request-access-token"
    }))
  )

  layer(Unreachable, { excludeTestServices: true })("503", (it) => {
    it.effect("503 ServiceUnavailable naming the identity provider, not 401", () =>
      Effect.gen(function*() {
        const key = yield* TestIdp.makeKey("k")
        const token = yield* Effect.promise(() =>
          new Jose.SignJWT({ sub: "x" }).setProtectedHeader({ alg: "RS256", kid: "k" }).setExpirationTime("5m")
            .sign(key.privateKey)
        )
        const r = yield* call("/me", bearer(token))
        expect(r.status).toBe(503)
        expect(r.body).toEqual({
          detail: "The identity provider's signing keys are unavailable: the identity provider cannot be reached, try again shortly"
        })
        expect(r.headers["www-authenticate"]).toBeUndefined()
      }))
  })
})

describe("Authentication in traces, logs and docs", () => {
  const exporter = new InMemorySpanExporter()
  const logged: Array<string> = []
  const service = { name: "auth-test", version: "0.0.0" }
  const Traced = ServiceKit.serveTest(AuthApi, { service, port: 0 }).pipe(
    Layer.provide([ProtectedLive, MaybeLive]),
    Layer.provide([Authentication.layer, Authentication.layerOptional]),
    Layer.provide(VerifierLive),
    Layer.provideMerge(TestIdp.layer),
    Layer.provide(Tracing.layerSpanProcessor(service, new SimpleSpanProcessor(exporter))),
    Layer.provide(Logger.replace(Logger.defaultLogger, Logger.map(Logging.jsonLogger({ service: "auth-test" }), (l) => {
      logged.push(l)
    })))
  )

  layer(Traced, { excludeTestServices: true })("traced", (it) => {
    it.effect("the subject id (never the token) is on the server span and the access log", () =>
      Effect.gen(function*() {
        const idp = yield* TestIdp.Idp
        const token = yield* idp.sign({ sub: "alice-42" })
        const answer = yield* call("/me", bearer(token))
        expect(answer.status).toBe(200)
        const deadline = Date.now() + 2000
        while (exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER).length === 0) {
          if (Date.now() > deadline) throw new Error("no server span")
          yield* Effect.sleep("10 millis")
        }
        const [span] = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER)
        expect(span.attributes["enduser.id"]).toBe("alice-42")
        expect(span.attributes["http.request.header.authorization"]).toBe("<redacted>")
        expect(JSON.stringify(span.attributes)).not.toContain(token)
        const access = logged.map((l) => JSON.parse(l) as Record<string, unknown>)
          .find((l) => l.message === "GET /me 200")
        expect(access).toMatchObject({ user_id: "alice-42", request_id: answer.headers["x-request-id"] })
        expect(logged.join("\n")).not.toContain(token)
      }))

    it.effect("the OpenAPI document stays valid and declares the bearer scheme", () =>
      Effect.gen(function*() {
        const { body, status } = yield* call("/openapi.json")
        expect(status).toBe(200)
        const result = yield* Effect.promise(() => new Validator().validate(body))
        expect(result.errors).toBeUndefined()
        const components = body.components as { securitySchemes: Record<string, { type: string; scheme: string }> }
        expect(Object.values(components.securitySchemes)).toContainEqual(
          expect.objectContaining({ type: "http", scheme: "bearer" })
        )
        const paths = body.paths as Record<string, { get: { responses: Record<string, unknown> } }>
        expect(Object.keys(paths["/me"].get.responses)).toEqual(expect.arrayContaining(["401", "503"]))
      }))
  })
})
