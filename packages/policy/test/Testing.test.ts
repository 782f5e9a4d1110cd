import { describe, expect, it } from "@effect/vitest"
import { PolicyEngine, PolicyInput, Testing } from "@rec/policy"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

const input = PolicyInput.make({ subject: null, resource: { type: "dataset", id: "d" }, action: { name: "read" } })

describe("Testing engines", () => {
  it.effect("answer as told and record the questions", () =>
    Effect.gen(function*() {
      const engine = Testing.make((pkg) => ({ allowed: pkg === "rec.dataset.access", reason: "because" }))
      expect(yield* engine.decide("rec.dataset.access", input)).toEqual({
        allowed: true,
        reason: "because",
        package: "rec.dataset.access",
        cached: false
      })
      expect((yield* engine.decideAll([{ package: "other", input }]))[0]?.allowed).toBe(false)
      expect(engine.asked.map((q) => q.package)).toEqual(["rec.dataset.access", "other"])
      expect(yield* engine.evaluate("x", "allow", input)).toEqual(Option.some(false))
      expect(yield* engine.evaluate("x", "superuser", input)).toEqual(Option.none())
      expect((yield* Effect.flip(engine.reload))._tag).toBe("PolicyLoadError")
    }))

  it.effect("rules can be given for evaluate", () =>
    Effect.gen(function*() {
      const engine = yield* PolicyEngine
      expect(yield* engine.evaluate("rec.mqtt.acl", "superuser", input)).toEqual(Option.some(true))
    }).pipe(Effect.provide(Testing.layer(() => ({ allowed: false }), { rules: (_, rule) => rule === "superuser" || undefined }))))

  it.effect("allowAll and denyAll", () =>
    Effect.gen(function*() {
      expect((yield* Effect.flatMap(PolicyEngine, (e) => e.decide("p", input)).pipe(Effect.provide(Testing.allowAll))).allowed).toBe(true)
      expect((yield* Effect.flatMap(PolicyEngine, (e) => e.decide("p", input)).pipe(Effect.provide(Testing.denyAll))).allowed).toBe(false)
    }))
})
