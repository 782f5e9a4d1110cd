/**
 * The create endpoint's fast route (`FastRoutes` of the service kit): `POST /api/commitments`,
 * the common request, answered without the router and `HttpApiBuilder`, whose per-request
 * plumbing (middleware chain, context merges, payload decoding through the endpoint's wrappers)
 * cost about a seventh of a create's CPU (docs/performance.md, "Flexibility service").
 *
 * Answered here when, and only when, the contract's handler (`Http.CommitmentsLive`) would run
 * the same call:
 *
 * - the token was verified before and is still trusted (`TokenVerifier.cached`: same issuer,
 *   audience, expiry, signature and key checks as the bearer middleware's cache hit);
 * - the body was read (the kit reads small bodies ahead), is JSON by `Content-Type` (as the
 *   contract's decoder decides), within the kit's nesting limit, and decodes with the endpoint's
 *   own payload schema (`Domain.CreateCommitment`; the common body by its hand-written twin,
  `decodeCreate`, checked against the schema by a property test).
 *
 * Anything else is declined untouched and the contract's handler answers it: every 401, 400 and
 * 413 comes from there. The commitment is made by the same call (`Commitments.create`: policy
 * decision, insert, announcement and reminder), its answer is the same row as 201, and its
 * failures are the contract's error bodies (each `HttpErrors` class encoded with its own schema
 * and status, as `HttpApiBuilder` encodes the endpoint's errors). The kit adds the request id,
 * CORS headers and the access log line either way; with tracing on, fast routes are skipped, so
 * every request keeps its server span.
 *
 * The route waits on the database (and, for a user, the digital twin): fast routes run
 * uninterruptibly, which the contract's handler of this endpoint is too (`uninterruptible`), so a
 * client going away does not stop a create on either path.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Authentication, TokenVerifier } from "@rec/auth"
import { FastRoutes, HttpErrors, JsonBody, type RequestContext, type ServerRequest, Upstream } from "@rec/platform"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { Api } from "./Api.js"
import { Commitments } from "./Commitments.js"
import * as Domain from "./Domain.js"

/** The error classes a create can fail with, encoded as the contract's handler encodes them. */
const errorClasses = [
  HttpErrors.BadRequest,
  HttpErrors.Forbidden,
  HttpErrors.NotFound,
  HttpErrors.Conflict,
  HttpErrors.UnprocessableEntity,
  HttpErrors.InternalServerError,
  HttpErrors.BadGateway,
  HttpErrors.ServiceUnavailable,
  HttpErrors.GatewayTimeout
] as const

/**
 * A failure of the contract as its handler's encoding sends it. The create's failures are all of
 * these classes (its type says so); anything else would be a defect, the kit's 500.
 */
export const errorResponse = (error: unknown): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const failure = error instanceof Upstream.UpstreamFailure ? Upstream.toHttpError(error) : error
  for (const errorClass of errorClasses) {
    if (failure instanceof errorClass) {
      return Effect.succeed(FastRoutes.errorJson(errorClass as unknown as Schema.Schema<unknown, unknown>, failure))
    }
  }
  return Effect.die(failure)
}

const decodePayload = Schema.decodeUnknownEither(Domain.CreateCommitment)

const dateTimePattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/
const maxWindowMs = Domain.maxWindowHours * 3_600_000

const text = (value: unknown, max: number): value is string =>
  typeof value === "string" && value.length >= 1 && value.length <= max

const dateTime = (value: unknown): DateTime.Utc | undefined => {
  if (typeof value !== "string" || !dateTimePattern.test(value)) return undefined
  try {
    // What `Schema.DateTimeUtc` decodes with.
    return DateTime.unsafeMake(value) as DateTime.Utc
  } catch {
    return undefined
  }
}

const createKeys: ReadonlySet<string> = new Set(Object.keys(Domain.CreateCommitment.from.fields))

/**
 * `Domain.CreateCommitment` decoded by hand for the common body: the schema's value when it is
 * certainly that, else `undefined` (then the schema decides). A body with any other property, or
 * anything unusual, is left to the schema; a property test checks that every value returned here
 * is the schema's (test/Fast.test.ts). About 25 µs less per create than the schema's decoder.
 */
export const decodeCreate = (json: unknown): Domain.CreateCommitment | undefined => {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined
  const body = json as Record<string, unknown>
  for (const key in body) {
    if (!createKeys.has(key)) return undefined
  }
  const { community_id, device_id, reward_points_estimated, suggestion_id, suggestion_type, user_id } = body
  if (!text(suggestion_id, 255)) return undefined
  if ("user_id" in body && !text(user_id, 255)) return undefined
  if ("suggestion_type" in body && !text(suggestion_type, 50)) return undefined
  if ("community_id" in body && community_id !== null && !text(community_id, 255)) return undefined
  if ("device_id" in body && device_id !== null && !text(device_id, 255)) return undefined
  if (
    "reward_points_estimated" in body &&
    !(typeof reward_points_estimated === "number" && Number.isSafeInteger(reward_points_estimated) &&
      reward_points_estimated >= 0 && reward_points_estimated <= 1_000_000)
  ) return undefined
  const start = dateTime(body.period_start)
  const end = dateTime(body.period_end)
  if (start === undefined || end === undefined) return undefined
  if (end.epochMillis <= start.epochMillis || end.epochMillis - start.epochMillis > maxWindowMs) return undefined
  const decoded: { -readonly [K in keyof Domain.CreateCommitment]: Domain.CreateCommitment[K] } = {
    suggestion_id,
    period_start: start,
    period_end: end
  }
  if ("user_id" in body) decoded.user_id = user_id as string
  if ("suggestion_type" in body) decoded.suggestion_type = suggestion_type as string
  if ("community_id" in body) decoded.community_id = community_id as string | null
  if ("device_id" in body) decoded.device_id = device_id as string | null
  if ("reward_points_estimated" in body) decoded.reward_points_estimated = reward_points_estimated as number
  return decoded
}

/** The payload as the contract's decoder would read it, or `undefined` to decline. */
const payloadOf = (request: ServerRequest.ServerRequest, maxDepth: number): Domain.CreateCommitment | undefined => {
  const type = request.headers["content-type"]
  if (type === undefined || !type.toLowerCase().includes("application/json")) return undefined
  const text = request.textIfRead
  if (text === undefined || text === "") return undefined
  let body: unknown
  try {
    body = JsonBody.parse(text, maxDepth)
  } catch {
    return undefined
  }
  return decodeCreate(body) ?? Either.getOrUndefined(decodePayload(body))
}

export const layer = FastRoutes.layer(Effect.gen(function*() {
  const commitments = yield* Commitments
  const verifier = yield* TokenVerifier.TokenVerifier
  const jwtHeaderName = verifier.config.jwtHeaderName

  const create = FastRoutes.endpoint(Api, "commitments", "create", (request, info: RequestContext.RequestInfo) =>
    Effect.flatMap(JsonBody.MaxDepth, (maxDepth) => {
      const token = Authentication.extractToken(request.headers, jwtHeaderName)
      if (Either.isLeft(token) || Option.isNone(token.right)) return Effect.succeed(undefined)
      const subject = verifier.cached(token.right.value)
      if (subject === undefined) return Effect.succeed(undefined)
      const payload = payloadOf(request, maxDepth)
      if (payload === undefined) return Effect.succeed(undefined)
      // From here on the answer is this route's: the caller is known (as authentication records it).
      info.userId = subject.id
      const caller = { subject, token: Redacted.make(token.right.value) }
      return Effect.matchEffect(commitments.create(caller, payload), {
        onFailure: errorResponse,
        onSuccess: (row) => Effect.succeed(HttpServerResponse.unsafeJson(row, { status: 201 }))
      })
    }))

  return [create]
}))
