/**
 * This service's client-credentials tokens for one upstream (`@rec/auth`), with the scope the
 * spec names for it (`NUDGING_SCOPE`, `REC_REGISTRY_SCOPE`, `DT_CLIENT_SCOPE`). Without a client
 * (`PLATFORM_OIDC_CLIENT_ID` unset) there are none, and calls needing them answer 503 "No
 * credentials" instead of the service failing to start.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import { ClientCredentials } from "@rec/auth"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

export const forScope = (
  scope: Option.Option<string>
): Effect.Effect<ClientCredentials.TokenProvider | undefined, ConfigError.ConfigError, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const clientId = yield* Config.option(Config.nonEmptyString("PLATFORM_OIDC_CLIENT_ID"))
    if (Option.isNone(clientId)) return undefined
    return yield* ClientCredentials.fromConfig({ scope: Config.succeed(scope) })
  })
