/**
 * The policy service under test: the dev identity provider (real RS256 tokens, real JWKS) and
 * the service on a random port, with the repository's policies, configured through a map
 * instead of the process environment. Started once per test file.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { TokenVerifier } from "@rec/auth"
import { DevIdp, type MintOptions } from "@rec/dev-idp"
import { Engines, type PolicyEngine } from "@rec/policy"
import { Audit, Http } from "@rec/policy-service"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const repoPolicies = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../policies")

/** The dev identity provider signs with RS256 only; a small tolerance keeps expiry tests short. */
export const verifierFor = (issuer: string): Layer.Layer<TokenVerifier.TokenVerifier> =>
  TokenVerifier.layerFor(issuer, { algorithms: ["RS256"], clockTolerance: Duration.seconds(5) })

export interface LogRecord {
  readonly level: string
  readonly message: unknown
  readonly fields: Readonly<Record<string, unknown>>
}

/** Every log record of the service under test (one test file per process). */
export const logs: Array<LogRecord> = []

/** Collects log records instead of printing them. */
const collectLogs = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ annotations, logLevel, message }) => {
    logs.push({
      level: logLevel.label,
      message: Array.isArray(message) && message.length === 1 ? message[0] : message,
      fields: Object.fromEntries(HashMap.toEntries(annotations))
    })
  })
)

/** Audit records go to the same list, as records of their own. */
const collectAudit = Layer.succeed(Audit.AuditSink, {
  write: (record: Audit.AuditRecord) =>
    logs.push({ level: record.level, message: record.message, fields: { ...record.fields, request_id: record.request_id } })
})

/** The access log lines written since `from`. */
export const accessSince = (from: number) => logs.slice(from).filter((r) => r.fields["http.status"] !== undefined)

/** The audit records (`policy_decision`) written since `from`. */
export const auditSince = (from: number) => logs.slice(from).filter((r) => r.message === "policy_decision")

export interface ServiceOptions {
  /** Environment of the service (a map; the process environment is not read). */
  readonly env?: Record<string, string> | undefined
  /** Policy directory (default: the repository's `policies/`). */
  readonly directory?: string | undefined
  readonly engine?: Layer.Layer<PolicyEngine> | undefined
  /** The decision endpoints' fast routes (default on, as in production). */
  readonly fastRoutes?: boolean | undefined
}

/** Dev IdP + policy service; provides `DevIdp` and an `HttpClient` aimed at the service. */
export const serviceLayer = (options: ServiceOptions = {}) =>
  Layer.unwrapEffect(
    Effect.map(DevIdp, (idp) =>
      Http.makeTest({
        engine: options.engine ?? Engines.embeddedWith({ directory: options.directory ?? repoPolicies, watch: false }),
        verifier: verifierFor(idp.issuer),
        fastRoutes: options.fastRoutes
      }))
  ).pipe(
    // Tests reload more than once a minute: the limit is off unless a test sets it.
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ RATE_LIMIT_RELOAD: "off", ...options.env }))))),
    Layer.provideMerge(DevIdp.layerTest),
    Layer.provide(Layer.merge(collectLogs, collectAudit))
  )

export interface Reply {
  readonly status: number
  readonly body: unknown
  readonly headers: Readonly<Record<string, string>>
}

export interface Call {
  readonly token?: string | undefined
  readonly headers?: Record<string, string> | undefined
  /** A JSON body (default), a form body, or raw text with a content type. */
  readonly json?: unknown
  readonly form?: Record<string, string> | undefined
  readonly text?: { readonly body: string; readonly contentType: string } | undefined
}

/** A raw HTTP call, so tests see exact statuses and bodies. */
export const call = (method: "GET" | "POST", url: string, options: Call = {}) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = method === "GET" ? HttpClientRequest.get(url) : HttpClientRequest.post(url)
    if (options.token !== undefined) request = HttpClientRequest.bearerToken(request, options.token)
    if (options.headers !== undefined) request = HttpClientRequest.setHeaders(request, options.headers)
    if (options.form !== undefined) request = HttpClientRequest.bodyUrlParams(request, options.form)
    else if (options.text !== undefined) request = HttpClientRequest.bodyText(request, options.text.body, options.text.contentType)
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

export const post = (url: string, options: Call = {}) => call("POST", url, options)

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
