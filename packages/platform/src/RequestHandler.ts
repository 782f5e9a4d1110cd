/**
 * The kit's Node request handler: what every request goes through before and after its route
 * (HttpApi endpoints, docs, health, raw routes, RPC).
 *
 * - takes `X-Request-Id` or generates one, provides `CurrentRequest`, echoes the id;
 * - answers CORS preflights and adds the CORS headers to every response (`Cors`);
 * - refuses a declared body over `maxBodySize` with 413 before reading it, and bounds bodies
 *   read into memory (`ServerRequest`);
 * - with tracing on, opens the server span (`ServerSpan`: method, URL, redacted headers,
 *   status) and adds the request id, the route template and the user to it;
 *   without tracing, an incoming `traceparent` still becomes the parent of outbound client
 *   spans, so a trace passes through a service that exports nothing;
 * - turns every failure that escaped the handlers into a response: unknown route 404,
 *   unreadable body 400/413, anything else a 500 with a generic message and the request id (the
 *   cause is logged, never sent); rewrites decode failures to the platform's body (`ErrorBodies`);
 * - writes the response (`ResponseWriter`) and one access log line (not for the quiet paths
 *   such as `/health`);
 * - calls the `FastRoutes` of the service first, when it has any and tracing is off.
 *
 * It replaces `@effect/platform-node`'s handler and its `HttpApp.toHandled`, which do the same
 * generic work (a scope, the tracer middleware, pre-response handlers, response writing that
 * waits for the socket) with several times the fiber and fiber-ref operations; everything here
 * runs in one fiber per request, in plain code where no effect is needed (docs/performance.md).
 * Handlers see the same environment: `HttpServerRequest`, a `Scope` closed after the response,
 * `CurrentRequest`, `HttpApp.appendPreResponseHandler` honoured, interruption when the client
 * goes away (`HttpServerError.clientAbortFiberId`).
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as HttpApp from "@effect/platform/HttpApp"
import * as IncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerRespondable from "@effect/platform/HttpServerRespondable"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as HttpTraceContext from "@effect/platform/HttpTraceContext"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import * as Tracer from "effect/Tracer"
import type * as Http from "node:http"
import type * as Cors from "./Cors.js"
import * as ErrorBodies from "./ErrorBodies.js"
import { type FastHandler, FastRoutes, key as FastRoutesKey } from "./FastRoutes.js"
import * as JsonBody from "./JsonBody.js"
import { CurrentRequestLogger } from "./Logging.js"
import * as RateLimit from "./RateLimit.js"
import * as Unavailability from "./Unavailability.js"
import { CurrentRequest, fromHeader, requestIdHeader, type RequestInfo } from "./RequestContext.js"
import * as ResponseWriter from "./ResponseWriter.js"
import * as ServerSpan from "./ServerSpan.js"
import { isBodyTooLarge, ServerRequest } from "./ServerRequest.js"

export interface Options {
  /** Largest request body read into memory (JSON, text, form); larger ones get 413. */
  readonly maxBodySize: FileSystem.Size
  /** Deepest nesting of arrays and objects in a JSON body; deeper ones get 400 before decoding. */
  readonly maxJsonDepth: number
  readonly accessLog: boolean
  /** Exact paths with no access log line and no span (probes). */
  readonly quietPaths: ReadonlySet<string>
  /** Whether spans are exported (then every request but the quiet ones gets a server span). */
  readonly tracing: boolean
  /** CORS headers; `undefined`: none. */
  readonly cors: Cors.CorsPolicy | undefined
  /** Rate limits checked before the route (and before fast routes). */
  readonly rateLimits: ReadonlyArray<RateLimit.Limiter>
  /** The proxy header a token may come in (the client key of rate limits). */
  readonly jwtHeaderName: string
}

/** A Node `request` listener. */
export type NodeHandler = (request: Http.IncomingMessage, response: Http.ServerResponse) => void

const pathOf = (url: string): string => {
  const q = url.indexOf("?")
  return q === -1 ? url : url.slice(0, q)
}

function copyInto(this: Map<string, unknown>, value: unknown, key: string) {
  this.set(key, value)
}

/** Bodies up to this size are read before the request's fiber starts. */
const readAheadLimit = 64 * 1024

/**
 * Small bodies of known length are read before the route runs: the fiber then finds the body
 * complete instead of suspending until it arrives (it usually arrives right after the headers).
 * Multipart bodies are left to the multipart parser, which streams them.
 */
const readsAhead = (request: Http.IncomingMessage): boolean => {
  const length = request.headers["content-length"]
  if (length === undefined) return false
  const n = Number(length)
  if (!(n > 0 && n <= readAheadLimit)) return false
  const type = request.headers["content-type"]
  return type === undefined || !type.startsWith("multipart/")
}

const hasTraceHeaders = (headers: Http.IncomingHttpHeaders): boolean =>
  headers.traceparent !== undefined || headers.b3 !== undefined || headers["x-b3-traceid"] !== undefined

const tooLarge = (options: Options) =>
  ErrorBodies.response({
    status: 413,
    detail: `The request body is larger than ${options.maxBodySize} bytes, the most this service accepts`
  })

const tooMany = (limiter: RateLimit.Limiter, retryAfterMs: number) =>
  HttpServerResponse.setHeader(
    ErrorBodies.response({
      status: 429,
      detail: `Too many requests: at most ${limiter.rule.limit} per ${Duration.format(limiter.windowMs)} for this client; ` +
        `try again in ${Math.max(1, Math.ceil(retryAfterMs / 1000))} s`
    }),
    "retry-after",
    String(Math.max(1, Math.ceil(retryAfterMs / 1000)))
  )

/** Why a body could not be read, for its 400. */
const unreadableDetail = (error: HttpServerError.RequestError): string => {
  const cause = error.cause
  if (cause instanceof JsonBody.JsonTooDeep || cause instanceof JsonBody.InvalidJson) return cause.message
  return "The request body could not be read as its declared content type"
}

/**
 * Failures that reach the kit. The returned exit is a success for expected outcomes (404, bad
 * body) and a failure that carries the response for defects, so the server span is marked as
 * failed while the client still gets the JSON 500.
 */
const fromCause = (
  cause: Cause.Cause<unknown>,
  info: RequestInfo,
  options: Options
): Effect.Effect<HttpServerResponse.HttpServerResponse, unknown> => {
  if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)

  // An unreadable body, whether a route let it fail or (as HttpApiBuilder does) die.
  const unreadable = (error: HttpServerError.RequestError) =>
    Effect.succeed(
      isBodyTooLarge(error)
        ? HttpServerResponse.setHeader(tooLarge(options), "connection", "close")
        : ErrorBodies.response({ status: 400, detail: unreadableDetail(error) })
    )

  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (error instanceof HttpServerError.RouteNotFound) {
      return Effect.succeed(ErrorBodies.response({ status: 404, detail: `No route for ${info.method} ${info.path}` }))
    }
    if (error instanceof HttpServerError.RequestError) return unreadable(error)
    if (HttpServerRespondable.isRespondable(error)) return HttpServerRespondable.toResponse(error)
  }
  const defect = Cause.dieOption(cause)
  if (Option.isSome(defect)) {
    if (HttpServerResponse.isServerResponse(defect.value)) return Effect.succeed(defect.value)
    if (defect.value instanceof HttpServerError.RequestError) return unreadable(defect.value)
  }
  // The database is down or restarting: an outage to wait out, not a bug (services let SQL
  // errors die). Answered at once, logged without the noise of a stack per request.
  const database = Option.orElse(defect, () => failure).pipe(Option.filter(Unavailability.isDatabaseUnavailable))
  if (Option.isSome(database)) {
    return Effect.logWarning("database unavailable while serving the request").pipe(
      Effect.annotateLogs({ "http.method": info.method, "http.path": info.path, cause: Unavailability.describe(database.value) }),
      Effect.as(
        HttpServerResponse.setHeader(
          ErrorBodies.response({ status: 503, detail: "The database is unavailable; try again in a few seconds" }),
          "retry-after",
          "5"
        )
      )
    )
  }
  const internal = ErrorBodies.response({
    status: 500,
    detail: `Internal server error; quote request id ${info.requestId} when reporting it`
  })
  return Effect.logError("Unhandled failure while serving the request", cause).pipe(
    Effect.annotateLogs({ "http.method": info.method, "http.path": info.path }),
    Effect.zipRight(Effect.failCause(Cause.sequential(cause, Cause.die(internal))))
  )
}

/**
 * A 503 always says when to come back: a service's own "unavailable" (policy engine, database
 * failure caught by the service, an upstream) is as temporary as the kit's database outage, and
 * clients and load balancers back off by `Retry-After`. One that already has it keeps its value.
 */
const withRetryAfter = (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse =>
  response.status === 503 && response.headers["retry-after"] === undefined
    ? HttpServerResponse.setHeader(response, "retry-after", "5")
    : response

/** The response to send: the success, or the response a failure carries (a defect). */
const responseOf = (
  exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>
): HttpServerResponse.HttpServerResponse | undefined =>
  Exit.isSuccess(exit)
    ? exit.value
    : Option.getOrUndefined(Chunk.findLast(Cause.defects(exit.cause), HttpServerResponse.isServerResponse))

/**
 * Builds the handler. `app` answers a request (the router); it runs with the handler's runtime
 * (the services of the served layer) plus the request's `HttpServerRequest`, `CurrentRequest`
 * and `Scope`.
 */
export const make = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  options: Options
): Effect.Effect<NodeHandler, never, Exclude<R, HttpServerRequest.HttpServerRequest | Scope.Scope | CurrentRequest>> =>
  Effect.map(Effect.runtime<Exclude<R, HttpServerRequest.HttpServerRequest | Scope.Scope | CurrentRequest>>(), (runtime) => {
    const requestLogger = Context.get(runtime.context, CurrentRequestLogger)
    const memoryStore = new RateLimit.MemoryStore()
    const sharedStore = Option.getOrUndefined(Context.getOption(runtime.context, RateLimit.SharedStore))
    // The services every request sees; each request adds its own three to a copy.
    const base = new Map(runtime.context.unsafeMap)
    base.set(IncomingMessage.MaxBodySize.key, Option.some(options.maxBodySize))
    base.set(JsonBody.MaxDepth.key, options.maxJsonDepth)
    const maxBody = Number(options.maxBodySize)

    /** The access log line, once the status is known. */
    const accessLog = (info: RequestInfo, status: number, fast = false): Effect.Effect<void> | undefined => {
      if (!options.accessLog || options.quietPaths.has(info.path)) return undefined
      const fields: Record<string, unknown> = {
        "http.method": info.method,
        "http.path": info.path,
        "http.route": info.route ?? null,
        "http.status": status,
        duration_ms: Date.now() - info.startedAt
      }
      if (fast) fields["http.fast_route"] = true
      return requestLogger.log(
        status >= 500 ? LogLevel.Warning : LogLevel.Info,
        `${info.method} ${info.route ?? info.path} ${status}`,
        info,
        fields
      )
    }

    /** Sends `response` with the kit's headers; then the access log line. */
    const send = (
      request: ServerRequest,
      info: RequestInfo,
      response: HttpServerResponse.HttpServerResponse,
      fast = false
    ): Effect.Effect<void, HttpServerError.ResponseError> => {
      const rewritten = withRetryAfter(ErrorBodies.rewrite(response))
      const cors = options.cors?.headers(request.headers.origin)
      const extra = cors === undefined ? { [requestIdHeader]: info.requestId } : { ...cors, [requestIdHeader]: info.requestId }
      const writing = ResponseWriter.write(request, request.response, rewritten, extra)
      if (writing === undefined) return accessLog(info, rewritten.status, fast) ?? Effect.void
      return Effect.flatMap(writing, () => accessLog(info, rewritten.status, fast) ?? Effect.void)
    }

    /** After the route: the response of `exit`, through the pre-response handlers, sent. */
    const respond = (
      request: ServerRequest,
      info: RequestInfo,
      exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>,
      fiber: Fiber.RuntimeFiber<unknown, unknown>
    ): Effect.Effect<void, unknown> => {
      const response = responseOf(exit)
      if (response === undefined) {
        // Interrupted (the client went away: nothing can be sent) or no response at all.
        const interrupted = Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)
        if (!interrupted && !request.response.headersSent) {
          request.response.writeHead(500, { [requestIdHeader]: info.requestId }).end()
        }
        // 499 is the customary code for "client closed the request".
        const logged = accessLog(info, interrupted ? 499 : 500) ?? Effect.void
        return logged
      }
      const handlers = fiber.getFiberRef(HttpApp.currentPreResponseHandlers)
      return handlers._tag === "None"
        ? send(request, info, response)
        : Effect.flatMap(handlers.value(request, response), (r) => send(request, info, r))
    }

    /** The route, with the kit's error handling; the span wraps this part when tracing. */
    const routed = (request: ServerRequest, info: RequestInfo) => {
      if (options.cors !== undefined && request.method === "OPTIONS") {
        return Effect.succeed(HttpServerResponse.empty({ status: 204, headers: options.cors.preflight(request.headers.origin) }))
      }
      // A declared length over the limit is refused before reading (and the connection closed,
      // as the client is still sending the body).
      const declared = request.headers["content-length"]
      if (declared !== undefined && Number(declared) > maxBody) {
        return Effect.succeed(HttpServerResponse.setHeader(tooLarge(options), "connection", "close"))
      }
      return Effect.catchAllCause(app, (cause) => fromCause(cause, info, options))
    }

    const openSpan = Effect.withFiberRuntime<void>((fiber) => {
      const info = Context.get(fiber.currentContext, CurrentRequest)
      const parent = Context.getOption(fiber.currentContext, Tracer.ParentSpan)
      if (Option.isSome(parent) && parent.value._tag === "Span") {
        info.span = parent.value
        parent.value.attribute("http.request.id", info.requestId)
      }
      return Effect.void
    })

    /** The route (or the kit's own answer) in the request's scope, then the response sent. */
    const generic = (
      request: ServerRequest,
      info: RequestInfo,
      fiber: Fiber.RuntimeFiber<void, unknown>
    ): Effect.Effect<void, unknown> => {
      const context = fiber.currentContext
      let handled = routed(request, info) as Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>
      if (options.tracing && !options.quietPaths.has(info.path)) {
        handled = ServerSpan.around(request, Effect.zipRight(openSpan, handled))
      } else if (hasTraceHeaders(request.source.headers)) {
        const external = HttpTraceContext.fromHeaders(request.headers)
        if (Option.isSome(external)) handled = Effect.withParentSpan(handled, external.value)
      }
      return Effect.flatMap(Scope.make(), (scope) => {
        // The request's own context (made for this fiber by `handler` below, read by nothing
        // yet): the scope joins it before the route runs.
        context.unsafeMap.set(Scope.Scope.key, scope)
        return Effect.onExit(
          Effect.flatMap(Effect.exit(handled), (exit) => respond(request, info, exit, fiber)),
          (exit) => Scope.close(scope, exit)
        )
      })
    }

    const fastRoutes = options.tracing ? new Map<string, FastHandler>() : Context.get(runtime.context, FastRoutes)

    /** A fast route's answer is sent; if it declines, the generic path takes over. */
    const fast = (
      handler: FastHandler,
      request: ServerRequest,
      info: RequestInfo,
      fiber: Fiber.RuntimeFiber<void, unknown>
    ): Effect.Effect<void, unknown> =>
      Effect.matchCauseEffect(handler(request, info), {
        onSuccess: (response) => response === undefined ? generic(request, info, fiber) : send(request, info, response, true),
        onFailure: (cause) =>
          Effect.flatMap(Effect.exit(fromCause(cause, info, options)), (exit) => respond(request, info, exit, fiber))
      })

    /**
     * The rate limits matching the request: `undefined` when it may go on (no rule, or every
     * in-memory rule admits it), else the effect answering whether it was refused (a 429).
     */
    const limited = (request: ServerRequest, info: RequestInfo): Effect.Effect<HttpServerResponse.HttpServerResponse | undefined> | undefined => {
      let key: string | undefined
      let pending: Effect.Effect<HttpServerResponse.HttpServerResponse | undefined> | undefined
      for (const limiter of options.rateLimits) {
        if (!limiter.matches(info.method, info.path)) continue
        key ??= RateLimit.clientKey(request.headers, options.jwtHeaderName, request.source.socket.remoteAddress)
        const bucket = `${limiter.rule.name}|${key}`
        if (limiter.rule.store === "shared" && sharedStore !== undefined) {
          const take = Effect.map(sharedStore.take(bucket, limiter.rule.limit, limiter.windowMs), (outcome) =>
            outcome.allowed ? undefined : tooMany(limiter, outcome.retryAfterMs))
          pending = pending === undefined ? take : Effect.flatMap(pending, (refused) => (refused === undefined ? take : Effect.succeed(refused)))
          continue
        }
        const outcome = memoryStore.take(bucket, limiter.rule.limit, limiter.windowMs)
        if (!outcome.allowed) return Effect.succeed(tooMany(limiter, outcome.retryAfterMs))
      }
      return pending
    }

    const pipeline = Effect.withFiberRuntime<void, unknown>((fiber) => {
      const context = fiber.currentContext
      const request = Context.unsafeGet(context, HttpServerRequest.HttpServerRequest) as ServerRequest
      const info = Context.get(context, CurrentRequest)
      if (options.rateLimits.length > 0) {
        const check = limited(request, info)
        if (check !== undefined) {
          return Effect.flatMap(check, (refused) => (refused === undefined ? routedByPath(request, info, fiber) : send(request, info, refused)))
        }
      }
      return routedByPath(request, info, fiber)
    }).pipe(Effect.uninterruptible)

    /** A fast route when there is one for the path, else the router. */
    const routedByPath = (request: ServerRequest, info: RequestInfo, fiber: Fiber.RuntimeFiber<void, unknown>) => {
      if (fastRoutes.size > 0) {
        const handler = fastRoutes.get(FastRoutesKey(info.method, info.path))
        // Over the size limit, the generic path answers 413 without reading.
        const declared = request.headers["content-length"]
        if (handler !== undefined && (declared === undefined || Number(declared) <= maxBody)) {
          info.route = info.path
          return fast(handler, request, info, fiber)
        }
      }
      return generic(request, info, fiber)
    }

    /** A request whose client went away before its body arrived: only the access log line. */
    const abandoned = Effect.withFiberRuntime<void>((fiber) =>
      accessLog(Context.get(fiber.currentContext, CurrentRequest), 499) ?? Effect.void
    )

    return (nodeRequest, nodeResponse) => {
      const url = nodeRequest.url ?? "/"
      const info: RequestInfo = {
        requestId: fromHeader(nodeRequest.headers[requestIdHeader] as string | undefined),
        method: nodeRequest.method ?? "GET",
        path: pathOf(url),
        startedAt: Date.now(),
        span: undefined,
        route: undefined,
        userId: undefined
      }
      const request = new ServerRequest(nodeRequest, nodeResponse, url)
      let fiber: Fiber.RuntimeFiber<void, unknown> | undefined
      let closed = false
      const start = () => {
        // Copied with `forEach`: `new Map(base)` allocates an entry array per service.
        const services = new Map<string, unknown>()
        base.forEach(copyInto, services)
        services.set(HttpServerRequest.HttpServerRequest.key, request)
        services.set(CurrentRequest.key, info)
        fiber = Runtime.runFork(
          Runtime.make({ context: Context.unsafeMake(services), fiberRefs: runtime.fiberRefs, runtimeFlags: runtime.runtimeFlags }),
          closed ? abandoned : pipeline
        )
      }
      nodeResponse.on("close", () => {
        closed = true
        if (fiber !== undefined && !nodeResponse.writableEnded) fiber.unsafeInterruptAsFork(HttpServerError.clientAbortFiberId)
      })
      if (readsAhead(nodeRequest)) {
        request.readAhead(maxBody, () => {
          // The body ended with the connection: the client went away (its `close` may come later).
          if (nodeRequest.socket.destroyed) closed = true
          start()
        })
      } else {
        start()
      }
    }
  })

/**
 * Route-level middleware recording the matched route template on the request (for the access
 * log; the router puts it on the server span itself).
 */
export const routeTemplate = HttpLayerRouter.middleware((effect) =>
  Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, HttpLayerRouter.unhandled>((fiber) => {
    const route = Context.getOption(fiber.currentContext, HttpLayerRouter.RouteContext)
    if (Option.isSome(route)) Context.get(fiber.currentContext, CurrentRequest).route = route.value.route.path
    return effect
  })
)
