/**
 * OpenTelemetry tracing: spans from Effect (`Effect.fn`, `Effect.withSpan`, the server span per
 * request, client spans of `HttpClient`, SQL spans of `@effect/sql`) are exported with OTLP over
 * HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, under
 * the service name `OTEL_SERVICE_NAME` or the service's own name. Otherwise tracing is off and the
 * kit also skips the per-request server span (the HTTP tracer middleware records every header as
 * an attribute: wasted work when nothing is exported).
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { BatchSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { OtelConfig } from "./ServiceConfig.js"

export interface ServiceInfo {
  /** Short service name (`policy`, `grid-gateway`): logs, spans, `/health`. */
  readonly name: string
  readonly version: string
}

/**
 * Whether spans are exported. The kit reads it to decide whether requests get a server span;
 * the tracing layers below set it.
 */
export class TracingEnabled extends Context.Reference<TracingEnabled>()("@rec/platform/TracingEnabled", {
  defaultValue: () => false
}) {}

const enabled = Layer.succeed(TracingEnabled, true)

/** Tracing through the given span processors (tests pass an in-memory exporter here). */
export const layerSpanProcessor = (
  service: ServiceInfo,
  processor: SpanProcessor | ReadonlyArray<SpanProcessor>,
  serviceName?: string
): Layer.Layer<TracingEnabled> =>
  Layer.merge(
    Layer.discard(NodeSdk.layer(() => ({
      resource: { serviceName: serviceName ?? service.name, serviceVersion: service.version },
      spanProcessor: processor,
      shutdownTimeout: "5 seconds"
    }))),
    enabled
  )

/** OTLP/HTTP export when configured, nothing otherwise. */
export const layer = (service: ServiceInfo, otel: OtelConfig): Layer.Layer<TracingEnabled> => {
  if (!otel.enabled || Option.isNone(otel.tracesUrl)) return Layer.succeed(TracingEnabled, false)
  const exporter = new OTLPTraceExporter({ url: otel.tracesUrl.value, headers: Redacted.value(otel.headers) })
  return layerSpanProcessor(service, new BatchSpanProcessor(exporter), Option.getOrUndefined(otel.serviceName))
}
