/**
 * One way to serve an `HttpApi` contract. Every service's `Http.ts` ends with
 *
 * ```ts
 * export const HttpLive = ServiceKit.serve(Api, { service: Service, port: 8009 }).pipe(
 *   Layer.provide([PolicyGroupLive, Authentication.layer])
 * )
 * ```
 *
 * and its `main.ts` is `ServiceKit.run(HttpLive, Service)`.
 *
 * The server is `HttpLayerRouter` based, so the contract, the kit's routes (docs, health,
 * readiness), raw routes and an `@effect/rpc` server can share one port: pass extra router
 * layers as `routes`. See the README for the full list of what the kit adds.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Headers from "@effect/platform/Headers"
import type * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Docs from "./Docs.js"
import * as DotEnv from "./DotEnv.js"
import * as Cors from "./Cors.js"
import * as Health from "./Health.js"
import * as JsonBody from "./JsonBody.js"
import * as Logging from "./Logging.js"
import * as NodeServer from "./NodeServer.js"
import * as RateLimit from "./RateLimit.js"
import type * as RequestContext from "./RequestContext.js"
import * as RequestHandler from "./RequestHandler.js"
import * as ServiceConfig from "./ServiceConfig.js"
import * as Tracing from "./Tracing.js"

export type { ServiceInfo } from "./Tracing.js"

export interface ReadinessOptions<R> {
  readonly checks: Health.Checks<R>
  /** Dependencies the service serves without: a failure answers 200 `degraded`, not 503. */
  readonly optional?: Health.Checks<R> | undefined
  readonly path?: `/${string}` | undefined
  /** Per check (default 5 seconds). */
  readonly timeout?: Duration.DurationInput | undefined
}

export interface ServeOptions<RReady = never, ERoutes = never, RRoutes = never> {
  readonly service: Tracing.ServiceInfo
  /** Default port (design.md's table); `PORT` overrides it. */
  readonly port: number
  /** Prefix of `/openapi.json`, `/docs`, `/redoc` (the grid gateway uses `/api`). */
  readonly docsPrefix?: string | undefined
  /** Origins allowed when `CORS_ORIGINS` is unset (default none). */
  readonly corsOrigins?: ReadonlyArray<string> | undefined
  /** Request headers browsers may send besides the standard set (`Cors.allowedHeaders`). */
  readonly corsHeaders?: ReadonlyArray<string> | undefined
  /** The kit's `GET /health`; `false` when the contract declares its own. */
  readonly health?: boolean | { readonly path: `/${string}` } | undefined
  /** Readiness checks for `GET /ready` (always present unless `false`). */
  readonly readiness?: false | Health.Checks<RReady> | ReadinessOptions<RReady> | undefined
  /** More `HttpLayerRouter` routes on the same server: raw routes, an RPC server. */
  readonly routes?: Layer.Layer<never, ERoutes, RRoutes> | undefined
  /** The service's own `Config` (from `Config.ts`): its env names are checked for misspellings. */
  readonly config?: Config.Config<unknown> | undefined
  /** Env names read outside `config` (conditionally read ones). */
  readonly env?: ReadonlyArray<string> | undefined
  /** One log line per request (default true; never for `/health` and `/ready`). */
  readonly accessLog?: boolean | undefined
  /** Largest request body read into memory (default 10 MiB); larger ones are refused with 413. */
  readonly maxBodySize?: FileSystem.SizeInput | undefined
  /** Deepest nesting of arrays and objects in a JSON body (default 64); deeper ones are a 400. */
  readonly maxJsonDepth?: number | undefined
  /**
   * Rate limits per client (`RateLimit`), each overridable with `RATE_LIMIT_<NAME>`; `shared`
   * rules need `RateLimit.SharedStore` (`RateLimit.sharedStoreLayer(schema)`) provided.
   */
  readonly rateLimits?: ReadonlyArray<RateLimit.Rule> | undefined
}

/** What the handlers of an `HttpApi` need: its group implementations and middleware. */
export type ApiRequirements<A> = A extends HttpApi.HttpApi<infer Id, infer Groups, infer _E, infer R> ?
    | HttpApiGroup.HttpApiGroup.ToService<Id, Groups>
    | HttpApiGroup.HttpApiGroup.ErrorContext<Groups>
    | R
  : never

/** Services the kit provides to routes itself. */
type KitProvided =
  | HttpLayerRouter.HttpRouter
  | NodeServer.ServerLifecycle
  | NodeServer.NodeHttpServer
  | NodeServer.PlatformServices
  | RequestContext.CurrentRequest

const isReadinessOptions = <R>(
  value: Health.Checks<R> | ReadinessOptions<R>
): value is ReadinessOptions<R> => "checks" in value && typeof value.checks === "object" && !Effect.isEffect(value.checks)

const defaultRedactedHeaders = ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"]

/** The served application (routes, middleware, drain) on top of a server layer. */
const make = <
  Id extends string,
  Groups extends HttpApiGroup.HttpApiGroup.Any,
  E,
  R,
  RReady,
  ERoutes,
  RRoutes,
  ServerOut extends HttpServer.HttpServer | NodeServer.ServerLifecycle | NodeServer.NodeHttpServer | NodeServer.PlatformServices
>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  options: ServeOptions<RReady, ERoutes, RRoutes>,
  server: (config: ServiceConfig.CommonConfig) => Layer.Layer<ServerOut, HttpServerError.ServeError>
) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const config = yield* ServiceConfig.common({ port: options.port, corsOrigins: options.corsOrigins })
    const tracing = yield* Tracing.TracingEnabled
    const serviceNames = options.config === undefined ? [] : yield* ServiceConfig.envNames(options.config)
    const rateLimitNames = (options.rateLimits ?? []).map(RateLimit.envName)
    yield* ServiceConfig.warnMisspellings([
      ...ServiceConfig.platformEnvNames,
      ...serviceNames,
      ...rateLimitNames,
      ...(options.env ?? [])
    ])
    const rateLimitEnv: Record<string, string | undefined> = {}
    for (const name of rateLimitNames) {
      rateLimitEnv[name] = Option.getOrUndefined(yield* Config.option(Config.string(name)))
    }
    const rateLimits = yield* Effect.try({
      try: () => RateLimit.overrides(options.rateLimits ?? [], rateLimitEnv).map(RateLimit.compile),
      catch: (error) => ConfigError.InvalidData([], error instanceof Error ? error.message : String(error))
    })

    const prefix = Docs.normalisePrefix(options.docsPrefix)
    const docs = Docs.paths(prefix)
    const healthPath = typeof options.health === "object" ? options.health.path : "/health"
    const readiness = options.readiness === false
      ? undefined
      : options.readiness === undefined
      ? { checks: {} as Health.Checks<RReady> }
      : isReadinessOptions(options.readiness)
      ? options.readiness
      : { checks: options.readiness }
    const readyPath = readiness?.path ?? "/ready"
    const quiet = new Set<string>([healthPath, readyPath, docs.redocBundle, docs.favicon])

    const routes = Layer.mergeAll(
      HttpLayerRouter.addHttpApi(api),
      Docs.layer(api, prefix, options.service, rateLimits.map((l) => l.rule)),
      options.health === false ? Layer.empty : Health.healthLayer(options.service, healthPath),
      readiness === undefined
        ? Layer.empty
        : Health.readyLayer(readiness.checks, {
          path: readyPath,
          timeout: readiness.timeout,
          optional: "optional" in readiness ? readiness.optional : undefined
        }),
      options.routes ?? Layer.empty
    ).pipe(Layer.provide(RequestHandler.routeTemplate.layer))

    // The kit's handler on the Node server, around the router (`RequestHandler`).
    const handlerOptions: RequestHandler.Options = {
      maxBodySize: FileSystem.Size(options.maxBodySize ?? 10 * 1024 * 1024),
      maxJsonDepth: options.maxJsonDepth ?? JsonBody.defaultMaxDepth,
      rateLimits,
      jwtHeaderName: config.jwtHeaderName,
      accessLog: options.accessLog ?? true,
      quietPaths: quiet,
      tracing,
      cors: Cors.make({
        origins: config.corsOrigins,
        credentials: config.corsCredentials,
        jwtHeaderName: config.jwtHeaderName,
        extraHeaders: options.corsHeaders
      })
    }
    const served = Layer.scopedDiscard(Effect.gen(function*() {
      if (rateLimits.some((l) => l.rule.store === "shared") && Option.isNone(yield* Effect.serviceOption(RateLimit.SharedStore))) {
        yield* Effect.logWarning(
          "shared rate limits are counted per process: no RateLimit.SharedStore is provided (RateLimit.sharedStoreLayer)"
        )
      }
      const router = yield* HttpLayerRouter.HttpRouter
      const handler = yield* RequestHandler.make(router.asHttpEffect(), handlerOptions)
      yield* NodeServer.listen(handler)
    })).pipe(
      Layer.provide(routes),
      // `HttpLayerRouter.layer` would be shared through the memo map by every service served
      // from one process (the all-in-one launcher, tests with two servers): each gets its own.
      Layer.provide(Layer.fresh(HttpLayerRouter.layer)),
      Layer.locally(Headers.currentRedactedNames, [...defaultRedactedHeaders, config.jwtHeaderName])
    )

    // Built after `served`, so its finalizer runs first: drain before the handler is detached.
    const lifecycle = Layer.scopedDiscard(Effect.gen(function*() {
      const lifecycle = yield* NodeServer.ServerLifecycle
      yield* Effect.addFinalizer(() => lifecycle.drain)
      const address = yield* HttpServer.addressFormattedWith(Effect.succeed)
      yield* Effect.logInfo(`${options.service.name} ${options.service.version} listening on ${address}`).pipe(
        Effect.annotateLogs({ docs: `${address}${docs.swagger}`, tracing })
      )
    }))

    return Layer.provide(lifecycle, served).pipe(Layer.provideMerge(server(config)))
  }))

/**
 * Router layers state what their routes need as `HttpLayerRouter.Request` markers: "Requires"
 * become requirements of the served layer; route errors ("Error") are the kit's to handle.
 */
type RouteRequirements<R> =
  | HttpLayerRouter.Request.Without<R>
  | HttpLayerRouter.Request.Only<"Requires", R>
  | HttpLayerRouter.Request.Only<"GlobalRequires", R>

type ServeRequirements<A, RReady, RRoutes> = Exclude<
  ApiRequirements<A> | RReady | RouteRequirements<RRoutes>,
  KitProvided | HttpLayerRouter.Provided
>

/**
 * The service on a Node HTTP server bound to `HOST`:`PORT` (default `0.0.0.0`:`options.port`),
 * with graceful shutdown (`SHUTDOWN_TIMEOUT`, default 15 s).
 */
export const serve = <
  Id extends string,
  Groups extends HttpApiGroup.HttpApiGroup.Any,
  E,
  R,
  RReady = never,
  ERoutes = never,
  RRoutes = never
>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  options: ServeOptions<RReady, ERoutes, RRoutes>
): Layer.Layer<
  never,
  HttpServerError.ServeError | ConfigError.ConfigError | ERoutes,
  ServeRequirements<HttpApi.HttpApi<Id, Groups, E, R>, RReady, RRoutes>
> =>
  Layer.discard(make(api, options, (config) =>
    NodeServer.layer({
      port: config.port,
      host: config.host,
      shutdownTimeout: config.shutdownTimeout
    }))) as never

/**
 * For tests: the same service on a random port of 127.0.0.1. Provides an `HttpClient` aimed at
 * it (`HttpApiClient.make(Api)` needs no base URL) and the `ServerLifecycle` (to test shutdown).
 */
export const serveTest = <
  Id extends string,
  Groups extends HttpApiGroup.HttpApiGroup.Any,
  E,
  R,
  RReady = never,
  ERoutes = never,
  RRoutes = never
>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  options: ServeOptions<RReady, ERoutes, RRoutes> & {
    readonly shutdownTimeout?: Duration.DurationInput | undefined
  }
): Layer.Layer<
  HttpClient.HttpClient | HttpServer.HttpServer | NodeServer.ServerLifecycle,
  HttpServerError.ServeError | ConfigError.ConfigError | ERoutes,
  ServeRequirements<HttpApi.HttpApi<Id, Groups, E, R>, RReady, RRoutes>
> =>
  // The test client is built on top of the served layer, not provided to it: handlers that call
  // other services through `HttpClient` must not get a client aimed at this very server. Fresh:
  // `layerTestClient` is one constant, which a layer graph with two test servers would otherwise
  // build once (memoised by reference), aiming both clients at whichever server came first.
  Layer.fresh(HttpServer.layerTestClient).pipe(
    Layer.provide(NodeHttpClient.layerWithoutAgent),
    Layer.provide(NodeHttpClient.makeAgentLayer({ keepAlive: false })),
    Layer.provideMerge(make(api, options, () =>
      NodeServer.layer({
        port: 0,
        host: "127.0.0.1",
        shutdownTimeout: options.shutdownTimeout ?? "5 seconds"
      })))
  ) as never

/** JSON logs and, when configured, OTLP tracing for a service; beneath everything else. */
export const observability = (service: Tracing.ServiceInfo): Layer.Layer<Tracing.TracingEnabled> =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const config = yield* ServiceConfig.observability.pipe(Effect.orDie)
    return Layer.merge(
      Logging.layer({
        service: service.name,
        level: config.logLevel,
        format: config.logFormat,
        traceIds: config.otel.enabled
      }),
      Tracing.layer(service, config.otel)
    )
  }))

/** Loads the `.env` file (`DotEnv`) now; what happened is logged once the logger is installed. */
const loadDotEnv = (): Effect.Effect<void, DotEnv.DotEnvError> => {
  let result: DotEnv.LoadResult
  try {
    result = DotEnv.load()
  } catch (error) {
    return Effect.fail(error instanceof DotEnv.DotEnvError ? error : new DotEnv.DotEnvError(String(error)))
  }
  if (result.file === undefined) return Effect.void
  return Effect.logInfo(`Read ${result.loaded.length} variables from ${result.file}`).pipe(
    Effect.annotateLogs({ env_file: result.file, loaded: result.loaded, kept_from_environment: result.overridden })
  )
}

/**
 * Runs a service until SIGTERM/SIGINT, then shuts down gracefully. `main.ts` is this one line.
 * The `.env` file (`DotEnv`: `ENV_FILE`, default `./.env`) is read first, under the environment.
 * Start-up failures are logged (as JSON) and exit the process with code 1.
 */
export const run = <E>(layer: Layer.Layer<never, E, never>, service: Tracing.ServiceInfo): void => {
  // Before any layer is built: logging and tracing read their settings from the environment too.
  const dotEnv = loadDotEnv()
  Effect.zipRight(dotEnv, Layer.launch(layer)).pipe(
    Effect.tapErrorCause((cause) =>
      Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logFatal(`${service.name} failed`, cause)
    ),
    Effect.provide(observability(service)),
    // The kit logs start-up failures itself (as JSON) and installs its own logger.
    NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true })
  )
}
