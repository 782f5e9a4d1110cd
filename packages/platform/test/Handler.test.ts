/**
 * The kit's own request handler (`RequestHandler`, `ServerRequest`, `ResponseWriter`): what the
 * platform's handler did and routes rely on, checked on the socket.
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { describe, expect, layer } from "@effect/vitest"
import { ServiceKit } from "@rec/platform"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Http from "node:http"
import { ExampleApi, ItemsLive } from "./fixtures/ExampleApi.js"
import { eventually } from "./fixtures/Recorder.js"

const service = { name: "example", version: "1.2.3" }

/** Set by the `/hang` route when its handler is interrupted. */
const interrupted = Effect.runSync(Deferred.make<void>())

const Routes = Layer.mergeAll(
  // Every view of the body, twice: it is read once and shared.
  HttpLayerRouter.add("POST", "/echo", (request) =>
    Effect.gen(function*() {
      const text = yield* request.text
      const json = yield* request.json
      const bytes = yield* request.arrayBuffer
      const again = yield* request.text
      return HttpServerResponse.unsafeJson({ text, json, bytes: bytes.byteLength, same: text === again })
    })),
  // A route with a smaller limit than the kit's (the body is read ahead under the kit's).
  HttpLayerRouter.add(
    "POST",
    "/small",
    HttpServerRequest.HttpServerRequest.pipe(
      Effect.flatMap((request) => request.text),
      Effect.map((text) => HttpServerResponse.text(text)),
      HttpServerRequest.withMaxBodySize(Option.some(8))
    )
  ),
  HttpLayerRouter.add("POST", "/form", (request) =>
    Effect.map(request.urlParamsBody, (params) => HttpServerResponse.unsafeJson(params))),
  HttpLayerRouter.add(
    "GET",
    "/stream",
    Effect.succeed(HttpServerResponse.stream(
      Stream.fromChunk(Chunk.make("one ", "two ", "three")).pipe(Stream.encodeText),
      { contentType: "text/plain" }
    ))
  ),
  HttpLayerRouter.add(
    "GET",
    "/challenge",
    Effect.zipRight(
      HttpApp.appendPreResponseHandler((_request, response) =>
        Effect.succeed(HttpServerResponse.setHeader(response, "www-authenticate", "Bearer"))),
      Effect.succeed(HttpServerResponse.unsafeJson({ detail: "who are you" }, { status: 401 }))
    )
  ),
  HttpLayerRouter.add("GET", "/hang", Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))),
  HttpLayerRouter.add("GET", "/scoped", Effect.gen(function*() {
    // A route may use the request's scope; it is closed after the response.
    yield* Effect.addFinalizer(() => Effect.void)
    const request = yield* HttpServerRequest.HttpServerRequest
    return HttpServerResponse.text(`scoped ${request.url}`)
  }))
)

interface RawAnswer {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

/** A request written by hand, so the test controls framing (chunked bodies) and sees the socket. */
const raw = (
  port: number,
  options: { method: string; path: string; headers?: Record<string, string>; chunks?: ReadonlyArray<string> }
) =>
  Effect.async<RawAnswer, Error>((resume) => {
    const request = Http.request(
      { host: "127.0.0.1", port, method: options.method, path: options.path, headers: options.headers, agent: false },
      (response) => {
        let body = ""
        response.on("data", (chunk) => (body += chunk))
        response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, headers: response.headers, body })))
      }
    )
    request.on("error", (error) => resume(Effect.fail(error)))
    for (const chunk of options.chunks ?? []) request.write(chunk)
    request.end()
  })

/** Access log lines: status by path. */
const accessLines: Array<{ path: unknown; status: unknown }> = []
const CaptureLogs = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ annotations }) => {
    const fields = Object.fromEntries(HashMap.toEntries(annotations))
    if (fields["http.status"] !== undefined) accessLines.push({ path: fields["http.path"], status: fields["http.status"] })
  })
)

const port = Effect.map(HttpServer.HttpServer, (server) => server.address._tag === "TcpAddress" ? server.address.port : 0)

describe("the kit's request handler", () => {
  layer(
    ServiceKit.serveTest(ExampleApi, { service, port: 0, maxBodySize: 64, routes: Routes }).pipe(
      Layer.provide(ItemsLive),
      Layer.provide(CaptureLogs)
    ),
    { excludeTestServices: true }
  )("on the socket", (it) => {
    it.effect("text, JSON, bytes and form bodies are views of one read", () =>
      Effect.gen(function*() {
        const p = yield* port
        const echo = yield* raw(p, { method: "POST", path: "/echo", headers: { "content-type": "application/json" }, chunks: ['{"a":', "1}"] })
        expect(echo.status).toBe(200)
        expect(JSON.parse(echo.body)).toEqual({ text: '{"a":1}', json: { a: 1 }, bytes: 7, same: true })
        const form = yield* raw(p, {
          method: "POST",
          path: "/form",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          chunks: ["a=1&b=two"]
        })
        expect(JSON.parse(form.body)).toEqual([["a", "1"], ["b", "two"]])
      }))

    it.effect("a chunked body growing over the limit is a 413 and the connection is closed", () =>
      Effect.gen(function*() {
        const p = yield* port
        const answer = yield* raw(p, {
          method: "POST",
          path: "/echo",
          headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
          chunks: ['{"x":"', "y".repeat(40), "z".repeat(40), '"}']
        })
        expect(answer.status).toBe(413)
        expect(answer.headers.connection).toBe("close")
        expect(String(JSON.parse(answer.body).detail)).toMatch(/^The request body is larger than \d+ bytes/)
        // A declared length over the limit is refused without reading the body.
        const declared = yield* raw(p, {
          method: "POST",
          path: "/echo",
          headers: { "content-type": "application/json", "content-length": "100" },
          chunks: ["x".repeat(100)]
        })
        expect(declared.status).toBe(413)
        // A route's own smaller limit holds for a body the kit read ahead.
        const small = yield* raw(p, { method: "POST", path: "/small", headers: { "content-type": "text/plain" }, chunks: ["12345678"] })
        expect(small).toMatchObject({ status: 200, body: "12345678" })
        const over = yield* raw(p, { method: "POST", path: "/small", headers: { "content-type": "text/plain" }, chunks: ["123456789"] })
        expect(over.status).toBe(413)
      }))

    it.effect("stream bodies, HEAD and the request's scope", () =>
      Effect.gen(function*() {
        const p = yield* port
        const streamed = yield* raw(p, { method: "GET", path: "/stream" })
        expect(streamed).toMatchObject({ status: 200, body: "one two three" })
        expect(streamed.headers["x-request-id"]).toEqual(expect.any(String))
        const head = yield* raw(p, { method: "HEAD", path: "/items/1" })
        expect(head).toMatchObject({ status: 200, body: "" })
        const scoped = yield* raw(p, { method: "GET", path: "/scoped?x=1" })
        expect(scoped).toMatchObject({ status: 200, body: "scoped /scoped?x=1" })
      }))

    it.effect("pre-response handlers of a route apply to its response", () =>
      Effect.gen(function*() {
        const answer = yield* raw(yield* port, { method: "GET", path: "/challenge" })
        expect(answer.status).toBe(401)
        expect(answer.headers["www-authenticate"]).toBe("Bearer")
      }))

    it.effect("a client that goes away in the middle of its body leaves nothing behind", () =>
      Effect.gen(function*() {
        const p = yield* port
        const request = Http.request({
          host: "127.0.0.1",
          port: p,
          method: "POST",
          path: "/echo",
          headers: { "content-type": "application/json", "content-length": "40" },
          agent: false
        })
        request.on("error", () => undefined)
        request.write('{"half":')
        yield* Effect.sleep("50 millis")
        accessLines.length = 0
        request.destroy()
        // Logged as closed by the client (499), nothing sent; the server answers the next request.
        yield* eventually(() => accessLines.length > 0 ? true : undefined)
        expect(accessLines).toEqual([{ path: "/echo", status: 499 }])
        const next = yield* raw(p, { method: "POST", path: "/echo", headers: { "content-type": "application/json" }, chunks: ["{}"] })
        expect(next.status).toBe(200)
      }))

    it.effect("a client that goes away interrupts its handler", () =>
      Effect.gen(function*() {
        const p = yield* port
        const request = Http.request({ host: "127.0.0.1", port: p, method: "GET", path: "/hang", agent: false })
        request.on("error", () => undefined)
        request.end()
        yield* Effect.sleep("100 millis")
        request.destroy()
        yield* Deferred.await(interrupted).pipe(Effect.timeout("2 seconds"))
        yield* eventually(() => true)
      }))
  })
})
