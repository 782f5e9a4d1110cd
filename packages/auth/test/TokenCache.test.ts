import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { AuthConfig, TokenCache, TokenVerifier } from "@rec/auth"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as TestIdp from "./fixtures/TestIdp.js"

/** A verifier on the test clock (set to the wall clock, which signs the tokens). */
const setup = (cache?: TokenCache.TokenCacheOptions) =>
  Effect.gen(function*() {
    const idp = yield* TestIdp.make
    // After the key pair is made (seconds on a loaded machine), so that the test clock is close
    // to the wall clock the tokens are signed with.
    yield* TestClock.setTime(Date.now())
    const verifier = yield* TokenVerifier.make({
      issuer: idp.issuer,
      jwksUri: Option.none(),
      audience: [TestIdp.audience],
      algorithms: ["RS256"],
      clockTolerance: Duration.seconds(30),
      jwtHeaderName: "x-auth-request-access-token",
      cache
    })
    return { idp, verifier }
  })

const scoped = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))

describe("verified token cache", () => {
  it("keys are the SHA-256 of the token, not the token", () => {
    const key = TokenCache.keyOf("header.payload.signature")
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(key).not.toContain("payload")
    expect(TokenCache.keyOf("header.payload.signature")).toBe(key)
  })

  it.effect("a verified token is remembered: the same subject, synchronously", () =>
    scoped(Effect.gen(function*() {
      const { idp, verifier } = yield* setup()
      const token = yield* idp.sign({ sub: "alice" })
      expect(verifier.cached(token)).toBeUndefined()
      const subject = yield* verifier.verify(token)
      expect(verifier.cached(token)).toBe(subject)
      expect(yield* verifier.verify(token)).toBe(subject)
      // Failures are never remembered.
      const forged = token.slice(0, -4) + "AAAA"
      yield* Effect.flip(verifier.verify(forged))
      expect(verifier.cached(forged)).toBeUndefined()
    })))

  it.effect("never past exp (whatever the clock tolerance), at most the TTL", () =>
    scoped(Effect.gen(function*() {
      const { idp, verifier } = yield* setup({ maxSize: 100, ttl: "20 seconds" })
      const short = yield* idp.sign({ sub: "short" }, { expiresIn: 10 })
      const long = yield* idp.sign({ sub: "long" }, { expiresIn: 3600 })
      yield* verifier.verify(short)
      yield* verifier.verify(long)
      // 5 s of margin over exp for the time between setting the test clock and signing.
      yield* TestClock.adjust("15 seconds")
      // Past exp: not served from the cache, though the tolerance still accepts the token.
      expect(verifier.cached(short)).toBeUndefined()
      expect((yield* verifier.verify(short)).id).toBe("short")
      expect(verifier.cached(short)).toBeUndefined()
      expect(verifier.cached(long)).toBeDefined()
      yield* TestClock.adjust("6 seconds")
      expect(verifier.cached(long)).toBeUndefined()
    })))

  it.effect("bounded: the least recently used token goes first; size 0 turns the cache off", () =>
    scoped(Effect.gen(function*() {
      const { idp, verifier } = yield* setup({ maxSize: 2, ttl: "60 seconds" })
      const [a, b, c] = yield* Effect.forEach(["a", "b", "c"], (sub) => idp.sign({ sub }))
      yield* verifier.verify(a)
      yield* verifier.verify(b)
      expect(verifier.cached(a)).toBeDefined() // a is now the most recently used
      yield* verifier.verify(c)
      expect([verifier.cached(a), verifier.cached(b), verifier.cached(c)].map((s) => s?.id)).toEqual(["a", undefined, "c"])

      const off = yield* setup({ maxSize: 0, ttl: "60 seconds" })
      const token = yield* off.idp.sign({})
      yield* off.verifier.verify(token)
      expect(off.verifier.cached(token)).toBeUndefined()
    })))

  it.effect("key rotation: a token whose key left the key set is not served from the cache", () =>
    scoped(Effect.gen(function*() {
      const { idp, verifier } = yield* setup()
      const old = yield* idp.sign({ sub: "alice" }, { expiresIn: 3600 })
      yield* verifier.verify(old)
      // The IdP replaces key-1 by key-2; a token signed with key-2 makes the verifier refetch
      // (once the cooldown since the last fetch has passed).
      const key2 = yield* TestIdp.makeKey("key-2")
      idp.keys.current = [key2]
      yield* TestClock.adjust("31 seconds")
      expect(verifier.cached(old)?.id).toBe("alice")
      const fresh = yield* idp.sign({ sub: "bob" }, { key: key2, expiresIn: 3600 })
      expect((yield* verifier.verify(fresh)).id).toBe("bob")
      expect(idp.counters.jwks).toBe(2)
      expect(verifier.cached(old)).toBeUndefined()
      expect((yield* Effect.flip(verifier.verify(old))).reason).toBe("unknown_key")
      expect(verifier.cached(fresh)?.id).toBe("bob")
    })))

  it.effect("when the key set is due for a refresh, hits wait for it; a still published key keeps its tokens", () =>
    scoped(Effect.gen(function*() {
      const { idp, verifier } = yield* setup({ maxSize: 100, ttl: "1 hour" })
      const token = yield* idp.sign({ sub: "alice" }, { expiresIn: 7200 })
      yield* verifier.verify(token)
      yield* TestClock.adjust("11 minutes")
      expect(verifier.cached(token)).toBeUndefined()
      expect((yield* verifier.verify(token)).id).toBe("alice")
      expect(idp.counters.jwks).toBe(2)
      expect(verifier.cached(token)?.id).toBe("alice")
    })))

  it.effect("configured with PLATFORM_OIDC_TOKEN_CACHE_SIZE and _TTL", () =>
    Effect.gen(function*() {
      const env = new Map([
        ["PLATFORM_OIDC_BASE_URL", "http://idp.example"],
        ["PLATFORM_OIDC_TOKEN_CACHE_SIZE", "5"],
        ["PLATFORM_OIDC_TOKEN_CACHE_TTL", "30 seconds"]
      ])
      const config = yield* AuthConfig.verifier.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(env)))
      expect(config.cache?.maxSize).toBe(5)
      expect(Duration.toSeconds(Duration.decode(config.cache!.ttl))).toBe(30)
      const defaults = yield* AuthConfig.verifier.pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["PLATFORM_OIDC_BASE_URL", "http://idp.example"]])))
      )
      expect(defaults.cache?.maxSize).toBe(10_000)
    }))
})
