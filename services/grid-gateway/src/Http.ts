/**
 * Handlers (thin: HTTP in, a call to the feature services, HTTP out) and the served service.
 * `HttpLive` is what `main.ts` runs; `make` / `makeTest` build the same service around other
 * parts (tests, the all-in-one launcher): a token verifier, a policy engine, a database, a
 * digital-twin client, the nudge sender, the broker connection.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { PgClient } from "@effect/sql-pg"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Authentication, TokenVerifier } from "@rec/auth"
import { Database } from "@rec/db"
import { DigitalTwinClient } from "@rec/digital-twin"
import { Mqtt } from "@rec/mqtt"
import { Engines, PolicyEngine } from "@rec/policy"
import { RateLimit, ServiceKit } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { AlertDeliveriesRepo } from "./AlertDeliveriesRepo.js"
import { AlertDispatcher } from "./AlertDispatcher.js"
import { AlertNudges } from "./AlertNudges.js"
import { AlertRules } from "./AlertRules.js"
import { AlertRulesRepo } from "./AlertRulesRepo.js"
import { Api } from "./Api.js"
import * as GridConfig from "./Config.js"
import { GridAccess } from "./GridAccess.js"
import { GridData } from "./GridData.js"
import * as Me from "./Me.js"
import { migrations } from "./migrations/index.js"
import { NotificationSettings } from "./NotificationSettings.js"
import { NotificationSettingsRepo } from "./NotificationSettingsRepo.js"
import * as PipelineListener from "./PipelineListener.js"
import * as TwinHttp from "./TwinHttp.js"
import { Webhooks } from "./Webhooks.js"

// ---------------------------------------------------------------------------------------------
// Handlers

/** `Cache-Control: public, max-age=3600` on this request's (successful) response. */
const cacheForAnHour = HttpApp.appendPreResponseHandler((_request, response) =>
  Effect.succeed(HttpServerResponse.setHeader(response, "cache-control", "public, max-age=3600"))
)

export const MeLive = HttpApiBuilder.group(Api, "me", (handlers) =>
  handlers.handle("me", ({ headers }) =>
    Effect.flatMap(Authentication.CurrentSubject, (subject) =>
      Either.match(Me.me(subject, headers["accept-language"]), { onLeft: Effect.fail, onRight: Effect.succeed }))))

/**
 * The digital twin's answer as it was decoded. The typed client validated it against the same
 * schema the contract declares for the route, and those schemas have no transformations, so
 * encoding it a second time would produce the same JSON: skipped (for a 27 KB `risks` answer,
 * about 270 µs of CPU per request).
 */
const forwarded = <A, E, R>(answer: Effect.Effect<A, E, R>) => Effect.map(answer, (value) => HttpServerResponse.unsafeJson(value))

export const GridLive = HttpApiBuilder.group(Api, "grid", (handlers) =>
  Effect.gen(function*() {
    const grid = yield* GridData
    return handlers
      .handle("windMap", ({ path, urlParams }) => forwarded(grid.windMap(path.network_id, urlParams)))
      .handle("windBosco", ({ path, urlParams }) => forwarded(grid.windBosco(path.network_id, urlParams)))
      .handle("windAlertDistribution", ({ path, urlParams }) => forwarded(grid.windAlertDistribution(path.network_id, urlParams)))
      .handle("windTrend", ({ path }) => forwarded(grid.windTrend(path.network_id)))
      .handle("heatMap", ({ path, urlParams }) => forwarded(grid.heatMap(path.network_id, urlParams)))
      .handle("heatAlertDistribution", ({ path, urlParams }) => forwarded(grid.heatAlertDistribution(path.network_id, urlParams)))
      .handle("heatTrend", ({ path }) => forwarded(grid.heatTrend(path.network_id)))
      .handle("substationsMap", ({ path }) => forwarded(grid.substationsMap(path.network_id)))
      .handle("filters", ({ path }) => forwarded(grid.filters(path.network_id)))
      .handle("summary", ({ path }) => forwarded(grid.summary(path.network_id)))
      .handle("tileIndex", ({ path }) => Effect.tap(forwarded(grid.tileIndex(path.network_id)), () => cacheForAnHour))
      // Assembled here: encoded (and so checked) against the contract's schema like any answer.
      .handle("shapes", ({ path, urlParams }) => Effect.tap(grid.shapes(path.network_id, urlParams), () => cacheForAnHour))
      .handle("risks", ({ path, urlParams }) => forwarded(grid.risks(path.network_id, urlParams)))
      .handle("risksNow", ({ path, urlParams }) => forwarded(grid.risksNow(path.network_id, urlParams)))
      .handle("trendline", ({ path, urlParams }) => forwarded(grid.trendline(path.network_id, urlParams)))
  }))

export const AlertRulesLive = HttpApiBuilder.group(Api, "alertRules", (handlers) =>
  Effect.gen(function*() {
    const rules = yield* AlertRules
    return handlers
      .handle("list", () => rules.list())
      .handle("create", ({ payload }) => rules.create(payload), { uninterruptible: true })
      .handle("update", ({ path, payload }) => rules.update(path.id, payload), { uninterruptible: true })
      .handle("delete", ({ path }) => rules.remove(path.id), { uninterruptible: true })
  }))

export const NotificationSettingsLive = HttpApiBuilder.group(Api, "notificationSettings", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* NotificationSettings
    return handlers
      .handle("get", () => settings.get())
      // A secret answered once must not be lost to a client that went away mid-write.
      .handle("put", ({ payload }) => settings.put(payload), { uninterruptible: true })
  }))

const handlers = Layer.mergeAll(MeLive, GridLive, AlertRulesLive, NotificationSettingsLive)

// ---------------------------------------------------------------------------------------------
// The service

type DatabaseServices = Database.Database | SqlClient | PgClient.PgClient

/** `R`: what the layers passed in need themselves (the launcher's identity provider, a test's parts). */
export interface MakeOptions<R = never> {
  /** Default port (default 8015; `PORT` still wins). */
  readonly port?: number | undefined
  /** Default: `@rec/auth`'s verifier from `PLATFORM_OIDC_*`. */
  readonly verifier?: Layer.Layer<TokenVerifier.TokenVerifier, unknown, R> | undefined
  /** Default: `Engines.layer` (embedded `PLATFORM_POLICIES_POLICIES_DIR`, or the policy service). */
  readonly engine?: Layer.Layer<PolicyEngine, unknown, R> | undefined
  /** Default: `@rec/db` from `DATABASE_URL` (PGlite in `./data/grid-gateway` when unset), migrated. */
  readonly database?: Layer.Layer<DatabaseServices, unknown, R> | undefined
  /**
   * Default: `TwinHttp.digitalTwinLayer`, the typed client as `DigitalTwinClient.layerConfig`
   * (`DIGITAL_TWIN_API_URL`, client credentials, `DT_CLIENT_SCOPE`) on the gateway's lean client.
   */
  readonly digitalTwin?: Layer.Layer<DigitalTwinClient, unknown, R> | undefined
  /** Default: `AlertNudges.layer` (the nudging service's typed client, `NUDGING_*`); unit tests give a fake. */
  readonly nudges?: Layer.Layer<AlertNudges, unknown, R> | undefined
  /** Default: `PipelineListener.mqttLayer` (`PLATFORM_MQTT_*`). */
  readonly mqtt?: Layer.Layer<Mqtt.Mqtt, unknown, R> | undefined
  /** Default: `Webhooks.layer` (`WEBHOOK_*`). */
  readonly webhooks?: Layer.Layer<Webhooks, unknown, R> | undefined
}

/** The gateway's own parts (features, repositories, dispatcher, listener, authentication). */
const own = Layer.mergeAll(
  Layer.mergeAll(GridData.Default, AlertRules.Default, NotificationSettings.Default).pipe(Layer.provideMerge(GridAccess.Default)),
  PipelineListener.layer.pipe(Layer.provide(AlertDispatcher.Default)),
  Authentication.layer
).pipe(Layer.provideMerge(Layer.mergeAll(AlertRulesRepo.Default, NotificationSettingsRepo.Default, AlertDeliveriesRepo.Default)))

/**
 * Everything the handlers and the listener need. The gateway's own parts are built fresh for
 * each gateway: layers are shared by reference within one layer graph, and two gateways in one
 * process (replicas in a test, the all-in-one launcher) must not share one listener. The parts
 * passed in (database, broker connection, ...) are shared when the same layer is passed.
 */
export const services = <R = never>(options: MakeOptions<R> = {}) => {
  const outside = Layer.mergeAll(
    options.database ?? Database.layer({ service: GridConfig.Service.name, migrations }),
    options.verifier ?? TokenVerifier.layer,
    options.engine ?? Engines.layer,
    options.mqtt ?? PipelineListener.mqttLayer,
    options.digitalTwin ?? TwinHttp.digitalTwinLayer,
    options.nudges ?? AlertNudges.layer,
    options.webhooks ?? Webhooks.layer
  )
  return Layer.fresh(own).pipe(Layer.provideMerge(outside))
}

type ReadinessRequirements = Database.Database | PolicyEngine | Mqtt.Mqtt

const readiness: ServiceKit.ReadinessOptions<ReadinessRequirements> = {
  checks: {
    database: Effect.flatMap(Database.Database, (db) => db.check),
    policies: Effect.flatMap(PolicyEngine, (engine) => engine.status).pipe(
      Effect.filterOrFail((status) => status.loaded || status.fail_open, () => new Error("no policies are loaded"))
    )
  },
  // The gateway serves its data without the broker; only alerts wait for it.
  optional: { mqtt: Effect.flatMap(Mqtt.Mqtt, (mqtt) => mqtt.check) }
}

/** The shared rate limits' counter (`Config.rateLimits`), in the service's own schema of its database. */
const withRateLimitCounter = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  Layer.unwrapEffect(Effect.map(Database.Database, (db) => RateLimit.sharedStoreLayer(db.schema))).pipe(Layer.provideMerge(layer))

const serveOptions = (port: number) => ({
  service: GridConfig.Service,
  port,
  docsPrefix: "/api",
  corsOrigins: GridConfig.defaultCorsOrigins,
  config: GridConfig.all,
  readiness,
  rateLimits: GridConfig.rateLimits
} as const)

/** The grid gateway on `HOST`:`PORT` (default 8015). */
export const make = <R = never>(options: MakeOptions<R> = {}) =>
  ServiceKit.serve(Api, serveOptions(options.port ?? GridConfig.defaultPort)).pipe(
    Layer.provide(handlers),
    Layer.provide(withRateLimitCounter(services(options)))
  )

/** For tests: the service on a random port of 127.0.0.1, with an `HttpClient` aimed at it. */
export const makeTest = <R = never>(options: MakeOptions<R> = {}) =>
  ServiceKit.serveTest(Api, serveOptions(0)).pipe(
    Layer.provide(handlers),
    Layer.provide(withRateLimitCounter(services(options)))
  )
