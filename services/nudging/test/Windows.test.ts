/**
 * Deduplication windows at their boundaries, with the service's clock set by the test: a daily
 * rule fires again the next day (the original kept its keys forever), weekly by ISO week,
 * monthly, yearly, fortnights, once, always; the daily cap starts again each day; days follow
 * NUDGING_TIME_ZONE.
 */
import { describe, expect, layer } from "@effect/vitest"
import type { Domain } from "@rec/nudging-service"
import * as Effect from "effect/Effect"
import { call, freshUser, ingest, serviceLayer, Time, token } from "./support/Service.js"

const community = "it-energy-community"

const event = (user: string, type: string, facts: Record<string, unknown>) => ({
  event_type: type,
  user_id: user,
  community_id: community,
  facts: { facts_version: "1.0", scenario: type, ...facts }
})

/** Ingests at `iso` (service time); the status. */
const at = (iso: string, body: unknown) =>
  Effect.gen(function*() {
    const time = yield* Time
    time.set(iso)
    return (yield* ingest(body)).status
  })

const bucket = (user: string) =>
  Effect.gen(function*() {
    const t = yield* token("svc-nudging")
    const page = (yield* call("GET", `/notifications?user_id=${user}&community_id=${community}&status=all&limit=100`, { token: t }))
      .body as Domain.NotificationPage
    return page.items.map((n) => `${n.status}:${n.window_bucket}`).sort()
  })

describe("in UTC", () => {
  layer(serviceLayer(), { excludeTestServices: true, timeout: "120 seconds" })("windows", (it) => {
    it.effect("daily: once per calendar day, again the next day", () =>
      Effect.gen(function*() {
        const user = freshUser()
        const body = event(user, "imported_up", { delta_pct: 30, cur: 2, prev: 1 })
        expect(yield* at("2026-05-03T00:00:01Z", body)).toBe(200)
        expect(yield* at("2026-05-03T23:59:58Z", body)).toBe(409)
        expect(yield* at("2026-05-04T00:00:01Z", body)).toBe(200)
        expect(yield* at("2026-05-04T12:00:00Z", body)).toBe(409)
        expect(yield* bucket(user)).toEqual([
          "deduplicated:2026-05-03",
          "deduplicated:2026-05-04",
          "dispatched:2026-05-03",
          "dispatched:2026-05-04"
        ])
      }))

    it.effect("weekly: by ISO week (Sunday to Monday is a new week, across a year end too)", () =>
      Effect.gen(function*() {
        const user = freshUser()
        const body = event(user, "selfcons_down_weekly_v1", { energy_selfcons_last_week_avg_ratio: 0.7 })
        expect(yield* at("2026-05-04T08:00:00Z", body)).toBe(200) // Monday, week 19
        expect(yield* at("2026-05-10T23:59:00Z", body)).toBe(409) // Sunday, week 19
        expect(yield* at("2026-05-11T00:00:30Z", body)).toBe(200) // Monday, week 20
        expect(yield* at("2026-12-31T10:00:00Z", body)).toBe(200) // Thursday, week 2026-W53
        expect(yield* at("2027-01-03T10:00:00Z", body)).toBe(409) // Sunday, still 2026-W53
        expect(yield* at("2027-01-04T10:00:00Z", body)).toBe(200) // Monday, 2027-W01
        expect((yield* bucket(user)).filter((b) => b.startsWith("dispatched"))).toEqual([
          "dispatched:2026-W19",
          "dispatched:2026-W20",
          "dispatched:2026-W53",
          "dispatched:2027-W01"
        ])
      }))

    it.effect("two weeks, monthly, yearly", () =>
      Effect.gen(function*() {
        const user = freshUser()
        const fortnight = event(user, "specific_yield_low_two_weeks_v1", { specific_yield_last_two_weeks_avg: 600 })
        expect(yield* at("2026-03-02T10:00:00Z", fortnight)).toBe(200)
        expect(yield* at("2026-03-03T10:00:00Z", fortnight)).toBe(409)
        expect(yield* at("2026-03-16T10:00:00Z", fortnight)).toBe(200) // 14 days later is always the next fortnight

        const monthly = event(user, "bill_up_monthly_v1", { cost_last_month_total_ratio: 1.3 })
        expect(yield* at("2026-05-31T23:59:00Z", monthly)).toBe(200)
        expect(yield* at("2026-05-01T00:00:00Z", monthly)).toBe(409)
        expect(yield* at("2026-06-01T00:00:00Z", monthly)).toBe(200)

        const yearly = event(user, "spring", { days_until: 3 })
        expect(yield* at("2026-12-31T23:00:00Z", yearly)).toBe(200)
        expect(yield* at("2027-01-01T01:00:00Z", yearly)).toBe(200)
        expect(yield* at("2027-03-18T01:00:00Z", yearly)).toBe(409)
      }))

    it.effect("once: never again; always: every time", () =>
      Effect.gen(function*() {
        const user = freshUser()
        const welcome = event(user, "welcome", { terms_accepted: true })
        expect(yield* at("2026-01-01T10:00:00Z", welcome)).toBe(200)
        expect(yield* at("2028-06-01T10:00:00Z", welcome)).toBe(409)
        const answer = event(user, "botanswer", { status: "answered" })
        expect(yield* at("2026-01-02T10:00:00Z", answer)).toBe(200)
        expect(yield* at("2026-01-02T10:00:01Z", answer)).toBe(200)
      }))

    it.effect("the daily cap starts again the next day", () =>
      Effect.gen(function*() {
        const user = freshUser()
        const t = yield* token("svc-nudging")
        yield* call("PUT", "/preferences", { token: t, json: { user_id: user, community_id: community, max_per_day: 1 } })
        const answer = event(user, "botanswer", { status: "answered" })
        expect(yield* at("2026-02-10T08:00:00Z", answer)).toBe(200)
        expect(yield* at("2026-02-10T23:59:00Z", answer)).toBe(202)
        expect(yield* at("2026-02-11T00:01:00Z", answer)).toBe(200)
      }))
  })
})

describe("in Europe/Rome", () => {
  layer(serviceLayer({ env: { NUDGING_TIME_ZONE: "Europe/Rome" } }), { excludeTestServices: true, timeout: "120 seconds" })(
    "windows",
    (it) => {
      it.effect("a day starts at local midnight (22:00 UTC in summer)", () =>
        Effect.gen(function*() {
          const user = freshUser()
          const body = event(user, "imported_up", { delta_pct: 30, cur: 2, prev: 1 })
          expect(yield* at("2026-07-14T21:59:00Z", body)).toBe(200) // 23:59 in Rome, 14 July
          expect(yield* at("2026-07-14T22:01:00Z", body)).toBe(200) // 00:01 in Rome, 15 July
          expect(yield* at("2026-07-15T21:00:00Z", body)).toBe(409) // 23:00 in Rome, 15 July
          expect((yield* bucket(user)).filter((b) => b.startsWith("dispatched"))).toEqual([
            "dispatched:2026-07-14",
            "dispatched:2026-07-15"
          ])
        }))

      it.effect("the daily cap starts again at local midnight", () =>
        Effect.gen(function*() {
          const user = freshUser()
          const t = yield* token("svc-nudging")
          yield* call("PUT", "/preferences", { token: t, json: { user_id: user, community_id: community, max_per_day: 1 } })
          const answer = event(user, "botanswer", { status: "answered" })
          expect(yield* at("2026-07-20T21:30:00Z", answer)).toBe(200) // 23:30 in Rome
          expect(yield* at("2026-07-20T21:45:00Z", answer)).toBe(202)
          expect(yield* at("2026-07-20T22:05:00Z", answer)).toBe(200) // 00:05 in Rome, the next day
        }))
    }
  )
})
