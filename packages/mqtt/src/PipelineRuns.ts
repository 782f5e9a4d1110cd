/**
 * Pipeline-run events: what an orchestrator publishes when a pipeline flow starts, completes or
 * fails (the original's `PipelineRunEvent` of celine-utils, on `<prefix>/pipelines/runs/<namespace>`),
 * and the one listener the grid gateway and the flexibility service share.
 *
 * - The topic filter is `PIPELINE_RUNS_TOPIC` (default `rec/pipelines/runs/+`): an orchestrator
 *   publishing elsewhere (the original's `celine/pipelines/runs/+`) needs only this variable.
 * - With `MQTT_SHARED_GROUP` set, replicas subscribe as `$share/<group>/<filter>` and the broker
 *   hands each event to one of them.
 * - Events are QoS 1; a payload that does not match `PipelineRunEvent` is logged and dropped, a
 *   failing handler is logged and the next event handled (`Mqtt.consumeJson`). Handlers must be
 *   idempotent (QoS 1 is at least once; a redelivered event must not act twice).
 *
 * The JSON Schema of the event is `schemas/pipeline-run-event.schema.json` (checked against
 * `PipelineRunEvent` by this package's tests).
 */
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { MqttSubscribeError } from "./Errors.js"
import { Mqtt, type MqttMessage } from "./Mqtt.js"

const day = Schema.String.pipe(
  Schema.pattern(/^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/),
  Schema.annotations({ description: "A calendar day, YYYY-MM-DD" })
)
const clockTime = Schema.String.pipe(
  Schema.pattern(/^([01]\d|2[0-3]):[0-5]\d$/),
  Schema.annotations({ description: "A time of day, HH:MM (24 h)" })
)
/** ISO 8601 date-time with `Z` or an offset, as the orchestrator writes it. */
const timestamp = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/),
  Schema.filter((s) => !Number.isNaN(Date.parse(s)), { message: () => "not a valid date-time" }),
  Schema.annotations({ description: "ISO 8601 date-time with Z or an offset" })
)

export const PipelineRunStatus = Schema.Literal("started", "completed", "failed")
export type PipelineRunStatus = typeof PipelineRunStatus.Type

export const PipelineRunEvent = Schema.Struct({
  flow: Schema.NonEmptyString.annotations({ description: "The pipeline flow's name (`grid-resilience-flow`)" }),
  namespace: Schema.String.annotations({ description: "The pipeline application (`grid`, `rec`)" }),
  status: PipelineRunStatus,
  run_id: Schema.NonEmptyString.annotations({ description: "Unique per run: the key that makes handling idempotent" }),
  timestamp,
  duration_ms: Schema.optional(Schema.Number.pipe(Schema.nonNegative())),
  error: Schema.optional(Schema.NullOr(Schema.String)),
  network_id: Schema.optional(Schema.NonEmptyString).annotations({
    description: "The distribution network the run was about (grid flows); absent: every network"
  }),
  period: Schema.optional(day).annotations({ description: "The day the run's data is about; default: the timestamp's day" }),
  window_start: Schema.optional(clockTime),
  window_end: Schema.optional(clockTime)
}).annotations({ identifier: "PipelineRunEvent", description: "A pipeline run started, completed or failed" })
export type PipelineRunEvent = typeof PipelineRunEvent.Type

/** The day the run is about: `period`, else the date of `timestamp` in its own offset. */
export const dayOf = (event: PipelineRunEvent): string => event.period ?? event.timestamp.slice(0, 10)

export interface PipelineRunsSettings {
  /** The topic filter, without the shared-subscription prefix. */
  readonly topic: string
  readonly sharedGroup: Option.Option<string>
}

export const defaultTopic = "rec/pipelines/runs/+"

/** `PIPELINE_RUNS_TOPIC` and `MQTT_SHARED_GROUP`. */
export const settings: Config.Config<PipelineRunsSettings> = Config.all({
  topic: Config.nonEmptyString("PIPELINE_RUNS_TOPIC").pipe(Config.withDefault(defaultTopic)),
  sharedGroup: Config.option(Config.nonEmptyString("MQTT_SHARED_GROUP"))
})

/** The filter to subscribe to: `$share/<group>/<topic>` when a group is set. */
export const filterOf = (s: PipelineRunsSettings): string =>
  Option.match(s.sharedGroup, { onNone: () => s.topic, onSome: (group) => `$share/${group}/${s.topic}` })

export interface ConsumeOptions {
  /** Which statuses reach the handler (default: `completed` only). */
  readonly statuses?: ReadonlyArray<PipelineRunStatus> | undefined
  /** Settings instead of the environment's (tests). */
  readonly settings?: PipelineRunsSettings | undefined
}

/**
 * Handles pipeline-run events until interrupted (fork it in the service's scope). Subscribes at
 * QoS 1 on the configured filter; the subscription survives reconnects.
 */
export const consume = <E, R>(
  handler: (event: PipelineRunEvent, message: MqttMessage) => Effect.Effect<void, E, R>,
  options: ConsumeOptions = {}
): Effect.Effect<void, MqttSubscribeError | ConfigError.ConfigError, Mqtt | R> =>
  Effect.gen(function*() {
    const mqtt = yield* Mqtt
    const resolved = options.settings ?? (yield* settings)
    const statuses = new Set<PipelineRunStatus>(options.statuses ?? ["completed"])
    const filter = filterOf(resolved)
    yield* Effect.logInfo(`listening for pipeline runs on ${filter}`)
    yield* mqtt.consumeJson(
      filter,
      PipelineRunEvent,
      (event, message) =>
        statuses.has(event.status)
          ? handler(event, message).pipe(
            Effect.annotateLogs({ "pipeline.flow": event.flow, "pipeline.run_id": event.run_id })
          )
          : Effect.void,
      { qos: 1 }
    )
  })
