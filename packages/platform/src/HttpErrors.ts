/**
 * The platform's error model: every error a handler returns is a `Schema.TaggedError` whose HTTP
 * status is part of its schema (`HttpApiSchema.annotations({ status })`), so the contract,
 * the OpenAPI document and the typed clients all agree on it.
 *
 * Body shape (platform style): `{ "_tag": "<Name>", "message": "...", "details"?: ..., ...fields }`.
 * `_tag` is the machine-readable code and lets `HttpApiClient` decode the error back into its
 * class; the kit adds `"request_id"` to every JSON error body it sends (see `ServiceKit`).
 *
 * Services declare their own domain errors the same way:
 *
 * ```ts
 * class MeterNotFound extends Schema.TaggedError<MeterNotFound>()("MeterNotFound",
 *   { message: Schema.String, meter_id: Schema.String },
 *   HttpApiSchema.annotations({ status: 404 })) {}
 * ```
 *
 * `HttpApiError` (from `@effect/platform`) has no 422 and no 429 class; these are here.
 * Services whose spec demands FastAPI-style `{ "detail": "..." }` bodies use `DetailErrors`.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Schema from "effect/Schema"

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

const details = Schema.optional(AnyJson.annotations({
  description: "Structured information about the failure (for example the invalid fields)"
}))

export class BadRequest extends Schema.TaggedError<BadRequest>()(
  "BadRequest",
  { message: Schema.String, details },
  HttpApiSchema.annotations({ status: 400, description: "The request is malformed" })
) {}

export class Unauthorized extends Schema.TaggedError<Unauthorized>()(
  "Unauthorized",
  { message: Schema.String, details },
  HttpApiSchema.annotations({ status: 401, description: "Missing or invalid credentials" })
) {}

export class Forbidden extends Schema.TaggedError<Forbidden>()(
  "Forbidden",
  { message: Schema.String, details },
  HttpApiSchema.annotations({ status: 403, description: "The caller may not do this" })
) {}

export class NotFound extends Schema.TaggedError<NotFound>()(
  "NotFound",
  { message: Schema.String, details },
  HttpApiSchema.annotations({ status: 404, description: "No such resource" })
) {}

export class Conflict extends Schema.TaggedError<Conflict>()(
  "Conflict",
  { message: Schema.String, details },
  HttpApiSchema.annotations({ status: 409, description: "The request conflicts with the current state" })
) {}

export class UnprocessableEntity extends Schema.TaggedError<UnprocessableEntity>()(
  "UnprocessableEntity",
  { message: Schema.String, details },
  HttpApiSchema.annotations({
    status: 422,
    description: "The request is well-formed but its content is semantically invalid"
  })
) {}

export class TooManyRequests extends Schema.TaggedError<TooManyRequests>()(
  "TooManyRequests",
  {
    message: Schema.String,
    retry_after_seconds: Schema.optional(Schema.Number),
    details
  },
  HttpApiSchema.annotations({ status: 429, description: "Rate limit or quota exceeded" })
) {}

export class InternalServerError extends Schema.TaggedError<InternalServerError>()(
  "InternalServerError",
  { message: Schema.String, request_id: Schema.optional(Schema.String) },
  HttpApiSchema.annotations({
    status: 500,
    description: "Unexpected failure; the body carries the request id to quote, never the cause"
  })
) {}

const upstream = Schema.String.annotations({
  description: "The upstream system that failed (for example `digital-twin`)"
})

export class BadGateway extends Schema.TaggedError<BadGateway>()(
  "BadGateway",
  { message: Schema.String, upstream, upstream_status: Schema.optional(Schema.Number), details },
  HttpApiSchema.annotations({ status: 502, description: "An upstream system answered with an error" })
) {}

export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()(
  "ServiceUnavailable",
  { message: Schema.String, upstream: Schema.optional(upstream), details },
  HttpApiSchema.annotations({ status: 503, description: "A dependency is unavailable or not configured" })
) {}

export class GatewayTimeout extends Schema.TaggedError<GatewayTimeout>()(
  "GatewayTimeout",
  { message: Schema.String, upstream, details },
  HttpApiSchema.annotations({ status: 504, description: "An upstream system did not answer in time" })
) {}

/** Errors for failures of a system this service calls. */
export type UpstreamError = BadGateway | ServiceUnavailable | GatewayTimeout
