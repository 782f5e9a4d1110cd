/**
 * The service's error bodies (spec section 7): `{detail}` for 400/401/403/500/503 and
 * `{ok: false, reason}` for the MQTT endpoints' 403/503.
 *
 * Several share one body shape; `Contract.UntaggedError` of the service kit keeps each class
 * (and so its status) apart in the API's error union while the body stays exactly the spec's,
 * without `_tag`. Instances do carry their `_tag` (`Effect.catchTag` works).
 */
import type { Decision } from "@rec/policy"
import { Contract } from "@rec/platform"
import * as Schema from "effect/Schema"

const detail = { detail: Schema.String }

export class BadRequest extends Contract.UntaggedError<BadRequest>()("BadRequest", detail, {
  status: 400,
  description: "Invalid request format or unknown resource type."
}) {}

export class Unauthorized extends Contract.UntaggedError<Unauthorized>()("Unauthorized", detail, {
  status: 401,
  description: "Missing or invalid JWT."
}) {}

export class Forbidden extends Contract.UntaggedError<Forbidden>()("Forbidden", detail, {
  status: 403,
  description: "The caller may not do this (reload: admins only)."
}) {}

export class InternalError extends Contract.UntaggedError<InternalError>()("InternalError", detail, {
  status: 500,
  description: "Policy evaluation failure."
}) {}

export class Unavailable extends Contract.UntaggedError<Unavailable>()("Unavailable", detail, {
  status: 503,
  description: "No policies are loaded, or the identity provider's keys cannot be fetched."
}) {}

const notOk = {
  ok: Schema.Literal(false).pipe(Schema.propertySignature, Schema.withConstructorDefault(() => false as const)),
  reason: Schema.String
}

/** The broker is told no (status response mode: anything but 2xx denies). */
export class MqttDenied extends Contract.UntaggedError<MqttDenied>()("MqttDenied", notOk, {
  status: 403,
  description: "Denied: the client may not do this."
}) {}

/** Cannot decide now (identity provider keys or policies unavailable): go-auth denies and logs 5xx. */
export class MqttUnavailable extends Contract.UntaggedError<MqttUnavailable>()("MqttUnavailable", notOk, {
  status: 503,
  description: "Cannot decide now (identity provider or policies unavailable)."
}) {}

/** A failed decision as the decision endpoints answer it (503 unavailable, else 500). */
export const fromDecision = (error: Decision.DecisionError): Unavailable | InternalError =>
  error._tag === "PolicyUnavailable"
    ? new Unavailable({ detail: `Policies unavailable: ${error.message}` })
    : new InternalError({ detail: `Policy evaluation failed: ${error.message}` })
