/**
 * Every environment variable of the grid gateway (spec part B section 8, README
 * "Configuration"), read under exactly the spec's names, from the environment or a `.env` file
 * (`ServiceKit.run` reads it first). Variables owned by a shared package are read there and
 * listed in `all`, so the kit's start-up check knows them and warns about near misses
 * (`CELINE_POLICIES_DIR`, `PLATFORM_MQTT__HOST`, ...):
 *
 * - `DATABASE_URL`, `DATABASE_ECHO`, `DATABASE_*`: `@rec/db`;
 * - `DIGITAL_TWIN_API_URL`, `DIGITAL_TWIN_TIMEOUT`, `DT_CLIENT_SCOPE`: `@rec/digital-twin`'s client;
 * - `PLATFORM_OIDC_*`, `JWT_HEADER_NAME`: `@rec/auth`;
 * - `PLATFORM_POLICIES_POLICIES_DIR`, `POLICY_FAIL_OPEN`, `POLICY_*`: `@rec/policy`;
 * - `PLATFORM_MQTT_*`, `MQTT_STARTUP_TIMEOUT_SECONDS`: `@rec/mqtt`; `PIPELINE_RUNS_TOPIC`,
 *   `MQTT_SHARED_GROUP`: its `PipelineRuns`;
 * - `PORT`, `HOST`, `CORS_ORIGINS`, `LOG_*`, `OTEL_*`, `ENV_FILE`: `@rec/platform`.
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

export const Service = { name: "grid-gateway", version: "0.1.0" } as const

/** design.md's port table (the spec's 8015). */
export const defaultPort = 8015

/**
 * Rate limits of the write routes, per client (a token's client and subject, else the address),
 * counted in the service's database so every replica on it enforces one budget (docs/decisions.md
 * "Rate limits across services"). Rules sharing a name share one budget and one override:
 * `RATE_LIMIT_ALERT_RULES` (create, update, delete) and `RATE_LIMIT_NOTIFICATION_SETTINGS`
 * (`30/1m`, `off`).
 */
export const rateLimits: ReadonlyArray<RateLimit.Rule> = [
  ...(["POST", "PATCH", "DELETE"] as const).map((method): RateLimit.Rule => ({
    name: "alert_rules",
    method,
    path: method === "POST" ? "/api/alert-rules" : "/api/alert-rules/*",
    limit: 60,
    window: "1 minute",
    store: "shared"
  })),
  { name: "notification_settings", method: "PUT", path: "/api/notification-settings", limit: 60, window: "1 minute", store: "shared" }
]

/** `CORS_ORIGINS` when unset: the local grid dashboard (spec section 8). */
export const defaultCorsOrigins: ReadonlyArray<string> = ["http://localhost:3006"]

export interface WebhookSettings {
  /** `http://` webhook URLs are accepted (never in production). */
  readonly allowHttp: boolean
  /** Private, loopback and link-local addresses are accepted (never in production). */
  readonly allowPrivate: boolean
  /** Per delivery attempt (connecting, sending, the answer's status line). */
  readonly timeout: Duration.Duration
  /** Attempts per delivery, the first one included. */
  readonly maxAttempts: number
}

export interface NudgingSettings {
  readonly baseUrl: string
  /** Scope asked for the client-credentials token (`NUDGING_SCOPE`; none: the client's defaults). */
  readonly scope: Option.Option<string>
  readonly timeout: Duration.Duration
}

export interface GridSettings {
  /** The pipeline flow whose completed runs trigger alert evaluation. */
  readonly pipelineFlow: string
  readonly nudging: NudgingSettings
  readonly webhooks: WebhookSettings
}

const optionalScope = (name: string) =>
  Config.option(Config.string(name)).pipe(Config.map(Option.filter((s) => s.trim() !== "")))

const positiveSeconds = (name: string, fallback: number) =>
  Config.number(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a positive number of seconds`, validation: (n) => n > 0 }),
    Config.map(Duration.seconds)
  )

export const nudgingScope = optionalScope("NUDGING_SCOPE")

export const settings: Config.Config<GridSettings> = Config.all({
  pipelineFlow: Config.nonEmptyString("GRID_PIPELINE_FLOW").pipe(Config.withDefault("grid-resilience-flow")),
  nudging: Config.all({
    baseUrl: Config.nonEmptyString("NUDGING_API_URL").pipe(Config.withDefault("http://localhost:8016")),
    scope: nudgingScope,
    timeout: Config.duration("NUDGING_TIMEOUT").pipe(Config.withDefault(Duration.seconds(10)))
  }),
  webhooks: Config.all({
    allowHttp: Config.boolean("WEBHOOK_ALLOW_HTTP").pipe(Config.withDefault(false)),
    allowPrivate: Config.boolean("WEBHOOK_ALLOW_PRIVATE").pipe(Config.withDefault(false)),
    timeout: positiveSeconds("WEBHOOK_TIMEOUT_SECONDS", 5),
    maxAttempts: Config.integer("WEBHOOK_MAX_ATTEMPTS").pipe(
      Config.withDefault(3),
      Config.validate({ message: "WEBHOOK_MAX_ATTEMPTS must be between 1 and 10", validation: (n) => n >= 1 && n <= 10 })
    )
  })
})

/** Everything the service reads, its own settings and the shared packages', for the misspelling check. */
export const all = Config.all({
  settings,
  database: DatabaseConfig.fromEnv(Service.name),
  digitalTwin: DigitalTwinClientConfig,
  dtScope: optionalScope("DT_CLIENT_SCOPE"),
  verifier: AuthConfig.verifier,
  client: AuthConfig.clientCredentials({ scope: nudgingScope }),
  policies: PolicyConfig.embedded,
  policyService: PolicyConfig.serviceUrl,
  mqtt: MqttConfig.fromEnv(Service.name),
  pipelineRuns: PipelineRuns.settings
})
