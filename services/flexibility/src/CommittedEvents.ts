/**
 * Announces each new commitment on `rec/flexibility/committed/{user_id}` (reference A3 step 4),
 * QoS 1, for the services that follow commitments (the pipelines mirror them). The payload is
 * the original's.
 */
import { Mqtt, type MqttPublishError } from "@rec/mqtt"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Config from "./Config.js"
import type { Commitment } from "./Domain.js"

export const CommittedEvent = Schema.Struct({
  user_id: Schema.String,
  community_id: Schema.NullOr(Schema.String),
  commitment_id: Schema.UUID,
  suggestion_id: Schema.String,
  device_id: Schema.NullOr(Schema.String),
  window_start: Schema.String.annotations({ description: "ISO 8601 (UTC)" }),
  window_end: Schema.String.annotations({ description: "ISO 8601 (UTC)" }),
  reward_points_estimated: Schema.Int
}).annotations({ identifier: "FlexibilityCommittedEvent" })
export type CommittedEvent = typeof CommittedEvent.Type

export const eventOf = (c: Commitment): CommittedEvent => ({
  user_id: c.user_id,
  community_id: c.community_id,
  commitment_id: c.id,
  suggestion_id: c.suggestion_id,
  device_id: c.device_id,
  window_start: c.period_start,
  window_end: c.period_end,
  reward_points_estimated: c.reward_points_estimated
})

export interface CommittedEventsService {
  readonly publish: (commitment: Commitment) => Effect.Effect<void, MqttPublishError>
  /** Several at once (one hand-over to the client); per commitment, in order, why it was not announced. */
  readonly publishMany: (commitments: ReadonlyArray<Commitment>) => Effect.Effect<ReadonlyArray<MqttPublishError | undefined>>
}

export class CommittedEvents extends Context.Tag("flexibility/CommittedEvents")<CommittedEvents, CommittedEventsService>() {
  /** On the service's MQTT client, topic `<FLEXIBILITY_COMMITTED_TOPIC>/<user_id>`. */
  static readonly layer: Layer.Layer<CommittedEvents, ConfigError.ConfigError, Mqtt.Mqtt> = Layer.effect(
    CommittedEvents,
    Effect.gen(function*() {
      const mqtt = yield* Mqtt.Mqtt
      const { committedTopic } = yield* Config.settings
      return {
        publish: (c) => mqtt.publishJson(`${committedTopic}/${c.user_id}`, CommittedEvent, eventOf(c), { qos: 1 }),
        publishMany: (cs) =>
          mqtt.publishJsonMany(CommittedEvent, cs.map((c) => ({ topic: `${committedTopic}/${c.user_id}`, value: eventOf(c) })), { qos: 1 })
      }
    })
  )

  /** Without a broker: commitments are not announced (development, tests of the HTTP API alone). */
  static readonly disabled: Layer.Layer<CommittedEvents> = Layer.succeed(CommittedEvents, {
    publish: () => Effect.void,
    publishMany: (cs) => Effect.succeed(cs.map(() => undefined))
  })
}
