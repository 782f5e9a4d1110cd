/**
 * JSON request bodies of the decision endpoints, read straight from the Node request.
 *
 * `HttpApiBuilder` reads bodies through `@effect/platform`'s generic stream reader, which costs
 * about as much as the rest of a cached decision; these endpoints are the service's hot path
 * (`docs/performance.md`), so their handlers read the body here (`handleRaw`) and decode it with
 * the contract's own schema. What a client sees does not change: the same limit
 * (`POLICY_MAX_BODY_BYTES`, 413), the same 400 `{detail}` for unreadable or invalid bodies.
 */
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as HttpServerError from "@effect/platform/HttpServerError"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Errors from "./Errors.js"

const unreadable = new Errors.BadRequest({ detail: "The request body could not be read as the declared content type" })

/** The body as text, at most `maxBytes`; larger bodies fail as the kit expects (413). */
const text = (request: HttpServerRequest.HttpServerRequest, maxBytes: number) =>
  Effect.async<string, HttpServerError.RequestError>((resume) => {
    const message = NodeHttpServerRequest.toIncomingMessage(request)
    const chunks: Array<Buffer> = []
    let size = 0
    const fail = (cause: Error) =>
      resume(Effect.fail(new HttpServerError.RequestError({ request, reason: "Decode", cause })))
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) {
        message.off("data", onData)
        // The message the kit recognises as "body too large".
        fail(new Error("maxBytes exceeded"))
        return
      }
      chunks.push(chunk)
    }
    message.on("data", onData)
    message.once("end", () => resume(Effect.succeed(Buffer.concat(chunks, size).toString("utf8"))))
    message.once("error", fail)
  })

const isJson = (contentType: string | undefined) =>
  contentType === undefined || contentType === "" || contentType.toLowerCase().includes("json")

/** A decoder for one endpoint's payload schema; the schema's `parseOptions` apply. */
export const decoder = <A, I>(schema: Schema.Schema<A, I>, maxBytes: number) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (request: HttpServerRequest.HttpServerRequest): Effect.Effect<A, Errors.BadRequest> => {
    if (!isJson(request.headers["content-type"])) {
      return Effect.fail(new Errors.BadRequest({ detail: "The request body must be JSON (Content-Type: application/json)" }))
    }
    return text(request, maxBytes).pipe(
      // A body over the limit is a defect the kit turns into 413, as for every other route.
      Effect.orDie,
      Effect.flatMap((body) => {
        let json: unknown
        try {
          json = body === "" ? null : JSON.parse(body)
        } catch {
          return Effect.fail(unreadable)
        }
        return Either.match(decode(json), {
          onLeft: (error) => Effect.fail(new Errors.BadRequest({ detail: ParseResult.TreeFormatter.formatErrorSync(error) })),
          onRight: Effect.succeed
        })
      })
    )
  }
}
