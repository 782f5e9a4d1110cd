/**
 * @rec/mqtt: the MQTT client layer of every service (reconnecting, subscriptions as Streams,
 * JSON payloads with Schema, tracing) and the embedded aedes broker with pluggable
 * authentication and topic ACLs.
 */
export * as EmbeddedBroker from "./EmbeddedBroker.js"
export * from "./Errors.js"
export * as Mqtt from "./Mqtt.js"
export * as MqttConfig from "./MqttConfig.js"
export * as PipelineRuns from "./PipelineRuns.js"
export * as Topic from "./Topic.js"
