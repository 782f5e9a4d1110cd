/**
 * Every environment variable of the simulator.
 *
 * | variable | default | |
 * |---|---|---|
 * | `DIGITAL_TWIN_PORT` | 8002 | port (`PORT` overrides it for the simulator's own process) |
 * | `DIGITAL_TWIN_SEED` | `rec-platform` | every generated value derives from it |
 * | `DIGITAL_TWIN_HISTORY_DAYS` | 7 | days of grid data before today |
 * | `DIGITAL_TWIN_FORECAST_DAYS` | 2 | days of grid forecasts after today |
 * | `DIGITAL_TWIN_SYNTHETIC_COMMUNITIES` | none | generated communities beside the simulated one, `<id>:<members>,...` (`Synthetic.ts`) |
 * | `PLATFORM_OIDC_BASE_URL` | `http://localhost:8080` (the dev identity provider) | issuer whose tokens are accepted |
 *
 * Token verification reads the other `PLATFORM_OIDC_*` variables of `@rec/auth`
 * (`PLATFORM_OIDC_JWKS_URI`, `PLATFORM_OIDC_AUDIENCE`, `PLATFORM_OIDC_ALGORITHMS`, ...);
 * `HOST`, `CORS_ORIGINS`, `LOG_LEVEL`, `OTEL_*` are the service kit's.
 */
import { Config, ConfigError, Either } from "effect"
import type { SyntheticCommunity } from "./Synthetic.js"
import type { SimulatorOptions } from "./Simulator.js"
import { defaultSimulatorOptions } from "./Simulator.js"

export const Service = { name: "digital-twin-simulator", version: "0.1.0" } as const

/** The identity provider trusted when `PLATFORM_OIDC_BASE_URL` is unset: the dev IdP's default address. */
export const defaultIssuer = "http://localhost:8080"

const days = (name: string, fallback: number, max: number) =>
  Config.integer(name).pipe(
    Config.validate({ message: `${name} must be between 0 and ${max}`, validation: (n) => n >= 0 && n <= max }),
    Config.withDefault(fallback)
  )

const communityId = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/

/** `bench-community:10000,it-second:8` */
export const parseSyntheticCommunities = (text: string): Either.Either<ReadonlyArray<SyntheticCommunity>, string> => {
  const out: Array<SyntheticCommunity> = []
  for (const part of text.split(",").map((p) => p.trim()).filter((p) => p !== "")) {
    const [id = "", count = ""] = part.split(":")
    const members = Number(count)
    if (!communityId.test(id) || !Number.isInteger(members) || members < 1 || members > 1_000_000) {
      return Either.left(`"${part}" is not <community id>:<members from 1 to 1000000>`)
    }
    out.push({ id, members })
  }
  return Either.right(out)
}

export interface SimulatorServerConfig {
  readonly port: number
  readonly simulator: SimulatorOptions
}

export const SimulatorConfig: Config.Config<SimulatorServerConfig> = Config.all({
  port: Config.port("DIGITAL_TWIN_PORT").pipe(Config.withDefault(8002)),
  simulator: Config.all({
    seed: Config.nonEmptyString("DIGITAL_TWIN_SEED").pipe(Config.withDefault(defaultSimulatorOptions.seed)),
    historyDays: days("DIGITAL_TWIN_HISTORY_DAYS", defaultSimulatorOptions.historyDays, 60),
    forecastDays: days("DIGITAL_TWIN_FORECAST_DAYS", defaultSimulatorOptions.forecastDays, 10),
    syntheticCommunities: Config.string("DIGITAL_TWIN_SYNTHETIC_COMMUNITIES").pipe(
      Config.withDefault(""),
      Config.mapOrFail((text) =>
        Either.mapLeft(
          parseSyntheticCommunities(text),
          (message) => ConfigError.InvalidData(["DIGITAL_TWIN_SYNTHETIC_COMMUNITIES"], message)
        )
      )
    )
  })
})
