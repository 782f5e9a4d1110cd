/**
 * The gateway's SQL on both backends (embedded PGlite and PostgreSQL): the first acceptance of
 * the terms is kept, a settings write is conditional on the revision read (of two concurrent
 * saves one wins), and push subscriptions are counted, removed and put back.
 */
import type { Vitest } from "@effect/vitest"
import { describe, expect, layer } from "@effect/vitest"
import { Testing } from "@rec/db"
import { migrations } from "@rec/participant-gateway-service"
import { endpointDigest, PushRepo } from "@rec/participant-gateway-service/PushRepo"
import { SettingsRepo } from "@rec/participant-gateway-service/SettingsRepo"
import { TermsRepo } from "@rec/participant-gateway-service/TermsRepo"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

const repos = Layer.mergeAll(TermsRepo.Default, SettingsRepo.Default, PushRepo.Default)

const suite = (backend: string) => (it: Vitest.MethodsNonLive<TermsRepo | SettingsRepo | PushRepo, true>) => {
  it.effect(`${backend}: the first acceptance of a version is kept`, () =>
    Effect.gen(function*() {
      const terms = yield* TermsRepo
      expect(yield* terms.acceptedAt("u1", "v1")).toEqual(Option.none())
      const first = yield* terms.accept("u1", "v1", "2026-03-01T10:00:00.000Z")
      const again = yield* terms.accept("u1", "v1", "2026-03-02T10:00:00.000Z")
      expect([first, again]).toEqual(["2026-03-01T10:00:00.000Z", "2026-03-01T10:00:00.000Z"])
      expect(yield* terms.acceptedAt("u1", "v2")).toEqual(Option.none())
      // Concurrent acceptances of one version: one row, every caller told the same time.
      const times = yield* Effect.all(
        Array.from({ length: 5 }, (_, i) => terms.accept("u2", "v1", `2026-03-0${i + 1}T00:00:00.000Z`)),
        { concurrency: "unbounded" }
      )
      expect(new Set(times).size).toBe(1)
    }))

  it.effect(`${backend}: settings writes are conditional on the revision read`, () =>
    Effect.gen(function*() {
      const settings = yield* SettingsRepo
      const values = { notificationsEnabled: true, preferredLanguage: "it", maxPerDay: 5 }
      const created = yield* settings.insert("u1", values, "2026-03-01T10:00:00.000Z")
      expect(Option.map(created, (r) => r.revision)).toEqual(Option.some(1))
      expect(yield* settings.insert("u1", { ...values, maxPerDay: 6 }, "2026-03-01T10:00:00.000Z")).toEqual(Option.none())

      // Two saves that both read revision 1: exactly one is written.
      const results = yield* Effect.all([
        settings.update("u1", { ...values, maxPerDay: 7 }, 1, "2026-03-01T11:00:00.000Z"),
        settings.update("u1", { ...values, maxPerDay: 8 }, 1, "2026-03-01T11:00:00.000Z")
      ], { concurrency: "unbounded" })
      expect(results.filter(Option.isSome)).toHaveLength(1)
      const row = Option.getOrThrow(yield* settings.find("u1"))
      expect(row.revision).toBe(2)
      expect([7, 8]).toContain(row.maxPerDay)
      expect(row.updatedAt).toBe("2026-03-01T11:00:00.000Z")
    }))

  it.effect(`${backend}: push subscriptions by endpoint digest, removed and put back`, () =>
    Effect.gen(function*() {
      const push = yield* PushRepo
      const a = { userId: "u1", endpointSha256: endpointDigest("https://push.example/a"), subscriptionId: "s1", endpointOrigin: "https://push.example" }
      const b = { ...a, endpointSha256: endpointDigest("https://push.example/b"), subscriptionId: "s2" }
      yield* push.upsert(a, "2026-03-01T10:00:00.000Z")
      yield* push.upsert(a, "2026-03-01T11:00:00.000Z")
      yield* push.upsert(b, "2026-03-01T12:00:00.000Z")
      expect(yield* push.status("u1")).toEqual({ subscriptions: 2, lastSubscribedAt: "2026-03-01T12:00:00.000Z" })
      expect(yield* push.status("u2")).toEqual({ subscriptions: 0, lastSubscribedAt: null })
      const removed = yield* push.remove("u1", undefined)
      expect(removed).toHaveLength(2)
      expect((yield* push.status("u1")).subscriptions).toBe(0)
      yield* push.restore(removed)
      expect(yield* push.status("u1")).toEqual({ subscriptions: 2, lastSubscribedAt: "2026-03-01T12:00:00.000Z" })
      expect(yield* push.remove("u1", a.endpointSha256)).toHaveLength(1)
      expect((yield* push.status("u1")).subscriptions).toBe(1)
    }))
}

layer(repos.pipe(Layer.provideMerge(Testing.layerPglite({ service: "participant-gateway", migrations }))), {
  excludeTestServices: true,
  timeout: "60 seconds"
})("on PGlite", suite("PGlite"))

const skip = await Testing.postgresSkipReason()
describe.skipIf(skip !== undefined)(`on PostgreSQL${skip ? ` (skipped: ${skip})` : ""}`, () => {
  layer(repos.pipe(Layer.provideMerge(Testing.layerPostgres({ service: "participant-gateway", migrations }))), {
    excludeTestServices: true,
    timeout: "60 seconds"
  })("repositories", suite("PostgreSQL"))
})
