import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const here = Path.dirname(fileURLToPath(import.meta.url))
const script = Path.join(here, "fixtures", "sigterm-service.mjs")
const built = Path.join(here, "..", "dist", "index.js")

interface LogLine {
  readonly level: string
  readonly service: string
  readonly message: unknown
  readonly [key: string]: unknown
}

describe("ServiceKit.run in a real process", () => {
  it.live("SIGTERM: the in-flight request completes, pools are released, exit code 0, JSON logs", () =>
    Effect.gen(function*() {
      if (!Fs.existsSync(built)) {
        return yield* Effect.dieMessage(`${built} is missing: build first (pnpm build, or tsc -b packages/platform)`)
      }
      const child = ChildProcess.spawn(process.execPath, [script], {
        env: { ...process.env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", OTEL_EXPORTER_OTLP_ENDPOINT: "" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      const lines: Array<LogLine> = []
      const notJson: Array<string> = []
      let buffer = ""
      child.stdout.on("data", (chunk: Buffer) => {
        buffer += chunk.toString()
        let newline: number
        while ((newline = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, newline)
          buffer = buffer.slice(newline + 1)
          try {
            lines.push(JSON.parse(line) as LogLine)
          } catch {
            notJson.push(line)
          }
        }
      })
      let stderr = ""
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))

      const port = yield* Effect.promise(async () => {
        const deadline = Date.now() + 15_000
        while (Date.now() < deadline) {
          const listening = lines.find((l) => String(l.message).includes("listening on"))
          if (listening) return Number(/:(\d+)$/.exec(String(listening.message))![1])
          await new Promise((r) => setTimeout(r, 20))
        }
        child.kill("SIGKILL")
        throw new Error(`service did not start: ${stderr}`)
      })

      const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
        Http.get({ host: "127.0.0.1", port, path: "/slow", agent: false }, (res) => {
          let body = ""
          res.on("data", (c) => (body += c))
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
        }).on("error", reject)
      })
      yield* Effect.sleep("150 millis")
      child.kill("SIGTERM")

      const response = yield* Effect.promise(() => answer)
      expect(response).toEqual({ status: 200, body: '"done"' })
      const code = yield* Effect.promise(() => exited)
      expect(code).toBe(0)
      expect(stderr).toBe("")
      // Every line on stdout is one JSON log record.
      expect(notJson).toEqual([])

      const messages = lines.map((l) => String(l.message))
      const drain = messages.findIndex((m) => m.startsWith("Shutting down"))
      const served = messages.findIndex((m) => m === "GET /slow 200")
      const released = messages.indexOf("pool released")
      expect(drain).toBeGreaterThanOrEqual(0)
      expect(served).toBeGreaterThan(drain)
      expect(released).toBeGreaterThan(served)
      expect(lines.every((l) => l.service === "sigterm-test" && typeof l.time === "string")).toBe(true)
      expect(lines[served].request_id).toEqual(expect.any(String))
    }), 30_000)
})
