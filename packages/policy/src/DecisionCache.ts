/**
 * The decision cache: an LRU map with a time-to-live per entry.
 *
 * **Key.** A decision depends only on the package and the input, so the key is made of the
 * package and the *stable* part of the input, serialised with sorted keys (the subject as a
 * SHA-256 digest). Left out:
 * - the parts of a token that change with every token of the same subject: `exp`, `iat`, `nbf`,
 *   `jti`, `auth_time`, the session ids and hashes (`volatileClaims`); the raw token itself is
 *   never part of an input;
 * - the per-request environment fields `request_id`, `timestamp`, `trace_id`, `span_id`
 *   (`volatileEnvironment`).
 * A new token of the same user with the same groups, scopes and organizations therefore hits the
 * entry its previous token created, and retried requests hit regardless of their request id.
 *
 * The cache is cleared whenever a new policy set is swapped in, so it never answers with the
 * rules of a replaced set.
 */
import { ExpiringLru } from "@rec/platform"
import { createHash } from "node:crypto"

export const volatileClaims: ReadonlySet<string> = new Set([
  "exp",
  "iat",
  "nbf",
  "jti",
  "auth_time",
  "sid",
  "session_state",
  "nonce",
  "at_hash",
  "c_hash",
  "uti"
])

export const volatileEnvironment: ReadonlySet<string> = new Set(["request_id", "timestamp", "trace_id", "span_id"])

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const hasOwn = Object.prototype.hasOwnProperty

/** `{k: v}` with sorted keys, members rendered by `member`; `undefined` members are skipped. */
const sortedObject = (
  object: Record<string, unknown>,
  member: (key: string, value: unknown) => string,
  skip?: ReadonlySet<string>
): string => {
  const parts: Array<string> = []
  for (const key of Object.keys(object).sort()) {
    const value = object[key]
    if (value === undefined || (skip !== undefined && skip.has(key))) continue
    parts.push(JSON.stringify(key) + ":" + member(key, value))
  }
  return "{" + parts.join(",") + "}"
}

const stableMember = (_: string, value: unknown): string => stableStringify(value)

/**
 * `stableStringify` of a record, without sorting when its keys already come in sorted order
 * (records of a few keys mostly do) and without intermediate arrays: the members are appended to
 * one string as the keys are visited. At the first key out of order it starts again with
 * `sortedObject`.
 */
const stableRecord = (object: Record<string, unknown>, skip?: ReadonlySet<string>): string => {
  let out = "{"
  let previous = ""
  for (const key in object) {
    // An inherited enumerable key (a polluted prototype) or a key out of order: sort.
    if (!hasOwn.call(object, key) || key < previous) return sortedObject(object, stableMember, skip)
    previous = key
    const value = object[key]
    if (value === undefined || (skip !== undefined && skip.has(key))) continue
    // `out` is longer than "{" once it holds a member.
    out += (out.length === 1 ? "" : ",") + JSON.stringify(key) + ":" + stableStringify(value)
  }
  return out + "}"
}

/** A record whose keys are known in advance: its possible keys, sorted, and their JSON names. */
interface Shape {
  readonly names: ReadonlyArray<string>
  readonly prefixes: ReadonlyArray<string>
}

const shape = (...names: ReadonlyArray<string>): Shape => {
  const sorted = [...names].sort()
  return { names: sorted, prefixes: sorted.map((name) => JSON.stringify(name) + ":") }
}

/**
 * `stableStringify` of a value expected to be a record of `shape`: its members are written in the
 * shape's order, whatever the order of its keys; anything else goes to `stableStringify`.
 */
const shapedRecord = (value: unknown, { names, prefixes }: Shape): string => {
  if (!isRecord(value)) return stableStringify(value)
  for (const key in value) {
    if (!names.includes(key) || !hasOwn.call(value, key)) return stableRecord(value)
  }
  let out = "{"
  for (let i = 0; i < names.length; i++) {
    const member = value[names[i]]
    if (member !== undefined) out += (out.length === 1 ? "" : ",") + prefixes[i] + stableStringify(member)
  }
  return out + "}"
}

/** JSON with object keys sorted (`skip` names top-level keys to leave out). */
export const stableStringify = (value: unknown, skip?: ReadonlySet<string>): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
  if (Array.isArray(value)) {
    let out = "["
    for (let i = 0; i < value.length; i++) out += (i === 0 ? "" : ",") + stableStringify(value[i])
    return out + "]"
  }
  return stableRecord(value as Record<string, unknown>, skip)
}

const stableSubject = (subject: unknown): string =>
  isRecord(subject)
    ? sortedObject(subject, (key, v) => stableStringify(v, key === "claims" ? volatileClaims : undefined))
    : stableStringify(subject)

/**
 * Subjects are the large part of an input (every claim of the token) and the same object comes
 * back for every request with the same token (`PolicyInput.subjectOf` is memoised per verified
 * subject), so the digest of a subject is computed once per subject object.
 */
const subjectDigests = new WeakMap<object, string>()

const subjectDigest = (subject: unknown): string => {
  if (!isRecord(subject)) return stableStringify(subject)
  let digest = subjectDigests.get(subject)
  if (digest === undefined) {
    digest = createHash("sha256").update(stableSubject(subject)).digest("base64url")
    subjectDigests.set(subject, digest)
  }
  return digest
}

const subjectKey: ReadonlySet<string> = new Set(["subject"])

/** The top-level keys of a `PolicyInput`, the ones `keyOf` serialises without looking for others. */
const inputKeys: ReadonlyArray<string> = ["subject", "resource", "action", "environment"]
const resourceShape = shape("type", "id", "attributes")
const actionShape = shape("name", "context")

/**
 * The cache key of a decision: the package, the digest of the stable subject, and the rest of
 * the stable input (small: resource, action, environment) as JSON with sorted keys.
 *
 * An input of the `PolicyInput` shape (no top-level keys but subject, resource, action and
 * environment; resource and action with their own keys only) is written in the sorted order of
 * those names directly, without collecting or sorting keys; the free-form records (attributes,
 * context, environment) are written as their keys are visited, sorted only when those come out
 * of order. The key is the same string as the sorted JSON of any other input
 * (`test/DecisionCache.test.ts` checks it against that on generated inputs), for a fraction of
 * the work and garbage (docs/performance.md, "Policy service").
 */
export const keyOf = (pkg: string, input: unknown): string => {
  if (!isRecord(input)) return `${pkg}\u0000${stableStringify(input)}`
  for (const key in input) {
    if (!inputKeys.includes(key) || !hasOwn.call(input, key)) return genericKeyOf(pkg, input)
  }
  let rest = "{"
  if (input.action !== undefined) rest += `"action":` + shapedRecord(input.action, actionShape)
  if (input.environment !== undefined) {
    rest += (rest.length === 1 ? "" : ",") + `"environment":` + stableStringify(input.environment, volatileEnvironment)
  }
  if (input.resource !== undefined) {
    rest += (rest.length === 1 ? "" : ",") + `"resource":` + shapedRecord(input.resource, resourceShape)
  }
  return `${pkg}\u0000${subjectDigest(input.subject)}\u0000${rest}}`
}

/** `keyOf` for an input with other top-level keys: every key sorted. */
const genericKeyOf = (pkg: string, input: Record<string, unknown>): string => {
  const rest = sortedObject(
    input,
    (key, v) => stableStringify(v, key === "environment" ? volatileEnvironment : undefined),
    subjectKey
  )
  return `${pkg}\u0000${subjectDigest(input.subject)}\u0000${rest}`
}

export interface CacheOptions {
  readonly enabled: boolean
  readonly maxSize: number
  readonly ttlMillis: number
}

interface Entry<A> {
  readonly value: A
  readonly expiresAt: number
}

export interface Stats {
  readonly hits: number
  readonly misses: number
  readonly size: number
}

/** LRU + TTL with hit and miss counts. Synchronous on purpose: it sits on the hot path of every decision. */
export class LruTtlCache<A> {
  private readonly entries: ExpiringLru.ExpiringLru<Entry<A>>
  private hits = 0
  private misses = 0

  constructor(
    readonly options: CacheOptions,
    private readonly now: () => number = Date.now
  ) {
    this.entries = new ExpiringLru.ExpiringLru(options.maxSize, now)
  }

  get enabled(): boolean {
    return this.options.enabled && this.options.maxSize > 0 && this.options.ttlMillis > 0
  }

  get(key: string): A | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) {
      this.misses++
      return undefined
    }
    this.hits++
    return entry.value
  }

  set(key: string, value: A): void {
    this.entries.set(key, { value, expiresAt: this.now() + this.options.ttlMillis })
  }

  clear(): void {
    this.entries.clear()
  }

  stats(): Stats {
    return { hits: this.hits, misses: this.misses, size: this.entries.size }
  }
}
