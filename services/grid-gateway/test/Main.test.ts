/**
 * The built service started as `node dist/main.js`, configured by a `.env` file in its working
 * directory (spec section 8: "environment variables or a `.env` file"): it reads the file under
 * the environment, warns about a near miss written there, starts without a broker (`/ready`
 * degraded) and stops cleanly on SIGTERM.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { freePort } from "./support/Alerts.js"
import { repoPolicies } from "./support/Gateway.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const main = path.join(here, "..", "dist", "main.js")

describe("node dist/main.js with a .env file", () => {
  it.live("reads .env under the environment, warns about near misses, serves degraded without a broker, stops on SIGTERM", () =>
    Effect.gen(function*() {
      if (!fs.existsSync(main)) return yield* Effect.dieMessage(`${main} is missing: build first (pnpm build)`)
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "grid-main-"))
      const mqttPort = yield* freePort
      fs.writeFileSync(path.join(dir, ".env"), [
        "# the grid gateway, configured by file",
        "HOST=127.0.0.1",
        "PORT=0",
        "DATABASE_URL=pglite://memory",
        "PLATFORM_OIDC_BASE_URL=http://127.0.0.1:9/realms/rec",
        "PLATFORM_OIDC_AUDIENCE=rec-platform",
        `PLATFORM_POLICIES_POLICIES_DIR=${repoPolicies}`,
        "PLATFORM_MQTT_HOST=127.0.0.1",
        `PLATFORM_MQTT_PORT=${mqttPort}`,
        "MQTT_STARTUP_TIMEOUT_SECONDS=0.5",
        "CELINE_MQTT_HOST=broker.internal",
        "GRID_PIPELINE_FLOW=from-the-file",
        "LOG_LEVEL=info"
      ].join("\n"))
      const env: Record<string, string> = {}
      for (const [k, v] of Object.entries(process.env)) {
        if (v !== undefined && !/^(HOST|PORT|DATABASE_|PLATFORM_|MQTT_|CELINE_|GRID_|LOG_|ENV_FILE|POLICY_|OTEL_)/.test(k)) env[k] = v
      }
      // The environment wins over the file.
      env["GRID_PIPELINE_FLOW"] = "from-the-environment"
      const child = ChildProcess.spawn(process.execPath, [main], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (c: Buffer) => (stdout += c.toString()))
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString()))
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      const lines = () => stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>)
      const address = yield* Effect.promise(async () => {
        const deadline = Date.now() + 60_000
        while (Date.now() < deadline) {
          const listening = lines().find((l) => String(l.message).includes(" listening on "))
          if (listening) return /listening on (http:\/\/[^\s]+)$/.exec(String(listening.message))![1]!
          if (child.exitCode !== null) break
          await new Promise((r) => setTimeout(r, 50))
        }
        child.kill("SIGKILL")
        throw new Error(`the gateway did not start:\n${stdout}\n${stderr}`)
      })
      const ready = yield* Effect.promise(() => fetch(`${address}/ready`).then(async (r) => ({ status: r.status, body: await r.json() })))
      expect(ready).toEqual({ status: 200, body: { status: "degraded", checks: { database: "ok", policies: "ok", mqtt: "failed" } } })
      const docs = yield* Effect.promise(() => fetch(`${address}/api/openapi.json`).then((r) => r.status))
      expect(docs).toBe(200)
      child.kill("SIGTERM")
      expect(yield* Effect.promise(() => exited)).toBe(0)

      const all = lines()
      const read = all.find((l) => String(l.message).startsWith("Read 11 variables from"))
      expect(read?.kept_from_environment).toEqual(["GRID_PIPELINE_FLOW"])
      expect(all.map((l) => l.message)).toContain("Environment variable CELINE_MQTT_HOST is not used; did you mean PLATFORM_MQTT_HOST?")
      expect(all.some((l) => String(l.message).includes("listening for pipeline runs on rec/pipelines/runs/+"))).toBe(true)
      expect(stdout).not.toContain("broker.internal")
    }), 90_000)
})
