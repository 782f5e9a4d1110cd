/**
 * An OTLP/HTTP trace receiver (`POST /v1/traces`). The platform's exporter
 * (`@opentelemetry/exporter-trace-otlp-http`, see `@rec/platform` Tracing.ts) sends the OTLP JSON
 * encoding (`Content-Type: application/json`, trace and span ids as hex); protobuf bodies are
 * refused with 415 and counted, so a change of encoding fails the test loudly instead of
 * silently collecting nothing.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as zlib from "node:zlib"

export interface CollectedSpan {
  readonly service: string
  readonly name: string
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly kind: number
  readonly attributes: Readonly<Record<string, unknown>>
}

export interface OtlpReceiver {
  readonly endpoint: string
  readonly spans: Array<CollectedSpan>
  /** Requests that were not OTLP JSON (should stay empty). */
  readonly refused: Array<string>
  readonly close: () => Promise<void>
}

interface AnyValue {
  readonly stringValue?: string
  readonly intValue?: string | number
  readonly doubleValue?: number
  readonly boolValue?: boolean
}
interface KeyValue {
  readonly key: string
  readonly value: AnyValue
}
interface ExportRequest {
  readonly resourceSpans?: ReadonlyArray<{
    readonly resource?: { readonly attributes?: ReadonlyArray<KeyValue> }
    readonly scopeSpans?: ReadonlyArray<{
      readonly spans?: ReadonlyArray<{
        readonly traceId: string
        readonly spanId: string
        readonly parentSpanId?: string
        readonly name: string
        readonly kind?: number
        readonly attributes?: ReadonlyArray<KeyValue>
      }>
    }>
  }>
}

const valueOf = (v: AnyValue): unknown => v.stringValue ?? v.intValue ?? v.doubleValue ?? v.boolValue
const attributesOf = (list: ReadonlyArray<KeyValue> = []) => Object.fromEntries(list.map((kv) => [kv.key, valueOf(kv.value)]))

/** The spans of one OTLP JSON export request. */
export const decode = (request: ExportRequest): Array<CollectedSpan> =>
  (request.resourceSpans ?? []).flatMap((resource) => {
    const service = String(attributesOf(resource.resource?.attributes)["service.name"] ?? "unknown")
    return (resource.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        service,
        name: span.name,
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId === undefined || span.parentSpanId === "" ? undefined : span.parentSpanId,
        kind: span.kind ?? 0,
        attributes: attributesOf(span.attributes)
      }))
    )
  })

export const start = (): Promise<OtlpReceiver> =>
  new Promise((resolve) => {
    const spans: Array<CollectedSpan> = []
    const refused: Array<string> = []
    const server = http.createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (c: Buffer) => chunks.push(c))
      request.on("end", () => {
        const type = request.headers["content-type"] ?? ""
        if (request.url !== "/v1/traces" || !type.startsWith("application/json")) {
          refused.push(`${request.method} ${request.url} ${type}`)
          response.writeHead(415).end()
          return
        }
        try {
          const raw = Buffer.concat(chunks)
          const body = request.headers["content-encoding"] === "gzip" ? zlib.gunzipSync(raw) : raw
          spans.push(...decode(JSON.parse(body.toString("utf8")) as ExportRequest))
          response.writeHead(200, { "content-type": "application/json" }).end("{}")
        } catch (error) {
          refused.push(`undecodable: ${error instanceof Error ? error.message : String(error)}`)
          response.writeHead(400).end()
        }
      })
    })
    server.listen(0, "127.0.0.1", () => {
      resolve({
        endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        spans,
        refused,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
