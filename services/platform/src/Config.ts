/**
 * The launcher's environment (README "Configuration"). Every component also reads its own
 * variables (`PLATFORM_OIDC_*`, `PLATFORM_POLICIES_POLICIES_DIR`, `POLICY_*`, `DIGITAL_TWIN_*`,
 * `LOG_*`, `OTEL_*`, ...); `PORT` is not passed to them, `HOST` is (as the launcher's bind address).
 */
import { devIdpConfig } from "@rec/dev-idp"
import { Config, Option } from "effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { LauncherOptions } from "./Launcher.js"

export const Service = { name: "platform", version: "0.1.0" } as const

/** The repository's `policies/`, whatever the working directory. */
export const repositoryPolicies = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../policies")

const port = (name: string, fallback: number) =>
  Config.port(name).pipe(Config.withDefault(fallback))

/**
 * Where every component listens. Loopback unless `HOST` says otherwise: the dev identity provider
 * hands admin tokens to anyone who knows the public secrets of dev/identities.yaml.
 */
export const defaultHost = "127.0.0.1"

export const launcher: Config.Config<LauncherOptions> = Config.all({
  host: Config.nonEmptyString("HOST").pipe(Config.withDefault(defaultHost), Config.map((s) => s.trim())),
  idp: devIdpConfig({ standalone: false }),
  ports: Config.all({
    policy: port("POLICY_PORT", 8009),
    digitalTwin: port("DIGITAL_TWIN_PORT", 8002),
    mqtt: port("PLATFORM_MQTT_PORT", 1883)
  }),
  externalBroker: Config.option(Config.nonEmptyString("PLATFORM_MQTT_HOST")),
  policiesDir: Config.nonEmptyString("PLATFORM_POLICIES_POLICIES_DIR").pipe(Config.withDefault(repositoryPolicies))
}).pipe(
  Config.map(({ externalBroker, ...rest }) => ({ ...rest, embeddedBroker: Option.isNone(externalBroker) }))
)
