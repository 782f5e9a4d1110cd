/**
 * The lean `HttpClient` (`LeanHttp`) against a plain node:http server: the request as
 * sent (method, path, query, headers, body), the answer (status, headers, body as bytes, text
 * and JSON), a streamed body through the fallback client, transport failures, an answer over the
 * size bound, and interruption aborting the request.
 */
import { expect, it } from "@effect/vitest"
import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as LeanHttp from "../src/LeanHttp.js"

interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/** A server answering with `answer`, recording what it received; closed with the scope. */
const server = (answer: (seen: Seen, response: http.ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.async<{
      readonly url: string
      readonly seen: Array<Seen>
      readonly closed: Array<string>
      readonly server: http.Server
    }>((resume) => {
      const seen: Array<Seen> = []
      const closed: Array<string> = []
      const s = http.createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          const entry = { method: request.method ?? "", url: request.url ?? "", headers: request.headers, body: Buffer.concat(chunks).toString() }
          seen.push(entry)
          response.on("close", () => {
            if (!response.writableFinished) closed.push(entry.url)
          })
          answer(entry, response)
        })
      })
      s.listen(0, "127.0.0.1", () => {
        resume(Effect.succeed({ url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, seen, closed, server: s }))
      })
    }),
    (value) =>
      Effect.async<void>((resume) => {
        value.server.closeAllConnections()
        value.server.close(() => resume(Effect.void))
      })
  )

const withClient = <A, E>(f: (client: HttpClient.HttpClient) => Effect.Effect<A, E>) =>
  Effect.flatMap(HttpClient.HttpClient, f).pipe(Effect.provide(LeanHttp.layer))

it.scoped("sends the request as built and reads the answer", () =>
  Effect.gen(function*() {
    const { seen, url } = yield* server((_seen, response) => {
      response.setHeader("set-cookie", ["a=1; Path=/", "b=2; Expires=Wed, 21 Oct 2037 07:28:00 GMT"])
      response.writeHead(201, { "content-type": "application/json", "x-one": "1" })
      response.end(JSON.stringify({ ok: true, text: "àé" }))
    })
    const result = yield* withClient((client) =>
      Effect.gen(function*() {
        const response = yield* client.execute(
          HttpClientRequest.post(`${url}/grid/n1/values/risks`).pipe(
            HttpClientRequest.setUrlParam("a", "b c"),
            HttpClientRequest.setHeader("authorization", "Bearer t"),
            HttpClientRequest.bodyUnsafeJson({ payload: { dates: ["2026-01-01"] } })
          )
        )
        return {
          status: response.status,
          cookies: Object.keys(response.cookies.cookies).sort(),
          headers: response.headers,
          json: yield* response.json,
          text: yield* response.text,
          bytes: new Uint8Array(yield* response.arrayBuffer).length
        }
      })
    )
    expect(result.status).toBe(201)
    expect(result.cookies).toEqual(["a", "b"])
    expect(result.headers["content-type"]).toBe("application/json")
    expect(result.headers["x-one"]).toBe("1")
    expect(result.json).toEqual({ ok: true, text: "àé" })
    expect(result.text).toBe(JSON.stringify({ ok: true, text: "àé" }))
    expect(result.bytes).toBe(Buffer.byteLength(result.text))
    expect(seen).toHaveLength(1)
    expect(seen[0]!.method).toBe("POST")
    expect(seen[0]!.url).toBe("/grid/n1/values/risks?a=b+c")
    expect(seen[0]!.headers["authorization"]).toBe("Bearer t")
    expect(seen[0]!.headers["content-type"]).toBe("application/json")
    expect(JSON.parse(seen[0]!.body)).toEqual({ payload: { dates: ["2026-01-01"] } })
  }))

it.scoped("an empty answer; a GET without a body; a streamed body through the fallback client", () =>
  Effect.gen(function*() {
    const { seen, url } = yield* server((entry, response) => {
      response.writeHead(entry.method === "GET" ? 204 : 200)
      response.end(entry.method === "GET" ? undefined : `got ${entry.body}`)
    })
    const [empty, streamed] = yield* withClient((client) =>
      Effect.all([
        Effect.flatMap(client.get(`${url}/empty`), (r) => Effect.map(r.text, (text) => [r.status, text] as const)),
        Effect.flatMap(
          client.execute(
            HttpClientRequest.post(`${url}/stream`).pipe(
              HttpClientRequest.setBody(HttpBody.stream(Stream.make(new TextEncoder().encode("a"), new TextEncoder().encode("b"))))
            )
          ),
          (r) => Effect.map(r.text, (text) => [r.status, text] as const)
        )
      ])
    )
    expect(empty).toEqual([204, ""])
    expect(streamed).toEqual([200, "got ab"])
    expect(seen.map((s) => s.method)).toEqual(["GET", "POST"])
  }))

it.scoped("nothing listening: a transport RequestError", () =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(withClient((client) => client.get("http://127.0.0.1:9/x")))
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) {
      const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
      expect(error).toMatchObject({ _tag: "RequestError", reason: "Transport" })
    }
  }))

it.scoped("an answer over the size bound fails instead of being held in memory", () =>
  Effect.gen(function*() {
    const { url } = yield* server((_entry, response) => {
      response.writeHead(200, { "content-type": "application/octet-stream" })
      const chunk = Buffer.alloc(1024 * 1024)
      let sent = 0
      const more = () => {
        while (sent < 80) {
          sent++
          if (!response.write(chunk)) return void response.once("drain", more)
        }
        response.end()
      }
      more()
    })
    const exit = yield* Effect.exit(withClient((client) => client.get(`${url}/big`)))
    expect(Exit.isFailure(exit)).toBe(true)
  }))

it.scoped("interrupting a call aborts the request", () =>
  Effect.gen(function*() {
    const received = yield* Deferred.make<void>()
    const { closed, url } = yield* server(() => {
      Deferred.unsafeDone(received, Exit.void)
      // never answers
    })
    yield* withClient((client) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.fork(client.get(`${url}/hang`))
        yield* Deferred.await(received)
        yield* Fiber.interrupt(fiber)
      })
    )
    // The server sees the connection go away.
    yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 200)))
    expect(closed).toEqual(["/hang"])
  }))
