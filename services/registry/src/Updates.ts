/**
 * Update events: after an import commits, `rec/registry/updates/<community key>` (QoS 1) tells
 * other services (every service may follow the topic, `policies/data.json`) that a community
 * changed, so they can read it again.
 *
 * Only when a broker is configured (`PLATFORM_MQTT_HOST` set): the registry starts and imports
 * without one, and then reports `mqtt: "disabled"` in its readiness. With a broker that is down,
 * imports still succeed and answer `notified: false` without waiting for it (a warning is
 * logged): the data is committed, and a follower that missed an event reads the registry again
 * when it reconnects. The client authenticates with the service's client-credentials token as
 * password when `PLATFORM_OIDC_CLIENT_ID` is set (the platform's broker decides with the policy
 * service: publishing here needs `registry.updates.write`), else with `PLATFORM_MQTT_USERNAME`
 * and `_PASSWORD`.
 */
import { ClientCredentials } from "@rec/auth"
import { Mqtt } from "@rec/mqtt"
import { OutboundHttp } from "@rec/platform"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as RegistryConfig from "./Config.js"
import * as Domain from "./Domain.js"

export const UpdateEvent = Schema.Struct({
  community: Schema.String,
  event: Schema.Literal("imported"),
  counts: Domain.Counts,
  replaced: Schema.Boolean.annotations({ description: "Whether the community existed before the import" }),
  at: Schema.String.annotations({ description: "When the import committed (ISO 8601)" })
}).annotations({ identifier: "RegistryUpdateEvent" })
export type UpdateEvent = typeof UpdateEvent.Type

export type UpdatesState = "disabled" | "connected" | "reconnecting" | "starting" | "stopped"

export interface UpdatesService {
  /** Publishes the event; `false` when it was not sent (no broker configured, or not connected). Never fails. */
  readonly publish: (event: UpdateEvent) => Effect.Effect<boolean>
  readonly state: Effect.Effect<UpdatesState>
}

export class Updates extends Context.Tag("@rec/registry-service/Updates")<Updates, UpdatesService>() {}

export const disabled: Layer.Layer<Updates> = Layer.succeed(Updates, {
  publish: () => Effect.succeed(false),
  state: Effect.succeed<UpdatesState>("disabled")
})

/** Publishing with an MQTT client (topic `<prefix>/<community key>`). */
export const fromMqtt = (topicPrefix: string): Layer.Layer<Updates, never, Mqtt.Mqtt> =>
  Layer.effect(
    Updates,
    Effect.gen(function*() {
      const mqtt = yield* Mqtt.Mqtt
      return {
        state: Effect.map(mqtt.status, (s): UpdatesState => s.state),
        publish: (event) =>
          Effect.gen(function*() {
            const topic = `${topicPrefix}/${event.community}`
            if (!(yield* mqtt.isConnected)) {
              yield* Effect.logWarning(`not connected to the MQTT broker: no update published on ${topic}`)
              return false
            }
            return yield* mqtt.publishJson(topic, UpdateEvent, event, { qos: 1 }).pipe(
              Effect.as(true),
              Effect.catchAll((error) => Effect.as(Effect.logWarning(`update not published on ${topic}`, error), false))
            )
          }).pipe(Effect.withSpan("Updates.publish", { attributes: { "registry.community": event.community } }))
      }
    })
  )

/**
 * The client's credentials: the service's access token when it has a client of its own, in the
 * CONNECT field `PLATFORM_MQTT_TOKEN_FIELD` names, renewed before it expires (`@rec/mqtt`).
 */
const credentials = Effect.gen(function*() {
  const clientId = yield* Config.option(Config.nonEmptyString("PLATFORM_OIDC_CLIENT_ID"))
  if (Option.isNone(clientId)) return undefined
  const provider = yield* ClientCredentials.fromConfig()
  return { token: provider.token, tokenUsername: clientId.value }
})

/** From the environment: disabled without `PLATFORM_MQTT_HOST`. */
export const layer: Layer.Layer<Updates, ConfigError.ConfigError> = Layer.unwrapEffect(
  Effect.gen(function*() {
    const settings = yield* RegistryConfig.settings
    if (!settings.mqttEnabled) {
      yield* Effect.logInfo("PLATFORM_MQTT_HOST is not set: registry updates are not published")
      return disabled
    }
    // The token provider's HTTP client lives as long as the MQTT client that asks it for tokens.
    return Layer.unwrapEffect(
      Effect.map(credentials, (creds) =>
        fromMqtt(settings.updatesTopic).pipe(
          Layer.provide(Mqtt.layer(RegistryConfig.Service.name, creds ?? {}))
        ))
    ).pipe(Layer.provide(OutboundHttp.layer))
  })
)
