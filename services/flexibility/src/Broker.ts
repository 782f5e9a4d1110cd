/**
 * The service's MQTT client (`@rec/mqtt`, `PLATFORM_MQTT_*`). With a user name and password
 * configured, those; otherwise, when the service has a client (`PLATFORM_OIDC_CLIENT_ID`), a
 * fresh client-credentials access token on every connection attempt, in the CONNECT field
 * `PLATFORM_MQTT_TOKEN_FIELD` names (password by default) and renewed before it expires (the
 * platform's brokers authenticate with tokens and decide topics by their scopes:
 * `pipelines.runs.read`, `flexibility.committed.write`).
 */
import { Mqtt, MqttConfig } from "@rec/mqtt"
import { OutboundHttp } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Config from "./Config.js"
import * as ServiceTokens from "./ServiceTokens.js"

export const layer = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* MqttConfig.fromEnv(Config.Service.name)
    if (Option.isSome(config.password)) return Mqtt.Mqtt.Default(config)
    const tokens = yield* ServiceTokens.forScope(Option.none())
    if (tokens === undefined) return Mqtt.Mqtt.Default(config)
    const username = Option.getOrElse(config.username, () => config.clientId)
    return Mqtt.Mqtt.Default(config, { token: tokens.token, tokenUsername: username })
  })
).pipe(Layer.provide(OutboundHttp.layer))
