/**
 * Real delivery: web push to a local push service that verifies the VAPID JWT and decrypts the
 * aes128gcm payload with the subscriber's private key, e-mail to a local SMTP server; retries
 * with backoff, 404/410 disabling the subscription, final failures, click tracking, send-test.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import type { Domain } from "@rec/nudging-service"
import * as Effect from "effect/Effect"
import * as crypto from "node:crypto"
import { call, freshUser, ingest, Mail, Push, serviceLayer, token, userId } from "./support/Service.js"

const community = "it-energy-community"

const admin = () => token("svc-nudging")

const subscribe = (user: string, subscription: { endpoint: string; keys: { p256dh: string; auth: string } }, communityId: string | null = community) =>
  Effect.flatMap(admin(), (t) => call("POST", "/webpush/subscribe", { token: t, json: { user_id: user, community_id: communityId, subscription } }))

const event = (user: string, type: string, facts: Record<string, unknown>, communityId: string | null = community) => ({
  event_type: type,
  user_id: user,
  community_id: communityId,
  facts: { facts_version: "1.0", scenario: type, ...facts }
})

const importedUp = (user: string) => event(user, "imported_up", { delta_pct: 35.2, cur: 412.5, prev: 305.1 })

const notification = (id: string) => Effect.flatMap(admin(), (t) => call("GET", `/notifications/${id}`, { token: t }))

/** Polls the notification until `done` says its deliveries are settled (the dispatcher works in the background). */
const settled = (id: string, done: (n: Domain.Notification) => boolean, timeoutMs = 15_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + timeoutMs
    while (true) {
      const reply = yield* notification(id)
      const n = reply.body as Domain.Notification
      if (reply.status === 200 && done(n)) return n
      if (Date.now() > deadline) return yield* Effect.dieMessage(`notification ${id} did not settle: ${JSON.stringify(n)}`)
      yield* Effect.sleep("100 millis")
    }
  })

const notificationId = (reply: { body: unknown }) => (reply.body as Domain.IngestDispatched).outcomes[0]!.notification_id!

layer(serviceLayer(), { excludeTestServices: true, timeout: "180 seconds" })("delivery", (it) => {
  it.effect("web push: VAPID-signed, aes128gcm-encrypted, decrypted by the subscriber; TTL and urgency set", () =>
    Effect.gen(function*() {
      const push = yield* Push
      const user = freshUser()
      const subscriber = push.subscriber()
      const subscribed = yield* subscribe(user, subscriber)
      expect(subscribed.status).toBe(200)
      expect(subscribed.body).toMatchObject({ user_id: user, community_id: community, enabled: true, endpoint_origin: push.origin })

      const before = push.received.length
      const reply = yield* ingest(importedUp(user))
      expect(reply.status).toBe(200)
      expect((reply.body as Domain.IngestDispatched).outcomes[0]!.delivery_ids).toHaveLength(1)
      const id = notificationId(reply)
      const received = (yield* Effect.promise(() => push.waitFor(before + 1)))[before]!
      expect(received.subscriberId).toBe(subscriber.id)
      expect(received.payload).toEqual({
        title: "Grid import up 35.2%",
        body: "You drew 35.2% more energy from the grid than in the previous period (412.5 kWh instead of 305.1 kWh). " +
          "Running washing machine, dishwasher or charging while the sun shines brings it down.",
        data: { url: "/energy", notification_id: id, rule_id: "imported_up", click_token: expect.any(String) }
      })
      expect(received.vapid.audience).toBe(push.origin)
      expect(received.vapid.subject).toBe("mailto:nudging@rec.example")
      expect(received.vapid.expiresIn).toBeGreaterThan(3600)
      expect(received.headers["ttl"]).toBe("3600")
      expect(received.headers["urgency"]).toBe("normal")
      const key = yield* call("GET", "/webpush/vapid-public-key")
      expect(key).toMatchObject({ status: 200, body: { public_key: received.vapid.publicKey } })

      const n = yield* settled(id, (n) => n.deliveries[0]?.status === "dispatched")
      expect(n.deliveries).toEqual([{
        id: expect.any(String),
        channel: "webpush",
        destination: subscribed.body && (subscribed.body as Domain.PushSubscription).id,
        status: "dispatched",
        attempts: 1,
        error: null,
        next_attempt_at: null,
        dispatched_at: expect.any(String)
      }])
    }))

  it.effect("urgency follows severity: critical is high, info is low", () =>
    Effect.gen(function*() {
      const push = yield* Push
      const user = freshUser()
      const subscriber = push.subscriber()
      yield* subscribe(user, subscriber)
      const before = push.received.length
      expect((yield* ingest(event(user, "inverter_error_critical_daily_v1", { system_status_error_last_day_total: 2 }))).status).toBe(200)
      expect((yield* ingest(event(user, "price_down", { delta_pct: -8 }))).status).toBe(200)
      const got = (yield* Effect.promise(() => push.waitFor(before + 2))).slice(before)
      const urgency = Object.fromEntries(got.map((r) => [r.payload.data.rule_id, r.headers["urgency"]]))
      expect(urgency).toEqual({ inverter_error_critical_daily_v1: "high", price_down: "low" })
      expect(got.find((r) => r.payload.data.rule_id === "inverter_error_critical_daily_v1")!.payload.title).toBe("Inverter: 2 errors yesterday")
    }))

  it.effect.each([404, 410])("%i from the push service disables the subscription; later notifications skip it", (gone) =>
    Effect.gen(function*() {
      const push = yield* Push
      const user = freshUser()
      const subscriber = push.subscriber()
      yield* subscribe(user, subscriber)
      push.answer(subscriber.id, [gone])
      const id = notificationId(yield* ingest(importedUp(user)))
      const n = yield* settled(id, (n) => n.deliveries[0]?.status === "gone")
      expect(n.deliveries[0]).toMatchObject({ status: "gone", attempts: 1, error: `push service answered ${gone}: scripted ${gone}` })
      const next = yield* ingest(event(user, "price_up", { delta_pct: 30 }))
      expect(next.status).toBe(200)
      expect((next.body as Domain.IngestDispatched).outcomes[0]!.delivery_ids).toEqual([])
    }))

  it.effect("a failing push service is retried with backoff until it accepts", () =>
    Effect.gen(function*() {
      const push = yield* Push
      const user = freshUser()
      const subscriber = push.subscriber()
      yield* subscribe(user, subscriber)
      push.answer(subscriber.id, [500, 503])
      const before = push.received.length
      const id = notificationId(yield* ingest(importedUp(user)))
      const n = yield* settled(id, (n) => n.deliveries[0]?.status === "dispatched")
      expect(n.deliveries[0]).toMatchObject({ status: "dispatched", attempts: 3, error: null })
      expect(push.received.length).toBe(before + 1)
    }))

  it.effect("after the last attempt the delivery fails with the error; the notification stays in the inbox", () =>
    Effect.gen(function*() {
      const push = yield* Push
      const user = freshUser()
      const subscriber = push.subscriber()
      yield* subscribe(user, subscriber)
      push.answer(subscriber.id, [500, 500, 500, 500, 500])
      const id = notificationId(yield* ingest(importedUp(user)))
      const n = yield* settled(id, (n) => n.deliveries[0]?.status === "failed", 30_000)
      expect(n.status).toBe("dispatched")
      expect(n.deliveries[0]).toMatchObject({ status: "failed", attempts: 5, next_attempt_at: null })
      expect(n.deliveries[0]!.error).toBe("push service answered 500: scripted 500 (gave up after 5 attempts)")
    }))

  it.effect("click tracking: the push's token records the click and leads to the page; forged tokens are refused", () =>
    Effect.gen(function*() {
      const push = yield* Push
      const user = freshUser()
      yield* subscribe(user, push.subscriber())
      const before = push.received.length
      const id = notificationId(yield* ingest(importedUp(user)))
      const received = (yield* Effect.promise(() => push.waitFor(before + 1)))[before]!
      const clickToken = received.payload.data.click_token!

      const response = yield* call("GET", `/track/click?token=${encodeURIComponent(clickToken)}&action=open`)
      expect(response.status).toBe(303)
      expect(response.headers["location"]).toBe("http://app.rec.example/energy")
      const clicked = (yield* notification(id)).body as Domain.Notification
      expect(clicked).toMatchObject({ click_action: "open", clicked_at: expect.any(String), read_at: expect.any(String) })

      const [payload] = clickToken.split(".")
      const forged = `${payload}.${Buffer.alloc(32).toString("base64url")}`
      const refused = yield* call("GET", `/track/click?token=${encodeURIComponent(forged)}`)
      expect(refused).toMatchObject({ status: 400, body: { detail: "The click token's signature is not valid" } })
      const malformed = yield* call("GET", "/track/click?token=abc")
      expect(malformed.status).toBe(400)

      // A token this service signed for a notification that does not exist.
      const sql = yield* SqlClient.SqlClient
      const [secret] = yield* sql<{ value: string }>`SELECT value FROM settings WHERE key = 'click_tracking_secret'`
      const body = Buffer.from(JSON.stringify({ notification_id: "nope" })).toString("base64url")
      const signed = `${body}.${crypto.createHmac("sha256", secret!.value).update(body).digest("base64url")}`
      expect((yield* call("GET", `/track/click?token=${signed}`)).status).toBe(404)
    }))

  it.effect("send-test pushes to the user's subscriptions now; unsubscribe removes them", () =>
    Effect.gen(function*() {
      const push = yield* Push
      const me = yield* userId("participant")
      const t = yield* token("participant", { client: "rec-frontend" })
      const subscriber = push.subscriber()
      const subscribed = yield* call("POST", "/webpush/subscribe", {
        token: t,
        json: { user_id: me, community_id: community, subscription: subscriber }
      })
      expect(subscribed.status).toBe(200)
      const before = push.received.length
      const sent = yield* call("POST", "/webpush/send-test", { token: t, json: { user_id: me, community_id: community } })
      expect(sent).toMatchObject({ status: 200, body: { subscriptions: 1, sent: 1, failed: 0, gone: 0, errors: [] } })
      const received = (yield* Effect.promise(() => push.waitFor(before + 1)))[before]!
      expect(received.payload).toEqual({
        title: "Test notification",
        body: "Push notifications work on this device.",
        data: { url: "/" }
      })
      const removed = yield* call("POST", "/webpush/unsubscribe", {
        token: t,
        json: { user_id: me, community_id: community, endpoint: subscriber.endpoint }
      })
      expect(removed).toMatchObject({ status: 200, body: { removed: 1 } })
      const none = yield* call("POST", "/webpush/send-test", { token: t, json: { user_id: me, community_id: community } })
      expect(none.body).toMatchObject({ subscriptions: 0, sent: 0 })
    }))

  it.effect("subscriptions to other URLs than push services, or with unusable keys, are refused naming the field", () =>
    Effect.gen(function*() {
      const push = yield* Push
      const subscriber = push.subscriber()
      const elsewhere = yield* subscribe(freshUser(), { ...subscriber, endpoint: "https://intranet.example/admin" })
      expect(elsewhere.status).toBe(422)
      expect(elsewhere.body).toMatchObject({ issues: [{ path: ["subscription", "endpoint"] }] })
      const badKeys = yield* subscribe(freshUser(), { ...subscriber, keys: { p256dh: "AAAA", auth: subscriber.keys.auth } })
      expect(badKeys.status).toBe(422)
      expect(badKeys.body).toMatchObject({ issues: [{ path: ["subscription", "keys", "p256dh"] }] })
    }))

  it.effect("e-mail: a grid alert reaches every recipient over SMTP, in the event's language, with a click link", () =>
    Effect.gen(function*() {
      const mail = yield* Mail
      const before = mail.messages.length
      const recipients = ["ops@alto-garda.example", "grid@alto-garda.example"]
      const reply = yield* ingest({
        event_type: "extr_event",
        facts: {
          facts_version: "1.0",
          scenario: "extr_event",
          period: "2026-07-14",
          window_start: "13:00",
          window_end: "17:00",
          event_type: "heat",
          day_label: "today",
          lang: "it",
          email_recipients: recipients
        }
      })
      expect(reply.status).toBe(200)
      const got = (yield* Effect.promise(() => mail.waitFor(before + 2))).slice(before)
      expect(got.map((m) => m.to && !Array.isArray(m.to) ? m.to.text : "").sort()).toEqual([...recipients].sort())
      for (const message of got) {
        expect(message.subject).toBe("Caldo estremo previsto oggi")
        expect(message.text).toContain(
          "Caldo estremo previsto oggi (2026-07-14) tra le 13:00 e le 17:00. Evita consumi elevati in quella fascia per alleggerire la rete."
        )
        expect(message.text).toMatch(/http:\/\/nudging\.rec\.example\/track\/click\?token=[A-Za-z0-9_.%-]+/)
        expect(message.from?.text).toContain("nudging@rec.example")
        expect(message.headers.get("content-language")).toBe("it")
      }
      const id = notificationId(reply)
      const n = yield* settled(id, (n) => n.deliveries.every((d) => d.status === "dispatched"))
      expect(n.deliveries.map((d) => d.channel)).toEqual(["email", "email"])
    }))

  it.effect("e-mail refused for good (550): the group's notification fails with the error", () =>
    Effect.gen(function*() {
      const reply = yield* ingest({
        event_type: "extr_event",
        facts: {
          facts_version: "1.0",
          scenario: "extr_event",
          period: "2026-07-15",
          window_start: "09:00",
          window_end: "11:00",
          event_type: "wind",
          email_recipients: ["reject@alto-garda.example"]
        }
      })
      expect(reply.status).toBe(200)
      const n = yield* settled(notificationId(reply), (n) => n.status === "failed")
      expect(n.deliveries[0]).toMatchObject({ status: "failed", attempts: 1 })
      expect(n.deliveries[0]!.error).toMatch(/^SMTP 550/)
      expect(n.reason).toBe(n.deliveries[0]!.error)
    }))

  it.effect("e-mail for users who opt in, to their address", () =>
    Effect.gen(function*() {
      const mail = yield* Mail
      const user = freshUser()
      const t = yield* admin()
      const prefs = yield* call("PUT", "/preferences", {
        token: t,
        json: { user_id: user, community_id: community, email_enabled: true, email: "giulia@rec.example", language: "it" }
      })
      expect(prefs.status).toBe(200)
      const before = mail.messages.length
      expect((yield* ingest(importedUp(user))).status).toBe(200)
      const [message] = (yield* Effect.promise(() => mail.waitFor(before + 1))).slice(before)
      expect(message!.subject).toBe("Prelievo dalla rete +35,2%")
      expect(message!.to && !Array.isArray(message!.to) ? message!.to.text : "").toBe("giulia@rec.example")
    }))
})
