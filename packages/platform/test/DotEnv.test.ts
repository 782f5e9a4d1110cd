/**
 * `.env` files (spec part B section 8: settings come "from environment variables or a `.env`
 * file"): the environment wins, `ENV_FILE` moves the file, and `ServiceKit.run` reads it before
 * anything else, so even the kit's own settings (`HOST`, `LOG_LEVEL`) can come from it.
 */
import { describe, expect, it } from "@effect/vitest"
import { DotEnv } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const here = Path.dirname(fileURLToPath(import.meta.url))
const script = Path.join(here, "fixtures", "sigterm-service.mjs")
const built = Path.join(here, "..", "dist", "index.js")

const tempDir = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "rec-dotenv-"))

describe("DotEnv.load", () => {
  it("sets what the environment lacks and keeps what it has", () => {
    const dir = tempDir()
    Fs.writeFileSync(
      Path.join(dir, ".env"),
      [
        "# grid gateway",
        "GRID_PIPELINE_FLOW=grid-resilience-flow",
        "export NUDGING_SCOPE=\"nudging.ingest\"",
        "DT_CLIENT_SCOPE='dt.read' # inline comment",
        "PLATFORM_OIDC_CLIENT_SECRET=from-file",
        "MULTI=\"a\\nb\""
      ].join("\n")
    )
    const env: Record<string, string | undefined> = { PLATFORM_OIDC_CLIENT_SECRET: "from-environment" }
    const result = DotEnv.load({ env, cwd: dir })
    expect(result.file).toBe(Path.join(dir, ".env"))
    expect([...result.loaded].sort()).toEqual(["DT_CLIENT_SCOPE", "GRID_PIPELINE_FLOW", "MULTI", "NUDGING_SCOPE"])
    expect(result.overridden).toEqual(["PLATFORM_OIDC_CLIENT_SECRET"])
    expect(env).toEqual({
      PLATFORM_OIDC_CLIENT_SECRET: "from-environment",
      GRID_PIPELINE_FLOW: "grid-resilience-flow",
      NUDGING_SCOPE: "nudging.ingest",
      DT_CLIENT_SCOPE: "dt.read",
      MULTI: "a\nb"
    })
  })

  it("no .env is nothing; ENV_FILE names another file, and one that cannot be read is an error", () => {
    const dir = tempDir()
    expect(DotEnv.load({ env: {}, cwd: dir })).toEqual({ file: undefined, loaded: [], overridden: [] })
    Fs.writeFileSync(Path.join(dir, "grid.env"), "PLATFORM_MQTT_HOST=broker.internal\n")
    const env: Record<string, string | undefined> = { ENV_FILE: "grid.env" }
    expect(DotEnv.load({ env, cwd: dir }).loaded).toEqual(["PLATFORM_MQTT_HOST"])
    expect(env["PLATFORM_MQTT_HOST"]).toBe("broker.internal")
    expect(() => DotEnv.load({ env: { ENV_FILE: "missing.env" }, cwd: dir })).toThrow(/ENV_FILE .*missing\.env cannot be read/)
  })
})

describe("ServiceKit.run reads .env first", () => {
  it.live("HOST and PORT from the working directory's .env; the names are logged, never the values", () =>
    Effect.gen(function*() {
      if (!Fs.existsSync(built)) {
        return yield* Effect.dieMessage(`${built} is missing: build first (pnpm build, or tsc -b packages/platform)`)
      }
      const dir = tempDir()
      Fs.writeFileSync(Path.join(dir, ".env"), "HOST=127.0.0.1\nPORT=0\nLOG_LEVEL=info\nSECRET_THING=s3cr3t-value\n")
      const env: Record<string, string> = {}
      for (const [k, v] of Object.entries(process.env)) {
        if (v !== undefined && !["HOST", "PORT", "LOG_LEVEL", "ENV_FILE"].includes(k)) env[k] = v
      }
      const child = ChildProcess.spawn(process.execPath, [script], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] })
      let stdout = ""
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      yield* Effect.promise(async () => {
        const deadline = Date.now() + 15_000
        while (Date.now() < deadline && !stdout.includes("listening on")) await new Promise((r) => setTimeout(r, 20))
      })
      child.kill("SIGTERM")
      expect(yield* Effect.promise(() => exited)).toBe(0)
      const lines = stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>)
      const read = lines.find((l) => String(l.message).startsWith("Read 4 variables from"))
      expect(read).toMatchObject({ env_file: Path.join(dir, ".env") })
      expect([...(read?.loaded as Array<string>)].sort()).toEqual(["HOST", "LOG_LEVEL", "PORT", "SECRET_THING"])
      expect(lines.some((l) => /listening on http:\/\/127\.0\.0\.1:\d+$/.test(String(l.message)))).toBe(true)
      expect(stdout).not.toContain("s3cr3t-value")
    }), 30_000)
})
