/**
 * Pipeline-run events: the Effect Schema and `schemas/pipeline-run-event.schema.json` accept and
 * refuse the same payloads; the listener hands completed runs to its handler, drops what does not
 * decode, and with `MQTT_SHARED_GROUP` two replicas split the events (on the machine's Mosquitto).
 */
import { describe, expect, it } from "@effect/vitest"
import { Mqtt, PipelineRuns } from "@rec/mqtt"
import { Ajv } from "ajv"
import { Effect, Either, Option, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { client, mosquitto, mosquittoSkipReason, startBroker, testConfig, uniquePrefix } from "./support/brokers.js"

const schemaFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../schemas/pipeline-run-event.schema.json")
const validate = new Ajv({ allErrors: true, strict: true }).compile(JSON.parse(fs.readFileSync(schemaFile, "utf8")))
const decode = Schema.decodeUnknownEither(PipelineRuns.PipelineRunEvent)

const base = { flow: "grid-resilience-flow", namespace: "grid", status: "completed", run_id: "r-1", timestamp: "2026-07-15T10:00:00+02:00" }

const valid: ReadonlyArray<unknown> = [
  base,
  { ...base, timestamp: "2026-07-15T08:00:00.123456+00:00", duration_ms: 1200, error: null, _timestamp: "extra is ignored" },
  { ...base, timestamp: "2026-07-15T08:00Z", network_id: "dso-alto-garda", period: "2026-07-16", window_start: "14:00", window_end: "18:30" },
  { ...base, status: "failed", error: "boom" },
  { ...base, status: "started", duration_ms: 0 }
]

const invalid: ReadonlyArray<unknown> = [
  null,
  [],
  { ...base, flow: "" },
  { ...base, status: "done" },
  { ...base, run_id: "" },
  { ...base, timestamp: "yesterday" },
  { ...base, timestamp: "2026-07-15" },
  { ...base, period: "2026-13-01" },
  { ...base, window_start: "24:00" },
  { ...base, window_end: "9:00" },
  { ...base, duration_ms: -1 },
  { ...base, network_id: "" },
  (({ run_id: _, ...rest }) => rest)(base)
]

const skip = await mosquittoSkipReason()

describe("PipelineRunEvent", () => {
  it("the JSON Schema and the Effect Schema agree on every fixture", () => {
    for (const payload of valid) {
      expect(validate(payload), JSON.stringify(payload)).toBe(true)
      expect(Either.isRight(decode(payload)), JSON.stringify(payload)).toBe(true)
    }
    for (const payload of invalid) {
      expect(validate(payload), JSON.stringify(payload)).toBe(false)
      expect(Either.isLeft(decode(payload)), JSON.stringify(payload)).toBe(true)
    }
  })

  it("the day of a run is its period, else the timestamp's date in its own offset", () => {
    const event = (extra: object) => Either.getOrThrow(decode({ ...base, ...extra }))
    expect(PipelineRuns.dayOf(event({}))).toBe("2026-07-15")
    expect(PipelineRuns.dayOf(event({ timestamp: "2026-07-15T23:30:00-05:00" }))).toBe("2026-07-15")
    expect(PipelineRuns.dayOf(event({ period: "2026-07-20" }))).toBe("2026-07-20")
  })

  it("subscribes to $share/<group>/<topic> when a group is set", () => {
    expect(PipelineRuns.filterOf({ topic: "rec/pipelines/runs/+", sharedGroup: Option.none() })).toBe("rec/pipelines/runs/+")
    expect(PipelineRuns.filterOf({ topic: "celine/pipelines/runs/+", sharedGroup: Option.some("grid") }))
      .toBe("$share/grid/celine/pipelines/runs/+")
  })

  it.live("hands completed runs to the handler and drops the rest (embedded broker)", () =>
    Effect.gen(function*() {
      const { info } = yield* startBroker(0)
      const config = testConfig(info.port)
      const listener = yield* client(config)
      const producer = yield* client({ ...config, clientId: `${config.clientId}-p` })
      const handled: Array<string> = []
      yield* PipelineRuns.consume((event) => Effect.sync(() => handled.push(event.run_id)), {
        settings: { topic: "rec/pipelines/runs/+", sharedGroup: Option.none() }
      }).pipe(Effect.provideService(Mqtt.Mqtt, listener), Effect.forkScoped)
      yield* Effect.sleep("200 millis")
      const send = (payload: unknown) => producer.publish("rec/pipelines/runs/grid", JSON.stringify(payload), { qos: 1 })
      yield* send({ ...base, run_id: "started", status: "started" })
      yield* send({ not: "an event" })
      yield* producer.publish("rec/pipelines/runs/grid", "{broken", { qos: 1 })
      yield* send({ ...base, run_id: "done-1" })
      yield* send({ ...base, run_id: "failed", status: "failed" })
      yield* send({ ...base, run_id: "done-2" })
      yield* Effect.sleep("20 millis").pipe(Effect.repeat({ until: () => handled.length >= 2, times: 200 }))
      yield* Effect.sleep("100 millis")
      expect(handled).toEqual(["done-1", "done-2"])
    }).pipe(Effect.scoped))

  it.live.skipIf(skip !== undefined)(`two replicas in one shared group split the events (Mosquitto)${skip === undefined ? "" : ` (skipped: ${skip})`}`, () =>
    Effect.gen(function*() {
      const prefix = uniquePrefix()
      const config = testConfig(mosquitto.port, { topicPrefix: prefix })
      const settings = { topic: "rec/pipelines/runs/+", sharedGroup: Option.some("flexibility") }
      const seen: Record<string, Array<string>> = { a: [], b: [] }
      for (const name of ["a", "b"] as const) {
        const replica = yield* client({ ...config, clientId: `${config.clientId}-${name}` })
        yield* PipelineRuns.consume((event) => Effect.sync(() => seen[name]!.push(event.run_id)), { settings }).pipe(
          Effect.provideService(Mqtt.Mqtt, replica),
          Effect.forkScoped
        )
      }
      const producer = yield* client({ ...config, clientId: `${config.clientId}-p` })
      yield* Effect.sleep("300 millis")
      const runs = Array.from({ length: 20 }, (_, i) => `run-${i}`)
      for (const run_id of runs) {
        yield* producer.publish("rec/pipelines/runs/rec", JSON.stringify({ ...base, run_id }), { qos: 1 })
      }
      const total = () => seen.a!.length + seen.b!.length
      yield* Effect.sleep("20 millis").pipe(Effect.repeat({ until: () => total() >= runs.length, times: 250 }))
      yield* Effect.sleep("200 millis")
      // Each event reached exactly one replica, and both replicas got some.
      expect([...seen.a!, ...seen.b!].sort()).toEqual([...runs].sort())
      expect(seen.a!.length).toBeGreaterThan(0)
      expect(seen.b!.length).toBeGreaterThan(0)
    }).pipe(Effect.scoped))
})
