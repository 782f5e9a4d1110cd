/**
 * The kit's request middleware, wrapped around every route (HttpApi endpoints, docs, health,
 * raw routes, RPC):
 *
 * - takes `X-Request-Id` or generates one, provides `CurrentRequest`, echoes the id;
 * - annotates the server span (when tracing is on) with the request id; without tracing, an
 *   incoming `traceparent` still becomes the parent of outbound client spans, so a trace passes
 *   through a service that exports nothing;
 * - turns every failure that escaped the handlers into a response: unknown route 404,
 *   unreadable body 400/413, anything else a 500 with a generic message and the request id; the
 *   cause is logged, never sent;
 * - rewrites JSON error bodies per the error style (`ErrorBodies`);
 * - writes one access log line per request (not for the quiet paths such as `/health`);
 * - bounds the size of request bodies read into memory (the Node server reads them unbounded
 *   otherwise).
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerRespondable from "@effect/platform/HttpServerRespondable"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as HttpTraceContext from "@effect/platform/HttpTraceContext"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import * as ErrorBodies from "./ErrorBodies.js"
import { CurrentRequest, fromHeader, requestIdHeader, type RequestInfo } from "./RequestContext.js"

export interface Options {
  readonly errorStyle: ErrorBodies.ErrorStyle
  /** Largest request body read into memory (JSON, text, form); larger ones get 413. */
  readonly maxBodySize: FileSystem.Size
  readonly accessLog: boolean
  /** Exact paths with no access log line (probes). */
  readonly quietPaths: ReadonlySet<string>
  readonly tracing: boolean
}

const pathOf = (url: string): string => {
  const q = url.indexOf("?")
  return q === -1 ? url : url.slice(0, q)
}

/** How `@effect/platform-node` reports a body over `MaxBodySize`. */
const isBodyTooLarge = (error: HttpServerError.RequestError): boolean =>
  error.cause instanceof Error && error.cause.message === "maxBytes exceeded"

const tooLarge = (info: RequestInfo, options: Options) =>
  ErrorBodies.response(options.errorStyle, {
    status: 413,
    tag: "PayloadTooLarge",
    message: `The request body is larger than ${options.maxBodySize} bytes`,
    requestId: info.requestId
  })

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
  const body = (status: number, tag: string, message: string) =>
    ErrorBodies.response(options.errorStyle, { status, tag, message, requestId: info.requestId })

  if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)

  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (error instanceof HttpServerError.RouteNotFound) {
      return Effect.succeed(body(404, "NotFound", options.errorStyle === "detail"
        ? "Not Found"
        : `No route for ${info.method} ${info.path}`))
    }
    if (HttpServerRespondable.isRespondable(error)) return HttpServerRespondable.toResponse(error)
  }
  const defect = Cause.dieOption(cause)
  if (Option.isSome(defect)) {
    if (HttpServerResponse.isServerResponse(defect.value)) return Effect.succeed(defect.value)
    if (defect.value instanceof HttpServerError.RequestError) {
      return Effect.succeed(
        isBodyTooLarge(defect.value)
          ? tooLarge(info, options)
          : body(400, "BadRequest", "The request body could not be read as the declared content type")
      )
    }
  }
  const internal = body(500, "InternalServerError", "Internal server error")
  return Effect.logError("Unhandled failure while serving the request", cause).pipe(
    Effect.annotateLogs({ "http.method": info.method, "http.path": info.path }),
    Effect.zipRight(Effect.failCause(Cause.sequential(cause, Cause.die(internal))))
  )
}

const responseOf = (
  exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>
): Option.Option<HttpServerResponse.HttpServerResponse> =>
  Exit.isSuccess(exit)
    ? Option.some(exit.value)
    : Chunk.findLast(Cause.defects(exit.cause), HttpServerResponse.isServerResponse)

const finish = (
  response: HttpServerResponse.HttpServerResponse,
  info: RequestInfo,
  options: Options
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.setHeader(
    ErrorBodies.rewrite(options.errorStyle, response, info.requestId),
    requestIdHeader,
    info.requestId
  )

const accessLog = (
  info: RequestInfo,
  exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>
): Effect.Effect<void> => {
  const response = responseOf(exit)
  const interrupted = Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)
  // 499 is the customary code for "client closed the request"; nothing was sent.
  const status = Option.isSome(response) ? response.value.status : interrupted ? 499 : 500
  const log = status >= 500 ? Effect.logWarning : Effect.logInfo
  return log(`${info.method} ${info.route ?? info.path} ${status}`).pipe(
    Effect.annotateLogs({
      "http.method": info.method,
      "http.path": info.path,
      "http.route": info.route ?? null,
      "http.status": status,
      duration_ms: Date.now() - info.startedAt
    })
  )
}

/** The middleware itself, independent of how it is registered. */
export const make = (options: Options) =>
<E, R>(
  httpApp: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R> =>
  Effect.withFiberRuntime((fiber) => {
    const context = fiber.currentContext
    const request = Context.unsafeGet(context, HttpServerRequest.HttpServerRequest)
    const parent = Context.getOption(context, Tracer.ParentSpan)
    const span = options.tracing && Option.isSome(parent) && parent.value._tag === "Span" ? parent.value : undefined
    const info: RequestInfo = {
      requestId: fromHeader(request.headers[requestIdHeader]),
      method: request.method,
      path: pathOf(request.url),
      startedAt: Date.now(),
      span,
      route: undefined,
      userId: undefined
    }
    span?.attribute("http.request.id", info.requestId)

    // A declared length over the limit is refused before reading; a chunked body over it is cut
    // off while reading (the platform then resets the connection).
    const declaredLength = Number(request.headers["content-length"] ?? 0)
    let handled: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R> =
      declaredLength > Number(options.maxBodySize)
        ? Effect.succeed(HttpServerResponse.setHeader(tooLarge(info, options), "connection", "close"))
        : Effect.provideService(httpApp, HttpIncomingMessage.MaxBodySize, Option.some(options.maxBodySize))
    if (!options.tracing) {
      const external = HttpTraceContext.fromHeaders(request.headers)
      if (Option.isSome(external)) handled = Effect.withParentSpan(handled, external.value)
    }
    const effect = handled.pipe(
      Effect.catchAllCause((cause) => fromCause(cause, info, options)),
      Effect.map((response) => finish(response, info, options)),
      // Defects carry their response inside the cause; it needs the request id header too.
      Effect.catchAllCause((cause) => Effect.failCause(withResponseHeader(cause, info, options)))
    )
    const quiet = !options.accessLog || options.quietPaths.has(info.path)
    const withLog = quiet ? effect : Effect.onExit(effect, (exit) => accessLog(info, exit))
    return Effect.provideService(withLog, CurrentRequest, info)
  })

/** Replaces the response carried by a defect with one that has the request id header. */
const withResponseHeader = (
  cause: Cause.Cause<unknown>,
  info: RequestInfo,
  options: Options
): Cause.Cause<unknown> =>
  Cause.reduceWithContext(cause, undefined, {
    emptyCase: () => Cause.empty,
    failCase: (_, error) => Cause.fail(error),
    dieCase: (_, defect) =>
      Cause.die(HttpServerResponse.isServerResponse(defect) ? finish(defect, info, options) : defect),
    interruptCase: (_, fiberId) => Cause.interrupt(fiberId),
    sequentialCase: (_, left, right) => Cause.sequential(left, right),
    parallelCase: (_, left, right) => Cause.parallel(left, right)
  })

/** Registers the middleware globally on the router (outermost, before CORS). */
export const layer = (options: Options): Layer.Layer<never, never, HttpLayerRouter.HttpRouter> =>
  HttpLayerRouter.middleware(
    // The router's types only allow a global middleware to pass errors through (`unhandled`);
    // this one handles them all, which is sound: it returns responses instead.
    make(options) as unknown as (
      effect: Effect.Effect<HttpServerResponse.HttpServerResponse, HttpLayerRouter.unhandled>
    ) => Effect.Effect<HttpServerResponse.HttpServerResponse, HttpLayerRouter.unhandled>,
    { global: true }
  ) as unknown as Layer.Layer<never, never, HttpLayerRouter.HttpRouter>

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
