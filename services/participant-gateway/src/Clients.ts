/**
 * The services behind the gateway, each called with the caller's own token:
 *
 * - `NudgingClient` and `FlexibilityClient`: typed clients derived from those services' contracts
 *   (`ServiceClient.make(Api, ...)` of `@rec/auth`, `asUser`); failures are `Upstream`'s
 *   `UpstreamFailure` with the status to answer;
 * - `TwinClient`: the digital twin's typed client (`@rec/digital-twin`, `withToken`), its
 *   `DigitalTwinError`s turned into the same `UpstreamFailure`s.
 *
 * Each tag holds only the operations the gateway uses, so tests replace a service with a few
 * functions (`Layer.succeed(NudgingClient, { ... })`).
 */
import { ServiceClient } from "@rec/auth"
import {
  type DigitalTwinError,
  type EnergySchemas,
  makeClient as makeTwinClient,
  type MeterTotals,
  type SharedTotals
} from "@rec/digital-twin"
import { Api as FlexibilityApi, type Domain as Flexibility } from "@rec/flexibility-service"
import { Api as NudgingApi, type Domain as Nudging } from "@rec/nudging-service"
import { LeanHttp, Upstream } from "@rec/platform"
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import * as Config from "./Config.js"

type Call<A> = Effect.Effect<A, Upstream.UpstreamFailure>

// ---------------------------------------------------------------------------------------------
// Nudging

export interface NudgingOperations {
  readonly listNotifications: (
    token: Redacted.Redacted,
    params: typeof Nudging.ListNotificationsParams.Type
  ) => Call<Nudging.NotificationPage>
  readonly markRead: (token: Redacted.Redacted, id: string) => Call<Nudging.Notification>
  readonly deleteNotification: (token: Redacted.Redacted, id: string) => Call<void>
  readonly preferences: (token: Redacted.Redacted, userId: string, communityId: string) => Call<Nudging.Preferences>
  readonly putPreferences: (token: Redacted.Redacted, update: Nudging.PreferencesUpdate) => Call<Nudging.Preferences>
  readonly vapidPublicKey: (token: Redacted.Redacted) => Call<typeof Nudging.VapidPublicKey.Type>
  readonly subscribe: (token: Redacted.Redacted, request: Nudging.SubscribeRequest) => Call<Nudging.PushSubscription>
  readonly unsubscribe: (token: Redacted.Redacted, request: Nudging.UnsubscribeRequest) => Call<{ readonly removed: number }>
}

export class NudgingClient extends Context.Tag("participant-gateway/NudgingClient")<NudgingClient, NudgingOperations>() {}

export const nudgingOperations = (baseUrl: string, timeout: Duration.DurationInput) =>
  Effect.map(
    ServiceClient.make(NudgingApi, { name: "nudging service", baseUrl, timeout }),
    (nudging): NudgingOperations => ({
      listNotifications: (token, urlParams) =>
        nudging.call("list_notifications", nudging.asUser(token, (c) => c.notifications.list({ urlParams }))),
      markRead: (token, id) => nudging.call("mark_read", nudging.asUser(token, (c) => c.notifications.markRead({ path: { id } }))),
      deleteNotification: (token, id) =>
        nudging.call("delete_notification", nudging.asUser(token, (c) => c.notifications.delete({ path: { id } }))),
      preferences: (token, user_id, community_id) =>
        nudging.call("get_preferences", nudging.asUser(token, (c) => c.preferences.get({ urlParams: { user_id, community_id } }))),
      putPreferences: (token, payload) =>
        nudging.call("put_preferences", nudging.asUser(token, (c) => c.preferences.put({ payload }))),
      vapidPublicKey: (token) => nudging.call("vapid_public_key", nudging.asUser(token, (c) => c.public.vapidPublicKey())),
      subscribe: (token, payload) => nudging.call("subscribe", nudging.asUser(token, (c) => c.webpush.subscribe({ payload }))),
      unsubscribe: (token, payload) =>
        nudging.call("unsubscribe", nudging.asUser(token, (c) => c.webpush.unsubscribe({ payload })))
    })
  )

// ---------------------------------------------------------------------------------------------
// Flexibility

export interface FlexibilityOperations {
  readonly suggestions: (token: Redacted.Redacted) => Call<ReadonlyArray<Flexibility.Suggestion>>
  readonly respond: (
    token: Redacted.Redacted,
    id: string,
    payload: Flexibility.RespondRequest
  ) => Call<Flexibility.RespondResponse>
  readonly commitments: (token: Redacted.Redacted, params: Flexibility.ListParams) => Call<Flexibility.CommitmentPage>
  readonly commit: (token: Redacted.Redacted, payload: Flexibility.CreateCommitment) => Call<Flexibility.Commitment>
  readonly commitment: (token: Redacted.Redacted, id: string) => Call<Flexibility.Commitment>
  readonly cancel: (token: Redacted.Redacted, id: string) => Call<void>
}

export class FlexibilityClient
  extends Context.Tag("participant-gateway/FlexibilityClient")<FlexibilityClient, FlexibilityOperations>()
{}

export const flexibilityOperations = (baseUrl: string, timeout: Duration.DurationInput) =>
  Effect.map(
    ServiceClient.make(FlexibilityApi, { name: "flexibility service", baseUrl, timeout }),
    (flexibility): FlexibilityOperations => ({
      suggestions: (token) => flexibility.call("list_suggestions", flexibility.asUser(token, (c) => c.suggestions.list())),
      respond: (token, id, payload) =>
        flexibility.call("respond", flexibility.asUser(token, (c) => c.suggestions.respond({ path: { id }, payload }))),
      commitments: (token, urlParams) =>
        flexibility.call("list_commitments", flexibility.asUser(token, (c) => c.commitments.list({ urlParams }))),
      commit: (token, payload) =>
        flexibility.call("create_commitment", flexibility.asUser(token, (c) => c.commitments.create({ payload }))),
      commitment: (token, id) =>
        flexibility.call("get_commitment", flexibility.asUser(token, (c) => c.commitments.get({ path: { id } }))),
      cancel: (token, id) =>
        flexibility.call("cancel_commitment", flexibility.asUser(token, (c) => c.commitments.cancel({ path: { id } })))
    })
  )

// ---------------------------------------------------------------------------------------------
// Digital twin

export interface TwinOperations {
  readonly profile: (token: Redacted.Redacted, sub: string) => Call<EnergySchemas.Profile>
  readonly assets: (token: Redacted.Redacted, sub: string) => Call<EnergySchemas.AssetList>
  /** The meter's readings over a window, summed as they are checked (the rows are not kept). */
  readonly meterTotals: (
    token: Redacted.Redacted,
    sub: string,
    payload: typeof EnergySchemas.MetersDataPayload.Type
  ) => Call<MeterTotals>
  /** The device's shared energy over a window, summed as it is checked. */
  readonly sharedTotals: (
    token: Redacted.Redacted,
    sub: string,
    payload: typeof EnergySchemas.VirtualConsumptionPayload.Type
  ) => Call<SharedTotals>
}

export class TwinClient extends Context.Tag("participant-gateway/TwinClient")<TwinClient, TwinOperations>() {}

const twin = "digital twin"

/**
 * A `DigitalTwinError` as the `Upstream` rule words it: the twin's 4xx kept, its 5xx and an
 * unreachable twin 502, its silence 504 (the client's own timeout).
 */
export const fromTwinError = (error: DigitalTwinError): Upstream.UpstreamFailure => {
  if (error.status === 504) {
    return new Upstream.UpstreamFailure({ upstream: twin, operation: error.operation, status: 504, detail: `Digital twin: ${error.message}` })
  }
  if (error.status >= 400 && error.status < 500 && error.status !== 400) {
    return Upstream.answered(twin, error.operation, error.status, error.message)
  }
  // 400 (the gateway sent something the twin's contract refuses), 5xx, unreachable, unreadable.
  return new Upstream.UpstreamFailure({
    upstream: twin,
    operation: error.operation,
    status: 502,
    upstreamStatus: error.status,
    detail: `Digital twin failed ${error.operation}: ${error.message}`
  })
}

export const twinOperations = (baseUrl: string, timeout: Duration.DurationInput) =>
  Effect.map(makeTwinClient({ baseUrl, timeout }), (client): TwinOperations => {
    const as = (token: Redacted.Redacted) => client.withToken(token).participants
    const mapped = <A>(call: Effect.Effect<A, DigitalTwinError>) => Effect.mapError(call, fromTwinError)
    return {
      profile: (token, sub) => mapped(as(token).profile(sub)),
      assets: (token, sub) => mapped(as(token).assets(sub)),
      meterTotals: (token, sub, payload) => mapped(as(token).metersDataTotals(sub, payload)),
      sharedTotals: (token, sub, payload) => mapped(as(token).virtualConsumptionTotals(sub, payload))
    }
  })

// ---------------------------------------------------------------------------------------------
// Layers

/** The three clients for `config`, on the `HttpClient` provided below. */
export const layerWith = (
  config: Config.Upstreams
): Layer.Layer<NudgingClient | FlexibilityClient | TwinClient, never, HttpClient.HttpClient> =>
  Layer.effectContext(
    Effect.gen(function*() {
      return Context.make(NudgingClient, yield* nudgingOperations(config.nudgingUrl, config.nudgingTimeout)).pipe(
        Context.add(FlexibilityClient, yield* flexibilityOperations(config.flexibilityUrl, config.flexibilityTimeout)),
        Context.add(TwinClient, yield* twinOperations(config.digitalTwinUrl, config.digitalTwinTimeout))
      )
    })
  )

/**
 * The three clients from the environment (`*_API_URL`, `*_TIMEOUT`), on the kit's lean outbound
 * client (`LeanHttp`: an overview is four digital-twin calls; Effect's client with its spans when
 * tracing is on).
 */
export const layer: Layer.Layer<NudgingClient | FlexibilityClient | TwinClient, ConfigError.ConfigError> = Layer
  .unwrapEffect(Effect.map(Config.upstreams, layerWith))
  .pipe(Layer.provide(LeanHttp.outboundLayer))
