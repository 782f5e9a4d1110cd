/**
 * The bodies the kit itself writes (unknown route, unreadable body, defect) in the two error
 * styles, and the rewrite it applies to JSON error responses produced by handlers:
 *
 * - `"platform"` (default): `{ "_tag", "message", ...fields, "request_id" }`; the kit adds
 *   `request_id` to every JSON error body (status >= 400) that does not carry one, so a user can
 *   quote it. Decode failures keep Effect's `HttpApiDecodeError` body, whose `issues` list every
 *   invalid field with its path.
 * - `"detail"`: `{ "detail": "<text>" }` (FastAPI style). Decode failures become
 *   `{ "detail": "<what is wrong>" }` with status 400; nothing is added to handler bodies.
 */
import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"

export type ErrorStyle = "platform" | "detail"

export interface ErrorBody {
  readonly status: number
  /** Platform-style `_tag`. */
  readonly tag: string
  readonly message: string
  readonly requestId: string
}

export const response = (style: ErrorStyle, body: ErrorBody): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(
    style === "detail"
      ? { detail: body.message }
      : { _tag: body.tag, message: body.message, request_id: body.requestId },
    { status: body.status }
  )

const decoder = new TextDecoder()

const isJsonObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Rewrites a handler's JSON error body per the style. Only error responses with an in-memory
 * JSON body are touched, so successful responses cost nothing.
 */
export const rewrite = (
  style: ErrorStyle,
  response: HttpServerResponse.HttpServerResponse,
  requestId: string
): HttpServerResponse.HttpServerResponse => {
  if (response.status < 400) return response
  const body = response.body
  if (body._tag !== "Uint8Array" || !body.contentType.includes("json")) return response
  let parsed: unknown
  try {
    parsed = JSON.parse(decoder.decode(body.body))
  } catch {
    return response
  }
  if (!isJsonObject(parsed)) return response
  if (style === "detail") {
    if (parsed._tag !== "HttpApiDecodeError") return response
    const detail = typeof parsed.message === "string" ? parsed.message : "Invalid request"
    return HttpServerResponse.setBody(response, HttpBody.unsafeJson({ detail }))
  }
  if ("request_id" in parsed) return response
  return HttpServerResponse.setBody(response, HttpBody.unsafeJson({ ...parsed, request_id: requestId }))
}
