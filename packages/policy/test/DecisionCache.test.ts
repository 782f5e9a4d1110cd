import { describe, expect, it } from "@effect/vitest"
import { DecisionCache } from "@rec/policy"
import * as FastCheck from "effect/FastCheck"
import { createHash } from "node:crypto"

/**
 * The key as the first implementation built it, the definition the fast one must match byte for
 * byte: the package, the SHA-256 of the subject as JSON with sorted keys (volatile claims left
 * out), and the rest of the input as JSON with sorted keys (volatile environment fields left out).
 */
const referenceKeyOf = (pkg: string, input: unknown): string => {
  const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
  const sorted = (object: Record<string, unknown>, member: (key: string, value: unknown) => string, skip?: ReadonlySet<string>) =>
    "{" + Object.keys(object).sort().filter((key) => object[key] !== undefined && !skip?.has(key))
      .map((key) => JSON.stringify(key) + ":" + member(key, object[key])).join(",") + "}"
  const stable = (value: unknown, skip?: ReadonlySet<string>): string => {
    if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
    if (Array.isArray(value)) return "[" + value.map((v) => stable(v)).join(",") + "]"
    return sorted(value as Record<string, unknown>, (_, v) => stable(v), skip)
  }
  if (!isRecord(input)) return `${pkg}\u0000${stable(input)}`
  const subject = input.subject
  const digest = isRecord(subject)
    ? createHash("sha256").update(
      sorted(subject, (key, v) => stable(v, key === "claims" ? DecisionCache.volatileClaims : undefined))
    ).digest("base64url")
    : stable(subject)
  const rest = sorted(
    input,
    (key, v) => stable(v, key === "environment" ? DecisionCache.volatileEnvironment : undefined),
    new Set(["subject"])
  )
  return `${pkg}\u0000${digest}\u0000${rest}`
}

/** A JSON object whose keys come in any order, some of them names the key treats specially. */
const record = (value: FastCheck.Arbitrary<unknown>): FastCheck.Arbitrary<Record<string, unknown>> =>
  FastCheck.dictionary(
    FastCheck.oneof(
      FastCheck.string({ maxLength: 6 }),
      FastCheck.constantFrom("exp", "request_id", "timestamp", "trace_id", "type", "id", "name", "10", "9", "a", "b")
    ),
    value,
    { maxKeys: 5 }
  )

const json = FastCheck.jsonValue({ maxDepth: 3 })

/** `PolicyInput`-like values and near misses: extra keys, missing parts, wrong types. */
const inputs: FastCheck.Arbitrary<unknown> = FastCheck.oneof(
  FastCheck.record({
    subject: FastCheck.oneof(
      FastCheck.constant(null),
      FastCheck.record({ id: FastCheck.string(), type: FastCheck.constantFrom("user", "service"), claims: record(json) })
    ),
    resource: FastCheck.oneof(
      FastCheck.record({ type: FastCheck.string(), id: FastCheck.string(), attributes: record(json) }, { requiredKeys: [] }),
      record(json),
      json
    ),
    action: FastCheck.oneof(
      FastCheck.record({ name: FastCheck.string(), context: record(json) }, { requiredKeys: [] }),
      record(json),
      json
    ),
    environment: FastCheck.oneof(record(json), json, FastCheck.constant(undefined)),
    extra: json
  }, { requiredKeys: ["subject", "resource", "action"] }).chain((input) => {
    // The same members in any insertion order.
    const entries = Object.entries(input)
    return FastCheck.shuffledSubarray(entries, { minLength: entries.length }).map(Object.fromEntries)
  }),
  json
)

const input = (overrides: { claims?: Record<string, unknown>; environment?: Record<string, unknown>; groups?: Array<string> } = {}) => ({
  subject: {
    id: "u-1",
    type: "user",
    groups: overrides.groups ?? ["viewers"],
    scopes: ["dataset.query"],
    organizations: [],
    claims: {
      sub: "u-1",
      email: "u@example.org",
      exp: 1_900_000_000,
      iat: 1_800_000_000,
      nbf: 1_800_000_000,
      jti: "a",
      auth_time: 1_799_999_000,
      sid: "s-1",
      ...overrides.claims
    }
  },
  resource: { type: "dataset", id: "meters", attributes: { access_level: "internal" } },
  action: { name: "read", context: {} },
  environment: { request_id: "r-1", timestamp: 1_800_000_001.5, trace_id: "t", region: "it", ...overrides.environment }
})

describe("DecisionCache.keyOf", () => {
  it("is the sorted JSON of the stable input, on generated inputs", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.string({ maxLength: 8 }), inputs, (pkg, input) => {
        expect(DecisionCache.keyOf(pkg, input)).toBe(referenceKeyOf(pkg, input))
      }),
      { numRuns: 5000 }
    )
    expect(DecisionCache.keyOf("p", input())).toBe(referenceKeyOf("p", input()))
  })

  it("ignores the volatile claims and environment fields", () => {
    const a = DecisionCache.keyOf("rec.dataset.access", input())
    const b = DecisionCache.keyOf(
      "rec.dataset.access",
      input({
        claims: { exp: 1_900_000_999, iat: 1_800_000_500, nbf: 1_800_000_500, jti: "b", auth_time: 1, sid: "s-2" },
        environment: { request_id: "r-2", timestamp: 1_800_000_777, trace_id: "u", span_id: "v" }
      })
    )
    expect(b).toBe(a)
  })

  it("changes with everything a policy could read", () => {
    const base = DecisionCache.keyOf("rec.dataset.access", input())
    expect(DecisionCache.keyOf("rec.dataset.row_filter", input())).not.toBe(base)
    expect(DecisionCache.keyOf("rec.dataset.access", input({ groups: ["admins"] }))).not.toBe(base)
    expect(DecisionCache.keyOf("rec.dataset.access", input({ claims: { email: "other@example.org" } }))).not.toBe(base)
    expect(DecisionCache.keyOf("rec.dataset.access", input({ environment: { region: "de" } }))).not.toBe(base)
    const other = { ...input(), resource: { type: "dataset", id: "meters", attributes: { access_level: "open" } } }
    expect(DecisionCache.keyOf("rec.dataset.access", other)).not.toBe(base)
  })

  it("does not depend on key order", () => {
    const a = { resource: { id: "x", type: "dataset", attributes: { b: 1, a: 2 } }, action: { name: "read", context: {} }, subject: null }
    const b = { subject: null, action: { context: {}, name: "read" }, resource: { attributes: { a: 2, b: 1 }, type: "dataset", id: "x" } }
    expect(DecisionCache.keyOf("p", a)).toBe(DecisionCache.keyOf("p", b))
  })

  it("keeps volatile names that are not claims or environment fields", () => {
    // An attribute called `exp` is data the policy may read, not a token timestamp.
    const a = { ...input(), resource: { type: "dataset", id: "x", attributes: { exp: 1 } } }
    const b = { ...input(), resource: { type: "dataset", id: "x", attributes: { exp: 2 } } }
    expect(DecisionCache.keyOf("p", a)).not.toBe(DecisionCache.keyOf("p", b))
  })
})

describe("DecisionCache.LruTtlCache", () => {
  it("counts hits and misses, expires entries after the TTL", () => {
    let now = 0
    const cache = new DecisionCache.LruTtlCache<string>({ enabled: true, maxSize: 10, ttlMillis: 1000 }, () => now)
    expect(cache.get("a")).toBeUndefined()
    cache.set("a", "A")
    expect(cache.get("a")).toBe("A")
    now = 999
    expect(cache.get("a")).toBe("A")
    now = 1000
    expect(cache.get("a")).toBeUndefined()
    expect(cache.stats()).toEqual({ hits: 2, misses: 2, size: 0 })
  })

  it("evicts the least recently used entry beyond the size limit", () => {
    const cache = new DecisionCache.LruTtlCache<number>({ enabled: true, maxSize: 2, ttlMillis: 60_000 })
    cache.set("a", 1)
    cache.set("b", 2)
    cache.get("a")
    cache.set("c", 3)
    expect(cache.get("b")).toBeUndefined()
    expect(cache.get("a")).toBe(1)
    expect(cache.get("c")).toBe(3)
    expect(cache.stats().size).toBe(2)
  })

  it("is disabled by a zero size or TTL", () => {
    expect(new DecisionCache.LruTtlCache({ enabled: true, maxSize: 0, ttlMillis: 1 }).enabled).toBe(false)
    expect(new DecisionCache.LruTtlCache({ enabled: true, maxSize: 1, ttlMillis: 0 }).enabled).toBe(false)
    expect(new DecisionCache.LruTtlCache({ enabled: false, maxSize: 1, ttlMillis: 1 }).enabled).toBe(false)
  })
})
