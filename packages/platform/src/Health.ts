/**
 * Liveness and readiness.
 *
 * - `GET /health`: the process is up: `{ "status": "ok", "service", "version" }`. It checks
 *   nothing else, so an orchestrator does not restart a service whose database is down.
 * - `GET /ready`: runs the service's readiness checks concurrently, each bounded by a timeout:
 *   200 `{ "status": "ready", "checks": { "<name>": "ok" } }`, or 503 with `"not_ready"` and the
 *   failing checks marked `"failed"`/`"timeout"` (the cause is logged, not sent). Optional checks
 *   (dependencies the service works without) only turn a 200 into `"degraded"`. During shutdown
 *   it answers 503 `{ "status": "draining" }` so load balancers stop routing here.
 *
 * A service that must own one of these paths (a spec-mandated body) turns the kit's route off
 * (`health: false` / `readiness: false`) and declares the endpoint in its contract.
 */
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ServerLifecycle } from "./NodeServer.js"
import type { ServiceInfo } from "./Tracing.js"

/** A named readiness check: succeeds when the dependency is usable. */
export type Checks<R> = Readonly<Record<string, Effect.Effect<unknown, unknown, R>>>

export type CheckResult = "ok" | "failed" | "timeout"

export const healthLayer = (
  service: ServiceInfo,
  path: `/${string}` = "/health"
): Layer.Layer<never, never, HttpLayerRouter.HttpRouter> => {
  const body = HttpServerResponse.unsafeJson({ status: "ok", service: service.name, version: service.version })
  return HttpLayerRouter.add("GET", path, Effect.succeed(body)) as Layer.Layer<
    never,
    never,
    HttpLayerRouter.HttpRouter
  >
}

/** Runs the checks concurrently; never fails. */
export const runChecks = <R>(
  checks: Checks<R>,
  timeout: Duration.DurationInput
): Effect.Effect<Record<string, CheckResult>, never, R> =>
  Effect.forEach(
    Object.entries(checks),
    ([name, check]) =>
      check.pipe(
        Effect.timeoutOption(timeout),
        Effect.map((done): CheckResult => Option.isSome(done) ? "ok" : "timeout"),
        Effect.catchAllCause((cause) =>
          Effect.as(
            Effect.logWarning(`Readiness check ${name} failed`, cause).pipe(Effect.annotateLogs({ check: name })),
            "failed" as const
          )
        ),
        Effect.map((result) => [name, result] as const)
      ),
    { concurrency: "unbounded" }
  ).pipe(Effect.map(Object.fromEntries))

export const readyLayer = <R>(
  checks: Checks<R>,
  options?: {
    readonly path?: `/${string}` | undefined
    readonly timeout?: Duration.DurationInput | undefined
    /**
     * Checks of dependencies the service keeps serving without (the grid gateway's MQTT
     * broker): when one fails the answer stays 200 with `"status": "degraded"`.
     */
    readonly optional?: Checks<R> | undefined
  }
): Layer.Layer<never, never, HttpLayerRouter.HttpRouter | ServerLifecycle | R> =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const lifecycle = yield* ServerLifecycle
    const context = yield* Effect.context<R>()
    const timeout = options?.timeout ?? Duration.seconds(5)
    const optional = options?.optional ?? {}
    const handler = Effect.suspend(() => {
      if (lifecycle.isDraining()) {
        return Effect.succeed(HttpServerResponse.unsafeJson({ status: "draining" }, { status: 503 }))
      }
      return Effect.map(
        Effect.zip(runChecks(checks, timeout), runChecks(optional, timeout), { concurrent: true }),
        ([required, extra]) => {
          const ready = Object.values(required).every((r) => r === "ok")
          const complete = Object.values(extra).every((r) => r === "ok")
          return HttpServerResponse.unsafeJson(
            { status: !ready ? "not_ready" : complete ? "ready" : "degraded", checks: { ...required, ...extra } },
            { status: ready ? 200 : 503 }
          )
        }
      )
    }).pipe(Effect.provide(context))
    return HttpLayerRouter.add("GET", options?.path ?? "/ready", handler) as Layer.Layer<
      never,
      never,
      HttpLayerRouter.HttpRouter
    >
  }))
