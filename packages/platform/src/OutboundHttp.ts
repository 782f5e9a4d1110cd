/**
 * The `HttpClient` services use for outbound calls. Effect's client already opens a client span
 * per request and sends the W3C `traceparent` of the current span; this layer adds the current
 * request's `X-Request-Id`, so one id follows a request through every service it touches.
 *
 * Services needing a bearer token for the call add `@rec/auth`'s client-credentials
 * transformation on top (`ClientCredentials.withToken`).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { CurrentRequest, requestIdHeader } from "./RequestContext.js"

/** Adds `X-Request-Id` of the request being served, unless the caller set one. */
export const withRequestId = <E, R>(client: HttpClient.HttpClient.With<E, R>): HttpClient.HttpClient.With<E, R> =>
  HttpClient.mapRequestEffect(client, (request) =>
    Effect.map(CurrentRequest, (info) =>
      info.requestId === "" || request.headers[requestIdHeader] !== undefined
        ? request
        : HttpClientRequest.setHeader(request, requestIdHeader, info.requestId)))

/** Wraps whatever `HttpClient` is provided below. */
export const layerWithRequestId: Layer.Layer<HttpClient.HttpClient, never, HttpClient.HttpClient> = Layer.effect(
  HttpClient.HttpClient,
  Effect.map(HttpClient.HttpClient, withRequestId)
)

/** Undici-based client with request-id propagation. */
export const layer: Layer.Layer<HttpClient.HttpClient> = layerWithRequestId.pipe(
  Layer.provide(NodeHttpClient.layerUndici)
)
