/**
 * Structured logs: one JSON object per line on stdout, carrying the service name, the request id
 * and user id of the request that logged it (from `CurrentRequest`), the trace and span ids when
 * tracing is on, the log annotations and, for failures, the rendered cause.
 *
 * ```json
 * {"time":"2025-01-01T12:00:00.000Z","level":"INFO","service":"policy","message":"Sent HTTP response",
 *  "request_id":"4f1c...","http.status":200}
 * ```
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"
import * as HashMap from "effect/HashMap"
import * as Inspectable from "effect/Inspectable"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { CurrentRequest } from "./RequestContext.js"
import type { LogFormat } from "./ServiceConfig.js"

export interface JsonLoggerOptions {
  readonly service: string
  /** Add `trace_id`/`span_id` (only meaningful when spans are exported). */
  readonly traceIds?: boolean | undefined
}

const reserved = new Set(["time", "level", "service", "message", "request_id", "user_id", "trace_id", "span_id"])

const jsonReplacer = (_key: string, value: unknown): unknown => {
  if (typeof value === "bigint") return value.toString()
  if (value instanceof Error) return { name: value.name, message: value.message }
  return value
}

const stringify = (record: Record<string, unknown>): string => {
  try {
    return JSON.stringify(record, jsonReplacer)
  } catch {
    // Circular structures: fall back to Effect's cycle-safe rendering of each value.
    const safe: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(record)) {
      safe[key] = typeof value === "object" && value !== null ? Inspectable.stringifyCircular(value) : value
    }
    return JSON.stringify(safe, jsonReplacer)
  }
}

const messageOf = (message: unknown): unknown => {
  const parts = Array.isArray(message) ? message : [message]
  const rendered = parts.map((part) => typeof part === "string" ? part : Inspectable.toJSON(part))
  return rendered.length === 1 ? rendered[0] : rendered
}

/** The JSON line for one log call. */
export const jsonLogger = (options: JsonLoggerOptions): Logger.Logger<unknown, string> =>
  Logger.make(({ annotations, cause, context, date, logLevel, message }) => {
    const record: Record<string, unknown> = {
      time: date.toISOString(),
      level: logLevel.label,
      service: options.service,
      message: messageOf(message)
    }
    const fiberContext = FiberRefs.getOrDefault(context, FiberRef.currentContext)
    const request = Context.get(fiberContext, CurrentRequest)
    if (request.requestId !== "") record.request_id = request.requestId
    if (request.userId !== undefined) record.user_id = request.userId
    if (options.traceIds === true) {
      const span = Context.getOption(fiberContext, Tracer.ParentSpan)
      if (Option.isSome(span)) {
        record.trace_id = span.value.traceId
        record.span_id = span.value.spanId
      }
    }
    for (const [key, value] of HashMap.toEntries(annotations)) {
      record[reserved.has(key) ? `annotation.${key}` : key] = Inspectable.toJSON(value)
    }
    if (!Cause.isEmpty(cause)) record.cause = Cause.pretty(cause, { renderErrorCause: true })
    return stringify(record)
  })

export interface LoggingOptions extends JsonLoggerOptions {
  readonly level: LogLevel.LogLevel
  readonly format?: LogFormat | undefined
}

/** Replaces Effect's default logger and sets the minimum level (`LOG_LEVEL`). */
export const layer = (options: LoggingOptions): Layer.Layer<never> =>
  Layer.merge(
    options.format === "pretty"
      ? Logger.pretty
      : Logger.replace(Logger.defaultLogger, Logger.withConsoleLog(jsonLogger(options))),
    Logger.minimumLogLevel(options.level)
  )
