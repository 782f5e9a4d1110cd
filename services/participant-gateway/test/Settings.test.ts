/**
 * Settings (issue 16 point 5): the gateway's table and the nudging preferences changed as one
 * operation. When the nudging service refuses or fails nothing changes locally and the answer says
 * why; when the gateway's own write fails the nudging preferences are put back; a concurrent save
 * is a 409 with both stores left at the winner's values. Web push subscriptions and their status.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { FlexibilityState } from "./support/FakeFlexibility.js"
import * as FakeFlexibility from "./support/FakeFlexibility.js"
import { NudgingState, vapidPublicKey } from "./support/FakeNudging.js"
import * as FakeNudging from "./support/FakeNudging.js"
import { TwinState } from "./support/FakeTwin.js"
import { call, gatewayLayer, token, users } from "./support/Harness.js"

const twin = new TwinState()
twin.member(users.participant)
twin.member(users.consumer)
twin.outsider(users.nogroup)
const nudging = new NudgingState()
const clients = Layer.mergeAll(twin.layer(), FakeNudging.clientLayer(nudging), FakeFlexibility.clientLayer(new FlexibilityState()))

const community = "it-energy-community"
const prefsKey = (user: string) => `${user}\u0000${community}`

interface Settings {
  readonly notifications_enabled: boolean
  readonly preferred_language: string
  readonly max_per_day: number
  readonly stored: boolean
  readonly updated_at: string | null
  readonly notification_preferences: Record<string, unknown>
  readonly push: { readonly subscribed: boolean; readonly subscriptions: number; readonly last_subscribed_at: string | null }
}

const subscription = (n: number) => ({
  endpoint: `https://push.example.com/send/device-${n}-${"x".repeat(40)}`,
  expirationTime: null,
  keys: {
    p256dh: "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM",
    auth: "tBHItJI5svbpez7KI4CCXg"
  }
})

const localRow = (user: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ maxPerDay: number; preferredLanguage: string; notificationsEnabled: boolean; revision: number }>`
      SELECT max_per_day, preferred_language, notifications_enabled, revision FROM settings WHERE user_id = ${user}`)

layer(gatewayLayer(() => Effect.succeed({ clients })), { excludeTestServices: true, timeout: "60 seconds" })("settings", (it) => {
  it.effect("before any save: the nudging preferences, nothing stored, no push subscription", () =>
    Effect.gen(function*() {
      const reply = yield* call("GET", "/api/settings", { token: yield* token("participant") })
      expect(reply.status).toBe(200)
      expect(reply.body).toEqual({
        notifications_enabled: true,
        preferred_language: "it",
        max_per_day: 5,
        stored: false,
        updated_at: null,
        notification_preferences: {
          community_id: community,
          enabled: true,
          language: "it",
          max_per_day: 5,
          disabled_kinds: [],
          email_enabled: false,
          email: null,
          stored: false,
          updated_at: null
        },
        push: { subscribed: false, subscriptions: 0, last_subscribed_at: null }
      })
    }))

  it.effect("a save goes to the nudging preferences of the caller's community and to the gateway", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      const reply = yield* call("PUT", "/api/settings", {
        token: t,
        json: { notifications_enabled: false, preferred_language: "en-GB", max_per_day: 3 }
      })
      expect(reply.status).toBe(200)
      const body = reply.body as Settings
      expect(body).toMatchObject({ notifications_enabled: false, preferred_language: "en-GB", max_per_day: 3, stored: true })
      expect(body.notification_preferences).toMatchObject({ enabled: false, language: "en-GB", max_per_day: 3, stored: true })
      expect(nudging.callsOf("put_preferences").at(-1)!.input).toEqual({
        user_id: users.participant,
        community_id: community,
        enabled: false,
        language: "en-GB",
        max_per_day: 3
      })
      expect(yield* localRow(users.participant)).toEqual([
        { maxPerDay: 3, preferredLanguage: "en-GB", notificationsEnabled: false, revision: 1 }
      ])
      expect((yield* call("GET", "/api/settings", { token: t })).body).toEqual(body)
      // Another user's settings are their own.
      const luca = (yield* call("GET", "/api/settings", { token: yield* token("participant-consumer") })).body as Settings
      expect(luca).toMatchObject({ stored: false, max_per_day: 5 })
    }))

  it.effect("an invalid request is a 400 naming every field; nothing is sent anywhere", () =>
    Effect.gen(function*() {
      const before = nudging.callsOf("put_preferences").length
      const reply = yield* call("PUT", "/api/settings", {
        token: yield* token("participant"),
        json: { preferred_language: "not a language", max_per_day: 0 }
      })
      expect(reply.status).toBe(400)
      const paths = (reply.body as { issues: Array<{ path: Array<string> }> }).issues.map((i) => i.path[0]).sort()
      expect(paths).toEqual(["max_per_day", "notifications_enabled", "preferred_language"])
      expect(nudging.callsOf("put_preferences").length).toBe(before)
    }))

  it.effect("the nudging service refusing: its status and why, nothing changed locally", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      nudging.fail("put_preferences", { status: 422, detail: "max_per_day: too many for this community" })
      const refused = yield* call("PUT", "/api/settings", {
        token: t,
        json: { notifications_enabled: true, preferred_language: "it", max_per_day: 10 }
      })
      expect(refused.status).toBe(422)
      expect(refused.body).toEqual({
        detail: "Settings not saved, nothing was changed: Nudging service refused put_preferences: " +
          "max_per_day: too many for this community"
      })
      nudging.fail("put_preferences", { status: 500, detail: "database down" })
      const failed = yield* call("PUT", "/api/settings", {
        token: t,
        json: { notifications_enabled: true, preferred_language: "it", max_per_day: 10 }
      })
      expect(failed.status).toBe(502)
      expect((failed.body as { detail: string }).detail).toMatch(/^Settings not saved, nothing was changed: Nudging service failed/)
      nudging.heal()
      expect(yield* localRow(users.participant)).toEqual([
        { maxPerDay: 3, preferredLanguage: "en-GB", notificationsEnabled: false, revision: 1 }
      ])
      expect((yield* call("GET", "/api/settings", { token: t })).body).toMatchObject({ max_per_day: 3, preferred_language: "en-GB" })
    }))

  it.effect("the gateway's write failing puts the nudging preferences back (503)", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      const sql = yield* SqlClient.SqlClient
      // The table goes away while the nudging service is being updated.
      nudging.before.set("put_preferences", Effect.orDie(sql`ALTER TABLE settings RENAME TO settings_away`))
      const reply = yield* call("PUT", "/api/settings", {
        token: t,
        json: { notifications_enabled: true, preferred_language: "es", max_per_day: 7 }
      })
      yield* sql`ALTER TABLE settings_away RENAME TO settings`
      expect(reply.status).toBe(503)
      expect(reply.body).toEqual({
        detail: "Settings not saved, nothing was changed: the gateway's database is unavailable; try again shortly"
      })
      const puts = nudging.callsOf("put_preferences").slice(-2).map((c) => c.input)
      expect(puts).toEqual([
        { user_id: users.participant, community_id: community, enabled: true, language: "es", max_per_day: 7 },
        { user_id: users.participant, community_id: community, enabled: false, language: "en-GB", max_per_day: 3 }
      ])
      expect(nudging.preferences.get(prefsKey(users.participant))).toMatchObject({ enabled: false, language: "en-GB", max_per_day: 3 })
      expect(yield* localRow(users.participant)).toEqual([
        { maxPerDay: 3, preferredLanguage: "en-GB", notificationsEnabled: false, revision: 1 }
      ])
    }))

  it.effect("a concurrent save wins: 409, and both stores keep the winner's values", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      const sql = yield* SqlClient.SqlClient
      // Another instance saves this user's settings between our read and our write.
      nudging.before.set(
        "put_preferences",
        Effect.orDie(sql`UPDATE settings SET max_per_day = 9, preferred_language = 'de', revision = revision + 1
          WHERE user_id = ${users.participant}`)
      )
      const reply = yield* call("PUT", "/api/settings", {
        token: t,
        json: { notifications_enabled: true, preferred_language: "fr", max_per_day: 2 }
      })
      expect(reply.status).toBe(409)
      expect(reply.body).toEqual({ detail: "Your settings were changed at the same time by another request; load them again and retry" })
      expect(nudging.preferences.get(prefsKey(users.participant))).toMatchObject({ enabled: false, language: "de", max_per_day: 9 })
      expect(yield* localRow(users.participant)).toEqual([
        { maxPerDay: 9, preferredLanguage: "de", notificationsEnabled: false, revision: 2 }
      ])

      // The same when the first save of a user races another first save.
      nudging.before.set(
        "put_preferences",
        Effect.orDie(sql`INSERT INTO settings (user_id, notifications_enabled, preferred_language, max_per_day, revision,
            created_at, updated_at) VALUES (${users.consumer}, true, 'ca', 4, 1, now(), now())`)
      )
      const first = yield* call("PUT", "/api/settings", {
        token: yield* token("participant-consumer"),
        json: { notifications_enabled: false, preferred_language: "it", max_per_day: 1 }
      })
      expect(first.status).toBe(409)
      expect(nudging.preferences.get(prefsKey(users.consumer))).toMatchObject({ enabled: true, language: "ca", max_per_day: 4 })
    }))

  it.effect("a user outside any community has preferences filed under none", () =>
    Effect.gen(function*() {
      const reply = yield* call("PUT", "/api/settings", {
        token: yield* token("nogroup"),
        json: { notifications_enabled: true, preferred_language: "it", max_per_day: 2 }
      })
      expect(reply.status).toBe(200)
      expect((reply.body as Settings).notification_preferences.community_id).toBeNull()
      expect(nudging.callsOf("put_preferences").at(-1)!.input).toMatchObject({ user_id: users.nogroup, community_id: "" })
    }))

  it.effect("the VAPID key comes from the nudging service", () =>
    Effect.gen(function*() {
      const reply = yield* call("GET", "/api/settings/vapid-public-key", { token: yield* token("participant") })
      expect(reply.body).toEqual({ public_key: vapidPublicKey })
    }))

  it.effect("push subscriptions: registered with the nudging service, counted per browser, removed one or all", () =>
    Effect.gen(function*() {
      const t = yield* token("participant-consumer")
      const first = yield* call("POST", "/api/settings/push-subscribe", { token: t, json: subscription(1) })
      expect(first.status).toBe(200)
      expect(first.body).toMatchObject({
        subscription: { endpoint_origin: "https://push.example.com", enabled: true },
        push: { subscribed: true, subscriptions: 1 }
      })
      expect(nudging.callsOf("subscribe").at(-1)!.input).toEqual({
        user_id: users.consumer,
        community_id: null,
        subscription: subscription(1)
      })
      // The same browser again: refreshed, not counted twice.
      yield* call("POST", "/api/settings/push-subscribe", { token: t, json: subscription(1) })
      yield* call("POST", "/api/settings/push-subscribe", { token: t, json: subscription(2) })
      const settings = (yield* call("GET", "/api/settings", { token: t })).body as Settings
      expect(settings.push).toMatchObject({ subscribed: true, subscriptions: 2 })
      expect(Date.parse(settings.push.last_subscribed_at!)).toBeGreaterThan(0)

      // The endpoint (a capability URL) is not kept by the gateway.
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql`SELECT * FROM push_subscriptions WHERE user_id = ${users.consumer}`
      expect(JSON.stringify(rows)).not.toContain("device-1")

      const one = yield* call("POST", "/api/settings/push-unsubscribe", { token: t, json: { endpoint: subscription(1).endpoint } })
      expect(one.body).toEqual({ removed: 1, push: { subscribed: true, subscriptions: 1, last_subscribed_at: expect.any(String) } })
      const all = yield* call("POST", "/api/settings/push-unsubscribe", { token: t, json: {} })
      expect(all.body).toEqual({ removed: 1, push: { subscribed: false, subscriptions: 0, last_subscribed_at: null } })
      // "Every subscription" leaves the endpoint out (the contract's optional fields take no undefined).
      expect(Object.keys(nudging.callsOf("unsubscribe").at(-1)!.input as object).sort()).toEqual(["community_id", "user_id"])
      expect(nudging.enabledSubscriptions(users.consumer)).toBe(0)
    }))

  it.effect("the nudging service failing to subscribe or unsubscribe leaves the push status as it was", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      nudging.fail("subscribe", { status: 503, detail: "push disabled" })
      const refused = yield* call("POST", "/api/settings/push-subscribe", { token: t, json: subscription(3) })
      expect(refused.status).toBe(502)
      expect((refused.body as { detail: string }).detail).toMatch(/^Push subscription not registered, nothing was changed: /)
      nudging.heal()
      expect(((yield* call("GET", "/api/settings", { token: t })).body as Settings).push.subscriptions).toBe(0)

      expect((yield* call("POST", "/api/settings/push-subscribe", { token: t, json: subscription(3) })).status).toBe(200)
      nudging.fail("unsubscribe", { status: 500, detail: "boom" })
      const failed = yield* call("POST", "/api/settings/push-unsubscribe", { token: t, json: {} })
      expect(failed.status).toBe(502)
      expect((failed.body as { detail: string }).detail).toMatch(/^Push subscription not removed, nothing was changed: /)
      nudging.heal()
      expect(((yield* call("GET", "/api/settings", { token: t })).body as Settings).push).toMatchObject({
        subscribed: true,
        subscriptions: 1
      })
    }))

  it.effect("a subscription that is not a browser's PushSubscription is a 400", () =>
    Effect.gen(function*() {
      const reply = yield* call("POST", "/api/settings/push-subscribe", {
        token: yield* token("participant"),
        json: { endpoint: "", keys: { p256dh: "not base64url!" } }
      })
      expect(reply.status).toBe(400)
      const paths = (reply.body as { issues: Array<{ path: Array<string> }> }).issues.map((i) => i.path.join("."))
      expect(paths.sort()).toEqual(["endpoint", "keys.auth", "keys.p256dh"])
    }))
})
