/**
 * Helpers of the alert-flow tests: a day on which the simulator's network breaches, publishing
 * pipeline-run events like an orchestrator, a local webhook receiver, waiting for the gateway.
 */
import { DevIdp } from "@rec/dev-idp"
import type { GridSchemas } from "@rec/digital-twin"
import { Mqtt } from "@rec/mqtt"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as crypto from "node:crypto"
import * as http from "node:http"
import * as net from "node:net"
import { logs, SimulatorUrl } from "./Gateway.js"

export const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)

const distribution = (network: string, hazard: "wind" | "heat", date: string) =>
  Effect.gen(function*() {
    const url = yield* SimulatorUrl
    const token = yield* Effect.orDie((yield* DevIdp).mint("svc-grid"))
    return yield* Effect.promise(async () => {
      const response = await fetch(`${url}/grid/${network}/${hazard}/alert-distribution?dates=${date}`, {
        headers: { authorization: `Bearer ${token}` }
      })
      return await response.json() as GridSchemas.AlertDistribution
    })
  })

const atLeast = (d: GridSchemas.AlertDistribution, levels: ReadonlyArray<string>) =>
  d.some((i) => levels.includes(i.risk_level) && i.events > 0)

export interface BreachDay {
  readonly date: string
  /** Hazards at WARNING or above that day. */
  readonly warning: ReadonlyArray<"wind" | "heat">
  /** Hazards at ALERT that day. */
  readonly alert: ReadonlyArray<"wind" | "heat">
}

/**
 * A day of the simulator's window (yesterday-7 .. +2) on which `network` has wind or heat at
 * WARNING or above, asked from the simulator itself (the data is deterministic per day, but which
 * days are stormy moves with today's date).
 */
export const breachDay = (network: string) =>
  Effect.gen(function*() {
    for (let offset = 2; offset >= -7; offset--) {
      const date = day(offset)
      const wind = yield* distribution(network, "wind", date)
      const heat = yield* distribution(network, "heat", date)
      const warning = (["wind", "heat"] as const).filter((h) => atLeast(h === "wind" ? wind : heat, ["WARNING", "ALERT"]))
      const alert = (["wind", "heat"] as const).filter((h) => atLeast(h === "wind" ? wind : heat, ["ALERT"]))
      if (warning.length > 0) return { date, warning, alert } satisfies BreachDay
    }
    return yield* Effect.dieMessage(`the simulator has no WARNING or ALERT day for ${network} in its window`)
  })

/** A day outside the simulator's window: every distribution is empty. */
export const quietDay = "2020-01-15"

export interface RunOptions {
  readonly flow?: string
  readonly status?: "started" | "completed" | "failed"
  readonly network_id?: string
  readonly period?: string
  readonly window_start?: string
  readonly window_end?: string
  readonly run_id?: string
  readonly namespace?: string
}

export const runEvent = (options: RunOptions = {}) => ({
  flow: options.flow ?? "grid-resilience-flow",
  namespace: options.namespace ?? "grid",
  status: options.status ?? "completed",
  run_id: options.run_id ?? crypto.randomUUID(),
  timestamp: new Date().toISOString(),
  duration_ms: 1234,
  ...(options.network_id === undefined ? {} : { network_id: options.network_id }),
  ...(options.period === undefined ? {} : { period: options.period }),
  ...(options.window_start === undefined ? {} : { window_start: options.window_start }),
  ...(options.window_end === undefined ? {} : { window_end: options.window_end })
})

/** Publishes a run event as the orchestrator does (QoS 1, `rec/pipelines/runs/<namespace>` unless told). */
export const publishRun = (event: ReturnType<typeof runEvent> | Record<string, unknown>, topic = "rec/pipelines/runs/grid") =>
  Effect.flatMap(Mqtt.Mqtt, (mqtt) => Effect.orDie(mqtt.publish(topic, JSON.stringify(event), { qos: 1 })))

/** The dispatcher's summary lines of a run, in order. */
export const runReports = (runId: string) =>
  logs.filter((r) => typeof r.message === "string" && r.message.startsWith(`pipeline run ${runId}: `))

/** Waits until `check` holds (polling), failing with `what` after `timeout`. */
export const waitFor = <A>(what: string, check: () => A | undefined | false, timeout: Duration.DurationInput = "15 seconds") =>
  Effect.gen(function*() {
    const deadline = Date.now() + Duration.toMillis(timeout)
    while (Date.now() < deadline) {
      const value = check()
      if (value !== undefined && value !== false) return value
      yield* Effect.sleep("50 millis")
    }
    return yield* Effect.dieMessage(`timed out waiting for ${what}`)
  })

export interface ReceivedHook {
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/** A webhook receiver on 127.0.0.1 answering `status()` (default 204); closed with the scope. */
export const webhookReceiver = (status: () => number = () => 204) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly received: Array<ReceivedHook>; readonly server: http.Server }>((resume) => {
      const received: Array<ReceivedHook> = []
      const server = http.createServer((request, response) => {
        let body = ""
        request.on("data", (chunk: Buffer) => (body += chunk.toString()))
        request.on("end", () => {
          received.push({ headers: request.headers, body })
          response.writeHead(status())
          response.end()
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/hooks/grid`, received, server })))
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

/** A port nothing listens on now. */
export const freePort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as net.AddressInfo
    server.close(() => resume(Effect.succeed(port)))
  })
})
