/**
 * The pipeline orchestrator's side: completed-run events published on the broker with
 * `@rec/mqtt` (the platform's client, `PipelineRuns.PipelineRunEvent` schema, QoS 1), under the
 * run's topic prefix so parallel runs on one Mosquitto never see each other's events.
 */
import { Mqtt, MqttConfig, PipelineRuns } from "@rec/mqtt"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as crypto from "node:crypto"

export interface RunOptions {
  readonly flow: string
  readonly namespace: string
  readonly network_id?: string
  readonly period?: string
  readonly window_start?: string
  readonly window_end?: string
}

export interface PipelinePublisher {
  /** Publishes a completed run on `rec/pipelines/runs/<namespace>`; answers the event. */
  readonly completed: (options: RunOptions) => Promise<PipelineRuns.PipelineRunEvent>
  readonly close: () => Promise<void>
}

export const start = async (options: { readonly host: string; readonly port: number; readonly topicPrefix: string }): Promise<PipelinePublisher> => {
  const runtime = ManagedRuntime.make(Mqtt.Mqtt.Default(MqttConfig.make({
    service: "e2e-pipelines",
    host: options.host,
    port: options.port,
    topicPrefix: options.topicPrefix,
    startupTimeout: Duration.seconds(10)
  })))
  await runtime.runPromise(Effect.flatMap(Mqtt.Mqtt, (mqtt) => mqtt.awaitConnected(Duration.seconds(10))))
  return {
    completed: (run) => {
      const event: PipelineRuns.PipelineRunEvent = {
        ...run,
        status: "completed",
        run_id: `e2e-${run.flow}-${crypto.randomUUID()}`,
        timestamp: new Date().toISOString()
      }
      return runtime.runPromise(
        Effect.flatMap(Mqtt.Mqtt, (mqtt) =>
          mqtt.publishJson(`rec/pipelines/runs/${run.namespace}`, PipelineRuns.PipelineRunEvent, event, { qos: 1 })).pipe(
          Effect.as(event)
        )
      )
    },
    close: () => runtime.dispose()
  }
}
