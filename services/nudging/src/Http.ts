/**
 * Handlers (thin: authorize, call a service, translate its answer to the contract) and the
 * served service. `HttpLive` is what `main.ts` runs; `make`/`makeTest` build the same service
 * around another policy engine, token verifier, database or settings (tests, the launcher).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Authentication, TokenVerifier } from "@rec/auth"
import { Database } from "@rec/db"
import { Engines, type PolicyEngine } from "@rec/policy"
import { HttpErrors, RateLimit, ServiceKit, Unavailability } from "@rec/platform"
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Access } from "./Access.js"
import { Api, type IngestBatchRequest, type ScheduleBatchRequest } from "./Api.js"
import { ClickTracking } from "./ClickTracking.js"
import * as Config from "./Config.js"
import { DeliveriesRepo } from "./DeliveriesRepo.js"
import { Dispatcher } from "./Dispatcher.js"
import * as Domain from "./Domain.js"
import { Email } from "./Email.js"
import { Inbox } from "./Inbox.js"
import { Ingest, type IngestInput, type IngestReport } from "./Ingest.js"
import { Keys } from "./Keys.js"
import { migrations } from "./migrations/index.js"
import { NotificationsRepo } from "./NotificationsRepo.js"
import { Orchestrator } from "./Orchestrator.js"
import { Preferences } from "./Preferences.js"
import { PreferencesRepo } from "./PreferencesRepo.js"
import { RuleBook } from "./RuleBook.js"
import { RulesRepo } from "./RulesRepo.js"
import { ScheduledRepo } from "./ScheduledRepo.js"
import { Scheduler } from "./Scheduler.js"
import { Settings } from "./Settings.js"
import { Subscriptions } from "./Subscriptions.js"
import { SubscriptionsRepo } from "./SubscriptionsRepo.js"
import { WebPush } from "./WebPush.js"

/**
 * A database failure as the contract answers it. An outage (connection refused or lost,
 * PostgreSQL shutting down) is left to the kit, which answers 503 with `Retry-After` and logs it
 * without a stack; any other SQL failure is logged in full and answered 503.
 */
const databaseUnavailable = (error: SqlError) =>
  Unavailability.isDatabaseUnavailable(error)
    ? Effect.die(error)
    : Effect.logError("database operation failed", error).pipe(
      Effect.zipRight(Effect.fail(new HttpErrors.ServiceUnavailable({ detail: "The database is unavailable; try again shortly" })))
    )

const orUnavailable = <A, E, R>(effect: Effect.Effect<A, E | SqlError, R>) =>
  Effect.catchIf(effect, (e): e is SqlError => (e as { _tag?: unknown })._tag === "SqlError", databaseUnavailable)

// ---------------------------------------------------------------------------------------------
// Ingest

/** The report as the contract's answer: a success body, the empty 204, or an error with outcomes. */
export const answer = (report: IngestReport) => {
  const fields = {
    event_type: report.eventType,
    user_id: report.userId,
    community_id: report.communityId,
    outcomes: report.outcomes
  }
  const error = { detail: report.detail, ...(report.issues.length > 0 ? { issues: report.issues } : {}), ...fields }
  switch (report.status) {
    case 200:
      return Effect.succeed<Domain.IngestDispatched | Domain.IngestSuppressed | Domain.NoMatchingRule>({ result: "dispatched", ...fields })
    case 202:
      return Effect.succeed({ result: "suppressed" as const, ...fields })
    case 204:
      return Effect.succeed(new Domain.NoMatchingRule())
    case 400:
      return Effect.fail<Domain.IngestFailure>(new Domain.IngestRejected(error))
    case 409:
      return Effect.fail(new Domain.IngestDeduplicated(error))
    case 422:
      return Effect.fail(new Domain.IngestInvalidFacts(error))
  }
}

/** Events of one `POST /ingest-events/batch` ingested at the same time (as that many single requests would be). */
const ingestBatchConcurrency = 8

export const IngestLive = HttpApiBuilder.group(Api, "ingest", (handlers) =>
  Effect.gen(function*() {
    const ingest = yield* Ingest
    const access = yield* Access
    const handle = (payload: IngestInput) =>
      Effect.gen(function*() {
        // The ingest decision does not depend on the recipient: the same question for every
        // event keeps the policy engine's decision cache warm.
        yield* access.require("ingest", "event", "")
        const report = yield* orUnavailable(ingest.ingest(payload))
        return yield* answer(report)
      })
    /** Each event as `handle` would ingest it, its report as a result; one authorization for the batch. */
    const batch = (request: IngestBatchRequest) =>
      Effect.gen(function*() {
        yield* access.require("ingest", "event", "")
        const reports = yield* orUnavailable(Effect.forEach(request.events, (event) => ingest.ingest(event), { concurrency: ingestBatchConcurrency }))
        return {
          results: reports.map((report) => ({
            status: report.status,
            event_type: report.eventType,
            user_id: report.userId,
            community_id: report.communityId,
            outcomes: report.outcomes,
            detail: report.detail
          }))
        }
      }).pipe(Effect.withSpan("Http.ingestBatch", { attributes: { "nudging.events": request.events.length } }))
    return handlers
      .handle("ingestEvent", ({ payload }) => handle(payload))
      .handle("adminIngestEvent", ({ payload }) => handle(payload))
      .handle("ingestBatch", ({ payload }) => batch(payload))
  }))

// ---------------------------------------------------------------------------------------------
// Scheduled events

export const ScheduledLive = HttpApiBuilder.group(Api, "scheduled", (handlers) =>
  Effect.gen(function*() {
    const scheduler = yield* Scheduler
    const access = yield* Access

    const schedule = (request: Domain.ScheduleRequest) =>
      Effect.gen(function*() {
        yield* access.require("ingest", "scheduled_event", "")
        const result = yield* orUnavailable(scheduler.schedule(request))
        if (result._tag === "Invalid") {
          return yield* Effect.fail(new HttpErrors.UnprocessableEntity({
            detail: `Facts are missing or invalid: ${result.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
            issues: result.issues
          }))
        }
        return result.created ? { created: true as const, event: result.event } : { created: false as const, event: result.event }
      })

    const notFound = (key: string) => new HttpErrors.NotFound({ detail: `No scheduled event with external key ${key}` })

    const scheduleBatch = (request: ScheduleBatchRequest) =>
      Effect.gen(function*() {
        yield* access.require("ingest", "scheduled_event", "")
        const result = yield* orUnavailable(scheduler.scheduleMany(request.events))
        if (result._tag === "Invalid") {
          return yield* Effect.fail(new HttpErrors.UnprocessableEntity({
            detail: `Facts are missing or invalid: ${result.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
            issues: result.issues
          }))
        }
        const created = result.events.filter((e) => e.created).length
        return {
          created,
          replaced: result.events.length - created,
          events: result.events.map((e) => ({ id: e.id, external_key: e.externalKey, created: e.created }))
        }
      })

    return handlers
      .handle("schedule", ({ payload }) => schedule(payload))
      .handle("adminSchedule", ({ payload }) => schedule(payload))
      .handle("scheduleBatch", ({ payload }) => scheduleBatch(payload))
      .handle("get", ({ path }) =>
        Effect.gen(function*() {
          yield* access.require("ingest", "scheduled_event", "")
          const event = yield* orUnavailable(scheduler.byKey(path.external_key))
          return event ?? (yield* Effect.fail(notFound(path.external_key)))
        }))
      .handle("cancel", ({ path }) =>
        Effect.gen(function*() {
          yield* access.require("ingest", "scheduled_event", "")
          const state = yield* orUnavailable(scheduler.cancel(path.external_key))
          if (state === "missing") return yield* Effect.fail(notFound(path.external_key))
          if (state !== "cancelled") {
            return yield* Effect.fail(new HttpErrors.Conflict({ detail: `The event ${path.external_key} is already ${state}` }))
          }
        }))
  }))

// ---------------------------------------------------------------------------------------------
// Notifications

export const NotificationsLive = HttpApiBuilder.group(Api, "notifications", (handlers) =>
  Effect.gen(function*() {
    const inbox = yield* Inbox
    return handlers
      .handle("list", ({ urlParams }) => orUnavailable(inbox.list(urlParams)))
      .handle("get", ({ path }) => orUnavailable(inbox.get(path.id)))
      .handle("markRead", ({ path }) => orUnavailable(inbox.markRead(path.id)))
      .handle("delete", ({ path }) => orUnavailable(inbox.remove(path.id)))
  }))

// ---------------------------------------------------------------------------------------------
// Preferences

export const PreferencesLive = HttpApiBuilder.group(Api, "preferences", (handlers) =>
  Effect.gen(function*() {
    const preferences = yield* Preferences
    const access = yield* Access
    return handlers
      .handle("get", ({ urlParams }) =>
        Effect.zipRight(
          access.require("read", "preferences", urlParams.user_id),
          orUnavailable(preferences.get(urlParams.user_id, urlParams.community_id))
        ))
      .handle("put", ({ payload }) =>
        Effect.zipRight(access.require("write", "preferences", payload.user_id), orUnavailable(preferences.put(payload))))
      .handle("kinds", ({ urlParams }) => preferences.kinds(urlParams.lang))
  }))

// ---------------------------------------------------------------------------------------------
// Web push

export const WebPushLive = HttpApiBuilder.group(Api, "webpush", (handlers) =>
  Effect.gen(function*() {
    const subscriptions = yield* Subscriptions
    const access = yield* Access
    return handlers
      .handle("subscribe", ({ payload }) =>
        Effect.zipRight(access.require("write", "subscription", payload.user_id), orUnavailable(subscriptions.subscribe(payload))))
      .handle("unsubscribe", ({ payload }) =>
        Effect.zipRight(access.require("write", "subscription", payload.user_id), orUnavailable(subscriptions.unsubscribe(payload))))
      .handle("sendTest", ({ payload }) =>
        Effect.zipRight(access.require("send_test", "subscription", payload.user_id), orUnavailable(subscriptions.sendTest(payload))))
  }))

// ---------------------------------------------------------------------------------------------
// Public: VAPID key, click tracking

export const PublicLive = HttpApiBuilder.group(Api, "public", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* Keys
    const clicks = yield* ClickTracking
    const inbox = yield* Inbox
    const settings = yield* Settings
    return handlers
      .handle("vapidPublicKey", () => Effect.succeed({ public_key: keys.vapid.publicKey }))
      .handle("trackClick", ({ urlParams }) =>
        Effect.gen(function*() {
          const verified = clicks.verify(urlParams.token)
          if (verified._tag === "Left") return yield* Effect.fail(new HttpErrors.BadRequest({ detail: verified.left.reason }))
          const action = urlParams.action?.trim() || "default"
          const url = yield* orUnavailable(inbox.click(verified.right, action))
          if (url === undefined) return yield* Effect.fail(new HttpErrors.NotFound({ detail: `No notification ${verified.right}` }))
          return HttpServerResponse.redirect(`${settings.appBaseUrl}${url}`, { status: 303 })
        }))
  }))

// ---------------------------------------------------------------------------------------------
// The service

/** Every service of the nudging service, over a database, settings, a policy engine and an HTTP client. */
export const services = Layer.mergeAll(Scheduler.Default, Inbox.Default, Preferences.Default, Subscriptions.Default).pipe(
  Layer.provideMerge(Ingest.Default),
  Layer.provideMerge(Layer.mergeAll(Orchestrator.Default, Dispatcher.Default)),
  Layer.provideMerge(Layer.mergeAll(WebPush.Default, Email.Default, ClickTracking.Default, RuleBook.Default, Access.Default)),
  Layer.provideMerge(Keys.Default),
  Layer.provideMerge(
    Layer.mergeAll(
      RulesRepo.Default,
      NotificationsRepo.Default,
      PreferencesRepo.Default,
      SubscriptionsRepo.Default,
      DeliveriesRepo.Default,
      ScheduledRepo.Default
    )
  )
)

export const handlers = Layer.mergeAll(IngestLive, ScheduledLive, NotificationsLive, PreferencesLive, WebPushLive, PublicLive)

export interface MakeOptions {
  /** Default port (default 8016; `PORT` still wins). */
  readonly port?: number | undefined
  /** Default: `Engines.layer` (embedded, or the policy service when `POLICY_SERVICE_URL` is set). */
  readonly engine?: Layer.Layer<PolicyEngine> | undefined
  /** Default: a `TokenVerifier` from `PLATFORM_OIDC_*`. */
  readonly verifier?: Layer.Layer<TokenVerifier.TokenVerifier> | undefined
  /** Default: `@rec/db` from `DATABASE_URL` (PGlite in `./data/nudging` when unset). */
  readonly database?: Layer.Layer<SqlClient.SqlClient | Database.Database, unknown> | undefined
  /** Default: from the environment. */
  readonly settings?: Layer.Layer<Settings, unknown> | undefined
  /**
   * The clock of the service's logic (windows, daily caps, schedules, retries): tests set it to
   * the boundaries they test. Token verification keeps the real clock. Default: the real clock.
   */
  readonly clock?: Clock.Clock | undefined
}

export const databaseLayer = Database.layer({ service: Config.Service.name, migrations })

/** The handlers' requirements, around the given (or default) infrastructure. */
const infrastructure = (options: MakeOptions) =>
  // The clock is set for the construction of the services only (they keep it), not for the
  // server's requests: `Layer.setClock` would reach the token verifier too.
  (options.clock === undefined ? services : services.pipe(Layer.locallyEffect(Effect.withClock(options.clock)))).pipe(
    Layer.provideMerge(Layer.mergeAll(
      options.database ?? databaseLayer,
      options.settings ?? Settings.layer,
      options.engine ?? Engines.layer
    )),
    Layer.provideMerge(Authentication.layer),
    Layer.provideMerge(options.verifier ?? TokenVerifier.layer)
  )

/** The shared rate limits' counter (`Config.rateLimits`), in the service's own schema of its database. */
const withRateLimitCounter = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  Layer.unwrapEffect(Effect.map(Database.Database, (db) => RateLimit.sharedStoreLayer(db.schema))).pipe(Layer.provideMerge(layer))

const serveOptions = (port: number) => ({
  service: Config.Service,
  port,
  config: Config.all,
  readiness: { database: Effect.flatMap(Database.Database, (db) => db.check) },
  rateLimits: Config.rateLimits
} as const)

/** The nudging service on `HOST`:`PORT` (default 8016). */
export const make = (options: MakeOptions = {}) =>
  ServiceKit.serve(Api, serveOptions(options.port ?? Config.defaultPort)).pipe(
    Layer.provide(handlers),
    Layer.provide(withRateLimitCounter(infrastructure(options)))
  )

/** For tests: the service on a random port of 127.0.0.1, with an `HttpClient` aimed at it. */
export const makeTest = (options: MakeOptions = {}) =>
  ServiceKit.serveTest(Api, serveOptions(0)).pipe(
    Layer.provide(handlers),
    Layer.provideMerge(withRateLimitCounter(infrastructure(options)))
  )

export const HttpLive = make()
