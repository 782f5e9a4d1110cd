import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { SpanKind, SpanStatusCode } from "@opentelemetry/api"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { describe, expect, it, layer } from "@effect/vitest"
import { OutboundHttp, ServiceKit, Tracing } from "@rec/platform"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { ExampleApi, ItemsLive } from "./fixtures/ExampleApi.js"
import { get } from "./fixtures/http.js"
import * as Recorder from "./fixtures/Recorder.js"

const service = { name: "example", version: "1.2.3" }

class Upstream extends Context.Tag("test/Upstream")<Upstream, Recorder.Recorder>() {}
const UpstreamLive = Layer.scoped(Upstream, Recorder.make())

/** A raw route calling an upstream through the kit's outbound client. */
const ProxyRoute = HttpLayerRouter.add(
  "GET",
  "/proxy",
  Effect.gen(function*() {
    const upstream = yield* Upstream
    const client = yield* HttpClient.HttpClient
    const response = yield* client.get(`${upstream.url}/called`)
    return HttpServerResponse.unsafeJson({ upstream: response.status })
  })
)

const served = ServiceKit.serveTest(ExampleApi, { service, port: 0, routes: ProxyRoute }).pipe(
  Layer.provide(ItemsLive),
  Layer.provide(OutboundHttp.layer)
)

const exporter = new InMemorySpanExporter()
const serverSpans = () => exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.SERVER)

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
const parentId = "00f067aa0ba902b7"
const traceparent = `00-${traceId}-${parentId}-01`

/** The test's own client would replace our `traceparent` with that of its client span. */
const withIncomingTrace = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.updateService(effect, HttpClient.HttpClient, HttpClient.withTracerPropagation(false))

describe("tracing", () => {
  layer(
    served.pipe(
      Layer.provideMerge(UpstreamLive),
      Layer.provide(Tracing.layerSpanProcessor(service, new SimpleSpanProcessor(exporter)))
    ),
    { excludeTestServices: true }
  )("with an exporter (in memory)", (it) => {
    it.effect("one server span per request, with method, route template, status and request id", () =>
      Effect.gen(function*() {
        exporter.reset()
        const answer = yield* get("/items/1", { "x-request-id": "trace-req-1" })
        expect(answer.status).toBe(200)
        const [span] = yield* Recorder.eventually(() => serverSpans().length > 0 ? serverSpans() : undefined)
        // Give a stray second span the chance to show up before counting.
        yield* Effect.sleep("50 millis")
        expect(serverSpans()).toHaveLength(1)
        expect(span.name).toBe("http.server GET")
        expect(span.attributes["http.request.method"]).toBe("GET")
        expect(span.attributes["http.route"]).toBe("/items/:id")
        expect(span.attributes["http.response.status_code"]).toBe(200)
        expect(span.attributes["http.request.id"]).toBe("trace-req-1")
        expect(span.resource.attributes["service.name"]).toBe("example")
      }))

    it.effect("a 404 is recorded with its status; a defect marks the span as failed", () =>
      Effect.gen(function*() {
        exporter.reset()
        yield* get("/items/7")
        const notFound = yield* Recorder.eventually(() => serverSpans()[0])
        expect(notFound.attributes["http.response.status_code"]).toBe(404)
        expect(notFound.status.code).not.toBe(SpanStatusCode.ERROR)
        exporter.reset()
        yield* get("/boom")
        const boom = yield* Recorder.eventually(() => serverSpans()[0])
        expect(boom.attributes["http.response.status_code"]).toBe(500)
        expect(boom.attributes["http.route"]).toBe("/boom")
        expect(boom.status.code).toBe(SpanStatusCode.ERROR)
      }))

    it.effect("probes and the ReDoc bundle get no span", () =>
      Effect.gen(function*() {
        exporter.reset()
        yield* get("/health")
        yield* get("/ready")
        yield* get("/redoc.standalone.js")
        yield* get("/items/1")
        yield* Recorder.eventually(() => serverSpans().length > 0 ? true : undefined)
        yield* Effect.sleep("50 millis")
        expect(serverSpans().map((s) => s.attributes["http.route"])).toEqual(["/items/:id"])
      }))

    it.effect("an incoming traceparent is the parent; outbound calls carry traceparent and X-Request-Id", () =>
      Effect.gen(function*() {
        exporter.reset()
        const upstream = yield* Upstream
        upstream.requests.length = 0
        const answer = yield* withIncomingTrace(get("/proxy", { traceparent, "x-request-id": "proxy-req-1" }))
        expect(answer.json).toEqual({ upstream: 200 })
        const span = yield* Recorder.eventually(() => serverSpans()[0])
        expect(span.spanContext().traceId).toBe(traceId)
        expect(span.parentSpanContext?.spanId).toBe(parentId)
        const [call] = upstream.requests
        expect(call.headers["x-request-id"]).toBe("proxy-req-1")
        const outbound = String(call.headers["traceparent"]).split("-")
        expect(outbound[1]).toBe(traceId)
        // The outbound parent is the client span, a child of the server span.
        const client = yield* Recorder.eventually(() =>
          exporter.getFinishedSpans().find((s) => s.kind === SpanKind.CLIENT)
        )
        expect(outbound[2]).toBe(client.spanContext().spanId)
        expect(client.parentSpanContext?.spanId).toBe(span.spanContext().spanId)
      }))
  })

  layer(served.pipe(Layer.provideMerge(UpstreamLive)), { excludeTestServices: true })("without an exporter", (it) => {
    it.effect("no server span is built, but a trace still passes through to upstream calls", () =>
      Effect.gen(function*() {
        exporter.reset()
        const upstream = yield* Upstream
        upstream.requests.length = 0
        yield* withIncomingTrace(get("/proxy", { traceparent }))
        // The caller's own span is the upstream's parent: nothing between them is exported.
        expect(upstream.requests[0].headers["traceparent"]).toBe(traceparent)
        expect(exporter.getFinishedSpans()).toHaveLength(0)
        // Without an incoming trace nothing is sent (a trace id no collector will ever see would mislead).
        upstream.requests.length = 0
        yield* withIncomingTrace(get("/proxy"))
        expect(upstream.requests[0].headers["traceparent"]).toBeUndefined()
      }))
  })

  it.live("spans arrive at an OTLP/HTTP receiver when OTEL_EXPORTER_OTLP_ENDPOINT is set", () =>
    Effect.gen(function*() {
      const collector = yield* Recorder.make()
      const env = new Map([
        ["OTEL_EXPORTER_OTLP_ENDPOINT", `${collector.url}/`],
        ["OTEL_SERVICE_NAME", "example-otel"]
      ])
      const scope = yield* Scope.make()
      yield* Layer.buildWithScope(
        ServiceKit.serveTest(ExampleApi, { service, port: 0 }).pipe(
          Layer.provide(ItemsLive),
          Layer.provide(ServiceKit.observability(service)),
          Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(env)))
        ),
        scope
      ).pipe(
        Effect.flatMap((context) =>
          get("/items/1", { "x-request-id": "otlp-req-1" }).pipe(
            Effect.provideService(HttpClient.HttpClient, Context.get(context, HttpClient.HttpClient))
          )
        )
      )
      // Closing the service flushes the batch processor.
      yield* Scope.close(scope, Exit.void)
      const exports = collector.requests.filter((r) => r.url === "/v1/traces")
      expect(exports.length).toBeGreaterThan(0)
      expect(exports[0].headers["content-type"]).toContain("application/json")
      const payload = exports.map((r) => JSON.parse(r.body) as OtlpPayload)
      const resource = payload[0].resourceSpans[0].resource.attributes
      expect(resource).toContainEqual({ key: "service.name", value: { stringValue: "example-otel" } })
      expect(resource).toContainEqual({ key: "service.version", value: { stringValue: "1.2.3" } })
      const spans = payload.flatMap((p) => p.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)))
      const server = spans.find((s) => s.attributes.some((a) => a.key === "http.route"))
      expect(server).toBeDefined()
      expect(server!.attributes).toContainEqual({ key: "http.route", value: { stringValue: "/items/:id" } })
      expect(server!.attributes).toContainEqual({ key: "http.request.id", value: { stringValue: "otlp-req-1" } })
    }).pipe(Effect.scoped))
})

interface OtlpPayload {
  readonly resourceSpans: ReadonlyArray<{
    readonly resource: { readonly attributes: ReadonlyArray<unknown> }
    readonly scopeSpans: ReadonlyArray<{
      readonly spans: ReadonlyArray<{
        readonly name: string
        readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: unknown }>
      }>
    }>
  }>
}
