/**
 * Handlers (thin: the caller and the request in, a service call, the answer out) and the served
 * service. `HttpLive` is what `main.ts` runs; `make`/`makeTest` build the same service around
 * other parts (tests, the all-in-one launcher): a database, a policy engine, a token verifier,
 * the digital twin, the nudging service, the registry, the broker.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Authentication, TokenVerifier } from "@rec/auth"
import { Database } from "@rec/db"
import { DigitalTwinClient } from "@rec/digital-twin"
import type { Mqtt } from "@rec/mqtt"
import { type PipelineRuns } from "@rec/mqtt"
import { Engines, PolicyEngine } from "@rec/policy"
import { RateLimit, ServiceKit, Upstream } from "@rec/platform"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { Access } from "./Access.js"
import { Announcements } from "./Announcements.js"
import { Api } from "./Api.js"
import { Background } from "./Background.js"
import { Broadcast } from "./Broadcast.js"
import { BroadcastRepo } from "./BroadcastRepo.js"
import * as Broker from "./Broker.js"
import { type Caller, Commitments } from "./Commitments.js"
import { CommitmentsRepo } from "./CommitmentsRepo.js"
import { Communities } from "./Communities.js"
import { CommittedEvents } from "./CommittedEvents.js"
import * as Config from "./Config.js"
import * as Fast from "./Fast.js"
import type { Commitment, CommitmentPage } from "./Domain.js"
import { migrations } from "./migrations/index.js"
import { Notices } from "./Notices.js"
import * as NudgingClient from "./NudgingClient.js"
import { Nudges } from "./Nudges.js"
import { Participants } from "./Participants.js"
import * as PipelineListener from "./PipelineListener.js"
import * as RegistryClient from "./RegistryClient.js"
import { Reminders } from "./Reminders.js"
import { ScheduledReminders } from "./ScheduledReminders.js"
import { Settlement } from "./Settlement.js"
import { SettledNudges } from "./SettledNudges.js"
import { Suggestions } from "./Suggestions.js"

// ---------------------------------------------------------------------------------------------
// Handlers

/**
 * The authenticated caller and the token they came with (forwarded to the digital twin), read
 * from the request's context in one step (every request of every route asks for it).
 */
const callerOf = (jwtHeaderName: string): Effect.Effect<Caller, never, Authentication.CurrentSubject | HttpServerRequest.HttpServerRequest> =>
  Effect.contextWith((context: Context.Context<Authentication.CurrentSubject | HttpServerRequest.HttpServerRequest>) => {
    const request = Context.get(context, HttpServerRequest.HttpServerRequest)
    // The middleware read the same header a moment ago and accepted it.
    const token = Either.match(Authentication.extractToken(request.headers, jwtHeaderName), {
      onLeft: () => "",
      onRight: Option.getOrElse(() => "")
    })
    return { subject: Context.get(context, Authentication.CurrentSubject), token: Redacted.make(token) }
  })

/** An upstream's failure as the platform's error body. */
const answerUpstream = <A, E, R>(effect: Effect.Effect<A, E | Upstream.UpstreamFailure, R>) =>
  Effect.catchIf(
    effect,
    (e): e is Upstream.UpstreamFailure => e instanceof Upstream.UpstreamFailure,
    (failure) => Effect.fail(Upstream.toHttpError(failure))
  )

const jwtHeader = Effect.map(TokenVerifier.TokenVerifier, (verifier) => verifier.config.jwtHeaderName)

/**
 * Commitments as the response body, without a pass through the contract's schema: rows come
 * from the table as the API's records (strings, numbers and nulls the table's types and
 * constraints guarantee), so the schema's encoding would copy them unchanged; on the hot paths
 * that copy and its garbage cost more than the database query (docs/performance.md,
 * "Flexibility service"). The contract, its documentation and typed clients are unchanged.
 */
const rowsResponse = (body: Commitment | ReadonlyArray<Commitment> | CommitmentPage, status = 200) =>
  HttpServerResponse.unsafeJson(body, { status })

export const SuggestionsLive = HttpApiBuilder.group(Api, "suggestions", (handlers) =>
  Effect.gen(function*() {
    const suggestions = yield* Suggestions
    const caller = callerOf(yield* jwtHeader)
    return handlers
      .handle("list", () => Effect.flatMap(caller, (c) => answerUpstream(suggestions.list(c))))
      .handle(
        "respond",
        ({ path, payload }) => Effect.flatMap(caller, (c) => answerUpstream(suggestions.respond(c, path.id, payload))),
        { uninterruptible: true }
      )
  }))

const encoder = new TextEncoder()

/** A stream of commitments as one JSON array, a chunk of rows at a time. */
const jsonArray = (rows: Stream.Stream<Commitment>): Stream.Stream<Uint8Array> => {
  let first = true
  const body = Stream.mapChunks(rows, (chunk) => {
    let text = ""
    for (const row of chunk) {
      text += first ? JSON.stringify(row) : "," + JSON.stringify(row)
      first = false
    }
    return Chunk.of(encoder.encode(text))
  })
  return Stream.concat(Stream.concat(Stream.succeed(encoder.encode("[")), body), Stream.succeed(encoder.encode("]")))
}

export const CommitmentsLive = HttpApiBuilder.group(Api, "commitments", (handlers) =>
  Effect.gen(function*() {
    const commitments = yield* Commitments
    const caller = callerOf(yield* jwtHeader)
    return handlers
      .handle(
        "create",
        ({ payload }) => Effect.flatMap(caller, (c) => Effect.map(answerUpstream(commitments.create(c, payload)), (row) => rowsResponse(row, 201))),
        { uninterruptible: true }
      )
      .handle("list", ({ urlParams }) => Effect.flatMap(caller, (c) => Effect.map(commitments.list(c, urlParams), rowsResponse)))
      .handle("pending", ({ urlParams }) => Effect.flatMap(caller, (c) => Effect.map(commitments.pending(c, urlParams.limit), rowsResponse)), {
        uninterruptible: true
      })
      .handle("export", ({ urlParams }) =>
        Effect.flatMap(caller, (c) =>
          Effect.map(commitments.exportAll(c, urlParams), (rows) =>
            HttpServerResponse.stream(jsonArray(rows), { contentType: "application/json" }))))
      .handle("get", ({ path }) => Effect.flatMap(caller, (c) => Effect.map(commitments.get(c, path.id), rowsResponse)))
      .handle("cancel", ({ path }) => Effect.flatMap(caller, (c) => Effect.asVoid(commitments.cancel(c, path.id))), {
        uninterruptible: true
      })
      .handle("settle", ({ path, payload }) => Effect.flatMap(caller, (c) => Effect.map(commitments.settle(c, path.id, payload), rowsResponse)), {
        uninterruptible: true
      })
  }))

// ---------------------------------------------------------------------------------------------
// The service

export interface MakeOptions {
  /** Default port (default 8017; `PORT` still wins). */
  readonly port?: number | undefined
  /** Default: `PLATFORM_OIDC_*` (`TokenVerifier.layer`). */
  readonly verifier?: Layer.Layer<TokenVerifier.TokenVerifier, unknown> | undefined
  /** Default: `Engines.layer` (embedded `policies/`, or the policy service when `POLICY_SERVICE_URL` is set). */
  readonly engine?: Layer.Layer<PolicyEngine, unknown> | undefined
  /** Default: `DATABASE_URL` (PGlite in `./data/flexibility` when unset), schema `DB_SCHEMA`. */
  readonly database?: Layer.Layer<Database.Database | import("@effect/sql/SqlClient").SqlClient, unknown> | undefined
  /** Default: `DIGITAL_TWIN_API_URL` with the service's client (`DT_CLIENT_SCOPE`). */
  readonly digitalTwin?: Layer.Layer<DigitalTwinClient, unknown> | undefined
  /** Default: the nudging service at `NUDGING_API_URL`. */
  readonly nudges?: Layer.Layer<Nudges, unknown> | undefined
  /** Default: the community registry at `REC_REGISTRY_URL`. */
  readonly communities?: Layer.Layer<Communities, unknown> | undefined
  /**
   * Default: `PLATFORM_MQTT_*`. `false`: no broker at all, so no pipeline-run listener and no
   * announcement of commitments (the HTTP API alone).
   */
  readonly mqtt?: Layer.Layer<Mqtt.Mqtt, unknown> | false | undefined
  /** Default: `PIPELINE_RUNS_TOPIC` and `MQTT_SHARED_GROUP`. */
  readonly pipelineRuns?: PipelineRuns.PipelineRunsSettings | undefined
  /** The create endpoint's fast route (`Fast`; default true): tests compare both paths. */
  readonly fastRoutes?: boolean | undefined
}

const databaseFromEnv = Layer.unwrapEffect(
  Effect.map(Config.database, (config) =>
    Database.layerWith({ service: Config.Service.name, migrations, transformNames: false }, config))
)

/** Every part of the service below the handlers, around the given outer parts. */
export const services = (options: MakeOptions = {}) => {
  const database = options.database ?? databaseFromEnv
  const engine = options.engine ?? Engines.layer
  const verifier = options.verifier ?? TokenVerifier.layer
  const digitalTwin = options.digitalTwin ?? DigitalTwinClient.layerConfig
  const nudges = options.nudges ?? NudgingClient.layer
  const communities = options.communities ?? RegistryClient.layer
  const mqtt = options.mqtt === false ? undefined : options.mqtt ?? Broker.layer
  const committedEvents = mqtt === undefined ? CommittedEvents.disabled : CommittedEvents.layer.pipe(Layer.provide(mqtt))

  const repos = Layer.mergeAll(CommitmentsRepo.Default, BroadcastRepo.Default).pipe(Layer.provideMerge(database))
  const background = Background.Default
  const notices = Notices.Default.pipe(
    Layer.provide(Layer.mergeAll(
      background,
      nudges,
      committedEvents,
      Layer.mergeAll(ScheduledReminders.Default, SettledNudges.Default, Announcements.Default).pipe(
        Layer.provide(Layer.mergeAll(background, nudges, committedEvents))
      )
    ))
  )
  const commitments = Commitments.Default.pipe(
    Layer.provideMerge(Layer.mergeAll(
      Access.Default.pipe(Layer.provideMerge(engine)),
      Participants.Default.pipe(Layer.provideMerge(digitalTwin)),
      notices
    ))
  )
  const features = Layer.mergeAll(
    Suggestions.Default,
    Reminders.Default.pipe(Layer.provide(nudges)),
    Settlement.Default.pipe(Layer.provide(notices)),
    Broadcast.Default.pipe(Layer.provide(Layer.merge(nudges, communities)))
  ).pipe(Layer.provideMerge(commitments), Layer.provideMerge(repos))
  const reactions = PipelineListener.PipelineReactions.Default
  const listener = mqtt === undefined
    ? Layer.empty
    : PipelineListener.layer(options.pipelineRuns === undefined ? {} : { settings: options.pipelineRuns }).pipe(
      Layer.provide(Layer.merge(reactions, mqtt))
    )
  return Layer.mergeAll(features, reactions, background, Authentication.layer, listener).pipe(Layer.provideMerge(features), Layer.provideMerge(verifier))
}

const readiness: Readonly<Record<string, Effect.Effect<void, unknown, Database.Database | PolicyEngine>>> = {
  database: Effect.flatMap(Database.Database, (db) => db.check),
  policies: Effect.flatMap(PolicyEngine, (engine) =>
    Effect.flatMap(engine.status, (status) =>
      status.loaded ? Effect.void : Effect.fail(new Error("no policies are loaded"))))
}

/** The shared rate limits' counter (`Config.rateLimits`), in the service's own schema of its database. */
const withRateLimitCounter = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  Layer.unwrapEffect(Effect.map(Database.Database, (db) => RateLimit.sharedStoreLayer(db.schema))).pipe(Layer.provideMerge(layer))

const serveOptions = (port: number) => ({
  service: Config.Service,
  port,
  docsPrefix: "/api",
  readiness,
  config: Config.all,
  env: ["POLICY_SERVICE_URL", "PLATFORM_OIDC_CLIENT_ID", "PLATFORM_OIDC_CLIENT_SECRET", "PLATFORM_OIDC_TOKEN_ENDPOINT"],
  rateLimits: Config.rateLimits
} as const)

const handlers = Layer.mergeAll(SuggestionsLive, CommitmentsLive)

/** The contract's handlers and, unless turned off, the create endpoint's fast route. */
const handlersWith = (options: MakeOptions) => options.fastRoutes === false ? handlers : Layer.merge(handlers, Fast.layer)

/** The flexibility service on `HOST`:`PORT` (default 8017). */
export const make = (options: MakeOptions = {}) =>
  ServiceKit.serve(Api, serveOptions(options.port ?? Config.defaultPort)).pipe(
    Layer.provide(handlersWith(options)),
    Layer.provide(withRateLimitCounter(services(options)))
  )

/** For tests: the service on a random port of 127.0.0.1, with an `HttpClient` aimed at it. */
export const makeTest = (options: MakeOptions = {}) =>
  ServiceKit.serveTest(Api, serveOptions(0)).pipe(
    Layer.provide(handlersWith(options)),
    Layer.provideMerge(withRateLimitCounter(services(options)))
  )

export const HttpLive = make()
