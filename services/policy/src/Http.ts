/**
 * Handlers (thin: HTTP in, a question to `Decisions`/`MqttAuth`, HTTP out) and the served
 * service. `HttpLive` is what `main.ts` runs; `make` builds the same service around another
 * `PolicyEngine` or token verifier (tests, the all-in-one launcher).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Authentication, type AuthFailure, TokenVerifier } from "@rec/auth"
import { type Decision, Engines, type PolicyEngine, PolicyInput } from "@rec/policy"
import { RequestContext, ServiceKit } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Api, PolicyAuth, PolicyAuthOptional } from "./Api.js"
import { Audit } from "./Audit.js"
import * as Config from "./Config.js"
import { Decisions } from "./Decisions.js"
import * as Domain from "./Domain.js"
import * as Errors from "./Errors.js"
import * as Fast from "./Fast.js"
import * as Inputs from "./Inputs.js"
import { MqttAuth, tokenFrom } from "./MqttAuth.js"
import * as Rpc from "./Rpc.js"

// ---------------------------------------------------------------------------------------------
// Authentication middleware ({detail} bodies, spec section 7)

const toDetail = (failure: AuthFailure.AuthFailure) =>
  failure.isCredentialProblem
    ? new Errors.Unauthorized({ detail: failure.message })
    : new Errors.Unavailable({ detail: "The identity provider's signing keys are unavailable" })

export const PolicyAuthLive = Layer.effect(PolicyAuth, Authentication.bearer({ onFailure: toDetail }))

export const PolicyAuthOptionalLive = Layer.effect(
  PolicyAuthOptional,
  Effect.gen(function*() {
    const { allowAnonymous } = yield* Config.settings
    if (allowAnonymous) return yield* Authentication.bearerOptional({ onFailure: toDetail })
    const required = yield* Authentication.bearer({ onFailure: toDetail })
    return { bearer: (token) => Effect.map(required.bearer(token), Option.some) }
  })
)

// ---------------------------------------------------------------------------------------------
// Decisions

const fromDecisionError = Errors.fromDecision

type Headers = typeof Domain.DecisionHeaders.Type

export const DecisionsLive = HttpApiBuilder.group(Api, "decisions", (handlers) =>
  Effect.gen(function*() {
    const decisions = yield* Decisions

    const answer = (question: Inputs.Question, headers: Headers) =>
      Effect.flatMap(RequestContext.requestId, (requestId) =>
        decisions.decide(question, headers["x-source-service"]).pipe(
          Effect.map((d): Domain.DecisionResponse => ({ allowed: d.allowed, reason: d.reason, request_id: requestId })),
          Effect.mapError(fromDecisionError)
        ))

    /** The authenticated caller as the policies see it, and the request id. */
    const caller = Effect.zip(
      Effect.map(Authentication.CurrentSubject, PolicyInput.subjectOf),
      RequestContext.requestId
    )

    /** An endpoint whose caller must be authenticated: question, answer. */
    const decided = <A>(question: (subject: PolicyInput.PolicySubject, requestId: string, payload: A) => Inputs.Question) =>
    ({ headers, payload }: { readonly headers: Headers; readonly payload: A }) =>
      Effect.flatMap(caller, ([subject, requestId]) => answer(question(subject, requestId, payload), headers))

    return handlers
      .handle("authorize", ({ headers, payload }) =>
        Effect.gen(function*() {
          const type = payload.resource.type
          if (!Domain.isResourceType(type)) {
            return yield* Effect.fail(new Errors.BadRequest({ detail: `Unknown resource type: ${type}` }))
          }
          const subject = PolicyInput.maybeSubjectOf(yield* Authentication.MaybeSubject)
          const requestId = yield* RequestContext.requestId
          return yield* answer(Inputs.authorize(subject, requestId, type, payload), headers)
        }))
      .handle("datasetAccess", decided(Inputs.datasetAccess))
      .handle("datasetFilters", ({ headers, payload }) =>
        Effect.gen(function*() {
          const [subject, requestId] = yield* caller
          const decision = yield* decisions.decide(Inputs.datasetFilters(subject, requestId, payload), headers["x-source-service"]).pipe(
            Effect.mapError(fromDecisionError)
          )
          return {
            allowed: decision.allowed,
            // Denied: no filters, whatever the policy computed.
            filters: decision.allowed ? decision.filters ?? [] : [],
            reason: decision.reason,
            request_id: requestId
          }
        }))
      .handle("pipelineTransition", decided(Inputs.pipelineTransition))
      .handle("dtAccess", decided(Inputs.dtAccess))
      .handle("dtEvent", decided(Inputs.dtEvent))
      .handle("userdataAccess", decided(Inputs.userdataAccess))
  }))

// ---------------------------------------------------------------------------------------------
// MQTT

export const MqttLive = HttpApiBuilder.group(Api, "mqtt", (handlers) =>
  Effect.gen(function*() {
    const mqtt = yield* MqttAuth
    const verifier = yield* TokenVerifier.TokenVerifier
    const { mqttSource } = yield* Config.settings
    const jwtHeader = verifier.config.jwtHeaderName

    /** The header token; `Left` when `Authorization` is malformed. */
    const headerToken = (request: HttpServerRequest.HttpServerRequest) =>
      Either.match(Authentication.extractToken(request.headers, jwtHeader), {
        onLeft: () => Effect.fail(new Errors.MqttDenied({ reason: "invalid authorization header" })),
        onRight: Effect.succeed
      })

    /** Header first; otherwise the body's credential fields that hold a token. */
    const tokenOf = (
      request: HttpServerRequest.HttpServerRequest,
      body: typeof Domain.MqttCredentials.Type,
      fields: ReadonlyArray<"username" | "password">
    ) =>
      Effect.map(headerToken(request), (token) =>
        Option.isSome(token) ? token : tokenFrom(...fields.map((f) => body?.[f])))

    const source = (request: HttpServerRequest.HttpServerRequest) => request.headers["x-source-service"] ?? mqttSource

    return handlers
      .handle("user", ({ payload, request }) => Effect.flatMap(tokenOf(request, payload, ["password", "username"]), mqtt.user))
      .handle("acl", ({ payload, request }) =>
        Effect.gen(function*() {
          const header = yield* headerToken(request)
          const token = Option.isSome(header) ? header : tokenFrom(payload.username)
          return yield* mqtt.acl(token, payload, source(request))
        }))
      .handle("superuser", ({ payload, request }) =>
        Effect.flatMap(tokenOf(request, payload, ["username", "password"]), (token) => mqtt.superuser(token, source(request))))
  }))

// ---------------------------------------------------------------------------------------------
// Health, readiness, reload

const isAdmin = (subject: { inGroup: (g: string) => boolean; hasScope: (s: string) => boolean }) =>
  subject.inGroup("admins") || subject.hasScope("policy.admin")

export const SystemLive = HttpApiBuilder.group(Api, "system", (handlers) =>
  Effect.gen(function*() {
    const decisions = yield* Decisions

    /** `/health` and `/ready` bodies from the engine's status; no status at all is unhealthy. */
    const report = decisions.status.pipe(
      Effect.catchTag("PolicyUnavailable", (e) =>
        Effect.succeed<Decision.PolicyStatus>({
          loaded: false,
          policy_count: 0,
          packages: [],
          last_load_error: { message: e.message, problems: [], at: new Date().toISOString() },
          fail_open: false,
          cache: { enabled: false, hits: 0, misses: 0, size: 0, max_size: 0, ttl_seconds: 0 }
        })),
      Effect.map((status) => {
        const health: Domain.HealthResponse = {
          status: !status.loaded ? "unhealthy" : status.last_load_error ? "degraded" : "healthy",
          version: Config.Service.version,
          policies_loaded: status.loaded,
          details: {
            policy_count: status.policy_count,
            packages: status.packages,
            ...(status.loaded_at === undefined ? {} : { loaded_at: status.loaded_at }),
            ...(status.last_load_error === undefined ? {} : { last_load_error: status.last_load_error })
          }
        }
        const ready: Domain.ReadyResponse = { ...health, details: { ...health.details, cache: status.cache } }
        return { health, ready }
      })
    )

    return handlers
      .handle("health", () => Effect.map(report, (r) => r.health))
      .handle("ready", () =>
        Effect.flatMap(report, (r) =>
          r.ready.policies_loaded ? Effect.succeed(r.ready) : Effect.fail(new Domain.NotReady(r.ready))))
      .handle("reload", () =>
        Effect.gen(function*() {
          const subject = yield* Authentication.CurrentSubject
          if (!isAdmin(subject)) {
            return yield* Effect.fail(
              new Errors.Forbidden({ detail: "Reloading policies needs the admins group or the policy.admin scope" })
            )
          }
          const result = yield* decisions.reload.pipe(
            Effect.catchTag("PolicyLoadError", (error) =>
              Effect.flatMap(decisions.status, (status) =>
                Effect.fail(
                  new Domain.ReloadFailed({
                    status: "error",
                    detail: error.message,
                    errors: error.problems,
                    policy_count: status.policy_count
                  })
                ))),
            Effect.catchTags({
              PolicyUnavailable: (e) => Effect.fail(new Errors.Unavailable({ detail: e.message })),
              PolicyAccessDenied: (e) => Effect.fail(new Errors.Forbidden({ detail: e.message }))
            })
          )
          return { status: "success" as const, policy_count: result.policy_count, packages: result.packages }
        }))
  }))

// ---------------------------------------------------------------------------------------------
// The service

export interface MakeOptions {
  /** Default port (default 8009; `PORT` still wins). */
  readonly port?: number | undefined
  /** Default: `Engines.embedded` (the directory of `PLATFORM_POLICIES_POLICIES_DIR`). */
  readonly engine?: Layer.Layer<PolicyEngine> | undefined
  /** Default: a `TokenVerifier` from `PLATFORM_OIDC_*` and the `POLICY_TOKEN_CACHE_*` overrides. */
  readonly verifier?: Layer.Layer<TokenVerifier.TokenVerifier> | undefined
  /** The decision endpoints' fast routes (`Fast`; default true): tests compare both paths. */
  readonly fastRoutes?: boolean | undefined
}

/** Everything the handlers need, around the given engine and verifier. */
export const services = (options: MakeOptions = {}) => {
  const verifier = options.verifier ?? Layer.unwrapEffect(Effect.map(Config.verifier, TokenVerifier.layerWith))
  const decisions = Decisions.Default.pipe(Layer.provide(Audit.Default), Layer.provide(options.engine ?? Engines.embedded))
  return Layer.mergeAll(MqttAuth.Default.pipe(Layer.provideMerge(decisions)), PolicyAuthLive, PolicyAuthOptionalLive).pipe(
    Layer.provideMerge(verifier)
  )
}

const serveOptions = (settings: Config.ServiceSettings, port: number) => ({
  service: Config.Service,
  port,
  rateLimits: Config.rateLimits,
  // The spec fixes both bodies; the contract declares them.
  health: false,
  readiness: false,
  config: Config.all,
  env: ["POLICY_SERVICE_URL"],
  routes: Rpc.layer,
  maxBodySize: settings.maxBodyBytes,
  accessLog: settings.accessLog
} as const)

const handlers = Layer.mergeAll(DecisionsLive, MqttLive, SystemLive)

/** The contract's handlers and, unless turned off, the decision endpoints' fast routes. */
const handlersWith = (options: MakeOptions) =>
  options.fastRoutes === false ? handlers : Layer.merge(handlers, Fast.layer)

/** The policy service on `HOST`:`PORT` (default 8009). */
export const make = (options: MakeOptions = {}) =>
  Layer.unwrapEffect(Effect.map(Config.settings, (s) => ServiceKit.serve(Api, serveOptions(s, options.port ?? Config.defaultPort)))).pipe(
    Layer.provide(handlersWith(options)),
    Layer.provide(services(options))
  )

/** For tests: the service on a random port, with an `HttpClient` aimed at it. */
export const makeTest = (options: MakeOptions = {}) =>
  Layer.unwrapEffect(Effect.map(Config.settings, (s) => ServiceKit.serveTest(Api, serveOptions(s, 0)))).pipe(
    Layer.provide(handlersWith(options)),
    Layer.provide(services(options))
  )

export const HttpLive = make()
