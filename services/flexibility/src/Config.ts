/**
 * Every environment variable of the flexibility service (README "Configuration"), with the
 * spec's defaults (spec 001 section 8). Read elsewhere, by name:
 *
 * - the database (`DATABASE_URL`, `DATABASE_POOL_*`, ...) by `@rec/db`; the schema here
 *   (`DB_SCHEMA`, the spec's name);
 * - tokens (`PLATFORM_OIDC_*`, `JWT_HEADER_NAME`) by `@rec/auth`; the spec's audience
 *   `svc-flexibility` is checked when `PLATFORM_OIDC_AUDIENCE` names it;
 * - the digital twin (`DIGITAL_TWIN_API_URL`, `DIGITAL_TWIN_TIMEOUT`, `DT_CLIENT_SCOPE`) by
 *   `@rec/digital-twin`;
 * - the broker (`PLATFORM_MQTT_*`) by `@rec/mqtt`, the pipeline-run topic (`PIPELINE_RUNS_TOPIC`,
 *   `MQTT_SHARED_GROUP`) by its `PipelineRuns`;
 * - policies (`PLATFORM_POLICIES_POLICIES_DIR`, `POLICY_*`) by `@rec/policy`;
 * - the server (`PORT`, `HOST`, `CORS_ORIGINS`, `LOG_*`, `OTEL_*`) by `@rec/platform`.
 */
import { AuthConfig } from "@rec/auth"
import { DatabaseConfig } from "@rec/db"
import { DigitalTwinClientConfig } from "@rec/digital-twin"
import { MqttConfig, PipelineRuns } from "@rec/mqtt"
import { PolicyConfig } from "@rec/policy"
import type { RateLimit } from "@rec/platform"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"

export const Service = { name: "flexibility", version: "0.1.0" } as const

/** design.md's port table and the spec's limits table. */
export const defaultPort = 8017

/**
 * Rate limits of the write routes, per client (a token's client and subject, else the address),
 * counted in the service's database so every replica on it enforces one budget (docs/decisions.md
 * "Rate limits across services"). Rules sharing a name share one budget and one override:
 * `RATE_LIMIT_COMMITMENTS` (commit, cancel, respond to a suggestion) and `RATE_LIMIT_SETTLE`
 * (an operator or a service settling a community's commitments one request each), `<requests>/<window>`
 * or `off`.
 */
export const rateLimits: ReadonlyArray<RateLimit.Rule> = [
  { name: "commitments", method: "POST", path: "/api/commitments", limit: 120, window: "1 minute", store: "shared" },
  { name: "commitments", method: "DELETE", path: "/api/commitments/*", limit: 120, window: "1 minute", store: "shared" },
  { name: "commitments", method: "POST", path: "/api/suggestions/*", limit: 120, window: "1 minute", store: "shared" },
  { name: "settle", method: "PATCH", path: "/api/commitments/*", limit: 6000, window: "1 minute", store: "shared" }
]

/** The policy package every route asks (`policies/flexibility`). */
export const policyPackage = "rec.flexibility.access"

const optionalScope = (name: string) =>
  Config.option(Config.string(name)).pipe(Config.map(Option.filter((s) => s.trim() !== "")))

const positiveInt = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 })
  )

export interface UpstreamSettings {
  readonly baseUrl: string
  /** Scopes asked for this service's token to that upstream (none: the client's defaults). */
  readonly scope: Option.Option<string>
  readonly timeout: Duration.Duration
}

const upstream = (url: string, defaultUrl: string, scope: string, timeout: string) =>
  Config.all({
    baseUrl: Config.nonEmptyString(url).pipe(Config.withDefault(defaultUrl)),
    scope: optionalScope(scope),
    timeout: Config.duration(timeout).pipe(Config.withDefault(Duration.seconds(10)))
  })

/** The nudging (notification) service: `NUDGING_API_URL` (port 8016), `NUDGING_SCOPE`. */
export const nudging: Config.Config<UpstreamSettings> = upstream(
  "NUDGING_API_URL",
  "http://localhost:8016",
  "NUDGING_SCOPE",
  "NUDGING_TIMEOUT"
)

/** The community registry: `REC_REGISTRY_URL` (port 8004), `REC_REGISTRY_SCOPE`. */
export const registry: Config.Config<UpstreamSettings> = upstream(
  "REC_REGISTRY_URL",
  "http://localhost:8004",
  "REC_REGISTRY_SCOPE",
  "REC_REGISTRY_TIMEOUT"
)

/** `DB_SCHEMA` (spec; default `flexibility`), else `@rec/db`'s `DATABASE_SCHEMA`. */
export const database: Config.Config<DatabaseConfig.DatabaseConfig> = Config.all({
  base: DatabaseConfig.fromEnv(Service.name),
  schema: Config.option(Config.string("DB_SCHEMA"))
}).pipe(
  Config.validate({
    message: "DB_SCHEMA must be a lower-case SQL identifier ([a-z_][a-z0-9_]*, at most 63 characters)",
    validation: ({ schema }) => Option.match(schema, { onNone: () => true, onSome: DatabaseConfig.isValidSchemaName })
  }),
  Config.map(({ base, schema }) => ({ ...base, schema: Option.getOrElse(schema, () => base.schema) }))
)

export interface Settings {
  /** DT settlement calls made at once during a settlement run. */
  readonly settlementConcurrency: number
  /** Nudges sent at once during an opportunity broadcast. */
  readonly broadcastConcurrency: number
  /** How long before a window the reminder scheduled on accept fires (reference A6.3: 15 minutes). */
  readonly reminderLead: Duration.Duration
  /** Most pre-window reminders scheduled in one call to the nudging service (its limit: 500). */
  readonly reminderBatchSize: number
  /** How long a new commitment's reminder waits for others to go in the same call (`ScheduledReminders`). */
  readonly reminderBatchLinger: Duration.Duration
  /** Most `commitment_settled` nudges sent in one call to the nudging service (its limit: 500). */
  readonly nudgeBatchSize: number
  /** How long a settled commitment's nudge waits for others to go in the same call (`SettledNudges`). */
  readonly nudgeBatchLinger: Duration.Duration
  /** Most commitment announcements handed to the MQTT client at once. */
  readonly announceBatchSize: number
  /** How long a new commitment's announcement waits for others to go with it (`Announcements`). */
  readonly announceBatchLinger: Duration.Duration
  /** Points of an accepted suggestion when neither the body nor the digital twin gives any (reference A4: 10). */
  readonly defaultRewardPoints: number
  /** Topic the accepted commitments are published on, `<prefix>/<user_id>`. */
  readonly committedTopic: string
}

export const settings: Config.Config<Settings> = Config.all({
  settlementConcurrency: positiveInt("FLEXIBILITY_SETTLEMENT_CONCURRENCY", 16),
  broadcastConcurrency: positiveInt("FLEXIBILITY_BROADCAST_CONCURRENCY", 8),
  reminderLead: Config.duration("FLEXIBILITY_REMINDER_LEAD").pipe(Config.withDefault(Duration.minutes(15))),
  reminderBatchSize: positiveInt("FLEXIBILITY_REMINDER_BATCH_SIZE", 500).pipe(
    Config.validate({ message: "FLEXIBILITY_REMINDER_BATCH_SIZE must be at most 500 (the nudging service's limit)", validation: (n) => n <= 500 })
  ),
  reminderBatchLinger: Config.duration("FLEXIBILITY_REMINDER_BATCH_LINGER").pipe(Config.withDefault(Duration.millis(50))),
  nudgeBatchSize: positiveInt("FLEXIBILITY_NUDGE_BATCH_SIZE", 200).pipe(
    Config.validate({ message: "FLEXIBILITY_NUDGE_BATCH_SIZE must be at most 500 (the nudging service's limit)", validation: (n) => n <= 500 })
  ),
  nudgeBatchLinger: Config.duration("FLEXIBILITY_NUDGE_BATCH_LINGER").pipe(Config.withDefault(Duration.millis(50))),
  announceBatchSize: positiveInt("FLEXIBILITY_ANNOUNCE_BATCH_SIZE", 200),
  announceBatchLinger: Config.duration("FLEXIBILITY_ANNOUNCE_BATCH_LINGER").pipe(Config.withDefault(Duration.millis(20))),
  defaultRewardPoints: Config.integer("FLEXIBILITY_DEFAULT_REWARD_POINTS").pipe(
    Config.withDefault(10),
    Config.validate({
      message: "FLEXIBILITY_DEFAULT_REWARD_POINTS must be from 0 to 1000000",
      validation: (n) => n >= 0 && n <= 1_000_000
    })
  ),
  committedTopic: Config.nonEmptyString("FLEXIBILITY_COMMITTED_TOPIC").pipe(
    Config.withDefault("rec/flexibility/committed"),
    Config.validate({
      message: "FLEXIBILITY_COMMITTED_TOPIC must be a topic name without wildcards or a trailing slash",
      validation: (t) => !/[+#]/.test(t) && !t.endsWith("/")
    })
  )
})

/** Everything the service reads, for the kit's misspelling check. */
export const all = Config.all({
  settings,
  database,
  nudging,
  registry,
  digitalTwin: DigitalTwinClientConfig,
  dtScope: optionalScope("DT_CLIENT_SCOPE"),
  verifier: AuthConfig.verifier,
  mqtt: MqttConfig.fromEnv(Service.name),
  pipelineRuns: PipelineRuns.settings,
  policies: PolicyConfig.embedded
})
