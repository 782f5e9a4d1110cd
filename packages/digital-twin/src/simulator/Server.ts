/**
 * The simulator as a served service (the platform's service kit: `/health`, `/ready`,
 * `/openapi.json`, `/docs`, request ids, JSON logs, tracing, graceful shutdown), verifying
 * bearer tokens with `@rec/auth`.
 */
import { Authentication, TokenVerifier } from "@rec/auth"
import { ServiceKit } from "@rec/platform"
import type { ConfigError } from "effect"
import { ConfigProvider, Effect, Layer } from "effect"
import { DigitalTwinApi } from "../Api.js"
import { defaultIssuer, Service, SimulatorConfig } from "./Config.js"
import { SimulatorGroupsLive } from "./Http.js"
import type { SimulatorOptions } from "./Simulator.js"
import { Simulator } from "./Simulator.js"

export { Service }

/** `@rec/auth`'s verifier from the environment, trusting the dev identity provider when no issuer is set. */
export const verifierFromEnv: Layer.Layer<TokenVerifier.TokenVerifier, ConfigError.ConfigError> = Layer.unwrapEffect(
  Effect.map(Effect.configProviderWith(Effect.succeed), (provider) =>
    TokenVerifier.layer.pipe(
      Layer.provide(Layer.setConfigProvider(ConfigProvider.orElse(provider, () =>
        ConfigProvider.fromMap(new Map([["PLATFORM_OIDC_BASE_URL", defaultIssuer]])))))
    ))
)

/** A verifier trusting RS256 tokens of `issuer` (keys from its discovery document), for tests and launchers. */
export const verifierFor = (issuer: string): Layer.Layer<TokenVerifier.TokenVerifier> =>
  TokenVerifier.layerFor(issuer, { algorithms: ["RS256"] })

export interface SimulatorServerOptions {
  /** Default port (`PORT` wins, as for every service). Default 8002. */
  readonly port?: number | undefined
  readonly simulator?: Partial<SimulatorOptions> | undefined
}

const implementation = <A, E, R>(served: Layer.Layer<A, E, R>, options: SimulatorServerOptions) =>
  served.pipe(
    Layer.provide(SimulatorGroupsLive),
    Layer.provide([Simulator.layer(options.simulator), Authentication.layer])
  )

/** The simulator on a Node server; needs a `TokenVerifier` (`verifierFromEnv`, `verifierFor(issuer)`). */
export const layer = (options: SimulatorServerOptions = {}) =>
  implementation(
    ServiceKit.serve(DigitalTwinApi, { service: Service, port: options.port ?? 8002, config: SimulatorConfig }),
    options
  )

/** Configured from the environment (see `Config.ts`). */
export const layerConfig = Layer.unwrapEffect(
  Effect.map(SimulatorConfig, (config) => layer(config).pipe(Layer.provide(verifierFromEnv)))
)

/**
 * For tests: on a random port of 127.0.0.1, providing an `HttpClient` aimed at it (so
 * `HttpApiClient.make(DigitalTwinApi)` needs no base URL) and the `HttpServer` (its address).
 */
export const layerTest = (options: Pick<SimulatorServerOptions, "simulator"> = {}) =>
  implementation(ServiceKit.serveTest(DigitalTwinApi, { service: Service, port: 0, accessLog: false }), options)
