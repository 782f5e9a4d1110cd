/**
 * Environment of the `PolicyEngine` layers. Every service that decides with policies reads the
 * same names (README "Configuration").
 */
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"

export interface EmbeddedConfig {
  /** Policy directory, relative to the working directory unless absolute. */
  readonly directory: string
  /** Allow every decision while no policy set is loaded (explicit opt-in; warned about). */
  readonly failOpen: boolean
  /** Reload when a file of the directory changes. */
  readonly watch: boolean
  /** Quiet period after the last file change before reloading. */
  readonly watchDebounce: Duration.Duration
  readonly cache: {
    readonly enabled: boolean
    readonly maxSize: number
    readonly ttl: Duration.Duration
  }
}

const positiveInt = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.validate({ message: `${name} must be zero or a positive integer`, validation: (n) => n >= 0 }),
    Config.withDefault(fallback)
  )

export const embedded: Config.Config<EmbeddedConfig> = Config.all({
  directory: Config.nonEmptyString("PLATFORM_POLICIES_POLICIES_DIR").pipe(Config.withDefault("./policies")),
  failOpen: Config.boolean("POLICY_FAIL_OPEN").pipe(Config.withDefault(false)),
  watch: Config.boolean("POLICY_WATCH").pipe(Config.withDefault(true)),
  watchDebounce: Config.duration("POLICY_WATCH_DEBOUNCE").pipe(Config.withDefault(Duration.millis(250))),
  cache: Config.all({
    enabled: Config.boolean("POLICY_CACHE_ENABLED").pipe(Config.withDefault(true)),
    maxSize: positiveInt("POLICY_CACHE_MAX_SIZE", 10_000),
    ttl: positiveInt("POLICY_CACHE_TTL_SECONDS", 300).pipe(Config.map(Duration.seconds))
  })
})

/** Bounds of one rule evaluation; exceeding them is an evaluation error, never a hang. */
export interface EvalLimits {
  readonly maxSteps: number
  readonly timeout: Duration.Duration
}

export const defaultLimits: EvalLimits = { maxSteps: 1_000_000, timeout: Duration.seconds(1) }

export const limits: Config.Config<EvalLimits> = Config.all({
  maxSteps: Config.integer("POLICY_EVAL_MAX_STEPS").pipe(
    Config.validate({ message: "POLICY_EVAL_MAX_STEPS must be a positive integer", validation: (n) => n > 0 }),
    Config.withDefault(defaultLimits.maxSteps)
  ),
  timeout: Config.duration("POLICY_EVAL_TIMEOUT").pipe(Config.withDefault(defaultLimits.timeout))
})

export interface RemoteConfig {
  /** Base URL of the policy service (`http://localhost:8009`); the RPC endpoint is `<url>/rpc`. */
  readonly url: string
  /** Scopes asked for the service token (none: the client's defaults). */
  readonly scope: Option.Option<string>
  readonly timeout: Duration.Duration
}

export const remote: Config.Config<RemoteConfig> = Config.all({
  url: Config.nonEmptyString("POLICY_SERVICE_URL").pipe(Config.map((u) => u.replace(/\/+$/, ""))),
  scope: Config.option(Config.nonEmptyString("POLICY_SERVICE_SCOPE")),
  timeout: Config.duration("POLICY_SERVICE_TIMEOUT").pipe(Config.withDefault(Duration.seconds(5)))
})

/** Set: decisions go to the policy service; unset: they are made in-process. */
export const serviceUrl: Config.Config<Option.Option<string>> = Config.option(Config.nonEmptyString("POLICY_SERVICE_URL"))
