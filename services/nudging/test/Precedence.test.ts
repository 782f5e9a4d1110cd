/**
 * Several rules answering one event (a seed of three rules on `meter_kpi`, two of them for the
 * same scenario): each gets its own outcome, and the status is the first of dispatched (200),
 * suppressed (202), deduplicated (409), invalid_facts (422), rejected (400); only not_triggered
 * is 204. The original answered such mixes with a 500.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as path from "node:path"
import { call, freshUser, ingest, repoRoot, serviceLayer, token } from "./support/Service.js"

const SEED_DIR = path.join(repoRoot, "services/nudging/test/fixtures/seed-precedence")

const kpi = (user: string, facts: Record<string, unknown>, scenario = "meter_kpi") => ({
  event_type: "meter_kpi",
  user_id: user,
  facts: { facts_version: "1.0", scenario, ...facts }
})

const outcomes = (body: unknown) =>
  Object.fromEntries((body as { outcomes: Array<{ rule_id: string; outcome: string }> }).outcomes.map((o) => [o.rule_id, o.outcome]))

layer(serviceLayer({ env: { SEED_DIR } }), { excludeTestServices: true, timeout: "120 seconds" })("precedence", (it) => {
  it.effect("each rule of the scenario gets an outcome; the status follows the documented precedence", () =>
    Effect.gen(function*() {
      const user = freshUser()
      const both = yield* ingest(kpi(user, { value: 20, note: "hello" }))
      expect(both.status).toBe(200)
      expect(outcomes(both.body)).toEqual({ kpi_high: "dispatched", kpi_note: "dispatched" })

      const again = yield* ingest(kpi(user, { value: 20, note: "hello" }))
      expect(again.status).toBe(409)
      expect(outcomes(again.body)).toEqual({ kpi_high: "deduplicated", kpi_note: "deduplicated" })

      // Deduplicated outranks invalid facts: the caller already got the notification.
      const dedupAndInvalid = yield* ingest(kpi(user, { value: 20 }))
      expect(dedupAndInvalid.status).toBe(409)
      expect(outcomes(dedupAndInvalid.body)).toEqual({ kpi_high: "deduplicated", kpi_note: "invalid_facts" })

      const fresh = freshUser()
      const dispatchedAndInvalid = yield* ingest(kpi(fresh, { value: 20 }))
      expect(dispatchedAndInvalid.status).toBe(200)
      expect(outcomes(dispatchedAndInvalid.body)).toEqual({ kpi_high: "dispatched", kpi_note: "invalid_facts" })

      const silentAndInvalid = yield* ingest(kpi(freshUser(), { value: 5 }))
      expect(silentAndInvalid.status).toBe(422)
      expect(outcomes(silentAndInvalid.body)).toEqual({ kpi_high: "not_triggered", kpi_note: "invalid_facts" })
      expect(silentAndInvalid.body).toMatchObject({ issues: [{ path: ["facts", "note"], message: "is missing (rule kpi_note needs it)" }] })

      const silentAndDedup = yield* ingest(kpi(fresh, { value: 5, note: "x" }))
      expect(silentAndDedup.status).toBe(200)
      expect(outcomes(silentAndDedup.body)).toEqual({ kpi_high: "not_triggered", kpi_note: "dispatched" })
      const notTriggeredAndDedup = yield* ingest(kpi(fresh, { value: 5, note: "x" }))
      expect(notTriggeredAndDedup.status).toBe(409)

      const off = freshUser()
      const t = yield* token("svc-nudging")
      yield* call("PUT", "/preferences", { token: t, json: { user_id: off, community_id: "", enabled: false } })
      const suppressedAndSilent = yield* ingest(kpi(off, { value: 5, note: "x" }))
      expect(suppressedAndSilent.status).toBe(202)
      expect(outcomes(suppressedAndSilent.body)).toEqual({ kpi_high: "not_triggered", kpi_note: "suppressed" })

      // An empty text is a missing fact.
      const empty = yield* ingest(kpi(freshUser(), { value: 1, note: "" }))
      expect(empty.status).toBe(422)
    }))

  it.effect("another scenario of the event type selects its own rules; an unknown one is 400 for every rule", () =>
    Effect.gen(function*() {
      const other = yield* ingest(kpi(freshUser(), {}, "meter_other"))
      expect(other.status).toBe(200)
      expect(outcomes(other.body)).toEqual({ kpi_other: "dispatched" })
      const unknown = yield* ingest(kpi(freshUser(), { value: 20 }, "meter_unknown"))
      expect(unknown.status).toBe(400)
      expect(outcomes(unknown.body)).toEqual({ kpi_high: "rejected", kpi_note: "rejected", kpi_other: "rejected" })
      // Only the seed's rules are in force (SEED_DIR replaced the bundled seed's).
      expect((yield* ingest(kpi(freshUser(), {}, "imported_up"))).status).toBe(400)
      const bundled = yield* ingest({ event_type: "imported_up", user_id: freshUser(), facts: { facts_version: "1", scenario: "imported_up" } })
      expect(bundled.status).toBe(204)
    }))
})
