/**
 * A stand-in for the assistant, on a plain `node:http` server so the tests control timing to the
 * millisecond, for the gateway's streaming proxy:
 *
 * - `POST /api/chat`: Server-Sent Events as the assistant frames them (`data: {"type","data"}`),
 *   a token every `tokenInterval` ms, then `done` and `[DONE]`; records when it finished;
 * - `POST /api/upload`: reads the body as it arrives, recording when the first bytes came;
 * - `GET|POST|DELETE /api/echo/...`: what it was sent (method, URL, headers, body);
 * - `GET /api/status/<code>`: answers that status with a platform error body;
 * - `GET /api/hang`: never answers; `GET /api/open`: starts an answer and never ends it (records
 *   when the request's connection closed).
 */
import * as Effect from "effect/Effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface UploadRecord {
  readonly bytes: number
  /** ms since the epoch when the first body bytes arrived, and when the body ended. */
  readonly firstChunkAt: number
  readonly endedAt: number
  readonly contentType: string | undefined
}

export interface Received {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
}

export class AssistantStub {
  readonly received: Array<Received> = []
  readonly uploads: Array<UploadRecord> = []
  tokens = ["Ciao", ", ", "come ", "posso ", "aiutarti?"]
  tokenInterval = 200
  /** When the last chat stream ended (ms since the epoch). */
  chatFinishedAt: Array<number> = []
  openClosedAt: Array<number> = []
  private server: http.Server | undefined

  handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    const url = request.url ?? "/"
    this.received.push({ method: request.method ?? "", url, headers: request.headers })
    const path = url.split("?")[0]!
    if (request.method === "POST" && path === "/api/chat") return this.chat(request, response)
    if (request.method === "POST" && path === "/api/upload") return this.upload(request, response)
    if (path.startsWith("/api/echo")) return this.echo(request, response)
    const status = /^\/api\/status\/(\d{3})$/.exec(path)
    if (status !== null) {
      const code = Number(status[1])
      response.writeHead(code, { "content-type": "application/json" })
      return void response.end(JSON.stringify({ detail: `status ${code} as asked` }))
    }
    if (path === "/api/hang") return
    if (path === "/api/open") {
      request.socket.on("close", () => this.openClosedAt.push(Date.now()))
      response.writeHead(200, { "content-type": "text/event-stream" })
      return void response.write("data: {\"type\":\"meta\",\"data\":{}}\n\n")
    }
    response.writeHead(404, { "content-type": "application/json" })
    response.end(JSON.stringify({ detail: `No route for ${request.method} ${path}` }))
  }

  private chat(request: http.IncomingMessage, response: http.ServerResponse) {
    request.resume()
    request.on("end", () => {
      response.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        connection: "keep-alive",
        "x-conversation-id": "c-1"
      })
      const frame = (type: string, data: unknown) => response.write(`data: ${JSON.stringify({ type, data })}\n\n`)
      frame("meta", { conversation_id: "c-1", title: "Ciao" })
      let i = 0
      const timer = setInterval(() => {
        if (i < this.tokens.length) {
          frame("token", this.tokens[i++])
          return
        }
        clearInterval(timer)
        frame("done", null)
        response.end("data: [DONE]\n\n")
        this.chatFinishedAt.push(Date.now())
      }, this.tokenInterval)
    })
  }

  private upload(request: http.IncomingMessage, response: http.ServerResponse) {
    let bytes = 0
    let firstChunkAt = 0
    request.on("data", (chunk: Buffer) => {
      if (bytes === 0) firstChunkAt = Date.now()
      bytes += chunk.length
    })
    request.on("end", () => {
      const record = { bytes, firstChunkAt, endedAt: Date.now(), contentType: request.headers["content-type"] }
      this.uploads.push(record)
      response.writeHead(201, { "content-type": "application/json" })
      response.end(JSON.stringify({ id: "a-1", bytes }))
    })
  }

  private echo(request: http.IncomingMessage, response: http.ServerResponse) {
    const chunks: Array<Buffer> = []
    request.on("data", (c: Buffer) => chunks.push(c))
    request.on("end", () => {
      response.writeHead(200, {
        "content-type": "application/json",
        "set-cookie": "assistant=1",
        "access-control-allow-origin": "*",
        "x-assistant": "yes",
        connection: "keep-alive, x-hop",
        "x-hop": "dropped"
      })
      response.end(JSON.stringify({
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8")
      }))
    })
  }

  /** Starts the server on a random port of 127.0.0.1 (closed with the scope); answers its URL. */
  readonly start = Effect.acquireRelease(
    Effect.async<string>((resume) => {
      const server = http.createServer((req, res) => this.handle(req, res))
      this.server = server
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)))
    }),
    () => this.stop
  )

  /** Stops listening and drops every connection (the assistant is down). */
  readonly stop = Effect.async<void>((resume) => {
    const server = this.server
    if (server === undefined || !server.listening) return resume(Effect.void)
    server.close(() => resume(Effect.void))
    server.closeAllConnections()
  })
}
