import { describe, expect, it } from "@effect/vitest"
import { Logging, RequestContext } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"

const capture = (options: Logging.JsonLoggerOptions) => {
  const lines: Array<Record<string, unknown>> = []
  const layer = Logger.replace(
    Logger.defaultLogger,
    Logger.map(Logging.jsonLogger(options), (line) => {
      lines.push(JSON.parse(line) as Record<string, unknown>)
    })
  )
  return { lines, layer }
}

const request = (): RequestContext.RequestInfo => ({
  requestId: "req-7",
  method: "GET",
  path: "/x",
  startedAt: 0,
  span: undefined,
  route: undefined,
  userId: undefined
})

describe("JSON logs", () => {
  it.effect("one JSON object per call with level, service, message and annotations", () =>
    Effect.gen(function*() {
      const { layer, lines } = capture({ service: "policy" })
      yield* Effect.logWarning("policy reloaded").pipe(
        Effect.annotateLogs({ files: 12, message: "shadowed", nested: { a: [1, 2n] } }),
        Effect.provide(layer)
      )
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatchObject({
        level: "WARN",
        service: "policy",
        message: "policy reloaded",
        files: 12,
        // A reserved key of an annotation does not overwrite the record's own.
        "annotation.message": "shadowed",
        nested: { a: [1, "2"] }
      })
      expect(Date.parse(String(lines[0].time))).not.toBeNaN()
    }))

  it.effect("carries the request id and, once known, the user id of the request", () =>
    Effect.gen(function*() {
      const { layer, lines } = capture({ service: "grid" })
      const info = request()
      yield* Effect.gen(function*() {
        yield* Effect.log("before authentication")
        yield* RequestContext.annotateUser("alice")
        yield* Effect.log("after authentication")
      }).pipe(Effect.provideService(RequestContext.CurrentRequest, info), Effect.provide(layer))
      yield* Effect.log("outside any request").pipe(Effect.provide(layer))
      expect(lines.map((l) => [l.request_id, l.user_id])).toEqual([
        ["req-7", undefined],
        ["req-7", "alice"],
        [undefined, undefined]
      ])
    }))

  it.effect("renders the cause of failures, and trace ids when asked", () =>
    Effect.gen(function*() {
      const { layer, lines } = capture({ service: "grid", traceIds: true })
      yield* Effect.logError("upstream failed", new Error("ECONNREFUSED")).pipe(
        Effect.withSpan("work"),
        Effect.provide(layer)
      )
      expect(String(lines[0].message)).toContain("upstream failed")
      expect(lines[0].trace_id).toMatch(/^[0-9a-f]{32}$/)
      expect(lines[0].span_id).toMatch(/^[0-9a-f]{16}$/)
      yield* Effect.die(new Error("kaboom")).pipe(
        Effect.catchAllCause((cause) => Effect.logError("caught", cause)),
        Effect.provide(layer)
      )
      const caught = lines.find((l) => l.message === "caught")
      expect(String(caught?.cause)).toContain("kaboom")
    }))

  it("per-request lines written directly have the shape of the logger's, above the minimum level", () => {
    const written: Array<string> = []
    const direct = Logging.directRequestLogger({
      service: "policy",
      minimumLevel: LogLevel.Info,
      writer: { write: (line) => written.push(line) }
    })
    const info = { ...request(), userId: "alice" }
    const fields = { "http.status": 200, message: "shadowed", duration_ms: 3 }
    expect(direct.log(LogLevel.Info, "GET /x 200", info, fields)).toBeUndefined()
    expect(direct.log(LogLevel.Debug, "dropped", info, fields)).toBeUndefined()
    expect(written).toHaveLength(1)
    const line = JSON.parse(written[0]) as Record<string, unknown>
    expect(Object.keys(line).slice(0, 6)).toEqual(["time", "level", "service", "message", "request_id", "user_id"])
    expect(line).toMatchObject({
      level: "INFO",
      service: "policy",
      message: "GET /x 200",
      request_id: "req-7",
      user_id: "alice",
      "http.status": 200,
      "annotation.message": "shadowed",
      duration_ms: 3
    })
  })

  it.effect("without the direct writer, per-request lines go through Effect's logger", () =>
    Effect.gen(function*() {
      const { layer, lines } = capture({ service: "grid" })
      const logged = Logging.effectRequestLogger.log(LogLevel.Warning, "GET /y 503", request(), { "http.status": 503 })
      expect(logged).toBeDefined()
      yield* logged!.pipe(Effect.provideService(RequestContext.CurrentRequest, request()), Effect.provide(layer))
      expect(lines).toEqual([expect.objectContaining({ level: "WARN", message: "GET /y 503", request_id: "req-7", "http.status": 503 })])
    }))

  it("lines built as strings are the same JSON, with escaping, and fall back for values JSON cannot hold", () => {
    const line = Logging.formatLine(
      { service: "policy", level: "INFO", message: "say \"hi\"\n", requestId: "r-1", userId: undefined },
      { reason: "a\u2028b", n: 0.25, ok: true, nothing: null }
    )
    const parsed = JSON.parse(line) as Record<string, unknown>
    expect(Object.keys(parsed)).toEqual(["time", "level", "service", "message", "request_id", "reason", "n", "ok", "nothing"])
    expect(parsed).toMatchObject({ message: "say \"hi\"\n", reason: "a\u2028b", n: 0.25, ok: true, nothing: null })
    expect(JSON.parse(Logging.formatLine({ service: "s", level: "WARN", message: "m" }, {}))).toMatchObject({ message: "m" })

    const written: Array<string> = []
    const direct = Logging.directRequestLogger({ service: "s", minimumLevel: LogLevel.Info, writer: { write: (l) => written.push(l) } })
    direct.log(LogLevel.Info, "big", request(), { count: 2n, level: "shadowed" })
    expect(JSON.parse(written[0])).toMatchObject({ message: "big", count: "2", level: "INFO", "annotation.level": "shadowed" })
  })
})
