/**
 * The harness's own parts, without the platform: the supervisor reports a process that dies
 * with its output, the proxy alternates and streams, the webhook check refuses what it must, and
 * the OTLP receiver decodes JSON and refuses other encodings.
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import * as OtlpReceiver from "../src/peers/OtlpReceiver.js"
import * as WebhookReceiver from "../src/peers/WebhookReceiver.js"
import * as RoundRobinProxy from "../src/RoundRobinProxy.js"
import { Supervisor } from "../src/Supervisor.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rec-e2e-harness-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const script = (name: string, source: string) => {
  const file = path.join(dir, name)
  fs.writeFileSync(file, source)
  return file
}

describe("Supervisor", () => {
  it("waits for readiness, passes only the given environment, and stops the process", async () => {
    const supervisor = new Supervisor()
    const file = script("ready.mjs", `
      import * as http from "node:http"
      const server = http.createServer((req, res) => res.writeHead(req.url === "/ready" ? 200 : 404).end())
      server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("up", process.env.GREETING, process.env.HOME ?? "no-home"))
      process.on("SIGTERM", () => server.close(() => process.exit(0)))
    `)
    const port = await new Promise<number>((resolve) => {
      const s = http.createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as AddressInfo).port
        s.close(() => resolve(p))
      })
    })
    const [managed] = await supervisor.startAll([{
      name: "ready#1",
      script: file,
      cwd: dir,
      env: { PORT: String(port), GREETING: "hello" },
      readyUrl: `http://127.0.0.1:${port}/ready`
    }], 30_000)
    expect(managed!.lines).toContain("up hello no-home")
    await supervisor.stopAll()
    expect(managed!.exit).toEqual({ code: 0, signal: null })
    expect(supervisor.exited()).toHaveLength(1)
  }, 60_000)

  it("a process that dies before it is ready fails the wait with its output", async () => {
    const supervisor = new Supervisor()
    const file = script("dies.mjs", `console.error("DATABASE_URL is not a postgresql:// URL"); process.exit(3)`)
    const managed = supervisor.start({ name: "dies#1", script: file, cwd: dir, env: {}, readyUrl: "http://127.0.0.1:9/ready" })
    await expect(supervisor.waitReady(managed, 30_000)).rejects.toThrow(/dies#1 exited before it was ready \(code 3\)[\s\S]*DATABASE_URL is not/)
    await supervisor.stopAll()
  }, 60_000)
})

describe("RoundRobinProxy", () => {
  it("sends requests to each upstream in turn and streams answers", async () => {
    const upstreams = await Promise.all([1, 2].map((n) =>
      new Promise<http.Server>((resolve) => {
        const server = http.createServer((request, response) => {
          if (request.url === "/stream") {
            response.writeHead(200, { "content-type": "text/event-stream" })
            response.write(`data: ${n}-first\n\n`)
            setTimeout(() => response.end("data: [DONE]\n\n"), 50)
          } else response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ upstream: n }))
        })
        server.listen(0, "127.0.0.1", () => resolve(server))
      })
    ))
    const proxy = await RoundRobinProxy.start(upstreams.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`))
    try {
      const answers = []
      for (let i = 0; i < 4; i++) answers.push(((await (await fetch(`${proxy.url}/x`)).json()) as { upstream: number }).upstream)
      expect(answers).toEqual([1, 2, 1, 2])
      const stream = await fetch(`${proxy.url}/stream`)
      expect(stream.headers.get("content-type")).toBe("text/event-stream")
      expect(await stream.text()).toBe("data: 1-first\n\ndata: [DONE]\n\n")
      expect(proxy.served).toEqual([3, 2])
    } finally {
      await proxy.close()
      for (const s of upstreams) s.close()
    }
  })
})

describe("WebhookReceiver.verify", () => {
  const secret = "whsec"
  const body = JSON.stringify({ type: "grid.alert" })
  const signed = (t: number, key = secret, payload = body) => ({
    headers: { "x-rec-signature": `t=${t},v1=${crypto.createHmac("sha256", key).update(`${t}.${payload}`).digest("hex")}` },
    body
  })
  const now = 1_800_000_000

  it("accepts the gateway's signature and refuses another key, another body, an old timestamp, no header", () => {
    expect(WebhookReceiver.verify(secret, signed(now), now)).toBe(true)
    expect(WebhookReceiver.verify(secret, signed(now, "other"), now)).toBe(false)
    expect(WebhookReceiver.verify(secret, signed(now, secret, "{}"), now)).toBe(false)
    expect(WebhookReceiver.verify(secret, signed(now - 301), now)).toBe(false)
    expect(WebhookReceiver.verify(secret, { headers: {}, body }, now)).toBe(false)
  })
})

describe("OtlpReceiver", () => {
  it("decodes OTLP JSON and refuses protobuf", async () => {
    const receiver = await OtlpReceiver.start()
    try {
      const request = {
        resourceSpans: [{
          resource: { attributes: [{ key: "service.name", value: { stringValue: "nudging" } }] },
          scopeSpans: [{
            spans: [{
              traceId: "0af7651916cd43dd8448eb211c80319c",
              spanId: "b7ad6b7169203331",
              parentSpanId: "",
              name: "WebPush.send",
              kind: 3,
              attributes: [{ key: "http.status", value: { intValue: "201" } }]
            }]
          }]
        }]
      }
      const ok = await fetch(`${receiver.endpoint}/v1/traces`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(request)
      })
      expect(ok.status).toBe(200)
      expect(receiver.spans).toEqual([{
        service: "nudging",
        name: "WebPush.send",
        traceId: "0af7651916cd43dd8448eb211c80319c",
        spanId: "b7ad6b7169203331",
        parentSpanId: undefined,
        kind: 3,
        attributes: { "http.status": "201" }
      }])
      const proto = await fetch(`${receiver.endpoint}/v1/traces`, {
        method: "POST",
        headers: { "content-type": "application/x-protobuf" },
        body: new Uint8Array([1, 2, 3])
      })
      expect(proto.status).toBe(415)
      expect(receiver.refused).toHaveLength(1)
    } finally {
      await receiver.close()
    }
  })
})
