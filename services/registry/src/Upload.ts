/**
 * The bundle file of an import request: the `file` part of a `multipart/form-data` body (a file
 * upload, or a plain field as `curl -F 'file=<bundle.yaml'` sends), read into memory with the
 * size limit applied while it streams in (413 as soon as it is passed, nothing kept).
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Multipart from "@effect/platform/Multipart"
import { HttpErrors } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

const field = "file"

/** What multipart framing may add around the file (boundaries, part headers, small fields). */
export const overhead = 64 * 1024

const tooLarge = (maxBytes: number) =>
  new HttpErrors.PayloadTooLarge({ detail: `The bundle is larger than ${maxBytes} bytes, the most this service accepts` })

const missing = new HttpErrors.BadRequest({
  detail: "Send the bundle as multipart/form-data with a `file` field (curl -F file=@bundle.yaml)",
  issues: [{ path: [field], message: "is missing" }]
})

/** Reads the `file` part; fails 400 (not multipart, no `file`, malformed) or 413 (too large). */
export const readBundle = (
  request: HttpServerRequest.HttpServerRequest,
  maxBytes: number
): Effect.Effect<Uint8Array, HttpErrors.BadRequest | HttpErrors.PayloadTooLarge> => {
  const contentType = request.headers["content-type"] ?? ""
  if (!/^multipart\/form-data\s*;/i.test(contentType)) return Effect.fail(missing)
  let found: Uint8Array | undefined
  const collect = (part: Multipart.Part): Effect.Effect<void, Multipart.MultipartError | HttpErrors.PayloadTooLarge> => {
    if (Multipart.isField(part)) {
      if (part.key === field && found === undefined) found = new TextEncoder().encode(part.value)
      return found !== undefined && found.length > maxBytes ? Effect.fail(tooLarge(maxBytes)) : Effect.void
    }
    if (!Multipart.isFile(part)) return Effect.void
    if (part.key !== field || found !== undefined) return Stream.runDrain(part.content)
    const chunks: Array<Uint8Array> = []
    let size = 0
    return part.content.pipe(
      Stream.runForEach((chunk) => {
        size += chunk.length
        if (size > maxBytes) return Effect.fail(tooLarge(maxBytes))
        chunks.push(chunk)
        return Effect.void
      }),
      Effect.map(() => {
        found = Buffer.concat(chunks, size)
      })
    )
  }
  return request.multipartStream.pipe(
    Multipart.withLimitsStream({
      maxParts: Option.some(16),
      maxFieldSize: maxBytes + 1,
      maxFileSize: Option.some(maxBytes + 1),
      maxTotalSize: Option.some(maxBytes + overhead)
    }),
    Stream.runForEach(collect),
    Effect.catchTag("MultipartError", (error): Effect.Effect<never, HttpErrors.BadRequest | HttpErrors.PayloadTooLarge> =>
      error.reason === "FileTooLarge" || error.reason === "FieldTooLarge" || error.reason === "BodyTooLarge"
        ? Effect.fail(tooLarge(maxBytes))
        : Effect.fail(new HttpErrors.BadRequest({ detail: `The multipart body cannot be read (${error.reason}): ${error.message}` }))),
    Effect.flatMap(() => (found === undefined ? Effect.fail(missing) : Effect.succeed(found)))
  )
}
