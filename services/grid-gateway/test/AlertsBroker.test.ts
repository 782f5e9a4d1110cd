/**
 * The listener against the machine's Mosquitto (issue 14 points 5 and 7) and the broker's
 * absence: the alert flow on a real broker with PostgreSQL; two replicas that both receive a run
 * send once (the claim in the database); with `MQTT_SHARED_GROUP` the broker gives the run to
 * one replica only; a gateway started without a broker serves, says `degraded`, and starts
 * listening when the broker appears. Skipped with the reason when Mosquitto or PostgreSQL is
 * not reachable (a failure under `REC_REQUIRE_SERVICES=1`).
 */
import { describe, expect, layer } from "@effect/vitest"
import { Testing } from "@rec/db"
import { EmbeddedBroker } from "@rec/mqtt"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as crypto from "node:crypto"
import mqtt from "mqtt"
import { breachDay, freePort, publishRun, runEvent, runReports, waitFor } from "./support/Alerts.js"
import { call, gatewayLayer, SentNudges, tokenOf } from "./support/Gateway.js"

const mosquittoSkipReason = await new Promise<string | undefined>((resolve) => {
  const client = mqtt.connect({ host: "127.0.0.1", port: 1883, reconnectPeriod: 0, connectTimeout: 2000 })
  client.on("connect", () => {
    client.end(true)
    resolve(undefined)
  })
  client.on("error", (e) => {
    client.end(true)
    resolve(`Mosquitto at 127.0.0.1:1883 is not reachable (${e.message}); start it with scripts/services.sh`)
  })
})
if (mosquittoSkipReason !== undefined && Testing.servicesRequired()) throw new Error(`${mosquittoSkipReason} (REC_REQUIRE_SERVICES=1)`)
const postgresSkipReason = await Testing.postgresSkipReason()
const skip = mosquittoSkipReason ?? postgresSkipReason

const prefix = () => `rec-test/${crypto.randomBytes(6).toString("hex")}/`

const createRule = (name: string, body: Record<string, unknown>) =>
  Effect.flatMap(tokenOf(name), (token) => Effect.map(call("POST", "/api/alert-rules", { token, json: body }), (r) => r.body as { id: string }))

describe.skipIf(skip !== undefined)(`on Mosquitto and PostgreSQL${skip === undefined ? "" : ` (skipped: ${skip})`}`, () => {
  layer(
    gatewayLayer({ database: "postgres", broker: { _tag: "mosquitto", topicPrefix: prefix() }, replicas: 2 }),
    { excludeTestServices: true, timeout: "120 seconds" }
  )("two replicas, no shared group", (it) => {
    it.effect("both receive the run; the rule nudges once; a redelivery sends nothing", () =>
      Effect.gen(function*() {
        const hot = yield* breachDay("dso-alto-garda")
        const rule = yield* createRule("dso-operator", { risk_types: hot.warning, threshold: "WARNING", recipients: "ops@dso.example" })
        const recorder = yield* SentNudges
        const event = runEvent({ network_id: "dso-alto-garda", period: hot.date })
        yield* publishRun(event)
        // Each replica reports: one sent, the other found the claim.
        yield* waitFor("both replicas' reports", () => runReports(event.run_id).length === 2)
        const results = runReports(event.run_id).map((r) => (r.fields["alerts.outcomes"] as Array<string>)[0]).sort()
        expect(results).toEqual([`${rule.id}:already-handled`, `${rule.id}:sent`])
        expect(recorder.sent.filter((n) => n.facts.period === hot.date)).toHaveLength(1)
        yield* publishRun(event)
        yield* waitFor("the redelivery's reports", () => runReports(event.run_id).length === 4)
        expect(recorder.sent.filter((n) => n.facts.period === hot.date)).toHaveLength(1)
      }))
  })

  layer(
    gatewayLayer({
      database: "postgres",
      broker: { _tag: "mosquitto", topicPrefix: prefix() },
      replicas: 2,
      env: { MQTT_SHARED_GROUP: `grid-${crypto.randomBytes(3).toString("hex")}` }
    }),
    { excludeTestServices: true, timeout: "120 seconds" }
  )("two replicas in a shared group", (it) => {
    it.effect("the broker hands each run to one replica", () =>
      Effect.gen(function*() {
        const hot = yield* breachDay("dso-alto-garda")
        yield* createRule("dso-operator", { risk_types: hot.warning, threshold: "WARNING" })
        const recorder = yield* SentNudges
        const events = Array.from({ length: 4 }, () => runEvent({ network_id: "dso-alto-garda", period: hot.date }))
        for (const event of events) yield* publishRun(event)
        yield* waitFor("every run's report", () => events.every((e) => runReports(e.run_id).length === 1))
        yield* Effect.sleep("500 millis")
        // One report per run, never two: no replica saw a run the other handled.
        expect(events.map((e) => runReports(e.run_id).length)).toEqual([1, 1, 1, 1])
        expect(recorder.sent).toHaveLength(4)
      }))
  })
})

const latePort = await Effect.runPromise(freePort)

describe("broker unavailable at start", () => {
  const port = latePort
  // The original's orchestrator and flow names: only these two variables change.
  const env = { PIPELINE_RUNS_TOPIC: "celine/pipelines/runs/+", GRID_PIPELINE_FLOW: "storm-resilience-flow" }
  layer(gatewayLayer({ broker: { _tag: "absent", port }, env }), { excludeTestServices: true, timeout: "120 seconds" })("late broker", (it) => {
    it.effect("serves and says degraded; when the broker appears the listener subscribes and alerts flow (topic and flow from the environment)", () =>
      Effect.gen(function*() {
        const degraded = yield* call("GET", "/ready")
        expect(degraded.status).toBe(200)
        expect(degraded.body).toEqual({ status: "degraded", checks: { database: "ok", policies: "ok", mqtt: "failed" } })
        // The grid data does not need the broker.
        expect((yield* call("GET", "/api/grid/dso-alto-garda/wind/trend", { token: yield* tokenOf("dso-operator") })).status).toBe(200)

        yield* Layer.buildWithScope(
          EmbeddedBroker.layer({ port }).pipe(Layer.provide(EmbeddedBroker.allowAll)),
          yield* Effect.scope
        )
        const ready = yield* Effect.gen(function*() {
          for (let i = 0; i < 200; i++) {
            const reply = yield* call("GET", "/ready")
            if (reply.body.status === "ready") return reply
            yield* Effect.sleep("100 millis")
          }
          return yield* Effect.dieMessage("the gateway never became ready")
        })
        expect(ready.body.checks.mqtt).toBe("ok")

        const hot = yield* breachDay("dso-alto-garda")
        yield* createRule("dso-operator", { risk_types: hot.warning, threshold: "WARNING" })
        const event = runEvent({ network_id: "dso-alto-garda", period: hot.date, flow: "storm-resilience-flow" })
        // The subscription is made after the connection; publish until the listener answers.
        const recorder = yield* SentNudges
        for (let i = 0; i < 50 && runReports(event.run_id).length === 0; i++) {
          yield* publishRun(event, "celine/pipelines/runs/grid")
          yield* Effect.sleep("200 millis")
        }
        // The default topic and flow are not listened to any more.
        const elsewhere = runEvent({ network_id: "dso-alto-garda", period: hot.date, flow: "storm-resilience-flow" })
        const defaultFlow = runEvent({ network_id: "dso-alto-garda", period: hot.date })
        yield* publishRun(elsewhere)
        yield* publishRun(defaultFlow, "celine/pipelines/runs/grid")
        yield* waitFor("the run's report", () => runReports(event.run_id).length >= 1)
        yield* Effect.sleep("500 millis")
        expect(runReports(elsewhere.run_id)).toEqual([])
        expect(runReports(defaultFlow.run_id)).toEqual([])
        expect(recorder.sent.filter((n) => n.facts.period === hot.date)).toHaveLength(1)
      }).pipe(Effect.scoped))
  })
})
