/**
 * The launcher's environment (README "Configuration"). Every component also reads its own
 * variables (`PLATFORM_OIDC_*`, `PLATFORM_POLICIES_POLICIES_DIR`, `POLICY_*`, `DIGITAL_TWIN_*`,
 * `NUDGING_*`, `ASSISTANT_*`, `LOG_*`, `OTEL_*`, ...); `PORT` is not passed to them, `HOST` is (as
 * the launcher's bind address).
 */
import { devIdpConfig } from "@rec/dev-idp"
import { Config, ConfigError, Either, Option } from "effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { LauncherOptions, ServiceName } from "./Launcher.js"

export const Service = { name: "platform", version: "0.1.0" } as const

/** The repository's root, whatever the working directory. */
export const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")

/** The repository's `policies/`. */
export const repositoryPolicies = path.join(repositoryRoot, "policies")

/** The demo community the registry imports at the first start. */
export const exampleBundle = path.join(repositoryRoot, "examples", "it-energy-community.bundle.yaml")

/** Markdown documents the assistant is trained on (its training materials). */
export const exampleTrainingMaterials = path.join(repositoryRoot, "examples", "assistant")

const port = (name: string, fallback: number) =>
  Config.port(name).pipe(Config.withDefault(fallback))

/**
 * Where every component listens. Loopback unless `HOST` says otherwise: the dev identity provider
 * hands admin tokens to anyone who knows the public secrets of dev/identities.yaml.
 */
export const defaultHost = "127.0.0.1"

/** Every service `npm start` runs besides the foundation (identity provider, policy, twin, broker), in start order. */
export const serviceNames: ReadonlyArray<ServiceName> = [
  "registry",
  "nudging",
  "assistant",
  "flexibility",
  "grid-gateway",
  "participant-gateway"
]

/** `PLATFORM_SERVICES`: `all` (default), `none`, or a comma-separated list of `serviceNames`. */
export const services: Config.Config<ReadonlyArray<ServiceName>> = Config.string("PLATFORM_SERVICES").pipe(
  Config.withDefault("all"),
  Config.mapOrFail((value): Either.Either<ReadonlyArray<ServiceName>, ConfigError.ConfigError> => {
    const trimmed = value.trim().toLowerCase()
    if (trimmed === "all" || trimmed === "") return Either.right(serviceNames)
    if (trimmed === "none") return Either.right([])
    const names = trimmed.split(",").map((s) => s.trim()).filter((s) => s !== "")
    const unknown = names.filter((n) => !(serviceNames as ReadonlyArray<string>).includes(n))
    return unknown.length === 0
      ? Either.right(serviceNames.filter((n) => names.includes(n)))
      : Either.left(ConfigError.InvalidData(
        ["PLATFORM_SERVICES"],
        `unknown service ${unknown.join(", ")} (known: all, none, ${serviceNames.join(", ")})`
      ))
  })
)

export const launcher: Config.Config<LauncherOptions> = Config.all({
  host: Config.nonEmptyString("HOST").pipe(Config.withDefault(defaultHost), Config.map((s) => s.trim())),
  idp: devIdpConfig({ standalone: false }),
  ports: Config.all({
    policy: port("POLICY_PORT", 8009),
    digitalTwin: port("DIGITAL_TWIN_PORT", 8002),
    mqtt: port("PLATFORM_MQTT_PORT", 1883),
    registry: port("REGISTRY_PORT", 8004),
    assistant: port("ASSISTANT_PORT", 8012),
    participantGateway: port("PARTICIPANT_GATEWAY_PORT", 8014),
    gridGateway: port("GRID_GATEWAY_PORT", 8015),
    nudging: port("NUDGING_PORT", 8016),
    flexibility: port("FLEXIBILITY_PORT", 8017),
    mail: port("MAIL_CATCHER_PORT", 1025)
  }),
  externalBroker: Config.option(Config.nonEmptyString("PLATFORM_MQTT_HOST")),
  externalSmtp: Config.option(Config.nonEmptyString("SMTP_HOST")),
  policiesDir: Config.nonEmptyString("PLATFORM_POLICIES_POLICIES_DIR").pipe(Config.withDefault(repositoryPolicies)),
  dataDir: Config.nonEmptyString("PLATFORM_DATA_DIR").pipe(Config.withDefault("./data"), Config.map((d) => path.resolve(d))),
  services,
  embeddedPolicies: Config.boolean("PLATFORM_EMBEDDED_POLICIES").pipe(Config.withDefault(false)),
  seed: Config.boolean("PLATFORM_SEED").pipe(Config.withDefault(true))
}).pipe(
  Config.map(({ externalBroker, externalSmtp, ...rest }) => ({
    ...rest,
    embeddedBroker: Option.isNone(externalBroker),
    mailCatcher: Option.isNone(externalSmtp)
  }))
)
