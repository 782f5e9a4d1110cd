/**
 * Configuration every service shares (`PORT`, `HOST`, `CORS_ORIGINS`, `LOG_LEVEL`, `OTEL_*`, ...)
 * and the start-up check that warns about environment variables that look like misspellings of
 * the ones a service reads.
 *
 * A service's `Config.ts` reads its own variables with `Config.*` and hands that `Config` to
 * `ServiceKit.serve({ config })`, so the kit knows every name the service reads without a second
 * list to keep in sync (`envNames` walks the `Config` description).
 */
import * as Array from "effect/Array"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as ConfigProvider from "effect/ConfigProvider"
import * as ConfigProviderPathPatch from "effect/ConfigProviderPathPatch"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashSet from "effect/HashSet"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

/** How log lines are written: one JSON object per line (default) or Effect's human format. */
export type LogFormat = "json" | "pretty"

export interface OtelConfig {
  /** True when an OTLP endpoint is set and `OTEL_SDK_DISABLED` is not `true`. */
  readonly enabled: boolean
  /** Full URL of the OTLP/HTTP traces endpoint (`<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`). */
  readonly tracesUrl: Option.Option<string>
  readonly headers: Redacted.Redacted<Record<string, string>>
  readonly serviceName: Option.Option<string>
}

export interface CommonConfig {
  readonly port: number
  readonly host: string
  /** Allowed CORS origins; empty: no CORS headers; `["*"]`: any origin, never with credentials. */
  readonly corsOrigins: ReadonlyArray<string>
  readonly corsCredentials: boolean
  readonly logLevel: LogLevel.LogLevel
  readonly logFormat: LogFormat
  /** How long shutdown waits for in-flight requests before closing their connections. */
  readonly shutdownTimeout: Duration.Duration
  /** Header set by an authenticating proxy; it is redacted in traces like `Authorization`. */
  readonly jwtHeaderName: string
  readonly otel: OtelConfig
}

export interface CommonDefaults {
  /** The service's port (design.md's port table); `PORT` overrides it. */
  readonly port: number
  /** Origins allowed when `CORS_ORIGINS` is unset (default: none). */
  readonly corsOrigins?: ReadonlyArray<string> | undefined
}

const logLevels: Record<string, LogLevel.LogLevel> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warn: LogLevel.Warning,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  critical: LogLevel.Fatal,
  none: LogLevel.None,
  off: LogLevel.None
}

/** `LOG_LEVEL`: case-insensitive, accepts Python-style names (`WARNING`, `CRITICAL`) too. */
export const logLevel = (name: string): Config.Config<LogLevel.LogLevel> =>
  Config.mapOrFail(Config.string(name), (value) => {
    const level = logLevels[value.trim().toLowerCase()]
    return level === undefined
      ? Either.left(
        ConfigError.InvalidData(
          [name],
          `Expected one of ${Object.keys(logLevels).join(", ")}, got ${JSON.stringify(value)}`
        )
      )
      : Either.right(level)
  })

/** A TCP port; unlike `Config.port`, 0 (any free port) is allowed. */
export const port = (name: string): Config.Config<number> =>
  Config.mapOrFail(Config.integer(name), (value) =>
    value >= 0 && value <= 65535
      ? Either.right(value)
      : Either.left(ConfigError.InvalidData([name], `Expected a port between 0 and 65535, got ${value}`)))

/** A comma-separated list; blanks are dropped. */
export const commaList = (name: string): Config.Config<ReadonlyArray<string>> =>
  Config.map(Config.string(name), (value) => value.split(",").map((s) => s.trim()).filter((s) => s !== ""))

/** `k1=v1,k2=v2` as in `OTEL_EXPORTER_OTLP_HEADERS` (values may be percent-encoded). */
const keyValueList = (name: string): Config.Config<Record<string, string>> =>
  Config.mapOrFail(Config.string(name), (value) => {
    const out: Record<string, string> = {}
    for (const part of value.split(",")) {
      if (part.trim() === "") continue
      const eq = part.indexOf("=")
      if (eq <= 0) {
        return Either.left(ConfigError.InvalidData([name], "Expected comma-separated key=value pairs"))
      }
      out[decodeURIComponent(part.slice(0, eq).trim())] = decodeURIComponent(part.slice(eq + 1).trim())
    }
    return Either.right(out)
  })

const otel: Config.Config<OtelConfig> = Config.all({
  endpoint: Config.option(Config.string("OTEL_EXPORTER_OTLP_ENDPOINT")),
  tracesEndpoint: Config.option(Config.string("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")),
  headers: Config.redacted(keyValueList("OTEL_EXPORTER_OTLP_HEADERS")).pipe(
    Config.withDefault(Redacted.make<Record<string, string>>({}))
  ),
  serviceName: Config.option(Config.nonEmptyString("OTEL_SERVICE_NAME")),
  disabled: Config.boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false))
}).pipe(Config.map(({ disabled, endpoint, headers, serviceName, tracesEndpoint }) => {
  // The signal-specific variable is a full URL; the generic one is a base URL (OTLP spec).
  const tracesUrl = Option.orElse(
    Option.filter(tracesEndpoint, (s) => s.trim() !== ""),
    () =>
      Option.map(
        Option.filter(endpoint, (s) => s.trim() !== ""),
        (base) => `${base.replace(/\/+$/, "")}/v1/traces`
      )
  )
  return { enabled: !disabled && Option.isSome(tracesUrl), tracesUrl, headers, serviceName }
}))

/** The configuration every service reads, with the service's own defaults. */
export const common = (defaults: CommonDefaults): Config.Config<CommonConfig> =>
  Config.all({
    port: port("PORT").pipe(Config.withDefault(defaults.port)),
    host: Config.string("HOST").pipe(Config.withDefault("0.0.0.0")),
    corsOrigins: commaList("CORS_ORIGINS").pipe(Config.withDefault(defaults.corsOrigins ?? [])),
    corsCredentials: Config.boolean("CORS_ALLOW_CREDENTIALS").pipe(Config.withDefault(true)),
    logLevel: logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info)),
    logFormat: Config.literal("json", "pretty")("LOG_FORMAT").pipe(Config.withDefault("json" as const)),
    shutdownTimeout: Config.duration("SHUTDOWN_TIMEOUT").pipe(Config.withDefault(Duration.seconds(15))),
    jwtHeaderName: Config.string("JWT_HEADER_NAME").pipe(
      Config.withDefault("x-auth-request-access-token"),
      Config.map((s) => s.trim().toLowerCase())
    ),
    otel
  })

export interface ObservabilityConfig {
  readonly logLevel: LogLevel.LogLevel
  readonly logFormat: LogFormat
  readonly otel: OtelConfig
}

/** The part of the common configuration logging and tracing need. */
export const observability: Config.Config<ObservabilityConfig> = Config.all({
  logLevel: logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info)),
  logFormat: Config.literal("json", "pretty")("LOG_FORMAT").pipe(Config.withDefault("json" as const)),
  otel
})

/**
 * Names the kit itself or the shared platform conventions (design.md) define. They are never
 * reported as misspellings and are the targets misspellings are matched against.
 */
export const platformEnvNames: ReadonlyArray<string> = [
  "PORT",
  "HOST",
  "CORS_ORIGINS",
  "CORS_ALLOW_CREDENTIALS",
  "LOG_LEVEL",
  "LOG_FORMAT",
  "SHUTDOWN_TIMEOUT",
  "JWT_HEADER_NAME",
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  "OTEL_EXPORTER_OTLP_HEADERS",
  "OTEL_SERVICE_NAME",
  "OTEL_SDK_DISABLED",
  "OTEL_RESOURCE_ATTRIBUTES",
  "PLATFORM_OIDC_BASE_URL",
  "PLATFORM_OIDC_JWKS_URI",
  "PLATFORM_OIDC_AUDIENCE",
  "PLATFORM_OIDC_CLIENT_ID",
  "PLATFORM_OIDC_CLIENT_SECRET",
  "PLATFORM_OIDC_SCOPE",
  "PLATFORM_OIDC_TOKEN_ENDPOINT",
  "PLATFORM_OIDC_ALGORITHMS",
  "PLATFORM_OIDC_CLOCK_TOLERANCE",
  "PLATFORM_MQTT_HOST",
  "PLATFORM_MQTT_PORT",
  "PLATFORM_MQTT_USERNAME",
  "PLATFORM_MQTT_PASSWORD",
  "PLATFORM_MQTT_TLS",
  "PLATFORM_POLICIES_POLICIES_DIR",
  "DATABASE_URL",
  "ENV_FILE",
  "NODE_ENV"
]

/**
 * Every environment variable name a `Config` reads (with the default `_` path delimiter of
 * `ConfigProvider.fromEnv`). It evaluates the config against a provider that records each
 * requested path and has no data, so every branch with a default or an alternative is visited.
 * Names read only conditionally (inside `Config.flatMap`/`Config.mapOrFail` on a present value)
 * are not seen; list those in `ServiceKit.serve({ env })`.
 */
export const envNames = (config: Config.Config<unknown>): Effect.Effect<ReadonlyArray<string>> =>
  Effect.gen(function*() {
    const seen = new Set<string>()
    const provider = ConfigProvider.fromFlat(ConfigProvider.makeFlat({
      load: (path) => {
        seen.add(path.join("_"))
        return Effect.fail(ConfigError.MissingData([...path], "recording"))
      },
      enumerateChildren: () => Effect.succeed(HashSet.empty()),
      patch: ConfigProviderPathPatch.empty
    }))
    yield* Effect.either(provider.load(config))
    return Array.fromIterable(seen)
  })

/** Damerau-Levenshtein distance (optimal string alignment), small inputs only. */
export const editDistance = (a: string, b: string): number => {
  const d: Array<Array<number>> = []
  for (let i = 0; i <= a.length; i++) d.push([i])
  for (let j = 1; j <= b.length; j++) d[0][j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1)
      }
    }
  }
  return d[a.length][b.length]
}

export interface Misspelling {
  readonly name: string
  readonly suggestion: string
}

const normalise = (name: string) => name.toUpperCase().replace(/[-.]/g, "_")

/**
 * Vendor prefixes a variable of this platform, or of the system it was ported from (the
 * original's `CELINE_`), may carry: `CELINE_MQTT_HOST` and `MQTT_HOST` mean `PLATFORM_MQTT_HOST`.
 */
const vendorPrefixes = new Set(["PLATFORM", "CELINE", "REC"])

/**
 * The words of a name without vendor prefixes, empty segments (`MQTT__HOST`, the nested-settings
 * form) and a word repeated right after itself (`POLICIES_POLICIES_DIR`, the settings-class form
 * `<prefix>_<field>` whose field repeats the prefix): `PLATFORM_POLICIES_POLICIES_DIR`,
 * `CELINE_POLICIES_DIR` and `POLICIES_DIR` all become `POLICIES DIR`. Undefined for names of
 * fewer than two such words, which would match too much.
 */
const wordSignature = (name: string): string | undefined => {
  const words = normalise(name).split("_").filter((w) => w !== "")
  while (words.length > 0 && vendorPrefixes.has(words[0]!)) words.shift()
  const kept = words.filter((w, i) => i === 0 || w !== words[i - 1])
  return kept.length < 2 ? undefined : kept.join(" ")
}

/**
 * Environment variables that are not known but look like a known one: same name in another
 * case or with `-`/`.` for `_`, or within a small edit distance (1 for names up to 6 characters,
 * 2 above), or the same words once vendor prefixes, doubled underscores and a doubled word are
 * set aside (`CELINE_MQTT_HOST`, `MQTT__HOST`, `PLATFORM_POLICIES_DIR`). Short names get the
 * tighter bound so `HOME` is not taken for `HOST`.
 */
export const findMisspellings = (
  env: Readonly<Record<string, string | undefined>>,
  known: Iterable<string>
): ReadonlyArray<Misspelling> => {
  const knownSet = new Set(known)
  const knownList = Array.fromIterable(knownSet)
  const signatures = new Map<string, string>()
  for (const candidate of knownList) {
    const signature = wordSignature(candidate)
    if (signature !== undefined && !signatures.has(signature)) signatures.set(signature, candidate)
  }
  const out: Array<Misspelling> = []
  for (const name of Object.keys(env)) {
    if (knownSet.has(name)) continue
    const upper = normalise(name)
    let best: { name: string; distance: number } | undefined
    const signature = wordSignature(name)
    const sameWords = signature === undefined ? undefined : signatures.get(signature)
    if (sameWords !== undefined && sameWords !== name) best = { name: sameWords, distance: 0 }
    for (const candidate of best === undefined ? knownList : []) {
      if (upper === candidate) {
        best = { name: candidate, distance: 0 }
        break
      }
      if (Math.abs(candidate.length - upper.length) > 2) continue
      const limit = candidate.length <= 6 ? 1 : 2
      const distance = editDistance(upper, candidate)
      if (distance <= limit && (best === undefined || distance < best.distance)) {
        best = { name: candidate, distance }
      }
    }
    if (best !== undefined) out.push({ name, suggestion: best.name })
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/** Logs one warning per suspicious variable; never fails start-up. */
export const warnMisspellings = (
  known: Iterable<string>,
  env: Readonly<Record<string, string | undefined>> = process.env
): Effect.Effect<void> =>
  Effect.forEach(
    findMisspellings(env, known),
    ({ name, suggestion }) =>
      Effect.logWarning(`Environment variable ${name} is not used; did you mean ${suggestion}?`).pipe(
        Effect.annotateLogs({ env_var: name, suggestion })
      ),
    { discard: true }
  )
