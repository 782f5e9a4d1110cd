/**
 * FastAPI-style error bodies, `{ "detail": "<text>" }`, for services whose specification fixes
 * that shape (the policy service: 400/401/500 with `{detail: string}`).
 *
 * These are `Schema.Class`es rather than tagged errors: the encoded body carries no `_tag`, and
 * the status annotation still tells `HttpApiBuilder` which status to send (the classes share one
 * shape, but encoding checks the class, so each keeps its own status). Fail with them as values:
 * `Effect.fail(new DetailErrors.Unauthorized({ detail: "Unauthorized" }))`.
 *
 * Serve such a service with `errorStyle: "detail"` so the kit's own bodies (404 for unknown
 * routes, 400 for undecodable requests, 500 for defects) use the same shape.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Schema from "effect/Schema"

const detail = { detail: Schema.String }

export class BadRequest extends Schema.Class<BadRequest>("BadRequestDetail")(
  detail,
  HttpApiSchema.annotations({ status: 400 })
) {}

export class Unauthorized extends Schema.Class<Unauthorized>("UnauthorizedDetail")(
  detail,
  HttpApiSchema.annotations({ status: 401 })
) {}

export class Forbidden extends Schema.Class<Forbidden>("ForbiddenDetail")(
  detail,
  HttpApiSchema.annotations({ status: 403 })
) {}

export class NotFound extends Schema.Class<NotFound>("NotFoundDetail")(
  detail,
  HttpApiSchema.annotations({ status: 404 })
) {}

export class Conflict extends Schema.Class<Conflict>("ConflictDetail")(
  detail,
  HttpApiSchema.annotations({ status: 409 })
) {}

export class UnprocessableEntity extends Schema.Class<UnprocessableEntity>("UnprocessableEntityDetail")(
  detail,
  HttpApiSchema.annotations({ status: 422 })
) {}

export class TooManyRequests extends Schema.Class<TooManyRequests>("TooManyRequestsDetail")(
  detail,
  HttpApiSchema.annotations({ status: 429 })
) {}

export class InternalServerError extends Schema.Class<InternalServerError>("InternalServerErrorDetail")(
  detail,
  HttpApiSchema.annotations({ status: 500 })
) {}

export class BadGateway extends Schema.Class<BadGateway>("BadGatewayDetail")(
  detail,
  HttpApiSchema.annotations({ status: 502 })
) {}

export class ServiceUnavailable extends Schema.Class<ServiceUnavailable>("ServiceUnavailableDetail")(
  detail,
  HttpApiSchema.annotations({ status: 503 })
) {}

export class GatewayTimeout extends Schema.Class<GatewayTimeout>("GatewayTimeoutDetail")(
  detail,
  HttpApiSchema.annotations({ status: 504 })
) {}
