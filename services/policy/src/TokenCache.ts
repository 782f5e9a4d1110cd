/**
 * Verified tokens, remembered. Services call the policy service with the same token many times
 * while it is valid; verifying an RS256 signature each time is the largest cost of a cached
 * decision. Entries are keyed by the SHA-256 of the token (the token itself is not kept as a
 * key), live until the token's `exp` and at most `ttl` (so a key removed from the identity
 * provider's JWKS stops being honoured within `ttl`), and the map is bounded (LRU). Only
 * successful verifications are remembered.
 */
import { TokenVerifier } from "@rec/auth"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createHash } from "node:crypto"
import type { Subject } from "@rec/auth/Subject"

export interface TokenCacheOptions {
  readonly maxSize: number
  readonly ttl: Duration.Duration
}

export const wrap = (
  verifier: TokenVerifier.TokenVerifier,
  options: TokenCacheOptions,
  now: () => number = Date.now
): TokenVerifier.TokenVerifier => {
  const ttl = Duration.toMillis(options.ttl)
  if (options.maxSize === 0 || ttl === 0) return verifier
  const entries = new Map<string, { readonly subject: Subject; readonly expiresAt: number }>()
  const keyOf = (token: string) => createHash("sha256").update(token).digest("base64url")

  const remember = (key: string, subject: Subject) => {
    const exp = subject.claims.exp
    const expiresAt = Math.min(typeof exp === "number" ? exp * 1000 : 0, now() + ttl)
    if (expiresAt <= now()) return
    entries.delete(key)
    entries.set(key, { subject, expiresAt })
    while (entries.size > options.maxSize) {
      const oldest = entries.keys().next()
      if (oldest.done === true) break
      entries.delete(oldest.value)
    }
  }

  return {
    config: verifier.config,
    verifyClaims: verifier.verifyClaims,
    verify: (token) =>
      Effect.suspend(() => {
        const key = keyOf(token)
        const hit = entries.get(key)
        if (hit !== undefined) {
          if (hit.expiresAt > now()) return Effect.succeed(hit.subject)
          entries.delete(key)
        }
        return Effect.tap(verifier.verify(token), (subject) => Effect.sync(() => remember(key, subject)))
      })
  }
}

/** Wraps the `TokenVerifier` below with the cache. */
export const layer = (options: TokenCacheOptions): Layer.Layer<TokenVerifier.TokenVerifier, never, TokenVerifier.TokenVerifier> =>
  Layer.effect(TokenVerifier.TokenVerifier, Effect.map(TokenVerifier.TokenVerifier, (v) => wrap(v, options)))
