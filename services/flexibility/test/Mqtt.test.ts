/**
 * The service on the machine's Mosquitto (reference A7): pipeline runs arrive on
 * `PIPELINE_RUNS_TOPIC` through a shared subscription and are acted on by flow (a settlement
 * here), other statuses and unreadable payloads are ignored without stopping the listener, and
 * an accepted suggestion is announced on `rec/flexibility/committed/{user_id}`. Each run uses a
 * topic prefix of its own, so runs sharing the broker do not meet.
 */
import { assert, describe, expect, layer } from "@effect/vitest"
import { Mqtt, MqttConfig, PipelineRuns } from "@rec/mqtt"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import mqtt from "mqtt"
import * as crypto from "node:crypto"
import { CommittedEvent } from "../src/CommittedEvents.js"
import type { Commitment, RespondResponse } from "../src/Domain.js"
import { call, community, dayStart, giulia, giuliaMeter, hourMs, iso, serviceLayer, token, userToken } from "./support/Harness.js"

const broker = { host: "127.0.0.1", port: 1883 }

const mosquittoSkipReason = await new Promise<string | undefined>((resolve) => {
  const client = mqtt.connect({ ...broker, reconnectPeriod: 0, connectTimeout: 2000 })
  client.on("connect", () => {
    client.end(true)
    resolve(undefined)
  })
  client.on("error", (e) => {
    client.end(true)
    resolve(`Mosquitto at ${broker.host}:${broker.port} is not reachable (${e.message}); start it with scripts/services.sh`)
  })
})
if (mosquittoSkipReason !== undefined && process.env["REC_REQUIRE_SERVICES"] === "1") {
  throw new Error(`${mosquittoSkipReason} (REC_REQUIRE_SERVICES=1)`)
}

const prefix = `rec-test/${crypto.randomBytes(6).toString("hex")}/`

const config = (service: string) =>
  MqttConfig.make({
    service,
    host: broker.host,
    port: broker.port,
    topicPrefix: prefix,
    reconnectMin: Duration.millis(100),
    reconnectMax: Duration.millis(400),
    connectTimeout: Duration.seconds(2),
    publishTimeout: Duration.seconds(5),
    startupTimeout: Duration.seconds(5)
  })

/** The test's own client: publishes runs, follows commitments. */
class Observer extends Context.Tag("test/Observer")<Observer, Mqtt.Mqtt>() {}

const setup = serviceLayer({
  mqtt: Mqtt.Mqtt.Default(config("flexibility")),
  pipelineRuns: { topic: PipelineRuns.defaultTopic, sharedGroup: Option.some("flexibility") }
}).pipe(Layer.merge(Layer.effect(Observer, Mqtt.Mqtt).pipe(Layer.provide(Mqtt.Mqtt.Default(config("observer"))))))

const publishRun = (event: Partial<PipelineRuns.PipelineRunEvent>) =>
  Effect.flatMap(Observer, (observer) =>
    observer.publishJson("rec/pipelines/runs/rec", PipelineRuns.PipelineRunEvent, {
      flow: "rec-flexibility-flow",
      namespace: "rec",
      status: "completed",
      run_id: `mqtt-${crypto.randomBytes(4).toString("hex")}`,
      timestamp: new Date().toISOString(),
      ...event
    }))

const statusOf = (id: string) =>
  Effect.flatMap(token("svc-flexibility"), (t) =>
    Effect.map(call("GET", `/api/commitments/${id}`, { token: t }), (reply) => (reply.body as Commitment).status))

describe.skipIf(mosquittoSkipReason !== undefined)(`on Mosquitto${mosquittoSkipReason ? ` (skipped: ${mosquittoSkipReason})` : ""}`, () => {
  layer(setup, { excludeTestServices: true, timeout: "90 seconds" })((it) => {
    it.scoped("a completed rec-flexibility-flow run settles its day; other statuses and garbage are ignored", () =>
      Effect.gen(function*() {
        const admin = yield* token("svc-flexibility")
        const start = dayStart(-1) + 9 * hourMs
        const created = yield* call("POST", "/api/commitments", {
          token: admin,
          json: {
            user_id: giulia,
            suggestion_id: "s-mqtt",
            community_id: community,
            device_id: giuliaMeter,
            period_start: iso(start),
            period_end: iso(start + hourMs)
          }
        })
        const id = (created.body as Commitment).id
        const period = iso(start).slice(0, 10)
        const observer = yield* Observer
        yield* observer.publish("rec/pipelines/runs/rec", "{not json")
        yield* publishRun({ status: "started", period })
        yield* Effect.sleep("500 millis")
        expect(yield* statusOf(id)).toBe("committed")
        yield* publishRun({ period })
        const settled = yield* statusOf(id).pipe(
          Effect.filterOrFail((status) => status === "settled", (status) => new Error(`still ${status}`)),
          Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 100 }),
          Effect.either
        )
        expect(settled).toEqual(Either.right("settled"))
      }))

    it.scoped("an accepted suggestion is announced on the user's topic", () =>
      Effect.gen(function*() {
        const observer = yield* Observer
        const received = yield* observer.subscribeScoped("rec/flexibility/committed/+")
        const suggestions = (yield* call("GET", "/api/suggestions", { token: yield* userToken("participant") })).body as Array<{ id: string }>
        const start = Date.now() + 3 * hourMs
        const id = suggestions[0]?.id ?? "fw-mqtt-own-window"
        const reply = yield* call("POST", `/api/suggestions/${id}/respond`, {
          token: yield* userToken("participant"),
          json: suggestions.length > 0 ? { response: "accepted" } : { response: "accepted", period_start: iso(start), period_end: iso(start + hourMs) }
        })
        expect(reply.status, JSON.stringify(reply.body)).toBe(200)
        const answer = reply.body as RespondResponse
        const message = yield* Stream.runHead(received).pipe(Effect.timeout("10 seconds"))
        assert(Option.isSome(message))
        expect(message.value.topic).toBe(`rec/flexibility/committed/${giulia}`)
        const stored = (yield* call("GET", `/api/commitments/${answer.commitment_id}`, { token: yield* userToken("participant") })).body as Commitment
        expect(JSON.parse(message.value.text)).toEqual({
          user_id: giulia,
          community_id: community,
          commitment_id: stored.id,
          suggestion_id: id,
          device_id: giuliaMeter,
          window_start: stored.period_start,
          window_end: stored.period_end,
          reward_points_estimated: stored.reward_points_estimated
        } satisfies CommittedEvent)
      }))
  })
})
