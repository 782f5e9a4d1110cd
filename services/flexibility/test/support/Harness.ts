/**
 * The flexibility service under test: the dev identity provider (real RS256 tokens and JWKS),
 * the digital-twin simulator on its own random port, the repository's policies through the
 * embedded engine, a database (in-memory PGlite unless a test gives another), and swappable
 * nudging and registry parts (recording fakes unless a test gives the real services). Nothing
 * reads the process environment: configuration comes from a map.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpServer from "@effect/platform/HttpServer"
import type { SqlClient } from "@effect/sql/SqlClient"
import { ClientCredentials, TokenVerifier } from "@rec/auth"
import type { Database } from "@rec/db"
import { Testing } from "@rec/db"
import { DevIdp, type MintOptions } from "@rec/dev-idp"
import { DigitalTwinClient, SimulatorServer, type SimulatorOptions } from "@rec/digital-twin"
import type { Mqtt, PipelineRuns } from "@rec/mqtt"
import { Upstream } from "@rec/platform"
import { Engines } from "@rec/policy"
import * as Context from "effect/Context"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Communities, type Community, type Member } from "../../src/Communities.js"
import * as Http from "../../src/Http.js"
import { migrations } from "../../src/migrations/index.js"
import { type NudgeEvent, type NudgeOutcome, Nudges, type ScheduledNudge } from "../../src/Nudges.js"

export const repoPolicies = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../policies")

/** The dev identity provider's tokens, their audience checked (`rec-platform`, as the launcher sets it). */
export const verifierFor = (issuer: string) =>
  TokenVerifier.layerFor(issuer, { algorithms: ["RS256"], audience: ["rec-platform"], clockTolerance: Duration.seconds(5) })

/** The dev identity provider's participants (their `sub`s are the simulator's first two participants). */
export const giulia = "52409e36-6d23-45ed-bb1e-d6c564a2f454"
export const luca = "cc28f729-6d12-46a8-bdfe-c8b6952a99e0"
export const community = "it-energy-community"
export const giuliaMeter = "member-giulia-romano-meter"

// ---------------------------------------------------------------------------------------------
// Fakes

export interface NudgeRecord {
  readonly sent: Array<NudgeEvent>
  readonly scheduled: Array<ScheduledNudge>
  readonly unscheduled: Array<string>
  /** Answers `send` for an event (default: delivered); a failure makes the call fail. */
  answer: (event: NudgeEvent) => NudgeOutcome | Upstream.UpstreamFailure
}

export class RecordedNudges extends Context.Tag("test/RecordedNudges")<RecordedNudges, NudgeRecord>() {}

/** `Nudges` that records every call (and `RecordedNudges` to read them). */
export const recordingNudges = Layer.effectContext(
  Effect.sync(() => {
    const record: NudgeRecord = { sent: [], scheduled: [], unscheduled: [], answer: () => "delivered" }
    const nudges = Nudges.of({
      send: (event) =>
        Effect.suspend(() => {
          const answer = record.answer(event)
          if (answer instanceof Upstream.UpstreamFailure) return Effect.fail(answer)
          record.sent.push(event)
          return Effect.succeed(answer)
        }),
      sendMany: (events) =>
        Effect.sync(() =>
          events.map((event) => {
            const answer = record.answer(event)
            if (!(answer instanceof Upstream.UpstreamFailure)) record.sent.push(event)
            return answer
          })
        ),
      schedule: (event) => Effect.sync(() => void record.scheduled.push(event)),
      scheduleMany: (events) => Effect.sync(() => void record.scheduled.push(...events)),
      unschedule: (key) => Effect.sync(() => void record.unscheduled.push(key))
    })
    return Context.make(RecordedNudges, record).pipe(Context.add(Nudges, nudges))
  })
)

/** `Communities` from a fixed map of community id to member user ids. */
export const fixedCommunities = (communities: Readonly<Record<string, ReadonlyArray<string>>>) =>
  Layer.succeed(
    Communities,
    Communities.of({
      list: Effect.succeed(Object.keys(communities).map((id): Community => ({ id }))),
      members: (id) =>
        Effect.succeed((communities[id] ?? []).map((userId): Member => ({ userId, communityId: id })))
    })
  )

// ---------------------------------------------------------------------------------------------
// The digital twin

/** Tokens of a dev client (client credentials against the dev identity provider). */
export const clientTokens = (clientId: string) =>
  Effect.flatMap(DevIdp, (idp) =>
    ClientCredentials.make({
      issuer: Option.some(idp.issuer),
      tokenEndpoint: Option.none(),
      clientId,
      clientSecret: Redacted.make(`dev-only-secret-${clientId}`),
      scope: Option.none()
    })).pipe(Effect.provide(FetchHttpClient.layer))

export class SimulatorUrl extends Context.Tag("test/SimulatorUrl")<SimulatorUrl, string>() {}

/**
 * The simulator on its own random port (built in a scope of its own, so its test client and
 * server do not meet the service's), and a `DigitalTwinClient` for it authenticated as
 * svc-flexibility.
 */
export const simulator = (options: Partial<SimulatorOptions> = {}) =>
  Layer.unwrapScoped(
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const context = yield* Layer.build(
        SimulatorServer.layerTest({ simulator: options }).pipe(Layer.provide(SimulatorServer.verifierFor(idp.issuer)))
      )
      const server = Context.get(context, HttpServer.HttpServer)
      const address = server.address
      const url = address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : "http://127.0.0.1:0"
      const tokens = yield* clientTokens("svc-flexibility")
      return Layer.merge(
        DigitalTwinClient.layer({ baseUrl: url, tokens }).pipe(Layer.provide(FetchHttpClient.layer)),
        Layer.succeed(SimulatorUrl, url)
      )
    })
  )

// ---------------------------------------------------------------------------------------------
// The service

export interface ServiceOptions<R = never> {
  readonly env?: Record<string, string> | undefined
  readonly database?: Layer.Layer<Database.Database | SqlClient, unknown> | undefined
  /** Default: the recording fake. `R`: what it needs, provided by the caller around the result. */
  readonly nudges?: Layer.Layer<Nudges, unknown, R> | undefined
  /** Default: no communities. */
  readonly communities?: Layer.Layer<Communities, unknown, R> | undefined
  readonly digitalTwin?: Layer.Layer<DigitalTwinClient, unknown> | undefined
  readonly mqtt?: Layer.Layer<Mqtt.Mqtt, unknown> | false | undefined
  readonly pipelineRuns?: PipelineRuns.PipelineRunsSettings | undefined
  readonly simulator?: Partial<SimulatorOptions> | undefined
  /**
   * Verify tokens as configured by the environment (`PLATFORM_OIDC_*` of `env`, the dev identity
   * provider as issuer) instead of the test verifier.
   */
  readonly verifierFromEnv?: boolean | undefined
  /** Least level of the logs printed (default Warning). */
  readonly logLevel?: LogLevel.Literal | undefined
  /** The policy directory (default: the repository's `policies/`). */
  readonly policies?: string | undefined
}

export const pglite = Testing.layerPglite({ service: "flexibility", migrations, transformNames: false })

/**
 * Dev IdP + simulator + flexibility service; provides `DevIdp`, the service's parts (to drive
 * settlement, broadcast and reminders directly), the recorded nudges when the fake is used, and
 * an `HttpClient` aimed at the service.
 */
export const serviceLayer = <R = never>(options: ServiceOptions<R> = {}) => {
  const parts = Layer.mergeAll(
    recordingNudges,
    options.nudges ?? Layer.empty,
    options.communities ?? fixedCommunities({})
  )
  const twin = options.digitalTwin === undefined ? simulator(options.simulator) : Layer.merge(options.digitalTwin, Layer.succeed(SimulatorUrl, ""))
  return Layer.unwrapEffect(
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const dt = yield* Effect.serviceOption(DigitalTwinClient)
      const nudges = Layer.succeed(Nudges, yield* Nudges)
      const communities = Layer.succeed(Communities, yield* Communities)
      const env = { ...(options.verifierFromEnv ? { PLATFORM_OIDC_BASE_URL: idp.issuer } : {}), ...options.env }
      return Http.makeTest({
        verifier: options.verifierFromEnv ? undefined : verifierFor(idp.issuer),
        engine: Engines.embeddedWith({ directory: options.policies ?? repoPolicies, watch: false }),
        database: options.database ?? pglite,
        digitalTwin: Option.isSome(dt) ? Layer.succeed(DigitalTwinClient, dt.value) : undefined,
        nudges,
        communities,
        mqtt: options.mqtt ?? false,
        pipelineRuns: options.pipelineRuns
      }).pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))))
    })
  ).pipe(
    // The recording fake is always there (`RecordedNudges`); the service uses it unless given other nudges.
    Layer.provideMerge(Layer.merge(twin, parts)),
    Layer.provideMerge(DevIdp.layerTest),
    Layer.provide(Logger.minimumLogLevel(LogLevel.fromLiteral(options.logLevel ?? "Warning")))
  )
}

// ---------------------------------------------------------------------------------------------
// Calls

export interface Reply {
  readonly status: number
  readonly body: unknown
  readonly headers: Readonly<Record<string, string>>
}

export interface Call {
  readonly token?: string | undefined
  readonly headers?: Record<string, string> | undefined
  readonly json?: unknown
  readonly text?: { readonly body: string; readonly contentType: string } | undefined
}

type Method = "GET" | "POST" | "PATCH" | "DELETE" | "PUT"

/** A raw HTTP call to the service, so tests see exact statuses and bodies. */
export const call = (method: Method, url: string, options: Call = {}) =>
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
    return { status: response.status, body, headers: response.headers } satisfies Reply
  }).pipe(Effect.scoped, Effect.orDie)

/** A token of a dev user (through the web frontend's client by default) or a dev service client. */
export const token = (name: string, options: MintOptions = {}) =>
  Effect.flatMap(DevIdp, (idp) => Effect.orDie(idp.mint(name, options)))

export const userToken = (name: string, options: MintOptions = {}) => token(name, { client: "rec-frontend", ...options })

/**
 * An access token of a user the identity provider's file does not list (a synthetic member of the
 * simulator), signed by the dev identity provider as a login of the web frontend would be.
 */
export const memberToken = (sub: string) =>
  Effect.flatMap(DevIdp, (idp) =>
    idp.sign({
      sub,
      preferred_username: sub,
      typ: "Bearer",
      azp: "rec-frontend",
      aud: idp.audience,
      scope: "profile email dt.read"
    }))

export const iso = (ms: number) => new Date(ms).toISOString()

export const hourMs = 3_600_000

/** Midnight (UTC) starting the day `offset` days from today. */
export const dayStart = (offset = 0) => {
  const now = new Date()
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) + offset * 86_400_000
}
