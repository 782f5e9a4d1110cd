/**
 * The service's error bodies (spec section 7): `{detail}` for 400/401/403/500/503 and
 * `{ok: false, reason}` for the MQTT endpoints' 403/503.
 *
 * Several of these share one body shape, and `HttpApiBuilder` encodes a failure with the union
 * of every error of the API, taking the first member that can encode it. A `Schema.Class`
 * encodes any value with its fields (it rebuilds an instance from them), so with two classes of
 * the same shape a 400 could leave as a 401. Here the type side of each schema is a strict
 * `instanceof` check on its own error class, so each error keeps its status, while the body
 * stays exactly the spec's.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Data from "effect/Data"
import * as Schema from "effect/Schema"

const detailBody = Schema.Struct({ detail: Schema.String })

const detailSchema = <E extends { readonly detail: string }>(
  ErrorClass: new(args: { readonly detail: string }) => E,
  status: number,
  identifier: string,
  description: string
) =>
  Schema.transform(
    detailBody,
    Schema.declare((u: unknown): u is E => u instanceof ErrorClass, { identifier }),
    { strict: true, decode: ({ detail }) => new ErrorClass({ detail }), encode: (e) => ({ detail: e.detail }) }
  ).annotations({ ...HttpApiSchema.annotations({ status }), identifier, description })

export class BadRequest extends Data.TaggedError("BadRequest")<{ readonly detail: string }> {}
export const BadRequestSchema = detailSchema(BadRequest, 400, "BadRequest", "Invalid request format or unknown resource type.")

export class Unauthorized extends Data.TaggedError("Unauthorized")<{ readonly detail: string }> {}
export const UnauthorizedSchema = detailSchema(Unauthorized, 401, "Unauthorized", "Missing or invalid JWT.")

export class Forbidden extends Data.TaggedError("Forbidden")<{ readonly detail: string }> {}
export const ForbiddenSchema = detailSchema(Forbidden, 403, "Forbidden", "The caller may not do this (reload: admins only).")

export class InternalError extends Data.TaggedError("InternalError")<{ readonly detail: string }> {}
export const InternalErrorSchema = detailSchema(InternalError, 500, "InternalError", "Policy evaluation failure.")

export class Unavailable extends Data.TaggedError("Unavailable")<{ readonly detail: string }> {}
export const UnavailableSchema = detailSchema(
  Unavailable,
  503,
  "Unavailable",
  "No policies are loaded, or the identity provider's keys cannot be fetched."
)

const mqttBody = Schema.Struct({ ok: Schema.Literal(false), reason: Schema.String })

const mqttSchema = <E extends { readonly reason: string }>(
  ErrorClass: new(args: { readonly reason: string }) => E,
  status: number,
  identifier: string,
  description: string
) =>
  Schema.transform(
    mqttBody,
    Schema.declare((u: unknown): u is E => u instanceof ErrorClass, { identifier }),
    {
      strict: true,
      decode: ({ reason }) => new ErrorClass({ reason }),
      encode: (e) => ({ ok: false as const, reason: e.reason })
    }
  ).annotations({ ...HttpApiSchema.annotations({ status }), identifier, description })

/** The broker is told no (status response mode: anything but 2xx denies). */
export class MqttDenied extends Data.TaggedError("MqttDenied")<{ readonly reason: string }> {}
export const MqttDeniedSchema = mqttSchema(MqttDenied, 403, "MqttDenied", "Denied: the client may not do this.")

/** Cannot decide now (identity provider keys or policies unavailable): go-auth denies and logs 5xx. */
export class MqttUnavailable extends Data.TaggedError("MqttUnavailable")<{ readonly reason: string }> {}
export const MqttUnavailableSchema = mqttSchema(
  MqttUnavailable,
  503,
  "MqttUnavailable",
  "Cannot decide now (identity provider or policies unavailable)."
)
