/**
 * Rate limits per client, applied by the kit before a request reaches its route: over the limit
 * the answer is 429 `{detail}` with `Retry-After` (seconds) and nothing else runs.
 *
 * A rule names the requests it counts (method and path: exact, or a prefix ending in `*`), how
 * many it admits per window and where it counts them:
 *
 * - `memory` (default): a GCRA token bucket per client in this process: cheap enough for the
 *   hottest path (the policy service's decisions), at the price of counting per replica;
 * - `shared`: a fixed-window counter per client in PostgreSQL (`SharedStore`, one upsert per
 *   request), so every replica on one database enforces one limit: for write routes, which touch
 *   the database anyway.
 *
 * The client is the caller's credential, not its address: the `azp`/`client_id`/`sub` of a bearer
 * token (read without verification, only to pick the bucket: a forged token is refused by
 * authentication right after, and it only ever lands in a bucket of its own), else the address.
 *
 * ```ts
 * ServiceKit.serve(Api, { ..., rateLimits: [
 *   { name: "authorize", method: "POST", path: "/authorize", limit: 1000, window: "1 second" },
 *   { name: "writes", method: "POST", path: "/api/*", limit: 60, window: "1 minute", store: "shared" }
 * ] })
 * ```
 *
 * Limits are configurable per rule with `RATE_LIMIT_<NAME>` = `<requests>/<window>` (`100/1s`,
 * `60/1m`, `off`), read at start (`overrides`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

export interface Rule {
  /** Names the rule in logs and in its `RATE_LIMIT_<NAME>` override. */
  readonly name: string
  /** Any method when absent. */
  readonly method?: string | undefined
  /** An exact path, or a prefix ending in `*` (`/api/*`). */
  readonly path: string
  /** Requests admitted per window per client. */
  readonly limit: number
  readonly window: Duration.DurationInput
  /** `memory` (per process, default) or `shared` (PostgreSQL, every replica). */
  readonly store?: "memory" | "shared" | undefined
}

export interface Outcome {
  readonly allowed: boolean
  /** When a refused client may try again, in milliseconds. */
  readonly retryAfterMs: number
}

/** The counter behind `shared` rules. */
export interface Store {
  readonly take: (key: string, limit: number, windowMs: number) => Effect.Effect<Outcome>
}

export class SharedStore extends Context.Tag("@rec/platform/RateLimit/SharedStore")<SharedStore, Store>() {}

/** A compiled rule, as the request handler applies it. */
export interface Limiter {
  readonly rule: Rule
  readonly windowMs: number
  readonly matches: (method: string, path: string) => boolean
}

export const compile = (rule: Rule): Limiter => {
  const prefix = rule.path.endsWith("*") ? rule.path.slice(0, -1) : undefined
  const method = rule.method?.toUpperCase()
  return {
    rule,
    windowMs: Duration.toMillis(Duration.decode(rule.window)),
    matches: (m, path) =>
      (method === undefined || method === m) && (prefix === undefined ? path === rule.path : path.startsWith(prefix))
  }
}

/** `100/1s`, `60/1m`, `5/10 minutes`; `off` disables the rule; anything else is an error. */
export const parseOverride = (text: string): { readonly limit: number; readonly window: Duration.Duration } | "off" => {
  const trimmed = text.trim().toLowerCase()
  if (trimmed === "off") return "off"
  const match = /^(\d+)\s*\/\s*(\d*)\s*(ms|s|m|h|millis|seconds?|minutes?|hours?)$/.exec(trimmed)
  if (match === null) throw new Error(`"${text}" is not a rate limit: write <requests>/<window>, such as 100/1s or 60/1m, or off`)
  const amount = match[2] === "" ? 1 : Number(match[2])
  const unit = match[3]!
  const ms = unit.startsWith("ms") || unit.startsWith("milli")
    ? amount
    : unit === "s" || unit.startsWith("second")
    ? amount * 1000
    : unit === "m" || unit.startsWith("minute")
    ? amount * 60_000
    : amount * 3_600_000
  const limit = Number(match[1])
  if (limit < 1 || ms < 1) throw new Error(`"${text}" admits nothing: use off to disable a rule`)
  return { limit, window: Duration.millis(ms) }
}

/** The rules with `RATE_LIMIT_<NAME>` overrides from `env` applied. */
export const overrides = (rules: ReadonlyArray<Rule>, env: Readonly<Record<string, string | undefined>>): ReadonlyArray<Rule> =>
  rules.flatMap((rule) => {
    const value = env[envName(rule)]
    if (value === undefined || value.trim() === "") return [rule]
    const parsed = parseOverride(value)
    return parsed === "off" ? [] : [{ ...rule, limit: parsed.limit, window: parsed.window }]
  })

export const envName = (rule: Rule): string => `RATE_LIMIT_${rule.name.toUpperCase().replace(/[^A-Z0-9]+/g, "_")}`

/**
 * GCRA (a token bucket without a timer): per key, the theoretical arrival time of the next
 * request. Admits `limit` requests in a burst and then one per `window / limit`. At most
 * `maxKeys` clients are remembered; the longest idle are dropped first (a dropped client starts
 * with a full bucket, which only ever errs towards admitting).
 */
export class MemoryStore {
  private readonly tat = new Map<string, number>()

  constructor(private readonly maxKeys = 100_000) {}

  take(key: string, limit: number, windowMs: number, now = Date.now()): Outcome {
    const interval = windowMs / limit
    const previous = this.tat.get(key)
    const tat = previous === undefined || previous < now ? now : previous
    const allowAt = tat + interval - windowMs
    if (now < allowAt) return { allowed: false, retryAfterMs: Math.ceil(allowAt - now) }
    // Re-inserted at the end: the map's order is least recently seen first.
    if (previous !== undefined) this.tat.delete(key)
    this.tat.set(key, tat + interval)
    if (this.tat.size > this.maxKeys) {
      const oldest = this.tat.keys().next()
      if (oldest.done !== true) this.tat.delete(oldest.value)
    }
    return { allowed: true, retryAfterMs: 0 }
  }

  get size(): number {
    return this.tat.size
  }
}

const tableFor = (schema: string) => `"${schema.replace(/"/g, "\"\"")}".rate_limit_counters`

/**
 * The shared store on the service's database: a fixed-window counter per (key, window) in
 * `<schema>.rate_limit_counters`, one `INSERT ... ON CONFLICT DO UPDATE ... RETURNING` per request
 * (atomic across replicas). The table is created when the layer starts; old windows are deleted
 * in the background, at most once a minute.
 */
export const sharedStoreLayer = (schema: string): Layer.Layer<SharedStore, never, SqlClient.SqlClient> =>
  Layer.effect(
    SharedStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const table = sql.unsafe(tableFor(schema))
      const create = Effect.gen(function*() {
        yield* sql`CREATE SCHEMA IF NOT EXISTS ${sql(schema)}`
        yield* sql`CREATE TABLE IF NOT EXISTS ${table} (
          key text NOT NULL,
          window_start bigint NOT NULL,
          hits integer NOT NULL,
          PRIMARY KEY (key, window_start)
        )`
      })
      // `IF NOT EXISTS` is not safe against itself: replicas starting together can both try to
      // create (a unique violation in pg_type or pg_namespace); the retry then finds it there.
      yield* create.pipe(Effect.retry({ times: 3 }), Effect.orDie)
      let lastSweep = 0
      const sweep = (now: number, windowMs: number) => {
        if (now - lastSweep < 60_000) return Effect.void
        lastSweep = now
        return sql`DELETE FROM ${table} WHERE window_start < ${now - 2 * Math.max(windowMs, 60_000)}`.pipe(
          Effect.ignore,
          Effect.forkDaemon,
          Effect.asVoid
        )
      }
      return {
        take: (key, limit, windowMs) =>
          Effect.gen(function*() {
            const now = Date.now()
            const windowStart = now - (now % windowMs)
            const rows = yield* sql<{ readonly hits: number }>`
              INSERT INTO ${table} (key, window_start, hits) VALUES (${key}, ${windowStart}, 1)
              ON CONFLICT (key, window_start) DO UPDATE SET hits = ${table}.hits + 1
              RETURNING hits`
            yield* sweep(now, windowMs)
            const hits = Number(rows[0]?.hits ?? 1)
            return hits <= limit ? { allowed: true, retryAfterMs: 0 } : { allowed: false, retryAfterMs: windowStart + windowMs - now }
          }).pipe(
            // A database that cannot count must not take the service down with it: admit, and say so.
            Effect.catchAllCause((cause) =>
              Effect.as(Effect.logWarning("rate limit counter unavailable; admitting the request", cause), {
                allowed: true,
                retryAfterMs: 0
              })
            )
          )
      } satisfies Store
    })
  )

const base64UrlJson = (segment: string): unknown => {
  try {
    return JSON.parse(Buffer.from(segment, "base64url").toString("utf8"))
  } catch {
    return undefined
  }
}

/**
 * Who is asking, for bucketing: the client of a bearer token (`azp`, `client_id`, else `sub`),
 * else the remote address. Unverified on purpose (see the module).
 */
export const clientKey = (
  headers: Readonly<Record<string, string | Array<string> | undefined>>,
  jwtHeaderName: string,
  remoteAddress: string | undefined
): string => {
  const fromHeader = headers[jwtHeaderName]
  const authorization = headers.authorization
  const raw = typeof fromHeader === "string" && fromHeader !== ""
    ? fromHeader.replace(/^bearer\s+/i, "")
    : typeof authorization === "string" && /^bearer\s+/i.test(authorization)
    ? authorization.replace(/^bearer\s+/i, "")
    : undefined
  if (raw !== undefined) {
    const payload = raw.split(".")[1]
    const claims = payload === undefined ? undefined : base64UrlJson(payload)
    if (typeof claims === "object" && claims !== null) {
      const c = claims as Record<string, unknown>
      const id = [c.azp, c.client_id, c.sub].find((v): v is string => typeof v === "string" && v !== "")
      // The subject too: one service's users are separate clients even when `azp` is the web app.
      if (id !== undefined) return typeof c.sub === "string" && c.sub !== id ? `token:${id}/${c.sub}` : `token:${id}`
    }
  }
  return `address:${remoteAddress ?? "unknown"}`
}
