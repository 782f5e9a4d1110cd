/**
 * Every environment variable of the participant web gateway (README "Configuration"). The token
 * verifier's (`PLATFORM_OIDC_*`, `JWT_HEADER_NAME`) are read by `@rec/auth`, the database's
 * (`DATABASE_*`) by `@rec/db`, the policy engine's (`PLATFORM_POLICIES_POLICIES_DIR`, `POLICY_*`)
 * by `@rec/policy`, the server's (`PORT`, `HOST`, `CORS_ORIGINS`, `LOG_*`, `OTEL_*`,
 * `SHUTDOWN_TIMEOUT`) by `@rec/platform`.
 */
import { AuthConfig } from "@rec/auth"
import { DatabaseConfig } from "@rec/db"
import { PolicyConfig } from "@rec/policy"
import type { RateLimit } from "@rec/platform"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Option from "effect/Option"

export const Service = { name: "participant-gateway", version: "0.1.0" } as const

/** design.md's port table. */
export const defaultPort = 8014

/**
 * Rate limits of the write routes, per client (a token's client and subject, else the address),
 * counted in the service's database so every replica on it enforces one budget (docs/decisions.md
 * "Rate limits across services"). Rules sharing a name share one budget and one override:
 * `RATE_LIMIT_WRITES` covers every POST, PUT and DELETE under `/api` (terms, settings, push
 * subscriptions, commitments, the assistant's chat and uploads through the proxy): `60/1m`, `off`.
 */
export const rateLimits: ReadonlyArray<RateLimit.Rule> = (["POST", "PUT", "DELETE"] as const).map((method) => ({
  name: "writes",
  method,
  path: "/api/*",
  limit: 120,
  window: "1 minute",
  store: "shared"
}))

const url = (name: string, fallback: string) =>
  Config.string(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be an http(s) URL`, validation: (s) => /^https?:\/\/[^\s/]+(\/\S*)?$/.test(s.trim()) }),
    // `{url}/api/x` is built by appending: no trailing slash.
    Config.map((s) => s.trim().replace(/\/+$/, ""))
  )

export interface Upstreams {
  readonly nudgingUrl: string
  readonly flexibilityUrl: string
  readonly digitalTwinUrl: string
  readonly assistantUrl: string
  readonly nudgingTimeout: Duration.Duration
  readonly flexibilityTimeout: Duration.Duration
  readonly digitalTwinTimeout: Duration.Duration
  /** How long the assistant may take to start its answer (the status line and headers). */
  readonly assistantTimeout: Duration.Duration
}

export const upstreams: Config.Config<Upstreams> = Config.all({
  nudgingUrl: url("NUDGING_API_URL", "http://localhost:8016"),
  flexibilityUrl: url("FLEXIBILITY_API_URL", "http://localhost:8017"),
  digitalTwinUrl: url("DIGITAL_TWIN_API_URL", "http://localhost:8002"),
  assistantUrl: url("ASSISTANT_URL", "http://localhost:8012"),
  nudgingTimeout: Config.duration("NUDGING_API_TIMEOUT").pipe(Config.withDefault(Duration.seconds(10))),
  flexibilityTimeout: Config.duration("FLEXIBILITY_API_TIMEOUT").pipe(Config.withDefault(Duration.seconds(10))),
  digitalTwinTimeout: Config.duration("DIGITAL_TWIN_TIMEOUT").pipe(Config.withDefault(Duration.seconds(10))),
  assistantTimeout: Config.duration("ASSISTANT_TIMEOUT").pipe(Config.withDefault(Duration.seconds(30)))
})

/** The version of the terms of use a user must accept; the original service called it `POLICY_VERSION`. */
export const termsVersion: Config.Config<string> = Config.nonEmptyString("TERMS_VERSION").pipe(
  Config.orElse(() => Config.nonEmptyString("POLICY_VERSION")),
  Config.withDefault("2024-01-01"),
  Config.validate({ message: "TERMS_VERSION must be at most 50 characters", validation: (s) => s.length <= 50 })
)

/** Euro per shared kWh when no tariff is configured for the community (README "Overview"). */
export const defaultIncentiveTariff = 0.11

const tariffValue = (raw: string): number | undefined => {
  const value = Number(raw.trim())
  return raw.trim() !== "" && Number.isFinite(value) && value >= 0 && value <= 10 ? value : undefined
}

/** `it-energy-community=0.118,other=0.1` -> map; a malformed entry is a configuration error. */
export const parseTariffs = (text: string): Either.Either<ReadonlyMap<string, number>, string> => {
  const tariffs = new Map<string, number>()
  for (const entry of text.split(",").map((s) => s.trim()).filter((s) => s !== "")) {
    const at = entry.lastIndexOf("=")
    const community = at <= 0 ? "" : entry.slice(0, at).trim()
    const value = at <= 0 ? undefined : tariffValue(entry.slice(at + 1))
    if (community === "" || value === undefined) {
      return Either.left(`"${entry}" is not <community>=<euro per kWh from 0 to 10>`)
    }
    tariffs.set(community, value)
  }
  return Either.right(tariffs)
}

export interface OverviewSettings {
  readonly defaultTariff: number
  /** Euro per shared kWh by community key. */
  readonly tariffs: ReadonlyMap<string, number>
  /** Months (`period`) begin at midnight in this zone. */
  readonly timeZone: DateTime.TimeZone.Named
  /** How long an overview is reused for the same user, month and quarter hour (0: never). */
  readonly cacheTtl: Duration.Duration
  /** Overviews kept at most. */
  readonly cacheSize: number
}

export const overview: Config.Config<OverviewSettings> = Config.all({
  defaultTariff: Config.number("INCENTIVE_TARIFF_EUR_PER_KWH").pipe(
    Config.withDefault(defaultIncentiveTariff),
    Config.validate({
      message: "INCENTIVE_TARIFF_EUR_PER_KWH must be a number of euro from 0 to 10",
      validation: (n) => Number.isFinite(n) && n >= 0 && n <= 10
    })
  ),
  tariffs: Config.string("INCENTIVE_TARIFFS").pipe(
    Config.withDefault(""),
    Config.mapOrFail((text) =>
      Either.mapLeft(parseTariffs(text), (why) => ConfigError.InvalidData(["INCENTIVE_TARIFFS"], `INCENTIVE_TARIFFS: ${why}`))
    )
  ),
  timeZone: Config.string("OVERVIEW_TIME_ZONE").pipe(
    Config.withDefault("Europe/Rome"),
    Config.mapOrFail((name) =>
      Option.match(DateTime.zoneMakeNamed(name), {
        onNone: () =>
          Either.left(ConfigError.InvalidData(["OVERVIEW_TIME_ZONE"], `OVERVIEW_TIME_ZONE: unknown time zone "${name}"`)),
        onSome: Either.right
      })
    )
  ),
  cacheTtl: Config.duration("OVERVIEW_CACHE_TTL").pipe(Config.withDefault(Duration.seconds(60))),
  cacheSize: Config.integer("OVERVIEW_CACHE_SIZE").pipe(
    Config.withDefault(10_000),
    Config.validate({ message: "OVERVIEW_CACHE_SIZE must be zero or a positive integer", validation: (n) => n >= 0 })
  )
})

export interface ServerSettings {
  /**
   * Largest request body. Uploads to the assistant pass through this gateway, so the default is
   * the assistant's own limit (25 MiB) plus room for the multipart framing: the assistant, not the
   * gateway, tells a user their file is too large.
   */
  readonly maxBodyBytes: number
}

export const server: Config.Config<ServerSettings> = Config.all({
  maxBodyBytes: Config.integer("GATEWAY_MAX_BODY_BYTES").pipe(
    Config.withDefault(26 * 1024 * 1024),
    Config.validate({ message: "GATEWAY_MAX_BODY_BYTES must be a positive integer", validation: (n) => n > 0 })
  )
})

/** Everything the service reads, for the kit's misspelling check. */
export const all = Config.all({
  upstreams,
  termsVersion,
  overview,
  server,
  database: DatabaseConfig.fromEnv(Service.name),
  engine: PolicyConfig.embedded,
  verifier: AuthConfig.verifier
})
