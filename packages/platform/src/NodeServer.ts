/**
 * The Node HTTP server behind every service, with graceful shutdown.
 *
 * `NodeHttpServer` on its own detaches the request handler and then closes the server when its
 * scope closes; requests arriving on kept-alive connections in between hang, and nothing bounds
 * how long shutdown waits. The kit adds a drain step that runs first (see `ServiceKit`):
 *
 * 1. mark the server draining: `/ready` answers 503 and responses not yet started get
 *    `Connection: close`, so clients stop reusing the connection;
 * 2. stop accepting connections and close idle kept-alive ones;
 * 3. wait until the in-flight requests have finished, at most `shutdownTimeout`;
 * 4. close whatever connections are left.
 *
 * Only then do the remaining finalizers run, so pools and brokers are released after the last
 * request that might use them.
 */
import type * as NodeContext from "@effect/platform-node/NodeContext"
import * as PlatformNodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type * as Etag from "@effect/platform/Etag"
import type * as HttpPlatform from "@effect/platform/HttpPlatform"
import * as HttpServer from "@effect/platform/HttpServer"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"

export interface ServerLifecycle {
  /** True once shutdown has begun. */
  readonly isDraining: () => boolean
  /** Requests received and not yet answered. */
  readonly inFlight: () => number
  /** Runs the drain steps above; idempotent. */
  readonly drain: Effect.Effect<void>
}

export const ServerLifecycle = Context.GenericTag<ServerLifecycle>("@rec/platform/ServerLifecycle")

/** The Node server itself: the kit installs its request handler on it (`RequestHandler`). */
export class NodeHttpServer extends Context.Tag("@rec/platform/NodeHttpServer")<NodeHttpServer, Http.Server>() {}

/** Installs a `request` listener for the lifetime of the scope. */
export const listen = (
  handler: (request: Http.IncomingMessage, response: Http.ServerResponse) => void
): Effect.Effect<void, never, NodeHttpServer | Scope.Scope> =>
  Effect.flatMap(NodeHttpServer, (server) =>
    Effect.acquireRelease(
      Effect.sync(() => server.on("request", handler)),
      () => Effect.sync(() => server.off("request", handler))
    ))

export interface ServerOptions {
  readonly port: number
  readonly host?: string | undefined
  readonly shutdownTimeout: Duration.DurationInput
}

const make = (options: ServerOptions) =>
  Effect.gen(function*() {
    const server = Http.createServer()
    const active = new Set<Http.ServerResponse>()
    let draining = false
    let idle: Array<() => void> = []

    server.on("request", (_request: Http.IncomingMessage, response: Http.ServerResponse) => {
      active.add(response)
      if (draining) response.setHeader("connection", "close")
      response.once("close", () => {
        active.delete(response)
        if (active.size === 0 && idle.length > 0) {
          const waiters = idle
          idle = []
          for (const resume of waiters) resume()
        }
      })
    })

    const httpServer = yield* PlatformNodeHttpServer.make(() => server, { port: options.port, host: options.host })

    const waitIdle = Effect.async<void>((resume) => {
      if (active.size === 0) return resume(Effect.void)
      const waiter = () => resume(Effect.void)
      idle.push(waiter)
      return Effect.sync(() => {
        idle = idle.filter((w) => w !== waiter)
      })
    })

    const drain = Effect.suspend(() => {
      if (draining) return Effect.void
      draining = true
      for (const response of active) {
        if (!response.headersSent) response.setHeader("connection", "close")
      }
      return Effect.gen(function*() {
        yield* Effect.logInfo("Shutting down: no new connections, finishing in-flight requests").pipe(
          Effect.annotateLogs({ in_flight: active.size })
        )
        server.close()
        server.closeIdleConnections()
        // Finalizers run uninterruptibly; the wait must be interruptible for the timeout to fire.
        const finished = yield* Effect.timeoutOption(Effect.interruptible(waitIdle), options.shutdownTimeout)
        if (Option.isNone(finished)) {
          yield* Effect.logWarning("Shutdown timeout reached; closing connections of unfinished requests").pipe(
            Effect.annotateLogs({
              in_flight: active.size,
              shutdown_timeout: Duration.format(Duration.decode(options.shutdownTimeout))
            })
          )
        }
        server.closeAllConnections()
      })
    })

    const lifecycle: ServerLifecycle = {
      isDraining: () => draining,
      inFlight: () => active.size,
      drain
    }
    return { httpServer, lifecycle, server }
  })

/** Services `NodeHttpServer` provides next to the server (the request handlers may need them). */
export type PlatformServices = HttpPlatform.HttpPlatform | Etag.Generator | NodeContext.NodeContext

/**
 * The server, its lifecycle handle and the Node platform services (`FileSystem`, `Path`, ...).
 * `HttpServer.HttpServer` gives the address; requests are served by a handler installed with
 * `listen` (its `serve` would install `@effect/platform-node`'s own handler).
 */
export const layer = (
  options: ServerOptions
): Layer.Layer<HttpServer.HttpServer | ServerLifecycle | NodeHttpServer | PlatformServices, HttpServerError.ServeError> =>
  Layer.merge(
    Layer.scopedContext(
      Effect.map(make(options), ({ httpServer, lifecycle, server }) =>
        Context.make(HttpServer.HttpServer, httpServer).pipe(
          Context.add(ServerLifecycle, lifecycle),
          Context.add(NodeHttpServer, server)
        ))
    ),
    PlatformNodeHttpServer.layerContext
  )
