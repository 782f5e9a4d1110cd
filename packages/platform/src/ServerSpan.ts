/**
 * The server span of a request, with the attributes Effect's own HTTP tracer middleware records
 * (that middleware is internal to `@effect/platform`): named by `HttpMiddleware.SpanNameGenerator`
 * (`http.server <METHOD>`), parented by an incoming `traceparent`/`b3`, with the method, URL,
 * user agent, client address, every request and response header (redacted by
 * `Headers.currentRedactedNames`: the kit adds `JWT_HEADER_NAME` to the defaults) and the status.
 * `HttpMiddleware.withTracerDisabledWhen` still turns it off per request.
 */
import * as Headers from "@effect/platform/Headers"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as HttpTraceContext from "@effect/platform/HttpTraceContext"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

export const around = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
  Effect.withFiberRuntime((fiber) => {
    if (fiber.getFiberRef(HttpMiddleware.currentTracerDisabledWhen)(request)) return effect
    const url = Option.getOrUndefined(HttpServerRequest.toURL(request))
    if (url !== undefined && (url.username !== "" || url.password !== "")) {
      url.username = "REDACTED"
      url.password = "REDACTED"
    }
    const redactedNames = fiber.getFiberRef(Headers.currentRedactedNames)
    const nameOf = Context.get(fiber.currentContext, HttpMiddleware.SpanNameGenerator)
    return Effect.useSpan(
      nameOf(request),
      {
        parent: Option.getOrUndefined(HttpTraceContext.fromHeaders(request.headers)),
        kind: "server",
        captureStackTrace: false
      },
      (span) => {
        span.attribute("http.request.method", request.method)
        if (url !== undefined) {
          span.attribute("url.full", url.toString())
          span.attribute("url.path", url.pathname)
          if (url.search.length > 1) span.attribute("url.query", url.search.slice(1))
          span.attribute("url.scheme", url.protocol.slice(0, -1))
        }
        const userAgent = request.headers["user-agent"]
        if (userAgent !== undefined) span.attribute("user_agent.original", userAgent)
        const requestHeaders = Headers.redact(request.headers, redactedNames)
        for (const name in requestHeaders) span.attribute(`http.request.header.${name}`, String(requestHeaders[name]))
        if (request.remoteAddress._tag === "Some") span.attribute("client.address", request.remoteAddress.value)
        return Effect.onExit(Effect.withParentSpan(effect, span), (exit) =>
          Effect.sync(() => {
            const response = HttpServerError.exitResponse(exit)
            span.attribute("http.response.status_code", response.status)
            const responseHeaders = Headers.redact(response.headers, redactedNames)
            for (const name in responseHeaders) {
              span.attribute(`http.response.header.${name}`, String(responseHeaders[name]))
            }
          }))
      }
    )
  })
