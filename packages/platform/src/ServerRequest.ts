/**
 * The kit's `HttpServerRequest` for Node requests: what handlers see as `HttpServerRequest`.
 *
 * `@effect/platform-node` reads request bodies through a generic stream reader (a cached
 * effect run with `runSync`, a `Stream` of chunks, string concatenation), which cost about as
 * much as the rest of a small JSON request (docs/performance.md). Here the body is collected
 * from the Node stream into one `Buffer`, once per request, and `text`, `json`, `urlParamsBody`
 * and `arrayBuffer` are views of it. The limit is `HttpIncomingMessage.MaxBodySize` (the kit sets
 * it to `maxBodySize`; `HttpServerRequest.withMaxBodySize` changes it per route): a larger body
 * fails with a `RequestError` whose cause says `maxBytes exceeded` (the kit answers 413); the
 * rest of the body is drained, not read.
 *
 * `NodeHttpServerRequest.toIncomingMessage`/`toServerResponse` of `@effect/platform-node` work on
 * these requests too (they read `source` and `response`).
 */
import * as NodeMultipart from "@effect/platform-node/NodeMultipart"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Cookies from "@effect/platform/Cookies"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Headers from "@effect/platform/Headers"
import * as IncomingMessage from "@effect/platform/HttpIncomingMessage"
import type { HttpMethod } from "@effect/platform/HttpMethod"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as Multipart from "@effect/platform/Multipart"
import type * as Path from "@effect/platform/Path"
import type * as Socket from "@effect/platform/Socket"
import * as UrlParams from "@effect/platform/UrlParams"
import * as Effect from "effect/Effect"
import * as Inspectable from "effect/Inspectable"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Http from "node:http"
import * as JsonBody from "./JsonBody.js"

/** The message of the cause of a body over the limit (the one `@effect/platform-node` uses). */
export const tooLargeMessage = "maxBytes exceeded"

/** Whether a request error says the body was over the limit. */
export const isBodyTooLarge = (error: HttpServerError.RequestError): boolean =>
  error.cause instanceof Error && error.cause.message === tooLargeMessage

type Resume = (result: Buffer | Error) => void

/**
 * The body of one Node request, read at most once whichever view asks first. Shared by the
 * copies `modify` makes (the router makes one to strip a path prefix).
 */
class Body {
  result: Buffer | Error | undefined = undefined
  private waiters: Array<Resume> | undefined = undefined

  constructor(readonly source: Http.IncomingMessage) {}

  read(maxBytes: number | undefined, resume: Resume): void {
    if (this.result !== undefined) return resume(this.result)
    if (this.waiters !== undefined) {
      this.waiters.push(resume)
      return
    }
    this.waiters = [resume]
    const source = this.source
    const chunks: Array<Buffer> = []
    let size = 0
    const done = (result: Buffer | Error) => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
      source.off("close", onClose)
      this.result = result
      const waiters = this.waiters ?? []
      this.waiters = undefined
      for (const waiter of waiters) waiter(result)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (maxBytes !== undefined && size > maxBytes) {
        done(new Error(tooLargeMessage))
        // Drain what is left, so the answer (413) can still be written on this connection.
        source.resume()
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => done(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size))
    const onError = (error: Error) => done(error)
    // A connection closed before the end of the body (`end` or `error` come first otherwise).
    const onClose = () => done(new Error("the connection closed before the body was complete"))
    source.on("data", onData)
    source.on("end", onEnd)
    source.on("error", onError)
    source.on("close", onClose)
  }
}

const decoder = new TextDecoder()

export class ServerRequest extends Inspectable.Class implements HttpServerRequest.HttpServerRequest {
  readonly [HttpServerRequest.TypeId]: HttpServerRequest.TypeId = HttpServerRequest.TypeId
  readonly [IncomingMessage.TypeId]: IncomingMessage.TypeId = IncomingMessage.TypeId

  private readonly body: Body

  constructor(
    readonly source: Http.IncomingMessage,
    readonly response: Http.ServerResponse,
    readonly url: string = source.url ?? "/",
    private readonly headersOverride?: Headers.Headers | undefined,
    private readonly remoteAddressOverride?: string | undefined,
    body?: Body
  ) {
    super()
    this.body = body ?? new Body(source)
  }

  get originalUrl(): string {
    return this.source.url ?? "/"
  }

  get method(): HttpMethod {
    return this.source.method as HttpMethod
  }

  get headers(): Headers.Headers {
    return this.headersOverride ?? (this.source.headers as Headers.Headers)
  }

  private cachedCookies: Record<string, string> | undefined
  get cookies(): Record<string, string> {
    return this.cachedCookies ??= Cookies.parseHeader(this.headers.cookie ?? "")
  }

  get remoteAddress(): Option.Option<string> {
    return Option.fromNullable(this.remoteAddressOverride ?? this.source.socket.remoteAddress)
  }

  private fail(cause: unknown): HttpServerError.RequestError {
    return new HttpServerError.RequestError({ request: this, reason: "Decode", cause })
  }

  /**
   * Reads the body now, before any handler asks, and calls `done` when it is complete (or
   * failed). The kit does this for small bodies, so handlers find them read.
   */
  readAhead(maxBytes: number, done: () => void): void {
    this.body.read(maxBytes, done)
  }

  /** The body, if it has been read completely (not for a failed read). */
  get bodyIfRead(): Buffer | undefined {
    const result = this.body.result
    return result instanceof Error ? undefined : result
  }

  /** The body as `text` gives it, if it has been read completely. */
  get textIfRead(): string | undefined {
    const result = this.bodyIfRead
    return result === undefined ? undefined : decoder.decode(result)
  }

  private outcome(result: Buffer | Error, max: Option.Option<FileSystem.Size>) {
    if (result instanceof Error) return Effect.fail(this.fail(result))
    // Read ahead under the kit's limit: a route may have set a smaller one.
    if (Option.isSome(max) && result.length > Number(max.value)) return Effect.fail(this.fail(new Error(tooLargeMessage)))
    return Effect.succeed(result)
  }

  /** The whole body; fails with a `RequestError` (over the limit, connection error). */
  get bytes(): Effect.Effect<Buffer, HttpServerError.RequestError> {
    return Effect.flatMap(IncomingMessage.MaxBodySize, (max) => {
      const result = this.body.result
      if (result !== undefined) return this.outcome(result, max)
      return Effect.async<Buffer, HttpServerError.RequestError>((resume) =>
        this.body.read(Option.isSome(max) ? Number(max.value) : undefined, (result) => resume(this.outcome(result, max)))
      )
    })
  }

  get text(): Effect.Effect<string, HttpServerError.RequestError> {
    return Effect.map(this.bytes, (bytes) => decoder.decode(bytes))
  }

  /** The body as JSON, within the nesting limit (`JsonBody.MaxDepth`); `null` when empty. */
  get json(): Effect.Effect<unknown, HttpServerError.RequestError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.flatMap(JsonBody.MaxDepth, (maxDepth) => {
        try {
          return Effect.succeed(JsonBody.parse(text, maxDepth))
        } catch (cause) {
          return Effect.fail(this.fail(cause))
        }
      }))
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpServerError.RequestError> {
    return Effect.map(this.text, (text) => UrlParams.fromInput(new URLSearchParams(text)))
  }

  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpServerError.RequestError> {
    return Effect.map(this.bytes, (bytes) => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer)
  }

  get stream(): Stream.Stream<Uint8Array, HttpServerError.RequestError> {
    const result = this.body.result
    if (result !== undefined) return Stream.fromEffect(this.bytes)
    return NodeStream.fromReadable<HttpServerError.RequestError, Uint8Array>(() => this.source, (cause) => this.fail(cause))
  }

  private multipartEffect:
    | Effect.Effect<Multipart.Persisted, Multipart.MultipartError, Scope.Scope | FileSystem.FileSystem | Path.Path>
    | undefined
  get multipart(): Effect.Effect<Multipart.Persisted, Multipart.MultipartError, Scope.Scope | FileSystem.FileSystem | Path.Path> {
    return this.multipartEffect ??= Effect.runSync(Effect.cached(NodeMultipart.persisted(this.source, this.source.headers)))
  }

  get multipartStream(): Stream.Stream<Multipart.Part, Multipart.MultipartError> {
    return NodeMultipart.stream(this.source, this.source.headers)
  }

  get upgrade(): Effect.Effect<Socket.Socket, HttpServerError.RequestError> {
    return Effect.fail(
      new HttpServerError.RequestError({ request: this, reason: "Decode", description: "not an upgradeable ServerRequest" })
    )
  }

  modify(options: {
    readonly url?: string | undefined
    readonly headers?: Headers.Headers | undefined
    readonly remoteAddress?: string | undefined
  }): ServerRequest {
    return new ServerRequest(
      this.source,
      this.response,
      options.url ?? this.url,
      options.headers ?? this.headersOverride,
      options.remoteAddress ?? this.remoteAddressOverride,
      this.body
    )
  }

  override toString(): string {
    return `ServerRequest(${this.method} ${this.url})`
  }

  override toJSON(): unknown {
    return IncomingMessage.inspect(this, { _id: "@effect/platform/HttpServerRequest", method: this.method, url: this.originalUrl })
  }
}
