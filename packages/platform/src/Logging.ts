/**
 * Structured logs: one JSON object per line on stdout, carrying the service name, the request id
 * and user id of the request that logged it (from `CurrentRequest`), the trace and span ids when
 * tracing is on, the log annotations and, for failures, the rendered cause.
 *
 * ```json
 * {"time":"2025-01-01T12:00:00.000Z","level":"INFO","service":"policy","message":"Sent HTTP response",
 *  "request_id":"4f1c...","http.status":200}
 * ```
 *
 * Lines leave through `stdoutLines`: the lines of one event-loop turn in one write (a write per
 * line is a system call per line), in the order they were logged, the rest written
 * synchronously when the process exits. Lines written per request at high rates (the access log,
 * the policy service's audit records) skip Effect's logger, whose annotation and fiber-ref
 * machinery cost more than the rest of a small request: `RequestLogger` writes them as JSON
 * directly (`Logging.layer` installs it; without that layer, as in tests that capture logs with
 * `Logger.replace`, they go through Effect's logger as before).
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"
import * as HashMap from "effect/HashMap"
import * as Inspectable from "effect/Inspectable"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { CurrentRequest, type RequestInfo } from "./RequestContext.js"
import type { LogFormat } from "./ServiceConfig.js"

export interface LineWriter {
  /** One line (without its newline). */
  readonly write: (line: string) => void
}

const makeStdoutLines = (): LineWriter => {
  let pending: Array<string> = []
  const flush = () => {
    if (pending.length === 0) return
    const chunk = pending.join("\n") + "\n"
    pending = []
    process.stdout.write(chunk)
  }
  process.once("exit", flush)
  return {
    write: (line) => {
      if (pending.length === 0) setImmediate(flush)
      pending.push(line)
    }
  }
}

let stdout: LineWriter | undefined

/** Lines to stdout, batched per event-loop turn (one writer per process). */
export const stdoutLines = (): LineWriter => stdout ??= makeStdoutLines()

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

/** The first fields of every line: time, level, service, message, request and user ids. */
const head = (
  service: string,
  date: Date,
  level: string,
  message: unknown,
  request: RequestInfo
): Record<string, unknown> => {
  const record: Record<string, unknown> = { time: date.toISOString(), level, service, message }
  if (request.requestId !== "") record.request_id = request.requestId
  if (request.userId !== undefined) record.user_id = request.userId
  return record
}

const headRecord = (head: LineHead): Record<string, unknown> => {
  const record: Record<string, unknown> = { time: isoNow(), level: head.level, service: head.service, message: head.message }
  if (head.requestId !== undefined && head.requestId !== "") record.request_id = head.requestId
  if (head.userId !== undefined) record.user_id = head.userId
  if (head.traceId !== undefined) {
    record.trace_id = head.traceId
    record.span_id = head.spanId
  }
  return record
}

let lastMillis = -1
let lastIso = ""

/** The current time in ISO 8601, formatted once per millisecond. */
export const isoNow = (): string => {
  const now = Date.now()
  if (now !== lastMillis) {
    lastMillis = now
    lastIso = new Date(now).toISOString()
  }
  return lastIso
}

export interface LineHead {
  readonly service: string
  readonly level: string
  readonly message: string
  readonly requestId?: string | undefined
  readonly userId?: string | undefined
  readonly traceId?: string | undefined
  readonly spanId?: string | undefined
}

/**
 * A line in the format of `jsonLogger`, built as a string for lines written at high rates (the
 * access log, audit records): `fields` must be plain JSON data whose keys are not the reserved
 * ones (`time`, `level`, `service`, `message`, `request_id`, `user_id`, `trace_id`, `span_id`).
 * (Merging the head and the fields into one object first costs ten times more: an object grown
 * that large goes to V8's slow dictionary mode, which `JSON.stringify` walks slowly.)
 */
export const formatLine = (head: LineHead, fields: Readonly<Record<string, unknown>>): string => {
  let line = `{"time":"${isoNow()}","level":"${head.level}","service":${JSON.stringify(head.service)},"message":${
    JSON.stringify(head.message)
  }`
  if (head.requestId !== undefined && head.requestId !== "") line += `,"request_id":${JSON.stringify(head.requestId)}`
  if (head.userId !== undefined) line += `,"user_id":${JSON.stringify(head.userId)}`
  if (head.traceId !== undefined) line += `,"trace_id":"${head.traceId}","span_id":"${head.spanId}"`
  const rest = JSON.stringify(fields)
  return rest === "{}" ? line + "}" : line + "," + rest.slice(1)
}

/** `fields` with reserved keys renamed `annotation.<key>` (as `jsonLogger` does). */
const unreserved = (fields: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> => {
  for (const key in fields) {
    if (reserved.has(key)) {
      const renamed: Record<string, unknown> = {}
      for (const k in fields) renamed[reserved.has(k) ? `annotation.${k}` : k] = fields[k]
      return renamed
    }
  }
  return fields
}

/** The JSON line for one log call. */
export const jsonLogger = (options: JsonLoggerOptions): Logger.Logger<unknown, string> =>
  Logger.make(({ annotations, cause, context, date, logLevel, message }) => {
    const fiberContext = FiberRefs.getOrDefault(context, FiberRef.currentContext)
    const record = head(options.service, date, logLevel.label, messageOf(message), Context.get(fiberContext, CurrentRequest))
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

/**
 * Where the kit's per-request lines go (the access log). `log` returns `undefined` when it
 * wrote the line itself, otherwise the effect that logs it (run in the request's fiber).
 */
export interface RequestLogger {
  readonly log: (
    level: LogLevel.LogLevel,
    message: string,
    request: RequestInfo,
    fields: Readonly<Record<string, unknown>>
  ) => Effect.Effect<void> | undefined
}

/** Through Effect's logger (annotations become fields): what tests capture. */
export const effectRequestLogger: RequestLogger = {
  log: (level, message, _request, fields) => Effect.annotateLogs(Effect.logWithLevel(level, message), fields)
}

/**
 * The same JSON line as `jsonLogger` makes, built directly and written with `writer`; lines
 * under `minimumLevel` are dropped.
 */
export const directRequestLogger = (options: JsonLoggerOptions & {
  readonly minimumLevel: LogLevel.LogLevel
  readonly writer: LineWriter
}): RequestLogger => ({
  log: (level, message, request, fields) => {
    if (level.ordinal < options.minimumLevel.ordinal) return undefined
    const span = options.traceIds === true ? request.span : undefined
    const head: LineHead = {
      service: options.service,
      level: level.label,
      message,
      requestId: request.requestId,
      userId: request.userId,
      traceId: span?.traceId,
      spanId: span?.spanId
    }
    let line: string
    try {
      line = formatLine(head, unreserved(fields))
    } catch {
      // Not plain JSON (a bigint, a cycle): the logger's careful rendering.
      const record = { ...headRecord(head), ...unreserved(fields) }
      line = stringify(record)
    }
    options.writer.write(line)
    return undefined
  }
})

export class CurrentRequestLogger extends Context.Reference<CurrentRequestLogger>()(
  "@rec/platform/Logging/CurrentRequestLogger",
  { defaultValue: (): RequestLogger => effectRequestLogger }
) {}

export interface LoggingOptions extends JsonLoggerOptions {
  readonly level: LogLevel.LogLevel
  readonly format?: LogFormat | undefined
}

/**
 * Replaces Effect's default logger (JSON lines through `stdoutLines`, or Effect's pretty format)
 * and sets the minimum level (`LOG_LEVEL`); with JSON, per-request lines are written directly.
 */
export const layer = (options: LoggingOptions): Layer.Layer<CurrentRequestLogger> => {
  if (options.format === "pretty") {
    return Layer.mergeAll(
      Logger.pretty,
      Logger.minimumLogLevel(options.level),
      Layer.succeed(CurrentRequestLogger, effectRequestLogger)
    )
  }
  const writer = stdoutLines()
  return Layer.mergeAll(
    Logger.replace(Logger.defaultLogger, Logger.map(jsonLogger(options), writer.write)),
    Logger.minimumLogLevel(options.level),
    Layer.succeed(CurrentRequestLogger, directRequestLogger({ ...options, minimumLevel: options.level, writer }))
  )
}
