/**
 * Configuration (issue 14 point 3): every variable of the spec's table is read under exactly its
 * name; near-miss spellings of PLATFORM_POLICIES_POLICIES_DIR and PLATFORM_MQTT_HOST (the
 * original's CELINE_ names, the nested `__` form, a missing doubled word) are warned about at
 * start; policies fail closed, and POLICY_FAIL_OPEN=true is the only way to the original's
 * fail-open, logged at start.
 */
import { afterAll, describe, expect, it, layer } from "@effect/vitest"
import { ServiceConfig } from "@rec/platform"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as GridConfig from "../src/Config.js"
import { call, gatewayLayer, logs, tokenOf } from "./support/Gateway.js"

/** Spec part B, section 8 (the port is `PORT`). */
const specVariables = [
  "DATABASE_URL",
  "DIGITAL_TWIN_API_URL",
  "NUDGING_API_URL",
  "DATABASE_ECHO",
  "PLATFORM_OIDC_CLIENT_ID",
  "PLATFORM_OIDC_CLIENT_SECRET",
  "PLATFORM_OIDC_BASE_URL",
  "DT_CLIENT_SCOPE",
  "NUDGING_SCOPE",
  "CORS_ORIGINS",
  "PLATFORM_POLICIES_POLICIES_DIR",
  "GRID_PIPELINE_FLOW",
  "PLATFORM_MQTT_HOST",
  "PLATFORM_MQTT_PORT",
  "MQTT_STARTUP_TIMEOUT_SECONDS",
  "JWT_HEADER_NAME"
]

describe("variables", () => {
  it.effect("every variable of the spec's table is a name the gateway reads", () =>
    Effect.gen(function*() {
      const read = new Set([...(yield* ServiceConfig.envNames(GridConfig.all)), ...ServiceConfig.platformEnvNames])
      expect(specVariables.filter((name) => !read.has(name))).toEqual([])
      for (const name of ["WEBHOOK_ALLOW_HTTP", "WEBHOOK_ALLOW_PRIVATE", "WEBHOOK_TIMEOUT_SECONDS", "WEBHOOK_MAX_ATTEMPTS", "POLICY_FAIL_OPEN", "PIPELINE_RUNS_TOPIC", "MQTT_SHARED_GROUP"]) {
        expect(read.has(name), name).toBe(true)
      }
    }))

  it.effect("defaults as the spec says", () =>
    Effect.gen(function*() {
      const settings = yield* GridConfig.settings
      expect(settings.pipelineFlow).toBe("grid-resilience-flow")
      expect(settings.nudging.baseUrl).toBe("http://localhost:8016")
      expect(settings.webhooks).toMatchObject({ allowHttp: false, allowPrivate: false, maxAttempts: 3 })
      expect(GridConfig.defaultPort).toBe(8015)
      expect(GridConfig.defaultCorsOrigins).toEqual(["http://localhost:3006"])
    }).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))))
})

// The kit compares the process environment with the names it knows, at start.
const nearMisses: Record<string, string> = {
  CELINE_POLICIES_DIR: "PLATFORM_POLICIES_POLICIES_DIR",
  PLATFORM_POLICIES_DIR: "PLATFORM_POLICIES_POLICIES_DIR",
  CELINE_POLICIES_POLICIES_DIR: "PLATFORM_POLICIES_POLICIES_DIR",
  PLATFORM_MQTT__HOST: "PLATFORM_MQTT_HOST",
  CELINE_MQTT_HOST: "PLATFORM_MQTT_HOST",
  platform_mqtt_host: "PLATFORM_MQTT_HOST"
}
for (const name of Object.keys(nearMisses)) process.env[name] = "set-by-mistake"
afterAll(() => {
  for (const name of Object.keys(nearMisses)) delete process.env[name]
})

const emptyPolicies = fs.mkdtempSync(path.join(os.tmpdir(), "grid-no-policies-"))

layer(
  gatewayLayer({ engine: "env", env: { PLATFORM_POLICIES_POLICIES_DIR: emptyPolicies, POLICY_FAIL_OPEN: "true" } }),
  { excludeTestServices: true, timeout: "120 seconds" }
)("started with near misses in the environment and POLICY_FAIL_OPEN=true", (it) => {
  it.effect("each near miss is warned about, naming the variable meant", () =>
    Effect.gen(function*() {
      const warnings = logs.filter((r) => r.level === "WARN").map((r) => String(r.message))
      for (const [name, meant] of Object.entries(nearMisses)) {
        expect(warnings, name).toContain(`Environment variable ${name} is not used; did you mean ${meant}?`)
      }
    }))

  it.effect("fail-open is announced at start and lets anyone with a token read, as the original did", () =>
    Effect.gen(function*() {
      expect(logs.some((r) => r.level === "WARN" && String(r.message).startsWith("POLICY_FAIL_OPEN=true"))).toBe(true)
      const reply = yield* call("GET", "/api/grid/dso-alto-garda/wind/trend", { token: yield* tokenOf("participant") })
      expect(reply.status).toBe(200)
      // Creating a rule still needs a DSO network (the network of a rule comes from the token).
      const rule = yield* call("POST", "/api/alert-rules", { token: yield* tokenOf("participant"), json: { risk_types: ["wind"], threshold: "ALERT" } })
      expect(rule.status).toBe(403)
    }))
})

layer(
  gatewayLayer({ engine: "env", env: { PLATFORM_POLICIES_POLICIES_DIR: emptyPolicies } }),
  { excludeTestServices: true, timeout: "120 seconds" }
)("started without policies (fail closed)", (it) => {
  it.effect("every decision is refused with 503 and /ready says so", () =>
    Effect.gen(function*() {
      const reply = yield* call("GET", "/api/grid/dso-alto-garda/wind/trend", { token: yield* tokenOf("dso-operator") })
      expect(reply.status).toBe(503)
      expect(reply.body.detail).toMatch(/^Access cannot be decided: /)
      const ready = yield* call("GET", "/ready")
      expect(ready.status).toBe(503)
      expect(ready.body.checks.policies).toBe("failed")
    }))
})
