/**
 * The assistant proxy (issue 16 point 7) against a local stand-in for the assistant
 * (`FakeAssistant`): Server-Sent Events delivered token by token as the assistant writes them
 * (timed: the first token arrives long before the assistant finishes), uploads streamed to the
 * assistant while the browser is still sending, the caller's token forwarded and other
 * credentials, cookies and hop-by-hop headers dropped, query strings and statuses kept, the
 * assistant down (502) or silent (504), paths that try to escape refused (400) before anything
 * is sent, and the assistant's request aborted when the browser goes away.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as http from "node:http"
import { AssistantStub } from "./support/FakeAssistant.js"
import { FlexibilityState } from "./support/FakeFlexibility.js"
import * as FakeFlexibility from "./support/FakeFlexibility.js"
import { NudgingState } from "./support/FakeNudging.js"
import * as FakeNudging from "./support/FakeNudging.js"
import { TwinState } from "./support/FakeTwin.js"
import { baseUrl, gatewayLayer, rawRequest, token } from "./support/Harness.js"

const assistant = new AssistantStub()
const clients = Layer.mergeAll(new TwinState().layer(), FakeNudging.clientLayer(new NudgingState()), FakeFlexibility.clientLayer(new FlexibilityState()))

const gateway = gatewayLayer(() =>
  Effect.map(assistant.start, (url) => ({
    clients,
    env: { ASSISTANT_URL: url, ASSISTANT_TIMEOUT: "800 millis" }
  }))
)

interface Chunk {
  readonly at: number
  readonly text: string
}

interface Streamed {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly startedAt: number
  readonly chunks: ReadonlyArray<Chunk>
}

/** A request whose answer is recorded chunk by chunk with the time each arrived. */
const streamed = (base: string, method: string, path: string, headers: Record<string, string>, body?: string) =>
  Effect.async<Streamed>((resume) => {
    const url = new URL(base)
    const startedAt = Date.now()
    const request = http.request({ host: url.hostname, port: url.port, method, path, headers }, (response) => {
      const chunks: Array<Chunk> = []
      response.setEncoding("utf8")
      response.on("data", (text: string) => chunks.push({ at: Date.now(), text }))
      response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, headers: response.headers, startedAt, chunks })))
    })
    request.on("error", (error) => resume(Effect.die(error)))
    request.end(body)
  })

/** Sends `parts` of a body with `pause` ms between them; answers the upload record and when the last part left. */
const slowUpload = (base: string, path: string, headers: Record<string, string>, parts: ReadonlyArray<Buffer>, pause: number) =>
  Effect.async<{ readonly status: number; readonly body: string; readonly lastPartAt: number }>((resume) => {
    const url = new URL(base)
    let lastPartAt = 0
    const request = http.request({ host: url.hostname, port: url.port, method: "POST", path, headers }, (response) => {
      let body = ""
      response.setEncoding("utf8")
      response.on("data", (t: string) => (body += t))
      response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, body, lastPartAt })))
    })
    request.on("error", (error) => resume(Effect.die(error)))
    let i = 0
    const next = () => {
      request.write(parts[i]!)
      i++
      if (i < parts.length) setTimeout(next, pause)
      else {
        lastPartAt = Date.now()
        request.end()
      }
    }
    next()
  })

const tokenFrames = (chunks: ReadonlyArray<Chunk>) => {
  const out: Array<{ readonly at: number; readonly token: string }> = []
  for (const chunk of chunks) {
    for (const line of chunk.text.split("\n")) {
      if (!line.startsWith("data: {")) continue
      const frame = JSON.parse(line.slice(6)) as { type: string; data: unknown }
      if (frame.type === "token") out.push({ at: chunk.at, token: frame.data as string })
    }
  }
  return out
}

layer(gateway, { excludeTestServices: true, timeout: "60 seconds" })("assistant proxy", (it) => {
  it.effect("streams the chat token by token as the assistant writes it, not when it has finished", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const t = yield* token("participant")
      // Warm the gateway's connection to the assistant so the timing below is the stream's alone.
      yield* streamed(base, "GET", "/api/assistant/echo", { "x-auth-request-access-token": t })
      const reply = yield* streamed(base, "POST", "/api/assistant/chat?lang=it", {
        "x-auth-request-access-token": t,
        "content-type": "application/json",
        accept: "text/event-stream"
      }, JSON.stringify({ message: "Ciao" }))
      expect(reply.status).toBe(200)
      expect(reply.headers["content-type"]).toBe("text/event-stream; charset=utf-8")
      expect(reply.headers["x-accel-buffering"]).toBe("no")
      expect(reply.headers["x-conversation-id"]).toBe("c-1")

      const tokens = tokenFrames(reply.chunks)
      expect(tokens.map((f) => f.token)).toEqual(assistant.tokens)
      const finishedAt = assistant.chatFinishedAt.at(-1)!
      // The first token left the assistant 200 ms after the start and the stream ended after 1.2 s:
      // a buffering proxy would deliver everything at the end.
      expect(tokens[0]!.at).toBeLessThan(finishedAt - 600)
      expect(tokens[0]!.at - reply.startedAt).toBeLessThan(600)
      // Each token in its own delivery, about 200 ms apart.
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]!.at - tokens[i - 1]!.at).toBeGreaterThan(100)
      const text = reply.chunks.map((c) => c.text).join("")
      expect(text.endsWith("data: {\"type\":\"done\",\"data\":null}\n\ndata: [DONE]\n\n")).toBe(true)
    }))

  it.effect("forwards the caller's token as a bearer token, keeps the query, drops credentials, cookies and hop-by-hop headers", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const t = yield* token("participant")
      const reply = yield* rawRequest(base, "GET", "/api/assistant/echo/conversations/c-1/messages?limit=5&limit=6&q=a%20b", {
        "x-auth-request-access-token": t,
        authorization: "Bearer something-else",
        cookie: "_oauth2_proxy=secret",
        connection: "keep-alive, x-hop",
        "x-hop": "never forwarded",
        "accept-language": "it-IT",
        "x-request-id": "req-abc-123"
      })
      expect(reply.status).toBe(200)
      const seen = reply.body as { method: string; url: string; headers: Record<string, string> }
      expect(seen.method).toBe("GET")
      const url = new URL(seen.url, "http://x")
      expect(url.pathname).toBe("/api/echo/conversations/c-1/messages")
      expect([...url.searchParams.entries()]).toEqual([["limit", "5"], ["limit", "6"], ["q", "a b"]])
      expect(seen.headers.authorization).toBe(`Bearer ${t}`)
      expect(seen.headers["x-auth-request-access-token"]).toBeUndefined()
      expect(seen.headers.cookie).toBeUndefined()
      expect(seen.headers["x-hop"]).toBeUndefined()
      expect(seen.headers["accept-language"]).toBe("it-IT")
      expect(seen.headers["x-forwarded-for"]).toBe("127.0.0.1")
      // One request id from the browser through the gateway to the assistant.
      expect(seen.headers["x-request-id"]).toBe("req-abc-123")
      expect(reply.headers["x-request-id"]).toBe("req-abc-123")
      // The answer's own headers pass; cookies, CORS and hop-by-hop ones do not.
      expect(reply.headers["x-assistant"]).toBe("yes")
      expect(reply.headers["set-cookie"]).toBeUndefined()
      expect(reply.headers["access-control-allow-origin"]).toBeUndefined()
      expect(reply.headers["x-hop"]).toBeUndefined()
    }))

  it.effect("passes JSON bodies and DELETEs; the assistant's status is kept", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const t = yield* token("participant")
      const posted = yield* rawRequest(base, "POST", "/api/assistant/echo", {
        "x-auth-request-access-token": t,
        "content-type": "application/json"
      }, JSON.stringify({ message: "Quanto ho risparmiato?" }))
      expect(JSON.parse((posted.body as { body: string }).body)).toEqual({ message: "Quanto ho risparmiato?" })
      const deleted = yield* rawRequest(base, "DELETE", "/api/assistant/echo/conversations/c-1", { "x-auth-request-access-token": t })
      expect((deleted.body as { method: string }).method).toBe("DELETE")
      for (const code of [201, 404, 409, 418, 500]) {
        const reply = yield* rawRequest(base, "GET", `/api/assistant/status/${code}`, { "x-auth-request-access-token": t })
        expect(reply.status).toBe(code)
        expect(reply.body).toEqual({ detail: `status ${code} as asked` })
      }
    }))

  it.effect("streams an upload to the assistant while the browser is still sending it", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const t = yield* token("participant")
      const boundary = "----rec-boundary-7MA4YWxkTrZu0gW"
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bolletta.pdf"\r\n` +
          "Content-Type: application/pdf\r\n\r\n"
      )
      const first = Buffer.concat([head, Buffer.alloc(150_000, 1)])
      const second = Buffer.concat([Buffer.alloc(150_000, 2), Buffer.from(`\r\n--${boundary}--\r\n`)])
      const total = first.length + second.length
      const reply = yield* slowUpload(base, "/api/assistant/upload", {
        "x-auth-request-access-token": t,
        "content-type": `multipart/form-data; boundary=${boundary}`,
        "content-length": String(total)
      }, [first, second], 500)
      expect(reply.status).toBe(201)
      expect(JSON.parse(reply.body)).toEqual({ id: "a-1", bytes: total })
      const upload = assistant.uploads.at(-1)!
      expect(upload.bytes).toBe(total)
      expect(upload.contentType).toBe(`multipart/form-data; boundary=${boundary}`)
      // The assistant had the first part half a second before the browser sent the second.
      expect(upload.firstChunkAt).toBeLessThan(reply.lastPartAt - 250)

      // Without a length (chunked), the same.
      const chunked = yield* slowUpload(base, "/api/assistant/upload", {
        "x-auth-request-access-token": t,
        "content-type": `multipart/form-data; boundary=${boundary}`
      }, [first, second], 500)
      expect(chunked.status).toBe(201)
      expect(assistant.uploads.at(-1)!.bytes).toBe(total)
      expect(assistant.uploads.at(-1)!.firstChunkAt).toBeLessThan(chunked.lastPartAt - 250)
    }))

  it.effect("refuses paths that try to leave /api/, before sending anything", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const t = yield* token("participant")
      const before = assistant.received.length
      for (
        const path of [
          "/api/assistant/../admin/uploads",
          "/api/assistant/%2e%2e/admin/uploads",
          "/api/assistant/%2E%2e/%2e%2E/health",
          "/api/assistant/conversations/..%2f..%2fadmin",
          "/api/assistant/conversations%2F..%2Fadmin",
          "/api/assistant/%252e%252e/admin",
          "/api/assistant/a%5c..%5cadmin",
          "/api/assistant/./chat",
          "/api/assistant//chat"
        ]
      ) {
        const reply = yield* rawRequest(base, "GET", path, { "x-auth-request-access-token": t })
        expect(reply.status, path).toBe(400)
        expect((reply.body as { detail: string }).detail, path).toMatch(/^The assistant path /)
      }
      expect(assistant.received.length).toBe(before)
    }))

  it.effect("needs the caller's token and the gateway's policy, as every route", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const before = assistant.received.length
      const anonymous = yield* rawRequest(base, "GET", "/api/assistant/echo")
      expect(anonymous.status).toBe(401)
      expect(anonymous.body).toEqual({ detail: "Missing bearer token" })
      expect(anonymous.headers["www-authenticate"]).toBe("Bearer")
      const forged = yield* rawRequest(base, "GET", "/api/assistant/echo", { "x-auth-request-access-token": "a.b.c" })
      expect(forged.status).toBe(401)
      const service = yield* rawRequest(base, "POST", "/api/assistant/chat", {
        "x-auth-request-access-token": yield* token("svc-assistant"),
        "content-type": "application/json"
      }, "{}")
      expect(service.status).toBe(403)
      expect(assistant.received.length).toBe(before)
    }))

  it.effect("checks a JSON body as every JSON endpoint does", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const headers = { "x-auth-request-access-token": yield* token("participant"), "content-type": "application/json" }
      const invalid = yield* rawRequest(base, "POST", "/api/assistant/chat", headers, "{\"message\": ")
      expect(invalid.status).toBe(400)
      expect((invalid.body as { detail: string }).detail).toMatch(/^The request body is not valid JSON/)
      const deep = yield* rawRequest(base, "POST", "/api/assistant/chat", headers, "[".repeat(1000) + "]".repeat(1000))
      expect(deep.status).toBe(400)
      expect(deep.body).toEqual({
        detail: "The request body nests arrays and objects deeper than 64 levels, the most this service accepts"
      })
    }))

  it.effect("aborts the assistant's request when the browser goes away", () =>
    Effect.gen(function*() {
      const base = new URL(yield* baseUrl)
      const t = yield* token("participant")
      const closedBefore = assistant.openClosedAt.length
      const leftAt = yield* Effect.async<number>((resume) => {
        const request = http.request({
          host: base.hostname,
          port: base.port,
          method: "GET",
          path: "/api/assistant/open",
          headers: { "x-auth-request-access-token": t }
        }, (response) => {
          response.once("data", () => {
            request.destroy()
            resume(Effect.succeed(Date.now()))
          })
        })
        request.end()
      })
      const deadline = Date.now() + 3_000
      while (assistant.openClosedAt.length === closedBefore && Date.now() < deadline) yield* Effect.sleep("20 millis")
      expect(assistant.openClosedAt.length).toBe(closedBefore + 1)
      expect(assistant.openClosedAt.at(-1)! - leftAt).toBeLessThan(2_000)
    }))

  it.effect("an assistant that does not start answering in time is a 504", () =>
    Effect.gen(function*() {
      const reply = yield* rawRequest(yield* baseUrl, "GET", "/api/assistant/hang", {
        "x-auth-request-access-token": yield* token("participant")
      })
      expect(reply.status).toBe(504)
      expect(reply.body).toEqual({ detail: "Assistant did not answer GET /api/hang within 800ms" })
    }))

  it.effect("an assistant that is down is a 502", () =>
    Effect.gen(function*() {
      yield* assistant.stop
      const reply = yield* rawRequest(yield* baseUrl, "GET", "/api/assistant/echo", {
        "x-auth-request-access-token": yield* token("participant")
      })
      expect(reply.status).toBe(502)
      expect((reply.body as { detail: string }).detail).toMatch(/^Assistant is unreachable: /)
    }))
})
