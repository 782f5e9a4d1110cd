/**
 * Pure parts: the request-to-input mapping, the acc mask, token recognition and the verified
 * token cache.
 */
import { describe, expect, it } from "@effect/vitest"
import { AuthFailure, Subject, type TokenVerifier } from "@rec/auth"
import { Domain, Inputs } from "@rec/policy-service"
import { looksLikeJwt, tokenFrom } from "@rec/policy-service/MqttAuth"
import * as TokenCache from "@rec/policy-service/TokenCache"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

describe("Inputs", () => {
  it("dt events carry event_type and simulation_state to the policy", () => {
    const q = Inputs.dtEvent(null, "r-1", { dt_id: "twin-1", event_type: "simulation", simulation_state: "running" })
    expect(q.package).toBe("rec.dt.access")
    expect(q.input.resource).toEqual({ type: "dt", id: "twin-1", attributes: {} })
    expect(q.input.action).toEqual({ name: "emit_event", context: { event_type: "simulation", simulation_state: "running" } })
  })

  it("user data sharing attributes reach the policy only when given", () => {
    const bare = Inputs.userdataAccess(null, "r", { resource_type: "profile", resource_id: "p", owner_id: "o", action: "read" })
    expect(bare.input.resource.attributes).toEqual({ resource_type: "profile", owner_id: "o" })
    const shared = Inputs.userdataAccess(null, "r", {
      resource_type: "dashboard",
      resource_id: "d",
      owner_id: "o",
      action: "read",
      shared_with: ["u-2"],
      shared_with_groups: ["editors"],
      visibility: "public"
    })
    expect(shared.input.resource.attributes).toEqual({
      resource_type: "dashboard",
      owner_id: "o",
      shared_with: ["u-2"],
      shared_with_groups: ["editors"],
      visibility: "public"
    })
  })

  it("/authorize context goes to the environment without overriding request_id or timestamp", () => {
    const q = Inputs.authorize(null, "r-1", "pipeline", {
      resource: { type: "pipeline", id: "p", attributes: {} },
      action: { name: "transition", context: { from_state: "pending", to_state: "started" } },
      context: { request_id: "forged", timestamp: 0, tenant: "it" }
    })
    expect(q.package).toBe("rec.pipeline.state")
    expect(q.input.environment).toMatchObject({ request_id: "r-1", tenant: "it" })
    expect(q.input.environment?.timestamp).not.toBe(0)
  })

  it("unknown resource types are recognised", () => {
    expect(Domain.isResourceType("dataset")).toBe(true)
    expect(Domain.isResourceType("printer")).toBe(false)
    expect(Domain.isResourceType("constructor")).toBe(false)
  })
})

describe("MQTT", () => {
  it("acc masks name their actions in the order they are checked", () => {
    expect(Domain.accActions(0)).toEqual([])
    expect(Domain.accActions(1)).toEqual(["read"])
    expect(Domain.accActions(2)).toEqual(["publish"])
    expect(Domain.accActions(3)).toEqual(["publish", "read"])
    expect(Domain.accActions(4)).toEqual(["subscribe"])
    expect(Domain.accActions(5)).toEqual(["subscribe", "read"])
    expect(Domain.accActions(6)).toEqual(["subscribe", "publish"])
    expect(Domain.accActions(7)).toEqual(["subscribe", "publish", "read"])
  })

  it("a credential field is a token only when it is a compact JWS", () => {
    expect(looksLikeJwt("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln")).toBe(true)
    expect(looksLikeJwt("vittoria")).toBe(false)
    expect(looksLikeJwt("a.b")).toBe(false)
    expect(looksLikeJwt(42)).toBe(false)
    expect(tokenFrom(undefined, "alice", "x.y.z")).toEqual(Option.some("x.y.z"))
    expect(tokenFrom("alice")).toEqual(Option.none())
  })
})

describe("TokenCache", () => {
  const subject = (exp: number) => Subject.fromClaims({ sub: "u-1", exp, groups: ["/viewers"] })

  const counting = (exp: number, fail = false) => {
    const calls = { count: 0 }
    const verifier: TokenVerifier.TokenVerifier = {
      config: {} as TokenVerifier.TokenVerifier["config"],
      verifyClaims: () => Effect.die("unused"),
      verify: () =>
        Effect.suspend(() => {
          calls.count++
          return fail ? Effect.fail(AuthFailure.AuthFailure.of("bad_signature")) : Effect.succeed(subject(exp))
        })
    }
    return { verifier, calls }
  }

  it.effect("remembers a verified token until it expires, at most the TTL", () =>
    Effect.gen(function*() {
      let now = 1_000_000
      const { calls, verifier } = counting(1_000 + 30) // exp in seconds: 30 s after `now`
      const cached = TokenCache.wrap(verifier, { maxSize: 10, ttl: Duration.seconds(60) }, () => now)
      const first = yield* cached.verify("token-a")
      expect(yield* cached.verify("token-a")).toBe(first)
      expect(calls.count).toBe(1)
      now += 29_000
      yield* cached.verify("token-a")
      expect(calls.count).toBe(1)
      now += 2_000 // past exp
      yield* cached.verify("token-a")
      expect(calls.count).toBe(2)
      yield* cached.verify("token-b")
      expect(calls.count).toBe(3)
    }))

  it.effect("never remembers a failure, and is bounded", () =>
    Effect.gen(function*() {
      const failing = counting(0, true)
      const cached = TokenCache.wrap(failing.verifier, { maxSize: 10, ttl: Duration.seconds(60) })
      yield* Effect.flip(cached.verify("t"))
      yield* Effect.flip(cached.verify("t"))
      expect(failing.calls.count).toBe(2)

      const ok = counting(Math.floor(Date.now() / 1000) + 3600)
      const small = TokenCache.wrap(ok.verifier, { maxSize: 2, ttl: Duration.seconds(60) })
      for (const t of ["a", "b", "c", "a"]) yield* small.verify(t)
      // "a" was evicted by "c" (least recently used), so it was verified again.
      expect(ok.calls.count).toBe(4)
    }))
})
