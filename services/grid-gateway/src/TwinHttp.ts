/**
 * The digital twin's typed client (`@rec/digital-twin`'s `HttpApiClient`, derived from the
 * contract) as the gateway runs it: on `@rec/platform`'s lean outbound client (`LeanHttp`), whose
 * per-call cost every grid route pays once.
 */
import { ClientCredentials } from "@rec/auth"
import { DigitalTwinClient, DigitalTwinClientConfig } from "@rec/digital-twin"
import { LeanHttp } from "@rec/platform"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/**
 * `DigitalTwinClient.layerConfig` on the gateway's outbound client: the same typed client
 * (`@rec/digital-twin`'s, derived from the contract), `DIGITAL_TWIN_API_URL`,
 * `DIGITAL_TWIN_TIMEOUT`, the service's client credentials with `DT_CLIENT_SCOPE`.
 */
export const digitalTwinLayer: Layer.Layer<DigitalTwinClient, ConfigError.ConfigError> = Layer
  .unwrapEffect(
    Effect.gen(function*() {
      const config = yield* DigitalTwinClientConfig
      const clientId = yield* Config.option(Config.nonEmptyString("PLATFORM_OIDC_CLIENT_ID"))
      const tokens = Option.isNone(clientId) ? undefined : yield* ClientCredentials.fromConfig({
        scope: Config.option(Config.string("DT_CLIENT_SCOPE")).pipe(Config.map(Option.filter((s) => s.trim() !== "")))
      })
      return DigitalTwinClient.layer({ ...config, tokens })
    })
  ).pipe(Layer.provide(LeanHttp.outboundLayer))
