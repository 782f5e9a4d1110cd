/**
 * The all-in-one launcher: the development identity provider first, then every component of
 * `components` in one process, each with the environment it would have on its own, then a
 * banner with the URLs and how to call them.
 *
 * A component is one entry of `components`: its name, where it listens, and its layer built
 * from the launcher's `Context` (the identity provider, the ports). Adding a service is adding
 * one entry. Every component still runs alone as `node services/<name>/dist/main.js`.
 *
 * The environment each component sees is the process environment without `PORT` and `HOST`
 * (they would put every service on one port), with `PLATFORM_OIDC_BASE_URL` pointing at the dev
 * identity provider unless it is set, plus the component's own overrides.
 */
import type { Layer as LayerType } from "effect"
import { ConfigProvider, Effect, Layer } from "effect"
import { DevIdp, type DevIdpOptions, type DevIdpService } from "@rec/dev-idp"
import { SimulatorServer } from "@rec/digital-twin"
import { EmbeddedBroker, type MqttBrokerError } from "@rec/mqtt"
import { BrokerAuth, Http as PolicyService } from "@rec/policy-service"
import * as Banner from "./Banner.js"

export interface Ports {
  readonly policy: number
  readonly digitalTwin: number
  readonly mqtt: number
}

export interface LauncherOptions {
  readonly idp: DevIdpOptions
  readonly ports: Ports
  /** Start the embedded MQTT broker (false when `PLATFORM_MQTT_HOST` names a broker). */
  readonly embeddedBroker: boolean
  /** Policy directory handed to the policy service unless `PLATFORM_POLICIES_POLICIES_DIR` is set. */
  readonly policiesDir: string
  /** The environment components start from (default: the process environment). */
  readonly environment?: Readonly<Record<string, string | undefined>> | undefined
}

/** What a component can use: the running identity provider and the launcher's options. */
export interface Context {
  readonly idp: DevIdpService
  readonly options: LauncherOptions
  /** Components that could not start and were left out, with the reason (for the banner). */
  readonly skipped: Map<string, string>
}

export interface Component {
  readonly name: string
  /** Where it listens, for the banner. */
  readonly url: (context: Context) => string
  /** Extra banner lines (docs, notes). */
  readonly notes?: ((context: Context) => ReadonlyArray<string>) | undefined
  /** Environment overrides for this component. */
  readonly env?: ((context: Context) => Record<string, string>) | undefined
  /** `undefined`: not started in this configuration. */
  readonly layer: (context: Context) => LayerType.Layer<never, unknown> | undefined
}

const local = (port: number) => `http://localhost:${port}`

export const policyService: Component = {
  name: "policy service",
  url: ({ options }) => local(options.ports.policy),
  notes: ({ options }) => [`docs ${local(options.ports.policy)}/docs`],
  env: ({ options }) => ({ PLATFORM_POLICIES_POLICIES_DIR: options.policiesDir }),
  layer: ({ options }) => PolicyService.make({ port: options.ports.policy })
}

export const digitalTwinSimulator: Component = {
  name: "digital-twin simulator",
  url: ({ options }) => local(options.ports.digitalTwin),
  notes: ({ options }) => [`docs ${local(options.ports.digitalTwin)}/docs`],
  env: ({ options }) => ({ DIGITAL_TWIN_PORT: String(options.ports.digitalTwin) }),
  layer: () => SimulatorServer.layerConfig
}

export const embeddedBroker: Component = {
  name: "MQTT broker (embedded)",
  url: ({ options }) => `mqtt://127.0.0.1:${options.ports.mqtt}`,
  notes: () => ["connect with an access token as the MQTT password; the policy service decides (/mqtt/user, /mqtt/acl)"],
  layer: (context) =>
    context.options.embeddedBroker
      ? EmbeddedBroker.layer({ port: context.options.ports.mqtt }).pipe(
        Layer.provide(BrokerAuth.layer({ url: `http://127.0.0.1:${context.options.ports.policy}` })),
        Layer.discard,
        // A port already taken (a local Mosquitto) is not a reason to stop the platform.
        Layer.catchAll((error: MqttBrokerError) =>
          Layer.effectDiscard(
            Effect.zipRight(
              Effect.sync(() => context.skipped.set(embeddedBroker.name, error.message)),
              Effect.logWarning(
                `${error.message}; no embedded MQTT broker (set PLATFORM_MQTT_PORT to move it, or PLATFORM_MQTT_HOST to use that broker)`
              )
            )
          )
        )
      )
      : undefined
}

/** One line per component, in start order. */
export const components: ReadonlyArray<Component> = [
  policyService,
  digitalTwinSimulator,
  embeddedBroker
]

const hidden = new Set(["PORT", "HOST"])

/** The environment a component sees: the launcher's values are defaults, the user's win. */
export const environmentOf = (component: Component, context: Context): Map<string, string> => {
  const env = new Map<string, string>()
  for (const [key, value] of Object.entries(context.options.environment ?? process.env)) {
    if (value !== undefined && !hidden.has(key)) env.set(key, value)
  }
  const defaults = { PLATFORM_OIDC_BASE_URL: context.idp.issuer, ...component.env?.(context) }
  for (const [key, value] of Object.entries(defaults)) {
    if (!env.has(key)) env.set(key, value)
  }
  return env
}

const start = (component: Component, context: Context): LayerType.Layer<never, unknown> => {
  const layer = component.layer(context)
  if (layer === undefined) return Layer.empty
  return layer.pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(environmentOf(component, context)))),
    Layer.annotateLogs("component", component.name)
  )
}

/** The dev identity provider, every component, then the banner. */
export const layer = (options: LauncherOptions): LayerType.Layer<never, unknown> =>
  Layer.unwrapEffect(
    Effect.map(DevIdp, (idp) => {
      const context: Context = { idp, options, skipped: new Map() }
      const started = components.map((component) => start(component, context))
      return Banner.layer(context, components).pipe(Layer.provide(Layer.mergeAll(Layer.empty, ...started)))
    })
  ).pipe(Layer.provide(DevIdp.layer(options.idp).pipe(Layer.annotateLogs("component", "dev identity provider"))))
