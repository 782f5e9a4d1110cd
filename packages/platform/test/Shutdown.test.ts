import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServer from "@effect/platform/HttpServer"
import { describe, expect, it } from "@effect/vitest"
import { NodeServer, ServiceKit } from "@rec/platform"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Http from "node:http"
import { eventually } from "./fixtures/Recorder.js"

class SlowGroup extends HttpApiGroup.make("slow")
  .add(
    HttpApiEndpoint.get("work", "/work").setUrlParams(Schema.Struct({ ms: Schema.NumberFromString })).addSuccess(
      Schema.String
    )
  )
{}
class SlowApi extends HttpApi.make("slow").add(SlowGroup) {}

const service = { name: "slow", version: "0.0.0" }

/** A raw Node request, so the test sees exactly what the socket does (no client retries). */
const request = (port: number, path: string) =>
  Effect.async<{ status: number; body: string; connection: string | undefined }, Error>((resume) => {
    const req = Http.get({ host: "127.0.0.1", port, path, agent: false }, (res) => {
      let body = ""
      res.on("data", (chunk) => (body += chunk))
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body, connection: res.headers.connection })))
      res.on("error", (error) => resume(Effect.fail(error)))
    })
    req.on("error", (error) => resume(Effect.fail(error)))
  })

/** Builds the service in its own scope so the test decides when shutdown starts. */
const start = (events: Array<string>, shutdownTimeout: Duration.DurationInput) =>
  Effect.gen(function*() {
    const WorkLive = HttpApiBuilder.group(SlowApi, "slow", (handlers) =>
      handlers.handle("work", ({ urlParams }) =>
        Effect.sleep(urlParams.ms).pipe(
          Effect.zipRight(Effect.sync(() => events.push(`handler finished ${urlParams.ms}`))),
          Effect.as("done")
        )))
    // Stands for a database pool: it must be released after the last request.
    const Pool = Layer.scopedDiscard(Effect.addFinalizer(() => Effect.sync(() => events.push("pool released"))))
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(
      ServiceKit.serveTest(SlowApi, { service, port: 0, shutdownTimeout }).pipe(
        Layer.provide(WorkLive),
        Layer.provide(Pool)
      ),
      scope
    )
    const server = Context.get(context, HttpServer.HttpServer)
    const port = server.address._tag === "TcpAddress" ? server.address.port : 0
    return { scope, port, lifecycle: Context.get(context, NodeServer.ServerLifecycle) }
  })

describe("graceful shutdown", () => {
  it.live("an in-flight request completes while shutdown is in progress; pools are released after it", () =>
    Effect.gen(function*() {
      const events: Array<string> = []
      const { lifecycle, port, scope } = yield* start(events, "5 seconds")
      const slow = yield* Effect.fork(request(port, "/work?ms=400"))
      yield* eventually(() => lifecycle.inFlight() === 1 ? true : undefined)

      const shutdown = yield* Effect.fork(
        Scope.close(scope, Exit.void).pipe(Effect.zipRight(Effect.sync(() => events.push("shutdown complete"))))
      )
      yield* eventually(() => lifecycle.isDraining() ? true : undefined)
      // New connections are refused while the in-flight request is still running.
      const refused = yield* Effect.either(request(port, "/work?ms=0"))
      expect(refused._tag).toBe("Left")
      expect(events).toEqual([])

      const answer = yield* Fiber.join(slow)
      expect(answer.status).toBe(200)
      expect(answer.body).toBe('"done"')
      // The response started after shutdown began, so the client is told not to reuse the connection.
      expect(answer.connection).toBe("close")
      yield* Fiber.join(shutdown)
      expect(events).toEqual(["handler finished 400", "pool released", "shutdown complete"])
    }))

  it.live("a request outlasting SHUTDOWN_TIMEOUT is cut off so shutdown completes", () =>
    Effect.gen(function*() {
      const events: Array<string> = []
      const { lifecycle, port, scope } = yield* start(events, "300 millis")
      const stuck = yield* Effect.fork(Effect.either(request(port, "/work?ms=60000")))
      yield* eventually(() => lifecycle.inFlight() === 1 ? true : undefined)
      const startedAt = Date.now()
      yield* Scope.close(scope, Exit.void)
      const elapsed = Date.now() - startedAt
      expect(elapsed).toBeGreaterThanOrEqual(250)
      expect(elapsed).toBeLessThan(5000)
      expect((yield* Fiber.join(stuck))._tag).toBe("Left")
      expect(events).toEqual(["pool released"])
    }))

  it.live("an idle service shuts down at once", () =>
    Effect.gen(function*() {
      const events: Array<string> = []
      const { port, scope } = yield* start(events, "5 seconds")
      expect((yield* request(port, "/work?ms=0")).status).toBe(200)
      const startedAt = Date.now()
      yield* Scope.close(scope, Exit.void)
      expect(Date.now() - startedAt).toBeLessThan(1000)
      expect(events).toEqual(["handler finished 0", "pool released"])
    }))
})
