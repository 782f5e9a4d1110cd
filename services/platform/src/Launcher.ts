/**
 * The all-in-one launcher: the development identity provider first, then the foundation (policy
 * service, digital-twin simulator, embedded MQTT broker, mail catcher), then every service of the
 * platform, all in one process, each with the environment it would have on its own, then the
 * demo data (`Seed`), then a banner with the URLs, docs and dev tokens.
 *
 * A component is one entry of `components`: its name, where it listens, and its layer built
 * from the launcher's `Context` (the identity provider, the ports). Adding a service is adding
 * one entry. Every component still runs alone as `node services/<name>/dist/main.js`.
 *
 * The environment each component sees is the process environment without `PORT` (it would put
 * every service on one port) and the per-service database schema variables, with `HOST` set to
 * the launcher's bind address, and, unless the user set them, `PLATFORM_OIDC_BASE_URL` and
 * `PLATFORM_OIDC_AUDIENCE` naming the dev identity provider and the audience of its access
 * tokens, plus the component's own defaults: its client of dev/identities.yaml, the other
 * services' URLs, the broker, and `DATABASE_URL=pglite://<data dir>/pglite`: one PGlite instance
 * shared by every service of the process, each in its own schema (`@rec/db`).
 *
 * Everything binds `HOST` (default 127.0.0.1): the dev identity provider hands out admin tokens
 * for public secrets, so the platform is reachable from other machines only when asked for.
 */
import type { Layer as LayerType } from "effect"
import { Cause, ConfigProvider, Effect, Layer } from "effect"
import { Database } from "@rec/db"
import { DevIdp, type DevIdpOptions, type DevIdpService } from "@rec/dev-idp"
import { SimulatorServer } from "@rec/digital-twin"
import { EmbeddedBroker, type MqttBrokerError } from "@rec/mqtt"
import { BrokerAuth, Http as PolicyService } from "@rec/policy-service"
import * as path from "node:path"
import * as Banner from "./Banner.js"
import * as Hosts from "./Hosts.js"
import * as MailCatcher from "./MailCatcher.js"
import * as Seed from "./Seed.js"
import * as Services from "./Services.js"
import * as Training from "./Training.js"

export type ServiceName = "registry" | "nudging" | "assistant" | "flexibility" | "grid-gateway" | "participant-gateway"

export interface Ports {
  readonly policy: number
  readonly digitalTwin: number
  readonly mqtt: number
  readonly registry: number
  readonly assistant: number
  readonly participantGateway: number
  readonly gridGateway: number
  readonly nudging: number
  readonly flexibility: number
  /** The development mail catcher (SMTP). */
  readonly mail: number
}

export interface LauncherOptions {
  /** Where every component listens (`HOST`, default 127.0.0.1); `idp.host` is ignored. */
  readonly host: string
  readonly idp: DevIdpOptions
  readonly ports: Ports
  /** Start the embedded MQTT broker (false when `PLATFORM_MQTT_HOST` names a broker). */
  readonly embeddedBroker: boolean
  /** Start the mail catcher and send the nudging service's e-mail there (false when `SMTP_HOST` is set). */
  readonly mailCatcher: boolean
  /** Policy directory handed to the policy service unless `PLATFORM_POLICIES_POLICIES_DIR` is set. */
  readonly policiesDir: string
  /**
   * Each service compiles the policies itself (`PLATFORM_EMBEDDED_POLICIES=true`); default false:
   * the services ask the policy service (`POLICY_SERVICE_URL`).
   */
  readonly embeddedPolicies?: boolean | undefined
  /** Absolute; PGlite, the assistant's files, the training materials and caught e-mail live below it. */
  readonly dataDir: string
  /** The services to start besides the foundation (`PLATFORM_SERVICES`). */
  readonly services: ReadonlyArray<ServiceName>
  /** Apply the demo data at start (`PLATFORM_SEED`, default true). */
  readonly seed: boolean
  /** The environment components start from (default: the process environment). */
  readonly environment?: Readonly<Record<string, string | undefined>> | undefined
}

/** What a component can use: the running identity provider and the launcher's options. */
export interface Context {
  readonly idp: DevIdpService
  readonly options: LauncherOptions
  /** Components that could not start and were left out, with the reason (for the banner). */
  readonly skipped: Map<string, string>
  /** The local git repository of the assistant's training materials (none: not seeded, or no git). */
  readonly trainingRepository?: string | undefined
}

export interface Component {
  readonly name: string
  /** Foundation components start first (the services need them); services start together after. */
  readonly phase?: "foundation" | "service" | undefined
  /** Set for the services `PLATFORM_SERVICES` chooses from. */
  readonly service?: ServiceName | undefined
  /** Where it listens, for the banner. */
  readonly url: (context: Context) => string
  /** The port it listens on and the variable that moves it (for the hint when it is taken). */
  readonly port?: ((context: Context) => PortSetting) | undefined
  /** Extra banner lines (docs, notes). */
  readonly notes?: ((context: Context) => ReadonlyArray<string>) | undefined
  /** Environment defaults for this component (the user's environment wins). */
  readonly env?: ((context: Context) => Record<string, string>) | undefined
  /** `undefined`: not started in this configuration. */
  readonly layer: (context: Context) => LayerType.Layer<never, unknown> | undefined
  /**
   * For the banner, when the component was left out (`Context.skipped`): the reason in words and
   * how to fix it. Default: the recorded reason as it is.
   */
  readonly skippedText?: ((reason: string, context: Context) => SkippedText) | undefined
}

export interface PortSetting {
  readonly variable: string
  readonly port: number
}

export interface SkippedText {
  readonly reason: string
  /** Commands that fix it, each with what it does. */
  readonly fixes: ReadonlyArray<{ readonly command: string; readonly effect: string }>
}

/** A port to suggest instead of a taken one. */
const nextPort = (port: number) => (port >= 65535 ? 1024 : port + 1)

/** The URL people use for a port of the platform. */
export const httpUrl = (options: LauncherOptions, port: number): string =>
  `http://${Hosts.forPeople(options.host)}:${port}`

/** The embedded broker's URL. */
export const mqttUrl = (options: LauncherOptions): string =>
  `mqtt://${Hosts.forConnecting(options.host)}:${options.ports.mqtt}`

export const policyService: Component = {
  name: "policy service",
  phase: "foundation",
  url: ({ options }) => httpUrl(options, options.ports.policy),
  port: ({ options }) => ({ variable: "POLICY_PORT", port: options.ports.policy }),
  notes: ({ options }) => [`docs ${httpUrl(options, options.ports.policy)}/docs`],
  env: ({ options }) => ({ PLATFORM_POLICIES_POLICIES_DIR: options.policiesDir }),
  layer: ({ options }) => PolicyService.make({ port: options.ports.policy })
}

export const digitalTwinSimulator: Component = {
  name: "digital-twin simulator",
  phase: "foundation",
  url: ({ options }) => httpUrl(options, options.ports.digitalTwin),
  port: ({ options }) => ({ variable: "DIGITAL_TWIN_PORT", port: options.ports.digitalTwin }),
  notes: ({ options }) => [`docs ${httpUrl(options, options.ports.digitalTwin)}/docs`],
  env: ({ options }) => ({ DIGITAL_TWIN_PORT: String(options.ports.digitalTwin) }),
  layer: () => SimulatorServer.layerConfig
}

export const embeddedBroker: Component = {
  name: "MQTT broker (embedded)",
  phase: "foundation",
  url: ({ options }) => mqttUrl(options),
  notes: () => ["connect with an access token as the MQTT password; the policy service decides (/mqtt/user, /mqtt/acl)"],
  skippedText: (reason, { options }) => ({
    reason: /EADDRINUSE/.test(reason) ? `port ${options.ports.mqtt} is already in use (a local Mosquitto?)` : reason,
    fixes: [
      { command: `PLATFORM_MQTT_PORT=${nextPort(options.ports.mqtt)} npm start`, effect: "the embedded broker on another port" },
      {
        command: "PLATFORM_MQTT_HOST=localhost npm start",
        effect: `use the broker on port ${options.ports.mqtt} instead (it decides who may connect)`
      }
    ]
  }),
  layer: (context) =>
    context.options.embeddedBroker
      ? EmbeddedBroker.layer({ port: context.options.ports.mqtt, host: context.options.host }).pipe(
        Layer.provide(BrokerAuth.layer({
          url: `http://${Hosts.forConnecting(context.options.host)}:${context.options.ports.policy}`
        })),
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

/** Where the nudging service's e-mail goes in development: logged and kept under the data directory. */
export const mailCatcher: Component = {
  name: "mail catcher (SMTP)",
  phase: "foundation",
  url: ({ options }) => `smtp://${Hosts.forConnecting(options.host)}:${options.ports.mail}`,
  port: ({ options }) => ({ variable: "MAIL_CATCHER_PORT", port: options.ports.mail }),
  notes: ({ options }) => [`e-mails are logged and kept in ${MailCatcher.directory(options.dataDir)}`],
  layer: ({ options }) =>
    options.mailCatcher
      ? MailCatcher.layer({ host: options.host, port: options.ports.mail, directory: MailCatcher.directory(options.dataDir) })
      : undefined
}

/**
 * The services' database, opened before them: creating a PGlite directory (initdb in WASM) takes
 * seconds, and held the event loop while PGlite ran in this process (it now runs in a PGlite
 * server process of its own, unless PGLITE_IN_PROCESS=true), which the services' first token,
 * JWKS and broker calls would otherwise wait out and time out on. The open session (one server
 * process) is shared with the services (`@rec/db` shares a directory within a process) and
 * closed after them. No schema and no tables of its own.
 */
export const database: Component = {
  name: "database",
  phase: "foundation",
  url: ({ options }) => Services.databaseUrl(options.dataDir),
  notes: () => ["PGlite: one schema per service (DATABASE_URL=postgresql://... to use PostgreSQL)"],
  env: ({ options }) => ({ DATABASE_URL: Services.databaseUrl(options.dataDir) }),
  layer: ({ options }) =>
    options.services.length === 0 ? undefined : Layer.discard(Database.layer({ service: "platform" }))
}

/** One line per component, in start order. */
export const components: ReadonlyArray<Component> = [
  policyService,
  digitalTwinSimulator,
  embeddedBroker,
  mailCatcher,
  database,
  ...Services.components
]

/**
 * Not passed on: `PORT` would put every service on one port; `HOST` is set from the launcher's
 * options; one schema variable for all would put every service's tables in one schema.
 */
const hidden = new Set(["PORT", "HOST", "DATABASE_SCHEMA", "DB_SCHEMA"])

/**
 * The environment a component sees: the launcher's values are defaults, the user's win; `HOST`
 * is always the launcher's bind address.
 */
export const environmentOf = (component: Component, context: Context): Map<string, string> => {
  const env = new Map<string, string>()
  for (const [key, value] of Object.entries(context.options.environment ?? process.env)) {
    if (value !== undefined && !hidden.has(key)) env.set(key, value)
  }
  const defaults = {
    PLATFORM_OIDC_BASE_URL: context.idp.issuer,
    // Without it every service would accept tokens the IdP issued for any audience (and warn).
    PLATFORM_OIDC_AUDIENCE: context.idp.audience,
    ...component.env?.(context)
  }
  for (const [key, value] of Object.entries(defaults)) {
    if (!env.has(key)) env.set(key, value)
  }
  env.set("HOST", context.options.host)
  return env
}

/** Whether a failure is a port already taken (`EADDRINUSE`, possibly wrapped in other errors). */
export const addressInUse = (cause: Cause.Cause<unknown>): boolean => {
  const inUse = (error: unknown, depth: number): boolean => {
    if (typeof error !== "object" || error === null || depth > 5) return false
    const { cause, code, message } = error as { code?: unknown; message?: unknown; cause?: unknown }
    return code === "EADDRINUSE" || (typeof message === "string" && message.includes("EADDRINUSE")) ||
      inUse(cause, depth + 1)
  }
  return [...Cause.failures(cause), ...Cause.defects(cause)].some((error) => inUse(error, 0))
}

/** When a component cannot start because its port is taken, say which variable moves it. */
const hintWhenPortTaken = (setting: PortSetting) => (cause: Cause.Cause<unknown>) =>
  addressInUse(cause)
    ? Effect.logError(
      `port ${setting.port} is already in use: set ${setting.variable} to another port ` +
        `(${setting.variable}=${nextPort(setting.port)} npm start)`
    )
    : Effect.void

const start = (component: Component, context: Context): LayerType.Layer<never, unknown> => {
  const layer = component.layer(context)
  if (layer === undefined) return Layer.empty
  const port = component.port?.(context)
  // Fresh: layers shared by reference (a twin client, a token verifier) are built per component,
  // each from its own environment (its own client credentials), as in its own process.
  return Layer.fresh(layer).pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(environmentOf(component, context)))),
    Layer.tapErrorCause(port === undefined ? () => Effect.void : hintWhenPortTaken(port)),
    Layer.annotateLogs("component", component.name)
  )
}

/**
 * The identity provider's options: the launcher's bind address, and an issuer people can type
 * (`http://localhost:8080` on loopback, as `dev-token` expects) unless `DEV_IDP_ISSUER` names one.
 */
export const idpOptions = (options: LauncherOptions): DevIdpOptions => {
  const port = options.idp.port ?? 8080
  return {
    ...options.idp,
    host: options.host,
    // A random port (0) is only known once bound: the IdP then names its bound address.
    issuer: options.idp.issuer ?? (port === 0 ? undefined : httpUrl(options, port))
  }
}

/** The components this configuration starts, by phase. */
export const started = (options: LauncherOptions): { readonly foundation: ReadonlyArray<Component>; readonly services: ReadonlyArray<Component> } => ({
  foundation: components.filter((c) => c.phase !== "service"),
  services: components.filter((c) => c.phase === "service" && c.service !== undefined && options.services.includes(c.service))
})

/**
 * The dev identity provider, the foundation, the services (built together), the demo data, then
 * the banner. Provides the running `DevIdp` (tests mint tokens with its key).
 */
export const layer = (options: LauncherOptions): LayerType.Layer<DevIdp, unknown> =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const trainingRepository = options.seed && options.services.includes("assistant")
        ? yield* Training.prepare(path.join(options.dataDir, "assistant", "training-source"))
        : undefined
      const context: Context = { idp, options, skipped: new Map(), trainingRepository }
      const { foundation, services } = started(options)
      const all = [...foundation, ...services]
      const foundationLayer = Layer.mergeAll(Layer.empty, ...foundation.map((component) => start(component, context)))
      const servicesLayer = Layer.mergeAll(Layer.empty, ...services.map((component) => start(component, context)))
      const seed = options.seed ? Seed.layer(context) : Layer.empty
      return Banner.layer(context, all).pipe(
        Layer.provide(seed),
        Layer.provide(servicesLayer),
        Layer.provide(foundationLayer)
      )
    })
  ).pipe(Layer.provideMerge(
    DevIdp.layer(idpOptions(options)).pipe(
      Layer.tapErrorCause(hintWhenPortTaken({ variable: "DEV_IDP_PORT", port: options.idp.port ?? 8080 })),
      Layer.annotateLogs("component", "dev identity provider")
    )
  ))
