/**
 * Only access tokens authenticate a request. Keycloak signs its ID, refresh and logout tokens with
 * the same key and issuer as its access tokens, so a verifier that checks the signature, issuer and
 * expiry alone takes an ID token (which any client holding the user's session gets) as an access
 * token. The `typ` claim and the JOSE header's `typ` tell them apart.
 *
 * And a verifier configured without an audience says so when it starts.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { describe, expect, it, layer } from "@effect/vitest"
import { AuthConfig, AuthFailure, Authentication, TokenVerifier } from "@rec/auth"
import { ServiceKit } from "@rec/platform"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import { AuthApi, MaybeLive, ProtectedLive } from "./fixtures/AuthApi.js"
import * as TestIdp from "./fixtures/TestIdp.js"

const config = (issuer: string, audience: ReadonlyArray<string>): AuthConfig.VerifierConfig => ({
  issuer,
  jwksUri: Option.none(),
  audience,
  algorithms: ["RS256", "ES256"],
  clockTolerance: Duration.seconds(30),
  jwtHeaderName: "x-auth-request-access-token"
})

const setup = Effect.gen(function*() {
  const idp = yield* TestIdp.make
  const verifier = yield* TokenVerifier.make(config(idp.issuer, [TestIdp.audience]))
  return { idp, verifier }
})

const scoped = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))

describe("token type", () => {
  it.live("access tokens are accepted: typ Bearer (any case) or absent; header typ JWT, at+jwt or absent", () =>
    scoped(Effect.gen(function*() {
      const { idp, verifier } = yield* setup
      const accepted: Array<[string, Parameters<typeof idp.sign>]> = [
        ["typ Bearer", [{ sub: "a", typ: "Bearer" }]],
        ["typ bearer", [{ sub: "a", typ: "bearer" }]],
        ["no typ", [{ sub: "a" }]],
        ["header at+jwt", [{ sub: "a", typ: "Bearer" }, { headerType: "at+jwt" }]],
        ["header application/at+jwt", [{ sub: "a" }, { headerType: "application/at+jwt" }]],
        ["header AT+JWT", [{ sub: "a" }, { headerType: "AT+JWT" }]],
        ["no header typ", [{ sub: "a" }, { headerType: null }]]
      ]
      for (const [name, args] of accepted) {
        const token = yield* idp.sign(...args)
        const subject = yield* verifier.verify(token).pipe(Effect.mapError((e) => new Error(`${name}: ${e.message}`)))
        expect(subject.id).toBe("a")
        expect((yield* verifier.verifyClaims(token)).sub).toBe("a")
      }
    })))

  it.live("ID, refresh, logout and other tokens are refused as wrong_token_type, saying which typ", () =>
    scoped(Effect.gen(function*() {
      const { idp, verifier } = yield* setup
      for (const typ of ["ID", "Refresh", "Offline", "Logout", "Serialized-ID", "DPoP", ""]) {
        const token = yield* idp.sign({ sub: "a", typ })
        const failure = yield* Effect.flip(verifier.verify(token))
        expect(failure).toBeInstanceOf(AuthFailure.AuthFailure)
        expect(failure.reason).toBe("wrong_token_type")
        expect(failure.message).toBe(`Token is not an access token (typ ${JSON.stringify(typ)})`)
        expect(failure.isCredentialProblem).toBe(true)
        expect((yield* Effect.flip(verifier.verifyClaims(token))).reason).toBe("wrong_token_type")
        // Refusals are not remembered as anything else: the same token is refused again.
        expect((yield* Effect.flip(verifier.verify(token))).reason).toBe("wrong_token_type")
        expect(verifier.cached(token)).toBeUndefined()
      }
      // A typ that is not a string at all.
      const numeric = yield* Effect.flip(verifier.verify(yield* idp.sign({ sub: "a", typ: 1 })))
      expect(numeric).toMatchObject({ reason: "wrong_token_type", message: "Token is not an access token (typ 1)" })
    })))

  it.live("a JOSE header typ other than JWT or at+jwt (logout+jwt, dpop+jwt, id_token+jwt) is refused", () =>
    scoped(Effect.gen(function*() {
      const { idp, verifier } = yield* setup
      for (const headerType of ["logout+jwt", "dpop+jwt", "secevent+jwt", "id_token+jwt"]) {
        const token = yield* idp.sign({ sub: "a", typ: "Bearer" }, { headerType })
        const failure = yield* Effect.flip(verifier.verify(token))
        expect(failure).toMatchObject({
          reason: "wrong_token_type",
          message: `Token is not an access token (header typ ${JSON.stringify(headerType)})`
        })
      }
    })))

  it.live("the type is checked after the signature: a forged ID token is a bad signature, not a type error", () =>
    scoped(Effect.gen(function*() {
      const { idp, verifier } = yield* setup
      const stranger = yield* TestIdp.makeKey(idp.keys.current[0]!.kid)
      const forged = yield* idp.sign({ sub: "a", typ: "ID" }, { key: stranger })
      expect((yield* Effect.flip(verifier.verify(forged))).reason).toBe("bad_signature")
    })))
})

describe("token type over HTTP", () => {
  const ServerLive = ServiceKit.serveTest(AuthApi, { service: { name: "auth-test", version: "0.0.0" }, port: 0 }).pipe(
    Layer.provide([ProtectedLive, MaybeLive]),
    Layer.provide([Authentication.layer, Authentication.layerOptional]),
    Layer.provide(Layer.unwrapEffect(Effect.map(TestIdp.Idp, (idp) =>
      TokenVerifier.layerWith(config(idp.issuer, [TestIdp.audience]))))),
    Layer.provideMerge(TestIdp.layer)
  )

  layer(ServerLive, { excludeTestServices: true })("middleware", (it) => {
    it.effect("an ID token is 401 on protected and on optional routes, with the reason in the challenge", () =>
      Effect.gen(function*() {
        const idp = yield* TestIdp.Idp
        const client = yield* HttpClient.HttpClient
        const idToken = yield* idp.sign({ sub: "a", typ: "ID" })
        for (const path of ["/me", "/maybe"]) {
          const response = yield* client.execute(HttpClientRequest.get(path).pipe(HttpClientRequest.bearerToken(idToken)))
          expect(response.status).toBe(401)
          // The challenge drops the quotes of the message (RFC 6750 quoted-string).
          expect(response.headers["www-authenticate"]).toContain("error_description=\"Token is not an access token (typ ID)\"")
        }
        const access = yield* idp.sign({ sub: "a", typ: "Bearer" })
        const ok = yield* client.execute(HttpClientRequest.get("/me").pipe(HttpClientRequest.bearerToken(access)))
        expect(ok.status).toBe(200)
      }))
  })
})

describe("no audience configured", () => {
  const capture = () => {
    const lines: Array<{ level: LogLevel.LogLevel; message: string }> = []
    const logger = Logger.make(({ logLevel, message }) => {
      lines.push({ level: logLevel, message: (Array.isArray(message) ? message : [message]).map(String).join(" ") })
    })
    return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
  }

  it.live("the verifier logs a warning at start naming PLATFORM_OIDC_AUDIENCE", () =>
    Effect.gen(function*() {
      const idp = yield* TestIdp.make
      const unset = capture()
      yield* TokenVerifier.make(config(idp.issuer, [])).pipe(Effect.provide(unset.layer))
      const warnings = unset.lines.filter((l) => l.level === LogLevel.Warning)
      expect(warnings).toHaveLength(1)
      expect(warnings[0]!.message).toContain("PLATFORM_OIDC_AUDIENCE")
      expect(warnings[0]!.message).toContain("any audience")

      const set = capture()
      yield* TokenVerifier.make(config(idp.issuer, ["rec-platform"])).pipe(Effect.provide(set.layer))
      expect(set.lines.filter((l) => l.level === LogLevel.Warning)).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici)))

  it.live("a service configured from the environment without PLATFORM_OIDC_AUDIENCE warns when its verifier is built", () =>
    Effect.gen(function*() {
      const idp = yield* TestIdp.make
      const unset = capture()
      const env = (audience?: string) =>
        Layer.setConfigProvider(ConfigProvider.fromJson({
          PLATFORM_OIDC_BASE_URL: idp.issuer,
          ...(audience === undefined ? {} : { PLATFORM_OIDC_AUDIENCE: audience })
        }))
      yield* Layer.build(TokenVerifier.layer.pipe(Layer.provide(env()), Layer.provide(unset.layer)))
      expect(unset.lines.some((l) => l.level === LogLevel.Warning && l.message.includes("PLATFORM_OIDC_AUDIENCE"))).toBe(true)
      const set = capture()
      const verifier = yield* Layer.build(TokenVerifier.layer.pipe(Layer.provide(env("rec-platform")), Layer.provide(set.layer)))
      expect(set.lines.filter((l) => l.level === LogLevel.Warning)).toEqual([])
      // And that verifier does check the audience.
      const foreign = yield* idp.sign({ sub: "a" }, { audience: "another-client" })
      const failure = yield* Effect.flip(TokenVerifier.TokenVerifier.pipe(
        Effect.flatMap((v) => v.verify(foreign)),
        Effect.provide(verifier)
      ))
      expect(failure.reason).toBe("wrong_audience")
    }).pipe(Effect.scoped))
})
