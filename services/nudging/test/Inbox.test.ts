/**
 * The recipient's side: listing (limit, offset, unread, status), one record, mark read, delete;
 * preferences (defaults, partial updates, the community fallback, kinds that cannot be turned
 * off, e-mail) and the language they choose for templates.
 */
import { expect, layer } from "@effect/vitest"
import type { Domain } from "@rec/nudging-service"
import * as Effect from "effect/Effect"
import { call, freshUser, ingest, serviceLayer, token } from "./support/Service.js"

const community = "it-energy-community"

const admin = () => token("svc-nudging")

const list = (user: string, query = "") =>
  Effect.flatMap(admin(), (t) => call("GET", `/notifications?user_id=${user}&community_id=${community}${query}`, { token: t }))

const preferences = (user: string, communityId = community) =>
  Effect.flatMap(admin(), (t) => call("GET", `/preferences?user_id=${user}&community_id=${communityId}`, { token: t }))

const put = (body: Record<string, unknown>) => Effect.flatMap(admin(), (t) => call("PUT", "/preferences", { token: t, json: body }))

const answer = (user: string) => ({
  event_type: "botanswer",
  user_id: user,
  community_id: community,
  facts: { facts_version: "1.0", scenario: "botanswer", status: "answered" }
})

layer(serviceLayer(), { excludeTestServices: true, timeout: "120 seconds" })("inbox", (it) => {
  it.effect("listing: newest first, limit (default 20, at most 100), offset, unread; read and delete", () =>
    Effect.gen(function*() {
      const user = freshUser()
      expect((yield* put({ user_id: user, community_id: community, max_per_day: 100 })).status).toBe(200)
      const ids: Array<string> = []
      for (let i = 0; i < 25; i++) {
        const reply = yield* ingest(answer(user))
        expect(reply.status).toBe(200)
        ids.push((reply.body as Domain.IngestDispatched).outcomes[0]!.notification_id!)
      }
      const first = (yield* list(user)).body as Domain.NotificationPage
      expect(first).toMatchObject({ total: 25, limit: 20, offset: 0 })
      expect(first.items.map((n) => n.id)).toEqual(ids.slice().reverse().slice(0, 20))
      const second = (yield* list(user, "&offset=20&limit=100")).body as Domain.NotificationPage
      expect(second.items.map((n) => n.id)).toEqual(ids.slice(0, 5).reverse())

      const tooMany = yield* list(user, "&limit=101")
      expect(tooMany.status).toBe(400)
      expect(tooMany.body).toMatchObject({ issues: [{ path: ["limit"] }] })
      expect((yield* list(user, "&offset=-1")).status).toBe(400)
      expect((yield* list(user, "&unread=maybe")).status).toBe(400)

      const t = yield* admin()
      const read = yield* call("POST", `/notifications/${ids[0]}/read`, { token: t })
      expect(read.status).toBe(200)
      const readAt = (read.body as Domain.Notification).read_at
      expect(readAt).not.toBeNull()
      const again = yield* call("POST", `/notifications/${ids[0]}/read`, { token: t })
      expect((again.body as Domain.Notification).read_at).toBe(readAt)
      expect(((yield* list(user, "&unread=true&limit=100")).body as Domain.NotificationPage).total).toBe(24)

      expect((yield* call("DELETE", `/notifications/${ids[1]}`, { token: t })).status).toBe(204)
      expect((yield* call("DELETE", `/notifications/${ids[1]}`, { token: t })).status).toBe(404)
      expect((yield* call("GET", `/notifications/${ids[1]}`, { token: t })).status).toBe(404)
      expect((yield* call("POST", `/notifications/${ids[1]}/read`, { token: t })).status).toBe(404)
      expect(((yield* list(user, "&limit=100")).body as Domain.NotificationPage).total).toBe(24)
      expect((yield* call("GET", "/notifications/no-such-id", { token: t })).status).toBe(404)
    }))

  it.effect("preferences: defaults until stored, partial updates keep the rest, the community fallback", () =>
    Effect.gen(function*() {
      const user = freshUser()
      expect((yield* preferences(user)).body).toEqual({
        user_id: user,
        community_id: community,
        language: "en",
        max_per_day: 3,
        enabled: true,
        disabled_kinds: [],
        email_enabled: false,
        email: null,
        stored: false,
        updated_at: null
      })
      const general = yield* put({ user_id: user, community_id: "", language: "it", max_per_day: 5 })
      expect(general.body).toMatchObject({ community_id: null, language: "it", max_per_day: 5, stored: true })
      // A community without a row of its own has the user's general row.
      expect((yield* preferences(user)).body).toMatchObject({ language: "it", max_per_day: 5, stored: true })
      const own = yield* put({ user_id: user, community_id: community, disabled_kinds: ["prices"] })
      expect(own.body).toMatchObject({ language: "it", max_per_day: 5, disabled_kinds: ["prices"], enabled: true })
      const partial = yield* put({ user_id: user, community_id: community, enabled: false })
      expect(partial.body).toMatchObject({ language: "it", max_per_day: 5, disabled_kinds: ["prices"], enabled: false })
      expect((yield* preferences(user, "")).body).toMatchObject({ disabled_kinds: [], enabled: true })
    }))

  it.effect("preferences: invalid values are refused naming the field, and nothing is saved", () =>
    Effect.gen(function*() {
      const user = freshUser()
      const range = yield* put({ user_id: user, community_id: community, max_per_day: 0, language: "italian!" })
      expect(range.status).toBe(400)
      expect((range.body as { issues: Array<{ path: Array<string> }> }).issues.map((i) => i.path.join("."))).toEqual(["language", "max_per_day"])
      const locked = yield* put({ user_id: user, community_id: community, disabled_kinds: ["prices", "extreme_weather", "nope"] })
      expect(locked.status).toBe(422)
      expect(locked.body).toMatchObject({
        issues: [
          { path: ["disabled_kinds", 1], message: "extreme_weather notifications cannot be turned off" },
          { path: ["disabled_kinds", 2], message: "Unknown kind \"nope\" (GET /preferences/kinds lists them)" }
        ]
      })
      const noAddress = yield* put({ user_id: user, community_id: community, email_enabled: true })
      expect(noAddress).toMatchObject({ status: 422, body: { issues: [{ path: ["email"] }] } })
      const badAddress = yield* put({ user_id: user, community_id: community, email_enabled: true, email: "not-an-address" })
      expect(badAddress).toMatchObject({ status: 400, body: { issues: [{ path: ["email"] }] } })
      expect((yield* preferences(user)).body).toMatchObject({ stored: false })
    }))

  it.effect("the language of the preferences picks the template; facts.lang wins over it", () =>
    Effect.gen(function*() {
      const user = freshUser()
      yield* put({ user_id: user, community_id: community, language: "es", max_per_day: 10 })
      const event = (type: string, facts: Record<string, unknown>) => ({
        event_type: type,
        user_id: user,
        community_id: community,
        facts: { facts_version: "1.0", scenario: type, ...facts }
      })
      expect((yield* ingest(event("imported_up", { delta_pct: 21.5, cur: 2, prev: 1 }))).status).toBe(200)
      expect((yield* ingest(event("price_up", { delta_pct: 33, lang: "ca" }))).status).toBe(200)
      // No Spanish template: the default language (en).
      expect((yield* ingest(event("bill_up_monthly_v1", { cost_last_month_total_ratio: 1.2 }))).status).toBe(200)
      const items = ((yield* list(user)).body as Domain.NotificationPage).items
      const titles = Object.fromEntries(items.map((n) => [n.rule_id, [n.language, n.title]]))
      expect(titles).toEqual({
        imported_up: ["es", "Consumo de red +21,5%"],
        price_up: ["ca", "Preu de l'energia +33%"],
        bill_up_monthly_v1: ["en", "Last month's energy cost up 20%"]
      })
    }))

  it.effect("kinds, in a language: which can be turned off, and their rules", () =>
    Effect.gen(function*() {
      const t = yield* token("participant", { client: "rec-frontend" })
      const kinds = (yield* call("GET", "/preferences/kinds?lang=it", { token: t })).body as ReadonlyArray<Domain.KindInfo>
      const extreme = kinds.find((k) => k.kind === "extreme_weather")
      expect(extreme).toEqual({
        kind: "extreme_weather",
        label: "Allerte meteo estreme",
        description: "Vento, caldo o temporali che mettono sotto sforzo la rete. Queste allerte non si possono disattivare.",
        editable: false,
        rule_ids: ["extr_event"]
      })
      expect(kinds.filter((k) => !k.editable).map((k) => k.kind)).toEqual(["extreme_weather"])
      expect(kinds.flatMap((k) => k.rule_ids)).toHaveLength(37)
      const english = (yield* call("GET", "/preferences/kinds?lang=de", { token: t })).body as ReadonlyArray<Domain.KindInfo>
      expect(english.find((k) => k.kind === "prices")!.label).toBe("Energy prices")
    }))
})
