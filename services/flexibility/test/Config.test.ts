/**
 * Configuration as the spec's limits table says (port 8017, `DB_SCHEMA` default `flexibility`,
 * the upstreams' ports), the audience `svc-flexibility` checked when configured, and a valid set
 * of migrations.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Migrations } from "@rec/db"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Config from "../src/Config.js"
import { migrations } from "../src/migrations/index.js"
import { call, serviceLayer, userToken } from "./support/Harness.js"

const read = <A>(config: import("effect/Config").Config<A>, env: Record<string, string> = {}) =>
  Effect.withConfigProvider(Effect.either(config), ConfigProvider.fromMap(new Map(Object.entries(env))))

describe("configuration", () => {
  it.effect("defaults are the spec's", () =>
    Effect.gen(function*() {
      expect(Config.defaultPort).toBe(8017)
      expect(yield* read(Config.nudging)).toMatchObject({ right: { baseUrl: "http://localhost:8016", scope: Option.none() } })
      expect(yield* read(Config.registry)).toMatchObject({ right: { baseUrl: "http://localhost:8004", scope: Option.none() } })
      const database = yield* read(Config.database)
      expect(database).toMatchObject({ right: { schema: "flexibility", target: { _tag: "Pglite", dataDir: "./data/flexibility" } } })
      const settings = yield* read(Config.settings)
      expect(settings).toMatchObject({
        right: { defaultRewardPoints: 10, committedTopic: "rec/flexibility/committed", settlementConcurrency: 16 }
      })
      if (settings._tag === "Right") expect(Duration.toMinutes(settings.right.reminderLead)).toBe(15)
    }))

  it.effect("reads the spec's names: DB_SCHEMA, the upstreams' URLs and scopes, the async DSN", () =>
    Effect.gen(function*() {
      const env = {
        DB_SCHEMA: "flex_tenant_a",
        DATABASE_URL: "postgresql+asyncpg://app:secret@db.internal:5432/flexibility",
        NUDGING_API_URL: "http://nudging:8016",
        NUDGING_SCOPE: "nudging.ingest",
        REC_REGISTRY_URL: "http://registry:8004",
        REC_REGISTRY_SCOPE: "registry.read"
      }
      expect(yield* read(Config.database, env)).toMatchObject({
        right: { schema: "flex_tenant_a", target: { _tag: "Postgres", display: "postgresql://app@db.internal:5432/flexibility" } }
      })
      expect(yield* read(Config.nudging, env)).toMatchObject({ right: { baseUrl: "http://nudging:8016", scope: Option.some("nudging.ingest") } })
      expect(yield* read(Config.registry, env)).toMatchObject({ right: { baseUrl: "http://registry:8004", scope: Option.some("registry.read") } })
      expect((yield* read(Config.database, { DB_SCHEMA: "Bad-Schema" }))._tag).toBe("Left")
      expect((yield* read(Config.settings, { FLEXIBILITY_COMMITTED_TOPIC: "rec/+/x" }))._tag).toBe("Left")
    }))

  it("the migrations are a valid set", () => {
    expect(Migrations.validate(migrations).problems).toEqual([])
  })
})

layer(serviceLayer({ verifierFromEnv: true, env: { PLATFORM_OIDC_AUDIENCE: "svc-flexibility" } }), {
  excludeTestServices: true,
  timeout: "60 seconds"
})("audience svc-flexibility", (it) => {
  it.effect("is required when configured", () =>
    Effect.gen(function*() {
      const platform = yield* call("GET", "/api/commitments", { token: yield* userToken("participant") })
      expect(platform.status).toBe(401)
      expect(platform.body).toEqual({ detail: "Invalid audience" })
      const own = yield* call("GET", "/api/commitments", { token: yield* userToken("participant", { audience: "svc-flexibility" }) })
      expect(own.status).toBe(200)
    }))
})
