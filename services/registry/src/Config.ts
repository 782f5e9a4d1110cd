/**
 * Every environment variable of the registry (README "Configuration"). Those of the parts it
 * stands on are read by them and listed in `all` for the kit's misspelling check: the database
 * (`DATABASE_*`, `@rec/db`), token verification (`PLATFORM_OIDC_*`, `JWT_HEADER_NAME`,
 * `@rec/auth`), the policy engine (`PLATFORM_POLICIES_POLICIES_DIR`, `POLICY_*`, `@rec/policy`),
 * the owner registry (`OWNERS_FILE`, `PLATFORM_BASE_URL`, `@rec/owners`), the MQTT client
 * (`PLATFORM_MQTT_*`, `@rec/mqtt`) and the server (`PORT`, `HOST`, `CORS_ORIGINS`, `LOG_*`,
 * `OTEL_*`, `SHUTDOWN_TIMEOUT`, `@rec/platform`).
 */
import { AuthConfig } from "@rec/auth"
import { DatabaseConfig } from "@rec/db"
import { MqttConfig } from "@rec/mqtt"
import { OwnersConfig } from "@rec/owners"
import { PolicyConfig } from "@rec/policy"
import type { RateLimit } from "@rec/platform"
import * as Config from "effect/Config"
import * as Option from "effect/Option"

export const Service = { name: "registry", version: "0.1.0" } as const

/** design.md's port table (the spec's generic 8000 would collide with other services). */
export const defaultPort = 8004

/**
 * Rate limits of the write routes, per client (a token's client and subject, else the address),
 * counted in the service's database so every replica on it enforces one budget (docs/decisions.md
 * "Rate limits across services"). Rules sharing a name share one budget and one override:
 * `RATE_LIMIT_IMPORT` (`10/1m`, `off`). Ten a second: far beyond an operator's imports, and
 * room for a client whose refused bundles (each answered before any work) come in bursts.
 */
export const rateLimits: ReadonlyArray<RateLimit.Rule> = [
  { name: "import", method: "POST", path: "/admin/import", limit: 600, window: "1 minute", store: "shared" }
]

/** The original's default: the CELINE ontology's published context. Ours is served by the registry. */
export const defaultBaseUrl = "http://localhost:8004"

export interface Limits {
  /** Largest bundle file accepted (bytes). */
  readonly maxUploadBytes: number
  /** Deepest nesting of YAML collections (checked by the parser before any value is built). */
  readonly maxDepth: number
  /** Most YAML aliases (`*name`) in one bundle. */
  readonly maxAliases: number
  /** Most values a bundle may hold once its aliases are expanded (a "billion laughs" stops here). */
  readonly maxNodes: number
}

export interface Settings {
  /** Public base address: IRIs of communities, members, assets and sites are minted below it. */
  readonly baseUrl: string
  /** The ontology context document that JSON-LD answers reference in `@context`. */
  readonly contextUrl: string
  readonly limits: Limits
  /** Topic prefix of update events: `<prefix>/<community key>`. */
  readonly updatesTopic: string
  /** Publish update events: only when a broker is configured (`PLATFORM_MQTT_HOST` set). */
  readonly mqttEnabled: boolean
}

const positive = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 })
  )

const absoluteUrl = (name: string) =>
  Config.string(name).pipe(
    Config.validate({ message: `${name} must be an absolute http(s) URL`, validation: (u) => /^https?:\/\/[^/]/.test(u) && URL.canParse(u) })
  )

/** `http://host/prefix/` -> `http://host/prefix` (IRIs are joined with one `/`). */
export const trimSlash = (url: string): string => url.replace(/\/+$/, "")

export const defaultLimits: Limits = {
  maxUploadBytes: 32 * 1024 * 1024,
  maxDepth: 64,
  maxAliases: 100,
  maxNodes: 2_000_000
}

export const limits: Config.Config<Limits> = Config.all({
  maxUploadBytes: positive("REGISTRY_MAX_UPLOAD_BYTES", defaultLimits.maxUploadBytes),
  maxDepth: positive("REGISTRY_YAML_MAX_DEPTH", defaultLimits.maxDepth),
  maxAliases: Config.integer("REGISTRY_YAML_MAX_ALIASES").pipe(
    Config.withDefault(defaultLimits.maxAliases),
    Config.validate({ message: "REGISTRY_YAML_MAX_ALIASES must be zero or a positive integer", validation: (n) => n >= 0 })
  ),
  maxNodes: positive("REGISTRY_YAML_MAX_NODES", defaultLimits.maxNodes)
})

export const settings: Config.Config<Settings> = Config.all({
  baseUrl: absoluteUrl("BASE_URL").pipe(Config.withDefault(defaultBaseUrl), Config.map(trimSlash)),
  contextUrl: Config.option(absoluteUrl("ONTOLOGY_CONTEXT_URL")),
  limits,
  updatesTopic: Config.nonEmptyString("REGISTRY_UPDATES_TOPIC").pipe(
    Config.withDefault("rec/registry/updates"),
    Config.validate({
      message: "REGISTRY_UPDATES_TOPIC must be a topic without wildcards",
      validation: (t) => !/[+#]/.test(t)
    }),
    Config.map(trimSlash)
  ),
  mqttHost: Config.option(Config.nonEmptyString("PLATFORM_MQTT_HOST"))
}).pipe(
  Config.map(({ baseUrl, contextUrl, limits, mqttHost, updatesTopic }): Settings => ({
    baseUrl,
    contextUrl: Option.getOrElse(contextUrl, () => `${baseUrl}/context.jsonld`),
    limits,
    updatesTopic,
    mqttEnabled: Option.isSome(mqttHost)
  }))
)

/**
 * V8's heap growing factor of the standalone registry process (`main.ts`), as
 * `--heap-growing-percent` (growth by 1 + percent/100 before the next full collection; 0: V8's
 * own choice). An import or export of a 10,000-member bundle makes tens of MB of short-lived
 * values; with V8's default factor (up to 4x for a small heap) the process kept growing to
 * 360-540 MB over a few of them, at 25 it stays under 290 MB for the same CPU time
 * (docs/performance.md "Registry"). It does not cap the heap: a larger bundle still fits.
 */
export const heapGrowingPercent = Config.integer("REGISTRY_HEAP_GROWING_PERCENT").pipe(
  Config.withDefault(25),
  Config.validate({ message: "REGISTRY_HEAP_GROWING_PERCENT must be 0 or a positive integer", validation: (n) => n >= 0 && n <= 1000 })
)

/** A bundle file imported at start when its community is not in the registry yet. */
export const seedBundle = Config.option(Config.nonEmptyString("REGISTRY_SEED_BUNDLE"))

/** Everything the service reads, for the kit's misspelling check. */
export const all = Config.all({
  settings,
  seed: seedBundle,
  heapGrowingPercent,
  engine: PolicyConfig.embedded,
  verifier: AuthConfig.verifier,
  owners: OwnersConfig,
  database: DatabaseConfig.fromEnv(Service.name),
  mqtt: MqttConfig.fromEnv("registry")
})
