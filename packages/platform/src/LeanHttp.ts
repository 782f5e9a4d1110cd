/**
 * A lean `HttpClient` for services whose requests are mostly calls to other services with small,
 * in-memory bodies (the gateways: every grid route is one digital-twin call, every overview four;
 * docs/performance.md, "Grid gateway"), so what the client costs per call is paid on every
 * request. Effect's undici client (`NodeHttpClient`) goes
 * through undici's `request` API (a body stream, an abort signal and its listener), registers
 * each response with a `FinalizationRegistry`, wraps it for interruption, and reads the body
 * through a promise, a cached effect and a fiber of its own. Here, with tracing off (no client
 * span to make, as `OutboundHttp` does then), calls with an empty or in-memory body go to
 * undici's `dispatch` with a plain handler instead: the answer is collected into one buffer and
 * the call resumes once, with the response in memory; interrupting the call aborts the request.
 * Same undici agent and keep-alive pool (one per origin, a connection per concurrent call), same
 * request (method, URL, headers, body) on the wire. Anything else (a streamed or form-data body)
 * and every call with tracing on take Effect's client, which builds the client span.
 *
 * Answers are bounded (`maxResponseBytes`): the digital twin's largest is a few megabytes, and a
 * buffered client must not hold an unbounded one in memory.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Undici from "@effect/platform-node/Undici"
import * as Cookies from "@effect/platform/Cookies"
import * as Headers from "@effect/platform/Headers"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as UrlParams from "@effect/platform/UrlParams"
import * as OutboundHttp from "./OutboundHttp.js"
import * as Tracing from "./Tracing.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Inspectable from "effect/Inspectable"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

/** The largest answer read into memory (64 MiB); a longer one fails the call. */
export const maxResponseBytes = 64 * 1024 * 1024

/** A response whose body has been read: `arrayBuffer`, `text`, `json` answer without I/O. */
class BufferedResponse extends Inspectable.Class implements HttpClientResponse.HttpClientResponse {
  readonly [HttpClientResponse.TypeId]: HttpClientResponse.TypeId = HttpClientResponse.TypeId
  readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId
  private parsedHeaders: Headers.Headers | undefined

  constructor(
    readonly request: HttpClientRequest.HttpClientRequest,
    readonly status: number,
    /** undici's raw headers: name, value, name, value, ... */
    private readonly rawHeaders: ReadonlyArray<Buffer | string>,
    private readonly body: Uint8Array<ArrayBuffer>
  ) {
    super()
  }

  /** Parsed when first asked for: the typed client only looks at the status and the body. */
  get headers(): Headers.Headers {
    if (this.parsedHeaders === undefined) {
      const record: Record<string, string | Array<string>> = {}
      for (let i = 0; i + 1 < this.rawHeaders.length; i += 2) {
        const name = this.rawHeaders[i]!.toString().toLowerCase()
        const value = this.rawHeaders[i + 1]!.toString()
        const previous = record[name]
        record[name] = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value]
      }
      this.parsedHeaders = Headers.fromInput(record)
    }
    return this.parsedHeaders
  }

  get cookies(): Cookies.Cookies {
    const setCookies: Array<string> = []
    for (let i = 0; i + 1 < this.rawHeaders.length; i += 2) {
      if (this.rawHeaders[i]!.toString().toLowerCase() === "set-cookie") setCookies.push(this.rawHeaders[i + 1]!.toString())
    }
    return setCookies.length === 0 ? Cookies.empty : Cookies.fromSetCookie(setCookies)
  }

  get remoteAddress(): Option.Option<string> {
    return Option.none()
  }

  private decodeError(cause: unknown) {
    return new HttpClientError.ResponseError({ request: this.request, response: this, reason: "Decode", cause })
  }

  get arrayBuffer(): Effect.Effect<ArrayBuffer> {
    return Effect.succeed(this.body.buffer)
  }

  get text(): Effect.Effect<string, HttpClientError.ResponseError> {
    return Effect.try({ try: () => new TextDecoder().decode(this.body), catch: (cause) => this.decodeError(cause) })
  }

  get json(): Effect.Effect<unknown, HttpClientError.ResponseError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({ try: () => (text === "" ? null : JSON.parse(text)), catch: (cause) => this.decodeError(cause) }))
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpClientError.ResponseError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({ try: () => UrlParams.fromInput(new URLSearchParams(text)), catch: (cause) => this.decodeError(cause) }))
  }

  get formData(): Effect.Effect<FormData, HttpClientError.ResponseError> {
    return Effect.tryPromise({
      try: () => new Response(this.body, { headers: { "content-type": this.headers["content-type"] ?? "" } }).formData(),
      catch: (cause) => this.decodeError(cause)
    })
  }

  get stream(): Stream.Stream<Uint8Array, HttpClientError.ResponseError> {
    return Stream.succeed(this.body)
  }

  toJSON(): unknown {
    return HttpIncomingMessage.inspect(this, {
      _id: "@effect/platform/HttpClientResponse",
      request: this.request.toJSON(),
      status: this.status
    })
  }
}

/** The body as undici takes it, or `undefined` when it is not in memory (the full client sends it). */
const bodyOf = (body: HttpClientRequest.HttpClientRequest["body"]): string | Uint8Array | null | undefined => {
  switch (body._tag) {
    case "Empty":
      return null
    case "Uint8Array":
      return body.body
    case "Raw":
      return typeof body.body === "string" || body.body instanceof Uint8Array ? body.body : undefined
    default:
      return undefined
  }
}

const concat = (chunks: ReadonlyArray<Buffer>, length: number): Uint8Array<ArrayBuffer> => {
  const bytes = new Uint8Array(new ArrayBuffer(length))
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.length
  }
  return bytes
}

/** One call through `dispatch`: resumes once, with the whole answer or the transport's error. */
const dispatch = (
  dispatcher: Undici.Dispatcher,
  request: HttpClientRequest.HttpClientRequest,
  url: URL,
  body: string | Uint8Array | null
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.RequestError> =>
  Effect.async<HttpClientResponse.HttpClientResponse, HttpClientError.RequestError>((resume) => {
    const transportError = (cause: unknown) => new HttpClientError.RequestError({ request, reason: "Transport", cause })
    let abort: ((reason?: Error) => void) | undefined
    let done = false
    let status = 0
    let rawHeaders: ReadonlyArray<Buffer | string> = []
    const chunks: Array<Buffer> = []
    let length = 0
    dispatcher.dispatch(
      {
        method: request.method as Undici.Dispatcher.HttpMethod,
        origin: url.origin,
        path: url.pathname + url.search,
        headers: request.headers,
        body,
        // As Effect's client: timeouts are the caller's (`Effect.timeout`), not the transport's.
        headersTimeout: 60 * 60 * 1000,
        bodyTimeout: 0
      },
      {
        onConnect: (abortRequest: (reason?: Error) => void) => {
          abort = abortRequest
        },
        onHeaders: (statusCode: number, headers: Array<Buffer>) => {
          status = statusCode
          rawHeaders = headers
          return true
        },
        onData: (chunk: Buffer) => {
          length += chunk.length
          if (length > maxResponseBytes) {
            abort?.(new Error(`the answer is longer than ${maxResponseBytes} bytes`))
            return false
          }
          chunks.push(chunk)
          return true
        },
        onComplete: () => {
          if (done) return
          done = true
          resume(Effect.succeed(new BufferedResponse(request, status, rawHeaders, concat(chunks, length))))
        },
        onError: (error: Error) => {
          if (done) return
          done = true
          resume(Effect.fail(transportError(error)))
        }
      } as Undici.Dispatcher.DispatchHandler
    )
    return Effect.sync(() => {
      if (done) return
      done = true
      abort?.(new Error("the call was interrupted"))
    })
  })

/**
 * A client on `dispatcher` for calls with an in-memory body; `fallback` (Effect's undici client
 * on the same dispatcher) for the others.
 */
export const make = (dispatcher: Undici.Dispatcher): HttpClient.HttpClient => {
  const fallback = NodeHttpClient.makeUndici(dispatcher)
  return HttpClient.makeWith<never, never, HttpClientError.HttpClientError, never>(
    (prepared) =>
      Effect.flatMap(prepared, (request) => {
        const body = bodyOf(request.body)
        if (body === undefined) return fallback.execute(request)
        const url = UrlParams.makeUrl(request.url, request.urlParams, request.hash)
        if (url._tag === "Left") {
          return Effect.fail(new HttpClientError.RequestError({ request, reason: "InvalidUrl", cause: url.left }))
        }
        return dispatch(dispatcher, request, url.right, body)
      }),
    Effect.succeed
  )
}

/** The lean client on an undici agent of its own, closed with the layer. */
export const layer: Layer.Layer<HttpClient.HttpClient> = Layer.scoped(
  HttpClient.HttpClient,
  Effect.map(
    Effect.acquireRelease(Effect.sync(() => new Undici.Agent()), (agent) => Effect.promise(() => agent.destroy())),
    make
  )
)

/**
 * A service's outbound client: with tracing on, `OutboundHttp.layer` (Effect's client and its
 * client spans); off, the lean client with `OutboundHttp`'s request id and incoming
 * `traceparent` (the lean client makes no span, so nothing needs switching off per call).
 */
export const outboundLayer: Layer.Layer<HttpClient.HttpClient> = Layer.unwrapEffect(
  Effect.map(Tracing.TracingEnabled, (tracing) =>
    tracing
      ? OutboundHttp.layer
      : Layer.map(layer, (context) =>
        Context.add(
          context,
          HttpClient.HttpClient,
          OutboundHttp.withRequestId(OutboundHttp.withIncomingTraceparent(Context.get(context, HttpClient.HttpClient)))
        )))
)
