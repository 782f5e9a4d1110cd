/**
 * The `HttpClient` services use for outbound calls. With tracing on, Effect's client opens a
 * client span per request and sends the W3C `traceparent` of it; this layer adds the current
 * request's `X-Request-Id`, so one id follows a request through every service it touches.
 *
 * With tracing off (no exporter: `Tracing.TracingEnabled` false), Effect's client span is not
 * built: it costs about 300 µs of CPU per call here (every request and response header becomes a
 * redacted span attribute, and the span is made whether or not anything exports it), which a
 * gateway pays on every request. An incoming trace is still passed on: the `traceparent` of the
 * caller's span (the `traceparent` the request being served came with) is sent, so the upstream
 * joins the caller's trace directly.
 *
 * Services needing a bearer token for the call add `@rec/auth`'s client-credentials
 * transformation on top (`ClientCredentials.withToken`).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Tracer from "effect/Tracer"
import { CurrentRequest, requestIdHeader } from "./RequestContext.js"
import { TracingEnabled } from "./Tracing.js"

/** Adds `X-Request-Id` of the request being served, unless the caller set one. */
export const withRequestId = <E, R>(client: HttpClient.HttpClient.With<E, R>): HttpClient.HttpClient.With<E, R> =>
  HttpClient.mapRequestEffect(client, (request) =>
    Effect.map(CurrentRequest, (info) =>
      info.requestId === "" || request.headers[requestIdHeader] !== undefined
        ? request
        : HttpClientRequest.setHeader(request, requestIdHeader, info.requestId)))

/** The span a trace came in with (the root of the current span's chain), if it came from outside. */
const externalRoot = (span: Tracer.AnySpan): Option.Option<Tracer.ExternalSpan> => {
  let current: Tracer.AnySpan = span
  while (current._tag === "Span") {
    if (Option.isNone(current.parent)) return Option.none()
    current = current.parent.value
  }
  return Option.some(current)
}

/**
 * Sends the incoming `traceparent` (if the request being served came with one), unless the
 * caller set one. For a client that makes no client span of its own.
 */
export const withIncomingTraceparent = <E, R>(client: HttpClient.HttpClient.With<E, R>): HttpClient.HttpClient.With<E, R> =>
  HttpClient.mapRequestEffect(client, (request) =>
    request.headers["traceparent"] !== undefined
      ? Effect.succeed(request)
      : Effect.map(Effect.option(Effect.currentParentSpan), (parent) =>
        Option.match(Option.flatMap(parent, externalRoot), {
          onNone: () => request,
          onSome: (incoming) =>
            HttpClientRequest.setHeader(
              request,
              "traceparent",
              `00-${incoming.traceId}-${incoming.spanId}-${incoming.sampled ? "01" : "00"}`
            )
        })))

/**
 * No client spans; the incoming `traceparent` (if the request being served came with one) is
 * sent on, unless the caller set one.
 */
export const withoutClientSpans = <E, R>(client: HttpClient.HttpClient.With<E, R>): HttpClient.HttpClient.With<E, R> =>
  withIncomingTraceparent(HttpClient.withTracerDisabledWhen(client, () => true))

/** Wraps whatever `HttpClient` is provided below (without client spans when tracing is off). */
export const layerWithRequestId: Layer.Layer<HttpClient.HttpClient, never, HttpClient.HttpClient> = Layer.effect(
  HttpClient.HttpClient,
  Effect.gen(function*() {
    const client = withRequestId(yield* HttpClient.HttpClient)
    return (yield* TracingEnabled) ? client : withoutClientSpans(client)
  })
)

/** Undici-based client with request-id propagation. */
export const layer: Layer.Layer<HttpClient.HttpClient> = layerWithRequestId.pipe(
  Layer.provide(NodeHttpClient.layerUndici)
)
