/**
 * Handlers (thin: the caller admitted by `Access`, a question to a feature service, its answer)
 * and the served service. `HttpLive` is what `main.ts` runs; `make`/`makeTest` build the same
 * service around other infrastructure (tests, the all-in-one launcher).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as SqlClient from "@effect/sql/SqlClient"
import { Authentication, TokenVerifier } from "@rec/auth"
import { Database } from "@rec/db"
import { Engines, PolicyEngine } from "@rec/policy"
import { type Health, OutboundHttp, RateLimit, ServiceKit, Upstream } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Access } from "./Access.js"
import { Api } from "./Api.js"
import * as AssistantProxy from "./AssistantProxy.js"
import * as Clients from "./Clients.js"
import * as Config from "./Config.js"
import { Flexibility } from "./Flexibility.js"
import { Membership } from "./Membership.js"
import { migrations } from "./migrations/index.js"
import { Notifications } from "./Notifications.js"
import { Overview } from "./Overview.js"
import { Profiles } from "./Profiles.js"
import { PushRepo } from "./PushRepo.js"
import { SettingsRepo } from "./SettingsRepo.js"
import { TermsRepo } from "./TermsRepo.js"
import { UserSettings } from "./UserSettings.js"

/** An upstream's failure answered as `Upstream` words it. */
const answered = <A, E, R>(effect: Effect.Effect<A, E | Upstream.UpstreamFailure, R>) =>
  Effect.catchIf(
    effect,
    (e): e is Extract<E | Upstream.UpstreamFailure, Upstream.UpstreamFailure> => e instanceof Upstream.UpstreamFailure,
    (failure) => Effect.fail(Upstream.toHttpError(failure))
  )

// Writes must finish once started: a caller going away must not cut a two-store update in half.
const mustFinish = { uninterruptible: true } as const

export const ProfileLive = HttpApiBuilder.group(Api, "profile", (handlers) =>
  Effect.gen(function*() {
    const access = yield* Access
    const profiles = yield* Profiles
    return handlers
      .handle("me", () => Effect.flatMap(access.enter("profile", "read"), (caller) => profiles.get(caller.subject)))
      .handle(
        "acceptTerms",
        () => Effect.flatMap(access.enter("profile", "write"), (caller) => profiles.acceptTerms(caller.subject)),
        mustFinish
      )
  }))

export const OverviewLive = HttpApiBuilder.group(Api, "overview", (handlers) =>
  Effect.gen(function*() {
    const access = yield* Access
    const overview = yield* Overview
    return handlers.handle("overview", ({ urlParams }) =>
      answered(Effect.flatMap(access.enter("overview", "read"), (caller) => overview.get(caller, Option.fromNullable(urlParams.period)))))
  }))

export const NotificationsLive = HttpApiBuilder.group(Api, "notifications", (handlers) =>
  Effect.gen(function*() {
    const access = yield* Access
    const notifications = yield* Notifications
    return handlers
      .handle("list", ({ urlParams }) =>
        answered(Effect.flatMap(access.enter("notifications", "read"), (caller) => notifications.list(caller, urlParams))))
      .handle("markRead", ({ path }) =>
        answered(Effect.flatMap(access.enter("notifications", "write"), (caller) => notifications.markRead(caller, path.id))))
      .handle("delete", ({ path }) =>
        answered(Effect.flatMap(access.enter("notifications", "write"), (caller) => notifications.remove(caller, path.id))))
  }))

export const SettingsLive = HttpApiBuilder.group(Api, "settings", (handlers) =>
  Effect.gen(function*() {
    const access = yield* Access
    const settings = yield* UserSettings
    return handlers
      .handle("get", () => answered(Effect.flatMap(access.enter("settings", "read"), settings.get)))
      .handle(
        "put",
        ({ payload }) => answered(Effect.flatMap(access.enter("settings", "write"), (caller) => settings.put(caller, payload))),
        mustFinish
      )
      .handle("vapidPublicKey", () => answered(Effect.flatMap(access.enter("settings", "read"), settings.vapidPublicKey)))
      .handle(
        "pushSubscribe",
        ({ payload }) => answered(Effect.flatMap(access.enter("settings", "write"), (caller) => settings.subscribe(caller, payload))),
        mustFinish
      )
      .handle(
        "pushUnsubscribe",
        ({ payload }) => answered(Effect.flatMap(access.enter("settings", "write"), (caller) => settings.unsubscribe(caller, payload))),
        mustFinish
      )
  }))

export const FlexibilityLive = HttpApiBuilder.group(Api, "flexibility", (handlers) =>
  Effect.gen(function*() {
    const access = yield* Access
    const flexibility = yield* Flexibility
    const read = access.enter("flexibility", "read")
    const write = access.enter("flexibility", "write")
    return handlers
      .handle("suggestions", () => answered(Effect.flatMap(read, flexibility.suggestions)))
      .handle("respond", ({ path, payload }) =>
        answered(Effect.flatMap(write, (caller) => flexibility.respond(caller, path.id, payload))))
      .handle("commitments", ({ urlParams }) => answered(Effect.flatMap(read, (caller) => flexibility.commitments(caller, urlParams))))
      .handle("commit", ({ payload }) => answered(Effect.flatMap(write, (caller) => flexibility.commit(caller, payload))))
      .handle("commitment", ({ path }) => answered(Effect.flatMap(read, (caller) => flexibility.commitment(caller, path.id))))
      .handle("cancel", ({ path }) => answered(Effect.flatMap(write, (caller) => flexibility.cancel(caller, path.id))))
      .handle("points", () => answered(Effect.flatMap(read, flexibility.points)))
  }))

export const handlers = Layer.mergeAll(ProfileLive, OverviewLive, NotificationsLive, SettingsLive, FlexibilityLive)

// ---------------------------------------------------------------------------------------------
// The service

/** The gateway's own tables, migrated at start. */
export const databaseLayer = Database.layer({ service: Config.Service.name, migrations })

export interface MakeOptions {
  /** Default port (default 8014; `PORT` still wins). */
  readonly port?: number | undefined
  /** Default: a `TokenVerifier` from `PLATFORM_OIDC_*`. */
  readonly verifier?: Layer.Layer<TokenVerifier.TokenVerifier> | undefined
  /** Default: `Engines.layer` (embedded, or the policy service when `POLICY_SERVICE_URL` is set). */
  readonly engine?: Layer.Layer<PolicyEngine> | undefined
  /** Default: `@rec/db` from `DATABASE_URL` (PGlite in `./data/participant-gateway` when unset). */
  readonly database?: Layer.Layer<SqlClient.SqlClient | Database.Database, unknown> | undefined
  /** The digital twin, nudging and flexibility clients. Default: from `*_API_URL` (`Clients.layer`). */
  readonly clients?: Layer.Layer<Clients.NudgingClient | Clients.FlexibilityClient | Clients.TwinClient, unknown> | undefined
  /** The assistant proxy's outbound HTTP. Default: the kit's `OutboundHttp.layer`. */
  readonly assistantHttp?: Layer.Layer<HttpClient.HttpClient> | undefined
}

/** Every service of the gateway, around the given (or default) infrastructure. */
export const services = (options: MakeOptions = {}) =>
  Layer.mergeAll(
    Profiles.Default,
    Overview.Default,
    Notifications.Default,
    UserSettings.Default,
    Flexibility.Default,
    AssistantProxy.AssistantProxy.Default.pipe(Layer.provide(options.assistantHttp ?? OutboundHttp.layer))
  ).pipe(
    Layer.provideMerge(Layer.mergeAll(Access.Default, Membership.Default)),
    Layer.provideMerge(Layer.mergeAll(TermsRepo.Default, SettingsRepo.Default, PushRepo.Default)),
    Layer.provideMerge(Layer.mergeAll(
      options.database ?? databaseLayer,
      options.clients ?? Clients.layer,
      options.engine ?? Engines.layer
    )),
    Layer.provideMerge(Authentication.layer),
    Layer.provideMerge(options.verifier ?? TokenVerifier.layer)
  )

const policiesLoaded = Effect.flatMap(PolicyEngine, (engine) =>
  Effect.flatMap(engine.status, (status) => (status.loaded ? Effect.void : Effect.fail("no policies loaded"))))

const readiness: Health.Checks<Database.Database | PolicyEngine> = {
  database: Effect.flatMap(Database.Database, (db) => db.check),
  policies: policiesLoaded
}

/** The shared rate limits' counter (`Config.rateLimits`), in the service's own schema of its database. */
const withRateLimitCounter = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  Layer.unwrapEffect(Effect.map(Database.Database, (db) => RateLimit.sharedStoreLayer(db.schema))).pipe(Layer.provideMerge(layer))

const serveOptions = (settings: Config.ServerSettings, port: number) => ({
  service: Config.Service,
  port,
  docsPrefix: "/api",
  config: Config.all,
  routes: AssistantProxy.routes,
  maxBodySize: settings.maxBodyBytes,
  readiness,
  rateLimits: Config.rateLimits
} as const)

/** The participant gateway on `HOST`:`PORT` (default 8014). */
export const make = (options: MakeOptions = {}) =>
  Layer.unwrapEffect(
    Effect.map(Config.server, (settings) => ServiceKit.serve(Api, serveOptions(settings, options.port ?? Config.defaultPort)))
  ).pipe(Layer.provide(handlers), Layer.provide(withRateLimitCounter(services(options))))

/** For tests: the gateway on a random port of 127.0.0.1, with an `HttpClient` aimed at it. */
export const makeTest = (options: MakeOptions = {}) =>
  Layer.unwrapEffect(Effect.map(Config.server, (settings) => ServiceKit.serveTest(Api, serveOptions(settings, 0)))).pipe(
    Layer.provide(handlers),
    Layer.provide(withRateLimitCounter(services(options)))
  )

export const HttpLive = make()
