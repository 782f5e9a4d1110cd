/**
 * Every environment variable of the policy service (README "Configuration"). The policy engine's
 * own variables (`PLATFORM_POLICIES_POLICIES_DIR`, `POLICY_FAIL_OPEN`, `POLICY_CACHE_*`,
 * `POLICY_WATCH*`) are read by `@rec/policy`'s `PolicyConfig.embedded`, the token verifier's
 * (`PLATFORM_OIDC_*`, `JWT_HEADER_NAME`) by `@rec/auth`, and the server's (`PORT`, `HOST`,
 * `CORS_ORIGINS`, `LOG_*`, `OTEL_*`, `SHUTDOWN_TIMEOUT`) by `@rec/platform`.
 */
import { AuthConfig } from "@rec/auth"
import { PolicyConfig } from "@rec/policy"
import type { RateLimit } from "@rec/platform"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"

export const Service = { name: "policy", version: "0.1.0" } as const

/** design.md's port table. */
export const defaultPort = 8009

/**
 * The spec's recommended production limits (section 8), per client (a token's client and
 * subject, else the address), counted in each replica's memory: a shared counter would cost
 * more than the decision it guards. `RATE_LIMIT_AUTHORIZE`, `RATE_LIMIT_HEALTH`,
 * `RATE_LIMIT_RELOAD` change them (`500/1s`, `off`).
 */
export const rateLimits: ReadonlyArray<RateLimit.Rule> = [
  { name: "authorize", method: "POST", path: "/authorize", limit: 1000, window: "1 second" },
  { name: "health", method: "GET", path: "/health", limit: 100, window: "1 second" },
  { name: "reload", method: "POST", path: "/reload", limit: 1, window: "1 minute" }
]

export interface ServiceSettings {
  /** `/authorize` without a token decides for the anonymous subject instead of answering 401. */
  readonly allowAnonymous: boolean
  /** One audit log record per decision. */
  readonly audit: boolean
  /**
   * The kit's access log line per request. Every decision already has its audit record; at high
   * request rates turning the access log off saves a log line per request.
   */
  readonly accessLog: boolean
  /** Request bodies above this size are refused with 413. */
  readonly maxBodyBytes: number
  /**
   * Overrides of the verified-token cache of `@rec/auth` (`PLATFORM_OIDC_TOKEN_CACHE_SIZE`,
   * `_TTL`): the service's own names from before the cache moved there.
   */
  readonly tokenCache: {
    readonly maxSize: Option.Option<number>
    readonly ttl: Option.Option<Duration.Duration>
  }
  /** Source service recorded for MQTT checks that do not name one (`X-Source-Service`). */
  readonly mqttSource: string
}

const nonNegative = (name: string) =>
  Config.integer(name).pipe(
    Config.validate({ message: `${name} must be zero or a positive integer`, validation: (n) => n >= 0 })
  )

export const settings: Config.Config<ServiceSettings> = Config.all({
  allowAnonymous: Config.boolean("POLICY_ALLOW_ANONYMOUS").pipe(Config.withDefault(false)),
  audit: Config.boolean("POLICY_AUDIT_ENABLED").pipe(Config.withDefault(true)),
  accessLog: Config.boolean("POLICY_ACCESS_LOG").pipe(Config.withDefault(true)),
  maxBodyBytes: nonNegative("POLICY_MAX_BODY_BYTES").pipe(Config.withDefault(1024 * 1024)),
  tokenCache: Config.all({
    maxSize: Config.option(nonNegative("POLICY_TOKEN_CACHE_SIZE")),
    ttl: Config.option(nonNegative("POLICY_TOKEN_CACHE_TTL_SECONDS").pipe(Config.map(Duration.seconds)))
  }),
  mqttSource: Config.string("POLICY_MQTT_SOURCE_SERVICE").pipe(Config.withDefault("mosquitto"))
})

/** The token verifier's configuration, with the service's cache overrides. */
export const verifier: Config.Config<AuthConfig.VerifierConfig> = Config.map(
  Config.all({ verifier: AuthConfig.verifier, settings }),
  ({ settings, verifier }) => ({
    ...verifier,
    cache: {
      maxSize: Option.getOrElse(settings.tokenCache.maxSize, () => verifier.cache?.maxSize ?? 0),
      ttl: Option.getOrElse(settings.tokenCache.ttl, () => Duration.decode(verifier.cache?.ttl ?? 0))
    }
  })
)

/** Everything the service reads, for the kit's misspelling check. */
export const all = Config.all({
  settings,
  engine: PolicyConfig.embedded,
  verifier: AuthConfig.verifier
})
