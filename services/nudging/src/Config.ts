/**
 * Every environment variable of the nudging service (README "Configuration"). The database's
 * (`DATABASE_*`) are read by `@rec/db`, the token verifier's (`PLATFORM_OIDC_*`,
 * `JWT_HEADER_NAME`) by `@rec/auth`, the policy engine's (`PLATFORM_POLICIES_POLICIES_DIR`,
 * `POLICY_*`) by `@rec/policy`, and the server's (`PORT`, `HOST`, `CORS_ORIGINS`, `LOG_*`,
 * `OTEL_*`, `SHUTDOWN_TIMEOUT`) by `@rec/platform`. Names the original used keep their
 * spelling (`SEED_DIR`, `DEFAULT_LANG`, `MAX_PER_DAY_DEFAULT`, `SCHEDULER_POLL_SECONDS`,
 * `VAPID_*`, `CLICK_TRACKING_SECRET`, `SMTP_*`, `EMAIL_FROM`).
 */
import { AuthConfig } from "@rec/auth"
import { DatabaseConfig } from "@rec/db"
import { PolicyConfig } from "@rec/policy"
import type { RateLimit } from "@rec/platform"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import type * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import { fileURLToPath } from "node:url"
import { maxPerDayLimit } from "./Domain.js"
import { zoneNamed } from "./Windows.js"

export const Service = { name: "nudging", version: "0.1.0" } as const

/** design.md's port table. */
export const defaultPort = 8016

/**
 * Rate limits of the write routes, per client (a token's client and subject, else the address),
 * counted in the service's database so every replica on it enforces one budget (docs/decisions.md
 * "Rate limits across services"). Rules sharing a name share one budget and one override:
 * `RATE_LIMIT_INGEST` (events and scheduled events from other services, a batch counting as one
 * request: a machine's rate),
 * `RATE_LIMIT_PREFERENCES`, `RATE_LIMIT_SUBSCRIPTIONS` (web push subscribe, unsubscribe, test) and
 * `RATE_LIMIT_NOTIFICATIONS` (mark read, delete), each `<requests>/<window>` or `off`.
 */
export const rateLimits: ReadonlyArray<RateLimit.Rule> = [
  ...[
    ["POST", "/ingest-event"],
    ["POST", "/admin/ingest-event"],
    ["POST", "/ingest-events/batch"],
    ["POST", "/scheduled-events"],
    ["POST", "/admin/scheduled-events"],
    ["POST", "/scheduled-events/batch"],
    ["DELETE", "/scheduled-events/*"]
  ].map(([method, path]): RateLimit.Rule => ({ name: "ingest", method, path: path!, limit: 6000, window: "1 minute", store: "shared" })),
  { name: "preferences", method: "PUT", path: "/preferences", limit: 60, window: "1 minute", store: "shared" },
  { name: "subscriptions", method: "POST", path: "/webpush/*", limit: 60, window: "1 minute", store: "shared" },
  ...(["POST", "DELETE"] as const).map((method): RateLimit.Rule => ({
    name: "notifications",
    method,
    path: "/notifications/*",
    limit: 600,
    window: "1 minute",
    store: "shared"
  }))
]

/** The seed shipped with the service (rules, templates and kinds of the platform). */
export const bundledSeedDir = fileURLToPath(new URL("../seed", import.meta.url))

/** Push services of the browsers (Chrome/Edge via FCM, Firefox, Edge legacy, Safari). */
export const defaultPushEndpoints: ReadonlyArray<string> = [
  "https://fcm.googleapis.com",
  "https://*.push.services.mozilla.com",
  "https://*.notify.windows.com",
  "https://web.push.apple.com",
  "https://*.push.apple.com"
]

export interface SmtpSettings {
  readonly host: string
  readonly port: number
  readonly username: Option.Option<string>
  readonly password: Option.Option<Redacted.Redacted>
  /** STARTTLS required (`SMTP_USE_TLS`). */
  readonly startTls: boolean
  /** Implicit TLS from the first byte (`SMTP_USE_SSL`, port 465). */
  readonly implicitTls: boolean
  readonly from: string
  readonly timeout: Duration.Duration
}

export interface Settings {
  /** Seed applied at start (idempotent); `None` when `SEED_DIR` is empty or `none`. */
  readonly seedDir: Option.Option<string>
  readonly defaultLanguage: string
  readonly maxPerDayDefault: number
  readonly timeZone: DateTime.TimeZone
  readonly timeZoneName: string
  readonly schedulerPoll: Duration.Duration
  readonly deliveryPoll: Duration.Duration
  readonly deliveryMaxAttempts: number
  readonly retryBase: Duration.Duration
  readonly retryMax: Duration.Duration
  readonly rulesRefresh: Duration.Duration
  readonly vapid: {
    readonly publicKey: Option.Option<string>
    readonly privateKey: Option.Option<Redacted.Redacted>
    readonly subject: string
  }
  readonly pushTtlSeconds: number
  readonly pushTimeout: Duration.Duration
  /**
   * Worker threads that encrypt and send web pushes (`NUDGING_PUSH_WORKERS`), off the event loop
   * the ingests run on; 0: in the service's own thread.
   */
  readonly pushWorkers: number
  /** Origins push subscriptions may point at (`WEBPUSH_ALLOWED_ENDPOINTS`). */
  readonly pushEndpoints: ReadonlyArray<string>
  readonly clickSecret: Option.Option<Redacted.Redacted>
  /** Base of the web app: the click redirect goes to `<appBaseUrl><notification url>`. */
  readonly appBaseUrl: string
  /** This service as the recipients' browsers reach it (links in e-mails). */
  readonly publicUrl: string
  readonly smtp: Option.Option<SmtpSettings>
}

const positiveSeconds = (name: string, fallback: number) =>
  Config.number(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a positive number of seconds`, validation: (n) => n > 0 }),
    Config.map(Duration.seconds)
  )

const integerBetween = (name: string, fallback: number, min: number, max: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a whole number from ${min} to ${max}`, validation: (n) => n >= min && n <= max })
  )

const timeZone = Config.string("NUDGING_TIME_ZONE").pipe(
  Config.withDefault("UTC"),
  Config.mapOrFail((name) => {
    const zone = zoneNamed(name)
    return zone === undefined
      ? Either.left(ConfigError.InvalidData(["NUDGING_TIME_ZONE"], `Unknown time zone "${name}" (use an IANA name such as Europe/Rome)`))
      : Either.right({ zone, name })
  })
)

const url = (name: string, fallback: string) =>
  Config.string(name).pipe(
    Config.withDefault(fallback),
    Config.validate({
      message: `${name} must be an http(s) URL`,
      validation: (s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol)
    }),
    Config.map((s) => s.replace(/\/+$/, ""))
  )

const smtp: Config.Config<Option.Option<SmtpSettings>> = Config.all({
  host: Config.option(Config.nonEmptyString("SMTP_HOST")),
  port: Config.integer("SMTP_PORT").pipe(Config.withDefault(587)),
  username: Config.option(Config.nonEmptyString("SMTP_USERNAME")),
  password: Config.option(Config.redacted("SMTP_PASSWORD")),
  startTls: Config.boolean("SMTP_USE_TLS").pipe(Config.withDefault(true)),
  implicitTls: Config.boolean("SMTP_USE_SSL").pipe(Config.withDefault(false)),
  from: Config.string("EMAIL_FROM").pipe(Config.withDefault("")),
  timeout: positiveSeconds("SMTP_TIMEOUT_SECONDS", 20)
}).pipe(
  Config.mapOrFail(({ host, ...rest }) => {
    if (Option.isNone(host)) return Either.right(Option.none())
    if (rest.from.trim() === "") {
      return Either.left(ConfigError.InvalidData(["EMAIL_FROM"], "EMAIL_FROM must be set when SMTP_HOST is (the sender of every e-mail)"))
    }
    return Either.right(Option.some({ host: host.value, ...rest }))
  })
)

export const settings: Config.Config<Settings> = Config.all({
  seedDir: Config.string("SEED_DIR").pipe(
    Config.withDefault(bundledSeedDir),
    Config.map((dir) => (dir.trim() === "" || dir.trim().toLowerCase() === "none" ? Option.none() : Option.some(dir.trim())))
  ),
  defaultLanguage: Config.string("DEFAULT_LANG").pipe(
    Config.withDefault("en"),
    Config.validate({ message: "DEFAULT_LANG must be a language such as en or it", validation: (s) => /^[a-z]{2,3}$/.test(s) })
  ),
  maxPerDayDefault: integerBetween("MAX_PER_DAY_DEFAULT", 3, 1, maxPerDayLimit),
  timeZone,
  schedulerPoll: positiveSeconds("SCHEDULER_POLL_SECONDS", 10),
  deliveryPoll: positiveSeconds("NUDGING_DELIVERY_POLL_SECONDS", 5),
  deliveryMaxAttempts: integerBetween("NUDGING_DELIVERY_MAX_ATTEMPTS", 5, 1, 50),
  retryBase: positiveSeconds("NUDGING_DELIVERY_RETRY_BASE_SECONDS", 30),
  retryMax: positiveSeconds("NUDGING_DELIVERY_RETRY_MAX_SECONDS", 3600),
  rulesRefresh: positiveSeconds("NUDGING_RULES_REFRESH_SECONDS", 30),
  vapid: Config.all({
    publicKey: Config.option(Config.nonEmptyString("VAPID_PUBLIC_KEY")),
    privateKey: Config.option(Config.redacted("VAPID_PRIVATE_KEY")),
    subject: Config.string("VAPID_SUBJECT").pipe(
      Config.withDefault("mailto:nudging@rec.example"),
      Config.validate({
        message: "VAPID_SUBJECT must be a mailto: or https: URL (the push service's contact for this sender)",
        validation: (s) => /^(mailto:\S+@\S+|https:\/\/\S+)$/.test(s)
      })
    )
  }).pipe(Config.validate({
    message: "Set both VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY, or neither (then a key pair is generated once and kept in the database)",
    validation: (v) => Option.isSome(v.publicKey) === Option.isSome(v.privateKey)
  })),
  pushTtlSeconds: integerBetween("WEBPUSH_TTL_SECONDS", 86_400, 1, 2_419_200),
  pushTimeout: positiveSeconds("WEBPUSH_TIMEOUT_SECONDS", 10),
  pushWorkers: integerBetween("NUDGING_PUSH_WORKERS", 1, 0, 16),
  pushEndpoints: Config.withDefault(
    Config.map(Config.string("WEBPUSH_ALLOWED_ENDPOINTS"), (s) => s.split(",").map((x) => x.trim()).filter((x) => x !== "")),
    defaultPushEndpoints
  ),
  clickSecret: Config.option(Config.redacted("CLICK_TRACKING_SECRET")),
  appBaseUrl: url("NUDGING_APP_BASE_URL", "http://localhost:8014"),
  publicUrl: url("NUDGING_PUBLIC_URL", `http://localhost:${defaultPort}`),
  smtp
}).pipe(Config.map(({ timeZone, ...rest }) => ({ ...rest, timeZone: timeZone.zone, timeZoneName: timeZone.name })))

/** Everything the service reads, for the kit's misspelling check. */
export const all = Config.all({
  settings,
  database: DatabaseConfig.fromEnv(Service.name),
  engine: PolicyConfig.embedded,
  verifier: AuthConfig.verifier
})
