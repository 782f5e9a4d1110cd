/**
 * The MQTT side of the gateway: the broker connection and the listener for completed pipeline
 * runs (`@rec/mqtt`'s shared `PipelineRuns`: `PIPELINE_RUNS_TOPIC`, QoS 1, `$share/<group>/`
 * when `MQTT_SHARED_GROUP` is set so replicas split the runs), handing each to the dispatcher.
 *
 * The broker being down at start does not stop the service: the connection waits at most
 * `MQTT_STARTUP_TIMEOUT_SECONDS`, then the service serves HTTP with `/ready` saying `degraded`
 * while the client keeps connecting; the subscription is made whenever the broker appears.
 */
import { ClientCredentials } from "@rec/auth"
import { Mqtt, PipelineRuns } from "@rec/mqtt"
import { OutboundHttp } from "@rec/platform"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import { AlertDispatcher } from "./AlertDispatcher.js"
import * as GridConfig from "./Config.js"

/**
 * The broker connection from `PLATFORM_MQTT_*`. Without `PLATFORM_MQTT_USERNAME` but with the
 * gateway's client credentials, it authenticates with a fresh client-credentials access token
 * (in the CONNECT field `PLATFORM_MQTT_TOKEN_FIELD` names, renewed before it expires) on every
 * connection attempt (the platform's brokers verify tokens: the
 * embedded one through the policy service, Mosquitto through its JWT plugin).
 */
export const mqttLayer: Layer.Layer<Mqtt.Mqtt, unknown> = Layer.unwrapEffect(
  Effect.gen(function*() {
    const username = yield* Config.option(Config.nonEmptyString("PLATFORM_MQTT_USERNAME"))
    const clientId = yield* Config.option(Config.nonEmptyString("PLATFORM_OIDC_CLIENT_ID"))
    if (Option.isSome(username) || Option.isNone(clientId)) return Mqtt.layer(GridConfig.Service.name)
    const tokens = yield* ClientCredentials.fromConfig()
    return Mqtt.layer(GridConfig.Service.name, { token: tokens.token, tokenUsername: clientId.value })
  })
).pipe(Layer.provide(OutboundHttp.layer))

/**
 * Listens until the service stops. A subscription the broker refuses (an ACL) is logged and
 * tried again with backoff (up to every minute), so fixing the ACL needs no restart.
 */
export const layer: Layer.Layer<never, never, AlertDispatcher | Mqtt.Mqtt> = Layer.scopedDiscard(
  Effect.gen(function*() {
    const dispatcher = yield* AlertDispatcher
    yield* PipelineRuns.consume((event) => dispatcher.onPipelineRun(event)).pipe(
      Effect.tapErrorCause((cause) => Effect.logError("pipeline-run listener stopped; retrying", cause)),
      Effect.retry(Schedule.exponential("1 second").pipe(Schedule.union(Schedule.spaced("1 minute")))),
      Effect.forkScoped
    )
  })
)
