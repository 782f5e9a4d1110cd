/**
 * The caller's settings (spec 001 part C): what they chose in the app, kept in the gateway's
 * table, and the same choices as the nudging service's preferences, which decide what is
 * delivered. Both change as one operation, without ever holding a database transaction open
 * across an HTTP call (with PGlite one process shares one database session, which the nudging
 * service may need to answer):
 *
 * 1. the nudging service is updated first: when it refuses or fails, nothing has changed and the
 *    answer says why;
 * 2. then the gateway's row is written in one statement, conditional on the revision read before
 *    (or on there being none), so concurrent saves of one user cannot interleave unnoticed;
 * 3. if that write fails, the nudging preferences are put back as they were (503); if another save
 *    won the race, the nudging preferences are set to the winner's values (409, try again).
 *
 * Web push: the browser's subscription is registered with the nudging service (which delivers)
 * and remembered here by the SHA-256 of its endpoint (the push status of the settings).
 * Unsubscribing removes the local rows first and puts them back if the nudging service fails.
 */
import type { Domain as Nudging } from "@rec/nudging-service"
import { HttpErrors, Upstream } from "@rec/platform"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type { Caller } from "./Access.js"
import { NudgingClient } from "./Clients.js"
import type * as Domain from "./Domain.js"
import { Membership } from "./Membership.js"
import { endpointDigest, type PushCount, PushRepo } from "./PushRepo.js"
import { type SettingsRow, SettingsRepo, type SettingsValues } from "./SettingsRepo.js"
import * as Store from "./Store.js"

const preferencesView = (p: Nudging.Preferences): Domain.NotificationPreferences => ({
  community_id: p.community_id === "" ? null : p.community_id,
  enabled: p.enabled,
  language: p.language,
  max_per_day: p.max_per_day,
  disabled_kinds: p.disabled_kinds,
  email_enabled: p.email_enabled,
  email: p.email,
  stored: p.stored,
  updated_at: p.updated_at
})

const pushView = (c: PushCount): Domain.PushStatus => ({
  subscribed: c.subscriptions > 0,
  subscriptions: c.subscriptions,
  last_subscribed_at: c.lastSubscribedAt
})

export const settingsView = (
  local: Option.Option<SettingsRow>,
  preferences: Nudging.Preferences,
  push: PushCount
): Domain.Settings => {
  const row = Option.getOrUndefined(local)
  return {
    notifications_enabled: row?.notificationsEnabled ?? preferences.enabled,
    preferred_language: row?.preferredLanguage ?? preferences.language,
    max_per_day: row?.maxPerDay ?? preferences.max_per_day,
    stored: row !== undefined,
    updated_at: row?.updatedAt ?? null,
    notification_preferences: preferencesView(preferences),
    push: pushView(push)
  }
}

/** An upstream failure whose detail says that nothing changed (`outcome`: "Settings not saved"). */
const unchanged = (failure: Upstream.UpstreamFailure, outcome: string) =>
  new Upstream.UpstreamFailure({
    upstream: failure.upstream,
    operation: failure.operation,
    status: failure.status,
    upstreamStatus: failure.upstreamStatus,
    upstreamDetail: failure.upstreamDetail,
    detail: `${outcome}, nothing was changed: ${failure.detail}`
  })

export class UserSettings extends Effect.Service<UserSettings>()("participant-gateway/UserSettings", {
  effect: Effect.gen(function*() {
    const nudging = yield* NudgingClient
    const membership = yield* Membership
    const settings = yield* SettingsRepo
    const push = yield* PushRepo

    const now = Effect.map(DateTime.now, DateTime.formatIso)

    const pushStatus = (caller: Caller) => Store.guarded("reading the push status", push.status(caller.subject.id))

    const get = Effect.fn("UserSettings.get")(function*(caller: Caller) {
      const community = yield* membership.nudgingCommunity(caller)
      const [local, preferences, count] = yield* Effect.all([
        Store.guarded("reading the settings", settings.find(caller.subject.id)),
        nudging.preferences(caller.token, caller.subject.id, community),
        pushStatus(caller)
      ], { concurrency: "unbounded" })
      return settingsView(local, preferences, count)
    })

    /** The nudging preferences carrying `values` (the fields the gateway's settings own). */
    const putPreferences = (caller: Caller, community: string, values: SettingsValues) =>
      nudging.putPreferences(caller.token, {
        user_id: caller.subject.id,
        community_id: community,
        enabled: values.notificationsEnabled,
        language: values.preferredLanguage,
        max_per_day: values.maxPerDay
      })

    /** Best effort: a failure is logged (the two stores disagree until the next save). */
    const settle = (caller: Caller, community: string, values: SettingsValues, why: string) =>
      putPreferences(caller, community, values).pipe(
        Effect.tapError((failure) =>
          Effect.logError(`nudging preferences could not be ${why}; they differ from the gateway's settings`, failure)
        ),
        Effect.ignore
      )

    const put = Effect.fn("UserSettings.put")(function*(caller: Caller, request: Domain.SettingsRequest) {
      const userId = caller.subject.id
      const values: SettingsValues = {
        notificationsEnabled: request.notifications_enabled,
        preferredLanguage: request.preferred_language,
        maxPerDay: request.max_per_day
      }
      const community = yield* membership.nudgingCommunity(caller)
      const [local, previous] = yield* Effect.all([
        Store.guarded("reading the settings", settings.find(userId)),
        nudging.preferences(caller.token, userId, community)
      ], { concurrency: "unbounded" })

      const preferences = yield* Effect.mapError(putPreferences(caller, community, values), (f) => unchanged(f, "Settings not saved"))

      const stamp = yield* now
      const written = yield* Effect.exit(
        Option.match(local, {
          onNone: () => settings.insert(userId, values, stamp),
          onSome: (row) => settings.update(userId, values, row.revision, stamp)
        })
      )
      if (Exit.isFailure(written)) {
        yield* settle(caller, community, {
          notificationsEnabled: previous.enabled,
          preferredLanguage: previous.language,
          maxPerDay: previous.max_per_day
        }, "put back")
        yield* Effect.logError("settings could not be written; the nudging preferences were put back", written.cause)
        return yield* Effect.fail(
          new HttpErrors.ServiceUnavailable({
            detail: "Settings not saved, nothing was changed: the gateway's database is unavailable; try again shortly"
          })
        )
      }
      if (Option.isNone(written.value)) {
        // Another save of this user came first: its values stay, in both places.
        const winner = yield* Store.guarded("reading the settings", settings.find(userId))
        if (Option.isSome(winner)) yield* settle(caller, community, winner.value, "set to the concurrent save")
        return yield* Effect.fail(
          new HttpErrors.Conflict({
            detail: "Your settings were changed at the same time by another request; load them again and retry"
          })
        )
      }
      return settingsView(written.value, preferences, yield* pushStatus(caller))
    })

    const vapidPublicKey = Effect.fn("UserSettings.vapidPublicKey")(function*(caller: Caller) {
      return yield* nudging.vapidPublicKey(caller.token)
    })

    const subscribe = Effect.fn("UserSettings.subscribe")(function*(caller: Caller, subscription: Domain.PushSubscribeRequest) {
      const userId = caller.subject.id
      const registered = yield* Effect.mapError(
        nudging.subscribe(caller.token, { user_id: userId, community_id: null, subscription }),
        (f) => unchanged(f, "Push subscription not registered")
      )
      const stamp = yield* now
      yield* push.upsert({
        userId,
        endpointSha256: endpointDigest(subscription.endpoint),
        subscriptionId: registered.id,
        endpointOrigin: registered.endpoint_origin
      }, stamp).pipe(
        Effect.tapError(() =>
          nudging.unsubscribe(caller.token, { user_id: userId, community_id: null, endpoint: subscription.endpoint }).pipe(
            Effect.tapError((failure) => Effect.logError("push subscription could not be withdrawn after a database failure", failure)),
            Effect.ignore
          )
        ),
        (effect) => Store.guarded("remembering the push subscription", effect)
      )
      return {
        subscription: {
          id: registered.id,
          endpoint_origin: registered.endpoint_origin,
          enabled: registered.enabled,
          created_at: registered.created_at
        },
        push: pushView(yield* pushStatus(caller))
      } satisfies Domain.PushSubscribed
    })

    const unsubscribe = Effect.fn("UserSettings.unsubscribe")(function*(caller: Caller, request: Domain.PushUnsubscribeRequest) {
      const userId = caller.subject.id
      const endpoint = request.endpoint
      const removed = yield* Store.guarded(
        "forgetting the push subscription",
        push.remove(userId, endpoint === undefined ? undefined : endpointDigest(endpoint))
      )
      // An absent endpoint is left out (the contract's optional fields take no `undefined`).
      const target = endpoint === undefined ? {} : { endpoint }
      const result = yield* nudging.unsubscribe(caller.token, { user_id: userId, community_id: null, ...target }).pipe(
        Effect.tapError(() =>
          push.restore(removed).pipe(
            Effect.tapError((error) => Effect.logError("push subscriptions could not be put back", error)),
            Effect.ignore
          )
        ),
        Effect.mapError((f) => unchanged(f, "Push subscription not removed"))
      )
      return { removed: result.removed, push: pushView(yield* pushStatus(caller)) } satisfies Domain.PushUnsubscribed
    })

    return { get, put, vapidPublicKey, subscribe, unsubscribe }
  })
}) {}
