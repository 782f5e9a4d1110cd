/**
 * Writes an `HttpServerResponse` to Node's `ServerResponse`, as `@effect/platform-node` does,
 * except for responses held in memory (empty, bytes, a string):
 *
 * - the request's fiber does not wait for the socket to accept the bytes (Node buffers them and
 *   the `close` event still tells when the exchange is over);
 * - they are written together at the end of the event loop's turn (`setImmediate`), all the
 *   responses finished in that turn one after the other. Each write to a socket whose reader is
 *   waiting wakes that reader, which on a virtual machine costs an inter-processor interrupt, as
 *   much as a small request; written back to back, the writes of one turn wake a reader that is
 *   already awake: about 20% less server CPU per request under load (docs/performance.md). The
 *   latency added is the rest of the turn.
 *
 * Streams, piped Node streams and form data are written as the platform writes them, with
 * back-pressure.
 */
import * as Cookies from "@effect/platform/Cookies"
import * as HttpServerError from "@effect/platform/HttpServerError"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type * as Http from "node:http"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"

type OutgoingHeaders = Record<string, string | ReadonlyArray<string>>

const headersOf = (
  response: HttpServerResponse.HttpServerResponse,
  extra: Readonly<Record<string, string>> | undefined
): OutgoingHeaders => {
  const headers: OutgoingHeaders = extra === undefined ? { ...response.headers } : { ...response.headers, ...extra }
  if (!Cookies.isEmpty(response.cookies)) {
    const toSet = Cookies.toSetCookieHeaders(response.cookies)
    const existing = headers["set-cookie"]
    if (existing !== undefined) toSet.push(...(typeof existing === "string" ? [existing] : existing))
    headers["set-cookie"] = toSet
  }
  return headers
}

const writeHead = (nodeResponse: Http.ServerResponse, response: HttpServerResponse.HttpServerResponse, headers: OutgoingHeaders) => {
  if (response.statusText === undefined) nodeResponse.writeHead(response.status, headers as Http.OutgoingHttpHeaders)
  else nodeResponse.writeHead(response.status, response.statusText, headers as Http.OutgoingHttpHeaders)
}

/** After a failed streaming write: end the response and report the failure (with the response). */
const failed = (
  nodeResponse: Http.ServerResponse,
  original: HttpServerResponse.HttpServerResponse
) =>
<E>(cause: Cause.Cause<E>) =>
  Effect.flatMap(HttpServerError.causeResponse(cause), ([response, stripped]) => {
    const headersSent = nodeResponse.headersSent
    if (!headersSent) nodeResponse.writeHead(response.status)
    if (!nodeResponse.writableEnded) nodeResponse.end()
    return Effect.failCause(headersSent ? Cause.sequential(cause, Cause.die(original)) : stripped)
  })

let pending: Array<() => void> = []

const flush = () => {
  const writes = pending
  pending = []
  for (const write of writes) {
    try {
      write()
    } catch {
      // The connection is gone (destroyed socket): nothing left to tell this client.
    }
  }
}

/** Runs `write` with the other writes of this turn of the event loop. */
const batched = (write: () => void): void => {
  if (pending.length === 0) setImmediate(flush)
  pending.push(write)
}

const isNodeStream = (body: unknown): body is NodeJS.ReadableStream =>
  typeof body === "object" && body !== null && "pipe" in body && typeof body.pipe === "function"

/**
 * Writes the response. Returns `undefined` when it is held in memory (then it leaves with the
 * other writes of this turn), otherwise the effect that writes it (streams).
 */
export const write = (
  request: HttpServerRequest.HttpServerRequest,
  nodeResponse: Http.ServerResponse,
  response: HttpServerResponse.HttpServerResponse,
  extraHeaders?: Readonly<Record<string, string>> | undefined
): Effect.Effect<void, HttpServerError.ResponseError> | undefined => {
  if (nodeResponse.writableEnded) return undefined
  const headers = headersOf(response, extraHeaders)
  const body = response.body
  if (request.method === "HEAD" || body._tag === "Empty") {
    batched(() => {
      writeHead(nodeResponse, response, headers)
      nodeResponse.end()
    })
    return undefined
  }
  switch (body._tag) {
    case "Uint8Array": {
      batched(() => {
        writeHead(nodeResponse, response, headers)
        nodeResponse.end(body.body)
      })
      return undefined
    }
    case "Raw": {
      if (!isNodeStream(body.body)) {
        const data = body.body as string | Uint8Array
        batched(() => {
          writeHead(nodeResponse, response, headers)
          nodeResponse.end(data)
        })
        return undefined
      }
      writeHead(nodeResponse, response, headers)
      const source = body.body
      return Effect.tryPromise({
        try: (signal) => pipeline(source, nodeResponse, { signal, end: true }),
        catch: (cause) => new HttpServerError.ResponseError({ request, response, reason: "Decode", cause })
      }).pipe(Effect.interruptible, Effect.tapErrorCause(failed(nodeResponse, response)))
    }
    case "FormData": {
      const encoded = new Response(body.formData)
      writeHead(nodeResponse, response, { ...headers, ...Object.fromEntries(encoded.headers) })
      return Effect.async<void, HttpServerError.ResponseError>((resume, signal) => {
        Readable.fromWeb(encoded.body as import("node:stream/web").ReadableStream, { signal })
          .pipe(nodeResponse)
          .on("error", (cause) => resume(Effect.fail(new HttpServerError.ResponseError({ request, response, reason: "Decode", cause }))))
          .once("finish", () => resume(Effect.void))
      }).pipe(Effect.interruptible, Effect.tapErrorCause(failed(nodeResponse, response)))
    }
    case "Stream": {
      writeHead(nodeResponse, response, headers)
      const drained = Effect.unsafeMakeLatch()
      nodeResponse.on("drain", () => drained.unsafeOpen())
      return body.stream.pipe(
        Stream.orDie,
        Stream.runForEachChunk((chunk) => {
          const array = Chunk.toReadonlyArray(chunk)
          let needDrain = false
          for (const part of array) {
            const written = nodeResponse.write(part)
            if (!written && !needDrain) {
              needDrain = true
              drained.unsafeClose()
            } else if (written && needDrain) {
              needDrain = false
            }
          }
          return needDrain ? drained.await : Effect.void
        }),
        Effect.interruptible,
        Effect.matchCauseEffect({
          onSuccess: () => Effect.sync(() => nodeResponse.end()),
          onFailure: failed(nodeResponse, response)
        })
      )
    }
  }
}
