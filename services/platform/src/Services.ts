/**
 * The platform's services as launcher components: each is its own `Http.make` (what its
 * `main.ts` runs), configured by the environment it would have on its own machine: its service
 * client of dev/identities.yaml (`svc-*`), the other services' URLs on their launcher ports (they
 * call each other over real HTTP through their typed clients), the broker, and one PGlite under
 * the data directory, a schema per service.
 *
 * Each service's code is imported when the service starts (`import()`), not with the launcher:
 * a launcher running a few services (`PLATFORM_SERVICES`) or none loads only those.
 */
import { Effect, Layer } from "effect"
import * as path from "node:path"
import { exampleBundle } from "./Config.js"
import * as Hosts from "./Hosts.js"
import type { Component, Context, LauncherOptions, Ports, ServiceName } from "./Launcher.js"
import * as MailCatcher from "./MailCatcher.js"

const url = (options: LauncherOptions, port: number) => `http://${Hosts.forPeople(options.host)}:${port}`

/** How one service calls another: the bind address itself (a wildcard: 127.0.0.1). */
const internal = (options: LauncherOptions, port: number) => `http://${Hosts.forConnecting(options.host)}:${port}`

/** The one database of the launcher's services: PGlite under the data directory. */
export const databaseUrl = (dataDir: string): string => `pglite://${path.join(dataDir, "pglite")}`

/** The service's client of dev/identities.yaml (`svc-grid`, ...). */
const client = (context: Context, clientId: string): Record<string, string> => {
  // Optional chaining: tests describe the identity provider by its issuer alone.
  const secret = context.idp.identities?.clients.get(clientId)?.secret
  return secret === undefined ? {} : { PLATFORM_OIDC_CLIENT_ID: clientId, PLATFORM_OIDC_CLIENT_SECRET: secret }
}

/** What every service is told: the database, the broker, the other services. */
const shared = ({ options }: Context): Record<string, string> => ({
  DATABASE_URL: databaseUrl(options.dataDir),
  PLATFORM_MQTT_HOST: Hosts.forConnecting(options.host).replace(/^\[|\]$/g, ""),
  PLATFORM_MQTT_PORT: String(options.ports.mqtt),
  PLATFORM_POLICIES_POLICIES_DIR: options.policiesDir,
  // Decisions by the policy service (its RPC, with the service's own token), as in a deployment
  // with a central policy service: one compiled policy set in the process instead of seven.
  ...(options.embeddedPolicies ? {} : { POLICY_SERVICE_URL: internal(options, options.ports.policy) }),
  DIGITAL_TWIN_API_URL: internal(options, options.ports.digitalTwin),
  NUDGING_API_URL: internal(options, options.ports.nudging),
  FLEXIBILITY_API_URL: internal(options, options.ports.flexibility),
  REC_REGISTRY_URL: internal(options, options.ports.registry),
  ASSISTANT_URL: internal(options, options.ports.assistant)
})

/** A layer whose module is imported when the layer is built. */
const lazy = <M>(load: () => Promise<M>, make: (module: M) => Layer.Layer<never, unknown>): Layer.Layer<never, unknown> =>
  Layer.unwrapEffect(Effect.map(Effect.promise(load), make))

interface Definition {
  readonly service: ServiceName
  readonly name: string
  readonly port: keyof Ports
  readonly variable: string
  /** Where `/docs` is: the gateways serve theirs under `/api`. */
  readonly docsPrefix: string
  readonly env: (context: Context) => Record<string, string>
  readonly layer: (port: number) => Layer.Layer<never, unknown>
}

const define = (d: Definition): Component => ({
  name: d.name,
  phase: "service",
  service: d.service,
  url: ({ options }) => url(options, options.ports[d.port]),
  port: ({ options }) => ({ variable: d.variable, port: options.ports[d.port] }),
  notes: ({ options }) => [`docs ${url(options, options.ports[d.port])}${d.docsPrefix}/docs`],
  env: (context) => ({ ...shared(context), ...d.env(context) }),
  layer: ({ options }) => (options.services.includes(d.service) ? d.layer(options.ports[d.port]) : undefined)
})

export const registry = define({
  service: "registry",
  name: "registry",
  port: "registry",
  variable: "REGISTRY_PORT",
  docsPrefix: "",
  env: (context) => ({
    ...client(context, "svc-rec-registry"),
    // IRIs are minted below the address people reach the registry at.
    BASE_URL: url(context.options, context.options.ports.registry),
    PLATFORM_BASE_URL: url(context.options, context.options.ports.registry),
    ...(context.options.seed ? { REGISTRY_SEED_BUNDLE: exampleBundle } : {})
  }),
  layer: (port) => lazy(() => import("@rec/registry-service"), (m) => m.Http.make({ port }))
})

export const nudging = define({
  service: "nudging",
  name: "nudging",
  port: "nudging",
  variable: "NUDGING_PORT",
  docsPrefix: "",
  env: (context) => {
    const { options } = context
    return {
      ...client(context, "svc-nudging"),
      NUDGING_PUBLIC_URL: url(options, options.ports.nudging),
      NUDGING_APP_BASE_URL: url(options, options.ports.participantGateway),
      ...(options.seed ? {} : { SEED_DIR: "none" }),
      ...(options.mailCatcher ? MailCatcher.nudgingEnv(options.host, options.ports.mail) : {})
    }
  },
  layer: (port) => lazy(() => import("@rec/nudging-service"), (m) => m.Http.make({ port }))
})

export const assistant = define({
  service: "assistant",
  name: "assistant",
  port: "assistant",
  variable: "ASSISTANT_PORT",
  docsPrefix: "",
  env: (context) => ({
    ...client(context, "svc-assistant"),
    ASSISTANT_STORAGE_DIR: path.join(context.options.dataDir, "assistant", "files"),
    TRAINING_MATERIALS_PATH: path.join(context.options.dataDir, "assistant", "training-materials"),
    ...(context.trainingRepository === undefined ? {} : {
      TRAINING_MATERIALS_REPO: context.trainingRepository,
      TRAINING_MATERIALS_SYNC_ON_START: "true"
    })
  }),
  layer: (port) => lazy(() => import("@rec/assistant-service"), (m) => m.Http.make({ port }))
})

export const flexibility = define({
  service: "flexibility",
  name: "flexibility",
  port: "flexibility",
  variable: "FLEXIBILITY_PORT",
  docsPrefix: "/api",
  env: (context) => client(context, "svc-flexibility"),
  layer: (port) => lazy(() => import("@rec/flexibility-service"), (m) => m.Http.make({ port }))
})

export const gridGateway = define({
  service: "grid-gateway",
  name: "grid gateway",
  port: "gridGateway",
  variable: "GRID_GATEWAY_PORT",
  docsPrefix: "/api",
  env: (context) => client(context, "svc-grid"),
  layer: (port) => lazy(() => import("@rec/grid-gateway-service"), (m) => m.Http.make({ port }))
})

export const participantGateway = define({
  service: "participant-gateway",
  name: "participant gateway",
  port: "participantGateway",
  variable: "PARTICIPANT_GATEWAY_PORT",
  docsPrefix: "/api",
  env: (context) => client(context, "svc-participant-gateway"),
  layer: (port) => lazy(() => import("@rec/participant-gateway-service"), (m) => m.Http.make({ port }))
})

/** In start order (they start together; this is the banner's order). */
export const components: ReadonlyArray<Component> = [
  registry,
  nudging,
  assistant,
  flexibility,
  gridGateway,
  participantGateway
]
