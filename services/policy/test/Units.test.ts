/**
 * Pure parts: the request-to-input mapping, the acc mask, token recognition and the settings of
 * the verified-token cache (the cache itself is `@rec/auth`'s, tested there).
 */
import { describe, expect, it } from "@effect/vitest"
import { Config, Domain, Inputs } from "@rec/policy-service"
import { looksLikeJwt, tokenFrom } from "@rec/policy-service/MqttAuth"
import * as ConfigProvider from "effect/ConfigProvider"
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

describe("token cache settings", () => {
  const read = (env: Record<string, string>) =>
    Config.verifier.pipe(
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ PLATFORM_OIDC_BASE_URL: "http://idp", ...env }))))
    )

  it.effect("POLICY_TOKEN_CACHE_* override @rec/auth's PLATFORM_OIDC_TOKEN_CACHE_*", () =>
    Effect.gen(function*() {
      const defaults = yield* read({})
      expect(defaults.cache?.maxSize).toBe(10_000)
      expect(Duration.toSeconds(Duration.decode(defaults.cache!.ttl))).toBe(60)
      const platform = yield* read({ PLATFORM_OIDC_TOKEN_CACHE_SIZE: "50", PLATFORM_OIDC_TOKEN_CACHE_TTL: "10 seconds" })
      expect(platform.cache?.maxSize).toBe(50)
      expect(Duration.toSeconds(Duration.decode(platform.cache!.ttl))).toBe(10)
      const own = yield* read({ PLATFORM_OIDC_TOKEN_CACHE_SIZE: "50", POLICY_TOKEN_CACHE_SIZE: "0", POLICY_TOKEN_CACHE_TTL_SECONDS: "5" })
      expect(own.cache?.maxSize).toBe(0)
      expect(Duration.toSeconds(Duration.decode(own.cache!.ttl))).toBe(5)
    }))
})
