/**
 * Notifications (issue 16 point 4) through the nudging client, scoped to the caller: the list of
 * the caller's community with `limit` (default 20), `offset` and `unread`; marking read and
 * deleting; another user's notification is a 404; the nudging service's failures.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { FlexibilityState } from "./support/FakeFlexibility.js"
import * as FakeFlexibility from "./support/FakeFlexibility.js"
import { NudgingState } from "./support/FakeNudging.js"
import * as FakeNudging from "./support/FakeNudging.js"
import { TwinState } from "./support/FakeTwin.js"
import { call, gatewayLayer, token, users } from "./support/Harness.js"

const twin = new TwinState()
twin.member(users.participant)
twin.member(users.consumer)
twin.outsider(users.nogroup)
const nudging = new NudgingState()
const clients = Layer.mergeAll(twin.layer(), FakeNudging.clientLayer(nudging), FakeFlexibility.clientLayer(new FlexibilityState()))

const giulia = Array.from({ length: 25 }, (_, i) => nudging.notify(users.participant, "it-energy-community", { id: `g-${i}` }))
nudging.notify(users.participant, "other-community", { id: "g-elsewhere" })
nudging.notify(users.participant, "it-energy-community", { id: "g-dup", status: "deduplicated" })
const luca = nudging.notify(users.consumer, "it-energy-community", { id: "l-1" })
nudging.notify(users.nogroup, null, { id: "n-1" })

interface Page {
  readonly items: ReadonlyArray<{ readonly id: string; readonly read_at: string | null } & Record<string, unknown>>
  readonly total: number
  readonly limit: number
  readonly offset: number
}

layer(gatewayLayer(() => Effect.succeed({ clients })), { excludeTestServices: true, timeout: "60 seconds" })("notifications", (it) => {
  it.effect("lists the caller's notifications of their community, newest first, 20 by default", () =>
    Effect.gen(function*() {
      const reply = yield* call("GET", "/api/notifications", { token: yield* token("participant") })
      expect(reply.status).toBe(200)
      const page = reply.body as Page
      expect(page.total).toBe(25)
      expect(page.limit).toBe(20)
      expect(page.items.map((n) => n.id)).toEqual(giulia.slice(5).reverse().map((n) => n.id))
      expect(page.items[0]).toEqual({
        id: "g-24",
        title: "Titolo g-24",
        body: "Testo g-24",
        severity: "info",
        kind: "consumption",
        family: "consumption",
        type: "informative",
        url: "/overview",
        community_id: "it-energy-community",
        created_at: giulia[24]!.created_at,
        read_at: null,
        clicked_at: null
      })
      const asked = nudging.callsOf("list_notifications").at(-1)!
      expect(asked).toEqual({
        operation: "list_notifications",
        user: users.participant,
        input: { user_id: users.participant, community_id: "it-energy-community", limit: 20, offset: 0, unread: false }
      })
    }))

  it.effect("pages with limit and offset; a user outside any community sees those filed under none", () =>
    Effect.gen(function*() {
      const page = (yield* call("GET", "/api/notifications?limit=10&offset=20", { token: yield* token("participant") })).body as Page
      expect(page.items.map((n) => n.id)).toEqual(["g-4", "g-3", "g-2", "g-1", "g-0"])
      expect([page.limit, page.offset, page.total]).toEqual([10, 20, 25])
      const outsider = (yield* call("GET", "/api/notifications", { token: yield* token("nogroup") })).body as Page
      expect(outsider.items.map((n) => n.id)).toEqual(["n-1"])
    }))

  it.effect("marks read (idempotent) and lists only the unread ones with unread=true", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      const read = yield* call("POST", "/api/notifications/g-24/read", { token: t })
      expect(read.status).toBe(200)
      const readAt = (read.body as { read_at: string }).read_at
      expect(Date.parse(readAt)).toBeGreaterThan(0)
      const again = yield* call("POST", "/api/notifications/g-24/read", { token: t })
      expect((again.body as { read_at: string }).read_at).toBe(readAt)
      const unread = (yield* call("GET", "/api/notifications?unread=true&limit=100", { token: t })).body as Page
      expect(unread.total).toBe(24)
      expect(unread.items.some((n) => n.id === "g-24")).toBe(false)
      const all = (yield* call("GET", "/api/notifications?unread=false&limit=100", { token: t })).body as Page
      expect(all.total).toBe(25)
    }))

  it.effect("deletes: the notification disappears from the list", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      const deleted = yield* call("DELETE", "/api/notifications/g-0", { token: t })
      expect(deleted.status).toBe(204)
      const page = (yield* call("GET", "/api/notifications?limit=100", { token: t })).body as Page
      expect(page.items.some((n) => n.id === "g-0")).toBe(false)
      expect((yield* call("DELETE", "/api/notifications/g-0", { token: t })).status).toBe(404)
    }))

  it.effect("another user's notification is a 404 for reading, marking and deleting", () =>
    Effect.gen(function*() {
      const t = yield* token("participant")
      const mark = yield* call("POST", `/api/notifications/${luca.id}/read`, { token: t })
      expect(mark.status).toBe(404)
      expect(mark.body).toEqual({ detail: "Nudging service refused mark_read: No notification l-1" })
      const remove = yield* call("DELETE", `/api/notifications/${luca.id}`, { token: t })
      expect(remove.status).toBe(404)
      expect(nudging.notifications.get(luca.id)).toMatchObject({ read_at: null, deleted: false })
      const lucasList = (yield* call("GET", "/api/notifications", { token: yield* token("participant-consumer") })).body as Page
      expect(lucasList.items.map((n) => n.id)).toEqual(["l-1"])
    }))

  it.effect("refuses a limit over 100, a negative offset and an unread that is not a boolean, naming each", () =>
    Effect.gen(function*() {
      const reply = yield* call("GET", "/api/notifications?limit=500&offset=-1&unread=maybe", { token: yield* token("participant") })
      expect(reply.status).toBe(400)
      const issues = (reply.body as { issues: Array<{ path: Array<string> }> }).issues.map((i) => i.path[0])
      expect(issues.sort()).toEqual(["limit", "offset", "unread"])
    }))

  it.effect("the nudging service failing is a 502 naming it", () =>
    Effect.gen(function*() {
      nudging.fail("list_notifications", { status: 500, detail: "boom" })
      const reply = yield* call("GET", "/api/notifications", { token: yield* token("participant") })
      expect(reply.status).toBe(502)
      expect(reply.body).toEqual({ detail: "Nudging service failed list_notifications (status 500): boom" })
      nudging.heal()
    }))
})
