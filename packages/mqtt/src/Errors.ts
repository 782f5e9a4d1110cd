/**
 * MQTT errors. They name the broker by `mqtt://host:port` only, never with credentials.
 */
import { Schema } from "effect"

/** A publish was refused locally (bad topic, payload that does not encode) or not acknowledged. */
export class MqttPublishError extends Schema.TaggedError<MqttPublishError>()("MqttPublishError", {
  topic: Schema.String,
  reason: Schema.Literal("invalid-topic", "encode", "not-connected", "timeout", "failed"),
  message: Schema.String
}) {}

/** A subscription was refused locally (bad filter) or by the broker (not authorized). */
export class MqttSubscribeError extends Schema.TaggedError<MqttSubscribeError>()("MqttSubscribeError", {
  filter: Schema.String,
  reason: Schema.Literal("invalid-filter", "refused"),
  message: Schema.String
}) {}

/** The embedded broker could not start (e.g. the port is taken). */
export class MqttBrokerError extends Schema.TaggedError<MqttBrokerError>()("MqttBrokerError", {
  message: Schema.String
}) {}

/** The client is not connected right now (readiness checks). */
export class MqttUnavailable extends Schema.TaggedError<MqttUnavailable>()("MqttUnavailable", {
  broker: Schema.String,
  state: Schema.String,
  message: Schema.String
}) {}
