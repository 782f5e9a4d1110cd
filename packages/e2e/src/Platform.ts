/**
 * The platform started as an operator would start it: every component its own OS process from
 * its built `dist/` entry point, configured by environment variables only, on the machine's
 * PostgreSQL (one fresh database for the run, dropped afterwards; each service has its own
 * schema in it) and the machine's Mosquitto (a topic prefix of its own per run).
 *
 * `replicas: 2` starts two instances of each of the seven services (not the identity provider or
 * the digital twin) behind a round-robin proxy per service; services reach each other through
 * those proxies, and listeners share pipeline events through `MQTT_SHARED_GROUP`. The
 * assistant is the exception when the PostgreSQL server has no pgvector (the Debian
 * PostgreSQL 15 of the CI machines): it then runs once, on PGlite, which one process owns.
 */
import { Testing } from "@rec/db"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as PipelinePublisher from "./peers/PipelinePublisher.js"
import * as OtlpReceiver from "./peers/OtlpReceiver.js"
import * as PushEndpoint from "./peers/PushEndpoint.js"
import * as SmtpReceiver from "./peers/SmtpReceiver.js"
import * as WebhookReceiver from "./peers/WebhookReceiver.js"
import { freePort } from "./Ports.js"
import * as RoundRobinProxy from "./RoundRobinProxy.js"
import { type ProcessSpec, Supervisor } from "./Supervisor.js"

/** The repository root (this file is `packages/e2e/{src,dist}/Platform.*`). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")

/** The seven services, their entry points and the client each one acts as. */
export const services = {
  policy: { main: "services/policy/dist/main.js", client: "svc-policy" },
  nudging: { main: "services/nudging/dist/main.js", client: "svc-nudging" },
  registry: { main: "services/registry/dist/main.js", client: "svc-rec-registry" },
  flexibility: { main: "services/flexibility/dist/main.js", client: "svc-flexibility" },
  "grid-gateway": { main: "services/grid-gateway/dist/main.js", client: "svc-grid" },
  "participant-gateway": { main: "services/participant-gateway/dist/main.js", client: "svc-participant-gateway" },
  assistant: { main: "services/assistant/dist/main.js", client: "svc-assistant" }
} as const
export type ServiceName = keyof typeof services

const infrastructure = {
  devIdp: "packages/dev-idp/dist/main.js",
  digitalTwin: "packages/digital-twin/dist/simulator/main.js"
} as const

/** Entry points that are not built yet (run `pnpm build` first). */
export const missingBuilds = (): Array<string> =>
  [...Object.values(services).map((s) => s.main), ...Object.values(infrastructure)].filter((main) =>
    !fs.existsSync(path.join(repoRoot, main))
  )

export interface PlatformOptions {
  readonly replicas: 1 | 2
  /** `TEST_DATABASE_URL` (default the local server). */
  readonly databaseUrl?: string
  readonly mqttHost?: string
  readonly mqttPort?: number
}

export interface Peers {
  readonly push: PushEndpoint.PushEndpoint
  readonly webhooks: WebhookReceiver.WebhookReceiver
  readonly smtp: SmtpReceiver.SmtpReceiver
  readonly otlp: OtlpReceiver.OtlpReceiver
  readonly pipelines: PipelinePublisher.PipelinePublisher
}

export interface Platform {
  readonly replicas: 1 | 2
  /** Where tests (and the other services) reach each service: its proxy with replicas. */
  readonly urls: Readonly<Record<ServiceName | "devIdp" | "digitalTwin", string>>
  /** How many instances each service runs. */
  readonly instances: Readonly<Record<ServiceName, number>>
  /** Requests each proxy sent to each replica (replicas only). */
  readonly proxies: ReadonlyMap<ServiceName, RoundRobinProxy.RoundRobinProxy>
  readonly supervisor: Supervisor
  readonly peers: Peers
  readonly topicPrefix: string
  readonly database: string
  /** Why the assistant runs once in replica mode, if it does. */
  readonly assistantNote: string | undefined
  readonly stop: () => Promise<void>
}

const clientSecret = (client: string) => `dev-only-secret-${client}`

export const start = async (options: PlatformOptions): Promise<Platform> => {
  const missing = missingBuilds()
  if (missing.length > 0) throw new Error(`not built: ${missing.join(", ")}; run \`pnpm build\` first`)

  const supervisor = new Supervisor()
  const closers: Array<() => Promise<void>> = []
  const scope = Effect.runSync(Scope.make())
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), "rec-e2e-"))
  const stop = async () => {
    await supervisor.stopAll()
    for (const close of closers.reverse()) await close().catch(() => undefined)
    await Effect.runPromise(Scope.close(scope, Exit.void))
    fs.rmSync(runDir, { recursive: true, force: true })
  }

  try {
    // The run's database and topic prefix.
    const target = await Effect.runPromise(
      Scope.extend(Testing.makePostgresDatabase({ service: "e2e", url: options.databaseUrl }), scope)
    )
    const databaseUrl = Redacted.value(target.url)
    const hasVector = await Testing.postgresHasExtension("vector", options.databaseUrl)
    const topicPrefix = `rec-e2e/${crypto.randomBytes(6).toString("hex")}/`
    const mqttHost = options.mqttHost ?? "127.0.0.1"
    const mqttPort = options.mqttPort ?? 1883

    // The peers the platform talks to.
    const push = await PushEndpoint.start()
    const webhooks = await WebhookReceiver.start()
    const smtp = await SmtpReceiver.start()
    const otlp = await OtlpReceiver.start()
    closers.push(push.close, webhooks.close, smtp.close, otlp.close)
    const pipelines = await PipelinePublisher.start({ host: mqttHost, port: mqttPort, topicPrefix })
    closers.push(pipelines.close)

    // Ports and addresses: each instance its own port; with replicas a proxy per service.
    const instances = Object.fromEntries(
      (Object.keys(services) as Array<ServiceName>).map((name) => [
        name,
        name === "assistant" && !hasVector ? 1 : options.replicas
      ])
    ) as Record<ServiceName, number>
    const instancePorts = new Map<ServiceName, Array<number>>()
    for (const name of Object.keys(services) as Array<ServiceName>) {
      const ports: Array<number> = []
      for (let i = 0; i < instances[name]; i++) ports.push(await freePort())
      instancePorts.set(name, ports)
    }
    const proxies = new Map<ServiceName, RoundRobinProxy.RoundRobinProxy>()
    const urls: Record<string, string> = {}
    for (const [name, ports] of instancePorts) {
      const upstreams = ports.map((port) => `http://127.0.0.1:${port}`)
      if (options.replicas === 2) {
        const proxy = await RoundRobinProxy.start(upstreams)
        closers.push(proxy.close)
        proxies.set(name, proxy)
        urls[name] = proxy.url
      } else urls[name] = upstreams[0]!
    }
    const idpPort = await freePort()
    const twinPort = await freePort()
    const issuer = `http://127.0.0.1:${idpPort}`
    urls["devIdp"] = issuer
    urls["digitalTwin"] = `http://127.0.0.1:${twinPort}`

    const spec = (name: string, script: string, port: number, env: Record<string, string>, ready = "/ready"): ProcessSpec => ({
      name,
      script: path.join(repoRoot, script),
      cwd: runDir,
      readyUrl: `http://127.0.0.1:${port}${ready}`,
      env: { HOST: "127.0.0.1", PORT: String(port), LOG_LEVEL: "info", NODE_ENV: "test", ...env }
    })

    // The identity provider first: every other component discovers its keys at start.
    await supervisor.startAll([
      spec("dev-idp", infrastructure.devIdp, idpPort, { DEV_IDP_ISSUER: issuer }, "/health")
    ])

    const oidc = { PLATFORM_OIDC_BASE_URL: issuer, PLATFORM_OIDC_AUDIENCE: "rec-platform" }
    const tracing = {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      // Export every half second (the SDK's default is 5 s) so the trace arrives while the test waits.
      OTEL_BSP_SCHEDULE_DELAY: "500"
    }
    const serviceEnv = (name: ServiceName, instance: number): Record<string, string> => {
      const client = services[name].client
      const common: Record<string, string> = {
        ...oidc,
        ...tracing,
        PLATFORM_OIDC_CLIENT_ID: client,
        PLATFORM_OIDC_CLIENT_SECRET: clientSecret(client),
        PLATFORM_POLICIES_POLICIES_DIR: path.join(repoRoot, "policies"),
        DATABASE_URL: databaseUrl,
        // 14 processes on one server: keep well under PostgreSQL's default 100 connections.
        DATABASE_POOL_MAX: "4",
        PLATFORM_MQTT_HOST: mqttHost,
        PLATFORM_MQTT_PORT: String(mqttPort),
        PLATFORM_MQTT_TOPIC_PREFIX: topicPrefix,
        DIGITAL_TWIN_API_URL: urls["digitalTwin"]!,
        NUDGING_API_URL: urls["nudging"]!,
        FLEXIBILITY_API_URL: urls["flexibility"]!,
        REC_REGISTRY_URL: urls["registry"]!,
        ASSISTANT_URL: urls["assistant"]!
      }
      if (name !== "policy") common["POLICY_SERVICE_URL"] = urls["policy"]!
      if (options.replicas === 2) common["MQTT_SHARED_GROUP"] = `rec-e2e-${name}`
      switch (name) {
        case "nudging":
          return {
            ...common,
            WEBPUSH_ALLOWED_ENDPOINTS: "http://127.0.0.1:*",
            SMTP_HOST: "127.0.0.1",
            SMTP_PORT: String(smtp.port),
            SMTP_USE_TLS: "false",
            EMAIL_FROM: "nudging@rec.example",
            MAX_PER_DAY_DEFAULT: "50",
            NUDGING_DELIVERY_POLL_SECONDS: "1",
            NUDGING_DELIVERY_RETRY_BASE_SECONDS: "1",
            NUDGING_DELIVERY_RETRY_MAX_SECONDS: "2",
            SCHEDULER_POLL_SECONDS: "2"
          }
        case "grid-gateway":
          return { ...common, WEBHOOK_ALLOW_HTTP: "true", WEBHOOK_ALLOW_PRIVATE: "true" }
        case "registry":
          // IRIs are minted below the address clients use (the proxy, with replicas).
          return { ...common, BASE_URL: urls["registry"]! }
        case "assistant": {
          const own = path.join(runDir, `assistant-${instance}`)
          return {
            ...common,
            ASSISTANT_STORAGE_DIR: path.join(own, "files"),
            ...(hasVector ? {} : { DATABASE_URL: `pglite://${path.join(own, "db")}` })
          }
        }
        default:
          return common
      }
    }

    // Then everything else at once: a service whose policy service is not up yet is simply not
    // ready yet (its readiness checks the policies), so waiting for one wave before the next
    // would only add the slowest start of each wave.
    await supervisor.startAll([
      spec("digital-twin", infrastructure.digitalTwin, twinPort, { ...oidc, ...tracing }),
      ...(Object.keys(services) as Array<ServiceName>).flatMap((name) =>
        instancePorts.get(name)!.map((port, i) => spec(`${name}#${i + 1}`, services[name].main, port, serviceEnv(name, i + 1)))
      )
    ], 240_000)

    return {
      replicas: options.replicas,
      urls: urls as Platform["urls"],
      instances,
      proxies,
      supervisor,
      peers: { push, webhooks, smtp, otlp, pipelines },
      topicPrefix,
      database: target.display,
      assistantNote: hasVector || options.replicas === 1
        ? undefined
        : "the assistant runs once on PGlite: this PostgreSQL has no pgvector (the assistant needs the vector extension)",
      stop
    }
  } catch (error) {
    await stop()
    throw error
  }
}
