/**
 * FastAPI-style error bodies, `{ "detail": "<text>" }`, for services whose specification fixes
 * that shape (the policy service: 400/401/500 with `{detail: string}`).
 *
 * Each class is a `Contract.UntaggedError`: the body is `{detail}` only, the instance has a
 * `_tag` (`BadRequestDetail`, ...) that keeps each class, and so its status, apart when several
 * are errors of one API. Fail with them as values:
 * `Effect.fail(new DetailErrors.Unauthorized({ detail: "Unauthorized" }))`. A service with its
 * own descriptions defines its own the same way (`Contract.UntaggedError`).
 *
 * Serve such a service with `errorStyle: "detail"` so the kit's own bodies (404 for unknown
 * routes, 400 for undecodable requests, 500 for defects) use the same shape.
 */
import * as Schema from "effect/Schema"
import { UntaggedError } from "./Contract.js"

const detail = { detail: Schema.String }

export class BadRequest extends UntaggedError<BadRequest>()("BadRequestDetail", detail, { status: 400 }) {}

export class Unauthorized extends UntaggedError<Unauthorized>()("UnauthorizedDetail", detail, { status: 401 }) {}

export class Forbidden extends UntaggedError<Forbidden>()("ForbiddenDetail", detail, { status: 403 }) {}

export class NotFound extends UntaggedError<NotFound>()("NotFoundDetail", detail, { status: 404 }) {}

export class Conflict extends UntaggedError<Conflict>()("ConflictDetail", detail, { status: 409 }) {}

export class UnprocessableEntity extends UntaggedError<UnprocessableEntity>()("UnprocessableEntityDetail", detail, {
  status: 422
}) {}

export class TooManyRequests extends UntaggedError<TooManyRequests>()("TooManyRequestsDetail", detail, { status: 429 }) {}

export class InternalServerError extends UntaggedError<InternalServerError>()("InternalServerErrorDetail", detail, {
  status: 500
}) {}

export class BadGateway extends UntaggedError<BadGateway>()("BadGatewayDetail", detail, { status: 502 }) {}

export class ServiceUnavailable extends UntaggedError<ServiceUnavailable>()("ServiceUnavailableDetail", detail, {
  status: 503
}) {}

export class GatewayTimeout extends UntaggedError<GatewayTimeout>()("GatewayTimeoutDetail", detail, { status: 504 }) {}
