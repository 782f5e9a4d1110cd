/**
 * The grid gateway under test with real parts around it: the dev identity provider (real RS256
 * tokens, JWKS), the digital-twin simulator over HTTP (the gateway's typed client with its own
 * client-credentials token), the repository's Rego policies, a fresh database (PGlite or the
 * machine's PostgreSQL), an MQTT broker (embedded aedes on a random port, or the machine's
 * Mosquitto), and the gateway itself on a random port. The nudge sender is a recording fake unless
 * a test passes another; webhook hosts resolve through a fixed table when one is given.
 *
 * Configuration goes through a map, never the process environment.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpServer from "@effect/platform/HttpServer"
import { ClientCredentials, TokenVerifier } from "@rec/auth"
import { Testing } from "@rec/db"
import { DevIdp, type MintOptions } from "@rec/dev-idp"
import { DigitalTwinClient, makeClient, SimulatorServer } from "@rec/digital-twin"
import { EmbeddedBroker, Mqtt, MqttConfig } from "@rec/mqtt"
import { Engines } from "@rec/policy"
import { AlertNudges, Http } from "@rec/grid-gateway-service"
import { LeanHttp, Upstream } from "@rec/platform"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { migrations } from "../../src/migrations/index.js"
import * as WebhookUrls from "../../src/WebhookUrls.js"

export const repoPolicies = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../policies")

// ---------------------------------------------------------------------------------------------
// Logs

export interface LogRecord {
  readonly level: string
  readonly message: unknown
  readonly fields: Readonly<Record<string, unknown>>
}

/** Every log record of the gateway under test (one test file per process). */
export const logs: Array<LogRecord> = []

export const collectLogs = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ annotations, logLevel, message }) => {
    logs.push({
      level: logLevel.label,
      message: Array.isArray(message) && message.length === 1 ? message[0] : message,
      fields: Object.fromEntries(HashMap.toEntries(annotations))
    })
  })
)

// ---------------------------------------------------------------------------------------------
// The nudge sender fake

export interface NudgeRecorder {
  readonly sent: Array<AlertNudges.GridAlertNudge>
  /** When set, `send` fails with this detail (and status 502) instead of recording. */
  failWith: string | undefined
}

export class SentNudges extends Context.Tag("test/SentNudges")<SentNudges, NudgeRecorder>() {}

export const recordingNudges: Layer.Layer<AlertNudges.AlertNudges | SentNudges> = Layer.effect(
  AlertNudges.AlertNudges,
  Effect.map(SentNudges, (recorder): AlertNudges.AlertNudgesService => ({
    send: (nudge) =>
      Effect.suspend(() => {
        if (recorder.failWith !== undefined) {
          return Effect.fail(
            new Upstream.UpstreamFailure({ upstream: "nudging service", operation: "ingest_event", status: 502, detail: recorder.failWith })
          )
        }
        recorder.sent.push(nudge)
        return Effect.succeed({ outcome: "dispatched" as const })
      })
  }))
).pipe(Layer.provideMerge(Layer.sync(SentNudges, () => ({ sent: [], failWith: undefined }))))

// ---------------------------------------------------------------------------------------------
// Parts

/** Where the simulator listens (its own server, separate from the gateway's test client). */
export class SimulatorUrl extends Context.Tag("test/SimulatorUrl")<SimulatorUrl, string>() {}

const addressOf = HttpServer.addressFormattedWith((address) => Effect.succeed(address.replace("0.0.0.0", "127.0.0.1")))

export const simulatorLayer: Layer.Layer<SimulatorUrl, unknown, DevIdp> = Layer.unwrapEffect(
  Effect.map(DevIdp, (idp) =>
    Layer.effect(SimulatorUrl, addressOf).pipe(
      Layer.provide(SimulatorServer.layerTest().pipe(Layer.provide(SimulatorServer.verifierFor(idp.issuer))))
    ))
)

/** The gateway's digital-twin client on its own outbound client: svc-grid's client credentials from the dev IdP, against `url`. */
export const digitalTwinAt = (
  url: Effect.Effect<string, never, SimulatorUrl | DevIdp>,
  options: { readonly timeout?: Duration.DurationInput; readonly secret?: string } = {}
): Layer.Layer<DigitalTwinClient, never, SimulatorUrl | DevIdp> =>
  Layer.effect(
    DigitalTwinClient,
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const tokens = yield* ClientCredentials.make({
        issuer: Option.some(idp.issuer),
        tokenEndpoint: Option.none(),
        clientId: "svc-grid",
        clientSecret: Redacted.make(options.secret ?? "dev-only-secret-svc-grid"),
        scope: Option.some("dt.read")
      })
      return yield* makeClient({ baseUrl: yield* url, tokens, timeout: options.timeout })
    })
  ).pipe(Layer.provide(LeanHttp.outboundLayer))

export type BrokerChoice =
  | { readonly _tag: "embedded" }
  | { readonly _tag: "mosquitto"; readonly topicPrefix: string }
  /** Nothing listens on `port` when the gateway starts (a test may start a broker there later). */
  | { readonly _tag: "absent"; readonly port: number }

export class BrokerInfo extends Context.Tag("test/BrokerInfo")<BrokerInfo, { readonly host: string; readonly port: number; readonly topicPrefix: string }>() {}

const brokerLayer = (choice: BrokerChoice): Layer.Layer<BrokerInfo, unknown> => {
  switch (choice._tag) {
    case "embedded":
      return Layer.effect(BrokerInfo, Effect.map(EmbeddedBroker.EmbeddedBroker, (b) => ({ host: b.host, port: b.port, topicPrefix: "" })))
        .pipe(Layer.provide(EmbeddedBroker.layer({ port: 0 })), Layer.provide(EmbeddedBroker.allowAll))
    case "mosquitto":
      return Layer.succeed(BrokerInfo, { host: "127.0.0.1", port: 1883, topicPrefix: choice.topicPrefix })
    case "absent":
      return Layer.succeed(BrokerInfo, { host: "127.0.0.1", port: choice.port, topicPrefix: "" })
  }
}

/** An MQTT client of the broker for `service` (the gateway, or a test publishing runs). */
export const mqttClient = (service: string, startupTimeout: Duration.DurationInput = "5 seconds") =>
  Layer.unwrapEffect(Effect.map(BrokerInfo, (b) =>
    Mqtt.Mqtt.Default(MqttConfig.make({
      service,
      host: b.host,
      port: b.port,
      topicPrefix: b.topicPrefix,
      startupTimeout: Duration.decode(startupTimeout),
      reconnectMin: Duration.millis(200),
      reconnectMax: Duration.seconds(1)
    }))))

// ---------------------------------------------------------------------------------------------
// The gateway

/** `RN`: what a nudge sender passed in needs besides the identity provider (the end-to-end test's nudging service). */
export interface GatewayOptions<RN = never> {
  /** The gateway's environment (a map). */
  readonly env?: Record<string, string> | undefined
  readonly database?: "pglite" | "postgres" | undefined
  readonly broker?: BrokerChoice | undefined
  /** Default: the simulator, with svc-grid's credentials. */
  readonly digitalTwin?: Layer.Layer<DigitalTwinClient, never, SimulatorUrl | DevIdp> | undefined
  /** Default: the recording fake (then `SentNudges` is available). */
  readonly nudges?: Layer.Layer<AlertNudges.AlertNudges, unknown, DevIdp | RN> | undefined
  /** Gateways on the same database and broker (the test's `HttpClient` reaches the last one). */
  readonly replicas?: number | undefined
  /** `env`: the policy engine from the environment (`PLATFORM_POLICIES_POLICIES_DIR`, `POLICY_FAIL_OPEN`); default the repository's policies. */
  readonly engine?: "repository" | "env" | undefined
  /** Webhook host names and the addresses they resolve to (default: the system resolver). */
  readonly hosts?: Record<string, ReadonlyArray<string>> | undefined
}

/** A resolver with fixed answers (names it does not know fail as ENOTFOUND). */
export const fixedLookup = (hosts: Record<string, ReadonlyArray<string>>): WebhookUrls.Lookup => (hostname) => {
  const addresses = hosts[hostname]
  if (addresses === undefined) return Promise.reject(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }))
  return Promise.resolve(addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })))
}

export const gatewayLayer = <RN = never>(options: GatewayOptions<RN> = {}) => {
  const database = options.database === "postgres"
    ? Testing.layerPostgres({ service: "grid-gateway", migrations })
    : Testing.layerPglite({ service: "grid-gateway", migrations })
  const nudges = options.nudges ?? recordingNudges
  // Each replica its own server, policy engine and broker connection; one database and one nudge sender.
  // The token verifier is configured from the environment, as in production.
  const replica = () =>
    Http.makeTest<SimulatorUrl | DevIdp | BrokerInfo | RN>({
      verifier: TokenVerifier.layer.pipe(Layer.orDie),
      engine: options.engine === "env" ? Engines.layer.pipe(Layer.orDie) : Engines.embeddedWith({ directory: repoPolicies, watch: false }),
      database,
      digitalTwin: options.digitalTwin ?? digitalTwinAt(SimulatorUrl),
      nudges,
      mqtt: mqttClient("grid-gateway", "2 seconds")
    })
  const replicas = Array.from({ length: Math.max(1, options.replicas ?? 1) }, replica)
  const gateway = replicas.length === 1 ? replicas[0]! : Layer.mergeAll(replicas[0]!, ...replicas.slice(1))
  const resolver = options.hosts === undefined
    ? Layer.empty
    : Layer.succeed(WebhookUrls.Resolver, fixedLookup(options.hosts))
  // The gateway's environment: the dev identity provider as issuer (its audience required), then the test's.
  const environment = Layer.unwrapEffect(Effect.map(DevIdp, (idp) =>
    Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({
      PLATFORM_OIDC_BASE_URL: idp.issuer,
      PLATFORM_OIDC_AUDIENCE: idp.audience,
      PLATFORM_OIDC_ALGORITHMS: "RS256",
      PLATFORM_OIDC_CLOCK_TOLERANCE: "5 seconds",
      MQTT_STARTUP_TIMEOUT_SECONDS: "2",
      ...options.env
    }))))))
  // The fake's record (empty when the test passes another sender).
  const recorder: Layer.Layer<SentNudges> = options.nudges === undefined
    ? recordingNudges
    : Layer.sync(SentNudges, () => ({ sent: [], failWith: undefined }))
  // The orchestrator's side: a client of the same broker that publishes runs.
  const publisher = mqttClient("pipelines", "5 seconds")
  return gateway.pipe(
    Layer.provideMerge(Layer.mergeAll(database, publisher, recorder)),
    Layer.provide(resolver),
    Layer.provide(environment),
    Layer.provideMerge(Layer.mergeAll(simulatorLayer, brokerLayer(options.broker ?? { _tag: "embedded" }))),
    Layer.provideMerge(DevIdp.layerTest),
    Layer.provide(collectLogs)
  )
}

// ---------------------------------------------------------------------------------------------
// Calls

export interface Reply {
  readonly status: number
  readonly body: any // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON of any shape, inspected by tests
  readonly headers: Readonly<Record<string, string>>
}

export interface Call {
  readonly token?: string | undefined
  readonly headers?: Record<string, string> | undefined
  readonly json?: unknown
  readonly text?: { readonly body: string; readonly contentType: string } | undefined
}

/** A raw HTTP call to the gateway, so tests see exact statuses, bodies and headers. */
export const call = (method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", url: string, options: Call = {}) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(url)
    if (options.token !== undefined) request = HttpClientRequest.bearerToken(request, options.token)
    if (options.headers !== undefined) request = HttpClientRequest.setHeaders(request, options.headers)
    if (options.text !== undefined) request = HttpClientRequest.bodyText(request, options.text.body, options.text.contentType)
    else if (options.json !== undefined) request = yield* HttpClientRequest.bodyJson(request, options.json)
    const response = yield* client.execute(request)
    const text = yield* response.text
    let body: unknown = text
    try {
      body = text === "" ? null : JSON.parse(text)
    } catch {
      // Not JSON (docs pages): the text itself.
    }
    const reply: Reply = { status: response.status, body, headers: response.headers }
    return reply
  }).pipe(Effect.scoped, Effect.orDie)

/** Mints once per (name, options) within a test file. */
export const tokens = Effect.map(DevIdp, (idp) => {
  const minted = new Map<string, string>()
  return (name: string, options: MintOptions = {}) =>
    Effect.gen(function*() {
      const key = `${name} ${JSON.stringify(options)}`
      const hit = minted.get(key)
      if (hit !== undefined) return hit
      const token = yield* Effect.orDie(idp.mint(name, options))
      minted.set(key, token)
      return token
    })
})

/** The token of a dev identity (user or service). */
export const tokenOf = (name: string, options: MintOptions = {}) => Effect.flatMap(tokens, (mint) => mint(name, options))
