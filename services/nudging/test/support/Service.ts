/**
 * The nudging service under test: the dev identity provider (real RS256 tokens through a real
 * JWKS), the repository's policies in the embedded engine, a database (in-memory PGlite unless
 * a test gives PostgreSQL), the local push service and SMTP server, and a clock the test can set
 * (the service reads time from Effect's `Clock`: windows and daily caps are tested at their
 * boundaries). Configured through a map, never the process environment.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as SqlClient from "@effect/sql/SqlClient"
import { TokenVerifier } from "@rec/auth"
import { type Database, Testing } from "@rec/db"
import { DevIdp, type MintOptions } from "@rec/dev-idp"
import { Http, migrations } from "@rec/nudging-service"
import { Engines } from "@rec/policy"
import * as Clock from "effect/Clock"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as MailServer from "./MailServer.js"
import * as PushService from "./PushService.js"

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..")
export const repoPolicies = path.join(repoRoot, "policies")
export const bundledSeed = path.join(repoRoot, "services/nudging/seed")

// ---------------------------------------------------------------------------------------------
// A clock the test sets

export interface TestClock {
  readonly clock: Clock.Clock
  /** From now on the clock reads `iso` (and moves on with real time from there). */
  readonly set: (iso: string) => void
  readonly advance: (millis: number) => void
}

export const makeClock = (): TestClock => {
  const live = Clock.make()
  let offset = 0
  const now = () => live.unsafeCurrentTimeMillis() + offset
  return {
    clock: {
      [Clock.ClockTypeId]: Clock.ClockTypeId,
      unsafeCurrentTimeMillis: now,
      currentTimeMillis: Effect.sync(now),
      unsafeCurrentTimeNanos: () => BigInt(now()) * 1_000_000n,
      currentTimeNanos: Effect.sync(() => BigInt(now()) * 1_000_000n),
      sleep: (duration) => live.sleep(duration)
    },
    set: (iso) => {
      offset = Date.parse(iso) - live.unsafeCurrentTimeMillis()
    },
    advance: (millis) => {
      offset += millis
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The local push service and mail server, as services of the test

export class Push extends Context.Tag("test/Push")<Push, PushService.PushService>() {
  static readonly layer = Layer.scoped(Push, PushService.make)
}

export class Mail extends Context.Tag("test/Mail")<Mail, MailServer.MailServer>() {
  static readonly layer = Layer.scoped(Mail, MailServer.make)
}

export class Time extends Context.Tag("test/Time")<Time, TestClock>() {}

// ---------------------------------------------------------------------------------------------
// The service

export interface ServiceOptions {
  /** Environment of the service (merged over the test defaults). */
  readonly env?: Record<string, string> | undefined
  /** Default: a fresh in-memory PGlite database. */
  readonly database?: Layer.Layer<SqlClient.SqlClient | Database.Database, unknown> | undefined
}

/** Quiet logs: warnings and errors only (a failed delivery is a warning some tests expect). */
const quiet = Logger.minimumLogLevel(LogLevel.Warning)

/** The environment every test service starts with. */
export const testEnv = (push: PushService.PushService, mail: MailServer.MailServer): Record<string, string> => ({
  WEBPUSH_ALLOWED_ENDPOINTS: `${push.origin.replace(/:\d+$/, "")}:*`,
  SMTP_HOST: "127.0.0.1",
  SMTP_PORT: String(mail.port),
  SMTP_USE_TLS: "false",
  EMAIL_FROM: "Comunità Energetica <nudging@rec.example>",
  NUDGING_APP_BASE_URL: "http://app.rec.example",
  NUDGING_PUBLIC_URL: "http://nudging.rec.example",
  NUDGING_DELIVERY_POLL_SECONDS: "0.2",
  NUDGING_DELIVERY_RETRY_BASE_SECONDS: "0.2",
  NUDGING_DELIVERY_RETRY_MAX_SECONDS: "1",
  SCHEDULER_POLL_SECONDS: "3600",
  NUDGING_RULES_REFRESH_SECONDS: "3600",
  WEBPUSH_TTL_SECONDS: "3600",
  LOG_LEVEL: "warn"
})

/** One nudging service, with the given database (instances on one database share it). */
export const instance = (options: ServiceOptions = {}) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const idp = yield* DevIdp
    const push = yield* Push
    const mail = yield* Mail
    const time = yield* Time
    const env = { ...testEnv(push, mail), ...options.env }
    return Http.makeTest({
      engine: Engines.embeddedWith({ directory: repoPolicies, watch: false }),
      verifier: TokenVerifier.layerFor(idp.issuer, {
        algorithms: ["RS256"],
        audience: [idp.audience],
        clockTolerance: Duration.seconds(5)
      }),
      database: options.database ?? Testing.layerPglite({ service: "nudging", migrations }),
      clock: time.clock
    }).pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))))
  }))

/** What every test file needs besides the service: identity provider, push service, mail server, clock. */
export const support = Layer.mergeAll(DevIdp.layerTest, Push.layer, Mail.layer, Layer.sync(Time, makeClock))

/** The service and its surroundings; provides the service's layers too (Dispatcher, Scheduler, ...). */
export const serviceLayer = (options: ServiceOptions = {}) =>
  instance(options).pipe(Layer.provideMerge(support), Layer.provide(quiet))

// ---------------------------------------------------------------------------------------------
// Calls

export interface Reply {
  readonly status: number
  readonly body: unknown
  readonly headers: Readonly<Record<string, string>>
}

export interface Call {
  readonly token?: string | undefined
  readonly json?: unknown
  readonly text?: { readonly body: string; readonly contentType: string } | undefined
  readonly headers?: Record<string, string> | undefined
}

/** A raw HTTP call to the service, so tests see exact statuses and bodies. */
export const call = (method: "GET" | "POST" | "PUT" | "DELETE", url: string, options: Call = {}) =>
  Effect.gen(function*() {
    const client = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerDisabledWhen(() => true))
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

/** Mints a token (cached per identity provider, name and options within a test file). */
const minted = new Map<string, string>()
export const token = (name: string, options: MintOptions = {}) =>
  Effect.gen(function*() {
    const idp = yield* DevIdp
    const key = `${idp.issuer} ${name} ${JSON.stringify(options)}`
    const hit = minted.get(key)
    if (hit !== undefined) return hit
    const value = yield* Effect.orDie(idp.mint(name, options))
    minted.set(key, value)
    return value
  })

/** The `sub` of a dev user (what the service knows them by). */
export const userId = (name: string) =>
  Effect.map(DevIdp, (idp) => {
    const user = idp.identities.users.get(name)
    if (user === undefined) throw new Error(`no dev user ${name}`)
    return user.id
  })

/** Ingest as the grid gateway would (a service with nudging.ingest). */
export const ingest = (event: unknown, as = "svc-grid") =>
  Effect.flatMap(token(as), (t) => call("POST", "/ingest-event", { token: t, json: event }))

/** A unique recipient per test, so tests of one file do not deduplicate each other. */
let counter = 0
export const freshUser = (prefix = "user") => `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}`
