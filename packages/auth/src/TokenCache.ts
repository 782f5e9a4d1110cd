/**
 * Verified tokens, remembered by `TokenVerifier`. Services see the same token many times while it
 * is valid; checking its RS256/ES256 signature each time is the largest cost of an authenticated
 * request (tens of microseconds), the lookup here about one.
 *
 * - **Key.** The SHA-256 of the token: the token itself is not kept as a key.
 * - **Lifetime.** Until the token's `exp` (never past it, whatever the clock tolerance) and at
 *   most `ttl`. Only successful verifications are remembered.
 * - **Bound.** At most `maxSize` entries, the least recently used go first.
 * - **Key rotation.** Each entry records the `kid` that verified it and the key set it was
 *   verified against. When the verifier fetches the key set again, an entry whose key is no
 *   longer published is dropped (its token fails as `unknown_key` from then on), and an entry of a
 *   token without `kid` is verified again. While a refresh of the key set is due (older than
 *   `jwksMaxAge`), hits are not served: the next verification fetches the keys.
 */
import { ExpiringLru } from "@rec/platform"
import * as Duration from "effect/Duration"
import { hash } from "node:crypto"

export interface TokenCacheOptions {
  /** Most tokens remembered; 0 turns the cache off. */
  readonly maxSize: number
  /** Longest time a token is remembered (and so trusted without checking its key again); 0: off. */
  readonly ttl: Duration.DurationInput
}

export const defaults: TokenCacheOptions = { maxSize: 10_000, ttl: Duration.seconds(60) }

/** The cache key of a token. */
export const keyOf = (token: string): string => hash("sha256", token, "base64url")

export interface Entry<A> {
  readonly value: A
  readonly expiresAt: number
  /** The `kid` of the key that verified the token (undefined: the token named none). */
  readonly kid: string | undefined
  /** The key set it was verified against (`TokenCache.generation` at the time). */
  generation: number
}

export class TokenCache<A> {
  private readonly entries: ExpiringLru.ExpiringLru<Entry<A>>
  private readonly ttlMillis: number
  readonly enabled: boolean

  constructor(
    readonly options: TokenCacheOptions,
    private readonly now: () => number
  ) {
    this.ttlMillis = Duration.toMillis(Duration.decode(options.ttl))
    this.enabled = options.maxSize > 0 && this.ttlMillis > 0
    this.entries = new ExpiringLru.ExpiringLru(options.maxSize, now)
  }

  get size(): number {
    return this.entries.size
  }

  /**
   * The entry of `key` if it has not expired and its key is still valid for the key set
   * `generation` (`hasKid` tells whether a `kid` is published in it).
   */
  get(key: string, generation: number, hasKid: (kid: string) => boolean): A | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    if (entry.generation !== generation) {
      if (entry.kid === undefined || !hasKid(entry.kid)) {
        this.entries.delete(key)
        return undefined
      }
      entry.generation = generation
    }
    return entry.value
  }

  /** Remembers a verified token whose `exp` (seconds) is given; not one without `exp`. */
  set(key: string, value: A, exp: unknown, kid: string | undefined, generation: number): void {
    if (!this.enabled || typeof exp !== "number") return
    const now = this.now()
    const expiresAt = Math.min(exp * 1000, now + this.ttlMillis)
    if (expiresAt <= now) return
    this.entries.set(key, { value, expiresAt, kid, generation })
  }

  clear(): void {
    this.entries.clear()
  }
}
