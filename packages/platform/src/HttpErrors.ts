/**
 * The platform's error model: every service answers a failure with one body,
 *
 * ```json
 * { "detail": "<a sentence a person can act on>", "issues": [{ "path": ["facts", "cur"], "message": "is missing" }] }
 * ```
 *
 * (`issues` only where there are fields to name). Each class here is a `Contract.UntaggedError`:
 * the status is part of its schema (`HttpApiSchema.annotations({ status })`), so the contract,
 * the OpenAPI document and the typed clients agree on it; the body carries no `_tag`, while the
 * instance does (`Effect.catchTag` works, and it keeps classes of the same body shape apart when
 * `HttpApiBuilder` encodes a failure with the union of an API's errors). Typed clients decode an
 * error response by its status.
 *
 * ```ts
 * Effect.fail(new HttpErrors.NotFound({ detail: `No notification ${id}` }))
 * ```
 *
 * Domain errors with fields of their own are declared the same way, `detail` first:
 *
 * ```ts
 * class Suppressed extends Contract.UntaggedError<Suppressed>()("Suppressed",
 *   { ...HttpErrors.fields, outcomes: Schema.Array(Outcome) }, { status: 409 }) {}
 * ```
 *
 * They decode only bodies with exactly these fields (`exact`), so a typed client reads a domain
 * error of the same status with fields of its own (`outcomes`) as that domain error.
 *
 * `HttpApiError` (from `@effect/platform`) has no 422 and no 429 class, and its bodies are
 * `_tag`-shaped; services use these.
 */
import * as Schema from "effect/Schema"
import { UntaggedError } from "./UntaggedError.js"

/**
 * Any JSON value. The `jsonSchema` override matters: Effect renders a bare `Schema.Unknown` as
 * `{"$id":"/schemas/unknown"}`, and the same `$id` twice makes the OpenAPI document invalid.
 */
export const AnyJson = Schema.Unknown.annotations({
  jsonSchema: {
    anyOf: [
      { type: "object" },
      { type: "array" },
      { type: "string" },
      { type: "number" },
      { type: "boolean" },
      { type: "null" }
    ]
  }
})

/** One problem of a request: where (`ParseResult.ArrayFormatter`'s path) and what. */
export const Issue = Schema.Struct({
  path: Schema.Array(Schema.Union(Schema.String, Schema.Number)).annotations({
    description: "Where in the request: property names and array indexes from the top of the part that failed"
  }),
  message: Schema.String
}).annotations({ description: "One problem of a request" })
export type Issue = typeof Issue.Type

/** The fields of every error body; spread them into a domain error's fields. */
export const fields = {
  detail: Schema.String.annotations({ description: "What went wrong, as a sentence a person can act on" }),
  issues: Schema.optional(Schema.Array(Issue).annotations({ description: "One entry per invalid field" }))
}

/** The error body as a schema (documentation, clients that read raw responses). */
export const ErrorBody = Schema.Struct(fields).annotations({ description: "The platform's error body" })
export type ErrorBody = typeof ErrorBody.Type

export class BadRequest extends UntaggedError<BadRequest>()("BadRequest", fields, {
  status: 400,
  description: "The request is malformed",
  exact: true
}) {}

export class Unauthorized extends UntaggedError<Unauthorized>()("Unauthorized", fields, {
  status: 401,
  description: "Missing or invalid credentials",
  exact: true
}) {}

export class Forbidden extends UntaggedError<Forbidden>()("Forbidden", fields, {
  status: 403,
  description: "The caller may not do this",
  exact: true
}) {}

export class NotFound extends UntaggedError<NotFound>()("NotFound", fields, {
  status: 404,
  description: "No such resource (or not one the caller may see)",
  exact: true
}) {}

export class Conflict extends UntaggedError<Conflict>()("Conflict", fields, {
  status: 409,
  description: "The request conflicts with the current state",
  exact: true
}) {}

export class PayloadTooLarge extends UntaggedError<PayloadTooLarge>()("PayloadTooLarge", fields, {
  status: 413,
  description: "The request body is larger than the service accepts",
  exact: true
}) {}

export class UnprocessableEntity extends UntaggedError<UnprocessableEntity>()("UnprocessableEntity", fields, {
  status: 422,
  description: "The request is well-formed but its content is semantically invalid",
  exact: true
}) {}

export class TooManyRequests extends UntaggedError<TooManyRequests>()("TooManyRequests", fields, {
  status: 429,
  description: "Rate limit or quota exceeded; `Retry-After` says when to try again",
  exact: true
}) {}

export class InternalServerError extends UntaggedError<InternalServerError>()("InternalServerError", fields, {
  status: 500,
  description: "Unexpected failure; the detail carries the request id to quote, never the cause",
  exact: true
}) {}

export class BadGateway extends UntaggedError<BadGateway>()("BadGateway", fields, {
  status: 502,
  description: "An upstream system failed or answered something unusable (the detail names it)",
  exact: true
}) {}

export class ServiceUnavailable extends UntaggedError<ServiceUnavailable>()("ServiceUnavailable", fields, {
  status: 503,
  description: "A dependency is unavailable or not configured (the detail names it)",
  exact: true
}) {}

export class GatewayTimeout extends UntaggedError<GatewayTimeout>()("GatewayTimeout", fields, {
  status: 504,
  description: "An upstream system did not answer in time (the detail names it)",
  exact: true
}) {}

/** Errors for failures of a system this service calls. */
export type UpstreamError = BadGateway | ServiceUnavailable | GatewayTimeout
