import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { TokenVerifier } from "@rec/auth"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as TestIdp from "./fixtures/TestIdp.js"

/** A verifier on the test clock, set to the wall clock so the tokens' exp/iat make sense. */
const setup = (options?: { readonly explicitJwks?: boolean }) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(Date.now())
    const idp = yield* TestIdp.make
    const verifier = yield* TokenVerifier.make({
      issuer: idp.issuer,
      jwksUri: options?.explicitJwks === true
        ? Option.some(`${idp.issuer}/protocol/openid-connect/certs`)
        : Option.none(),
      audience: [TestIdp.audience],
      algorithms: ["RS256"],
      clockTolerance: Duration.seconds(30),
      jwtHeaderName: "x-auth-request-access-token"
    })
    return { idp, verifier }
  })

const scoped = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))

describe("JWKS caching, rotation and rate limiting", () => {
  it.effect("an unknown kid is refetched at most once per cooldown, then accepted after rotation", () =>
    scoped(Effect.gen(function*() {
      const { idp, verifier } = yield* setup()
      const first = yield* verifier.verify(yield* idp.sign({ sub: "alice" }))
      expect(first.id).toBe("alice")
      expect(idp.counters).toMatchObject({ discovery: 1, jwks: 1 })

      // The IdP starts signing with key-2 before publishing it.
      const key2 = yield* TestIdp.makeKey("key-2")
      const rotated = yield* idp.sign({ sub: "bob" }, { key: key2 })
      const unknown = yield* Effect.flip(verifier.verify(rotated))
      expect(unknown.reason).toBe("unknown_key")
      // A flood of tokens with unknown kids within the cooldown: no further fetch.
      for (let i = 0; i < 25; i++) {
        const forged = yield* idp.sign({ sub: "mallory" }, { key: key2, kid: `made-up-${i}` })
        expect((yield* Effect.flip(verifier.verify(forged))).reason).toBe("unknown_key")
      }
      expect(idp.counters.jwks).toBe(1)

      // Key rotation: the IdP publishes key-2; after the cooldown one refetch picks it up.
      idp.keys.current = [idp.keys.current[0], key2]
      yield* TestClock.adjust("31 seconds")
      expect((yield* verifier.verify(rotated)).id).toBe("bob")
      expect(idp.counters.jwks).toBe(2)
      // Old and new keys both work now, without fetching again; discovery was done once.
      expect((yield* verifier.verify(yield* idp.sign({ sub: "carol" }))).id).toBe("carol")
      expect(idp.counters).toMatchObject({ discovery: 1, jwks: 2 })

      // Still rate-limited after the refetch.
      const stray = yield* idp.sign({ sub: "x" }, { key: key2, kid: "another" })
      yield* Effect.flip(verifier.verify(stray))
      yield* Effect.flip(verifier.verify(stray))
      expect(idp.counters.jwks).toBe(2)
    })))

  it.effect("concurrent first requests share one key fetch", () =>
    scoped(Effect.gen(function*() {
      const { idp, verifier } = yield* setup()
      const tokens = yield* Effect.forEach(Array.from({ length: 20 }, (_, i) => i), (i) => idp.sign({ sub: `u${i}` }))
      const subjects = yield* Effect.forEach(tokens, (t) => verifier.verify(t), { concurrency: "unbounded" })
      expect(subjects.map((s) => s.id)).toEqual(tokens.map((_, i) => `u${i}`))
      expect(idp.counters).toMatchObject({ discovery: 1, jwks: 1 })
    })))

  it.effect("keys are refreshed after ten minutes; a removed key stops working", () =>
    scoped(Effect.gen(function*() {
      const { idp, verifier } = yield* setup()
      const old = idp.keys.current[0]
      yield* verifier.verify(yield* idp.sign({}))
      const key2 = yield* TestIdp.makeKey("key-2")
      idp.keys.current = [key2]
      // Within the cache age the old key is still trusted.
      yield* TestClock.adjust("5 minutes")
      // Tokens are signed on the wall clock: give them a lifetime beyond the simulated minutes.
      const signedWithOld = yield* idp.sign({}, { key: old, expiresIn: 3600 })
      yield* verifier.verify(signedWithOld)
      expect(idp.counters.jwks).toBe(1)
      yield* TestClock.adjust("6 minutes")
      const signedLater = yield* idp.sign({}, { key: old, expiresIn: 3600 })
      expect((yield* Effect.flip(verifier.verify(signedLater))).reason).toBe("unknown_key")
      expect(idp.counters.jwks).toBe(2)
      expect((yield* verifier.verify(yield* idp.sign({ sub: "new" }, { key: key2, expiresIn: 3600 }))).id).toBe("new")
    })))

  it.effect("an explicit PLATFORM_OIDC_JWKS_URI skips discovery", () =>
    scoped(Effect.gen(function*() {
      const { idp, verifier } = yield* setup({ explicitJwks: true })
      yield* verifier.verify(yield* idp.sign({}))
      expect(idp.counters).toMatchObject({ discovery: 0, jwks: 1 })
    })))

  it.effect("expiry and not-before follow the clock, with the tolerance", () =>
    scoped(Effect.gen(function*() {
      const { idp, verifier } = yield* setup()
      const token = yield* idp.sign({}, { expiresIn: 60, notBefore: 45 })
      expect((yield* Effect.flip(verifier.verify(token))).reason).toBe("not_yet_valid")
      yield* TestClock.adjust("20 seconds")
      yield* verifier.verify(token)
      yield* TestClock.adjust("60 seconds")
      yield* verifier.verify(token)
      yield* TestClock.adjust("15 seconds")
      expect((yield* Effect.flip(verifier.verify(token))).reason).toBe("expired")
    })))
})
