/**
 * Calls to other systems (another service of the platform, the digital twin, an LLM server) and
 * what their failures become for this service's caller: one rule for every service, so a user
 * sees the same statuses whichever gateway they talk to (design.md, "Errors").
 *
 * | what happened | status answered | `detail` |
 * |---|---|---|
 * | the upstream answered 4xx (a declared error or not) | the same status | `<Upstream> refused <operation>: <its detail>` |
 * | the upstream answered 5xx | 502 | `<Upstream> failed <operation> (status 500)...` |
 * | unreachable (connection refused, reset, DNS) | 502 | `<Upstream> is unreachable (<operation>)...` |
 * | answer does not match the contract | 502 | `<Upstream> answered <operation> with a body that does not match its contract` |
 * | no answer within the timeout | 504 | `<Upstream> did not answer <operation> within 10s` |
 * | no credentials could be had for the call (token endpoint down) | 503 | `No credentials for <upstream>...` |
 *
 * ```ts
 * const upstream = Upstream.make({ name: "nudging service", timeout: "5 seconds" })
 * const outcome = yield* upstream.call("ingest_event", client.ingest.ingest({ payload }))  // fails with UpstreamFailure
 * // in a handler: Effect.mapError(Upstream.toHttpError)
 * ```
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as HttpErrors from "./HttpErrors.js"

export class UpstreamFailure extends Data.TaggedError("UpstreamFailure")<{
  /** Who failed, as a person names it (`digital twin`, `nudging service`). */
  readonly upstream: string
  /** The operation (`summary`, `ingest_event`). */
  readonly operation: string
  /** The status this service answers with (see the module's table). */
  readonly status: number
  /** The upstream's own status when it answered. */
  readonly upstreamStatus?: number | undefined
  readonly detail: string
  /** The upstream's `detail` or message when it answered one. */
  readonly upstreamDetail?: string | undefined
}> {
  constructor(args: UpstreamFailure.Args) {
    const { cause, ...fields } = args
    super(fields)
    // Kept for logs, out of structural equality (a client error holds its request and response).
    if (cause !== undefined) Object.defineProperty(this, "cause", { value: cause, enumerable: false })
  }
}

export declare namespace UpstreamFailure {
  export interface Args {
    readonly upstream: string
    readonly operation: string
    readonly status: number
    readonly upstreamStatus?: number | undefined
    readonly detail: string
    readonly upstreamDetail?: string | undefined
    readonly cause?: unknown
  }
}

const capitalised = (s: string) => (s === "" ? s : s[0]!.toUpperCase() + s.slice(1))

const detailOf = (u: unknown): string | undefined => {
  if (Predicate.hasProperty(u, "detail") && typeof u.detail === "string") return u.detail
  if (Predicate.hasProperty(u, "message") && typeof u.message === "string" && u.message !== "") return u.message
  return undefined
}

/** The status a decoded error class declares (`HttpApiSchema.annotations({ status })`). */
const declaredStatus = (error: unknown): number | undefined => {
  if (!Predicate.hasProperty(error, "constructor")) return undefined
  const schema = (error as { readonly constructor: unknown }).constructor
  return Schema.isSchema(schema) ? HttpApiSchema.getStatusErrorAST(schema.ast) : undefined
}

/** The failure for an upstream's answer with `status` (and its detail, if it gave one). */
export const answered = (upstream: string, operation: string, status: number, upstreamDetail?: string) => {
  const said = upstreamDetail === undefined ? "" : `: ${upstreamDetail}`
  return status < 500
    ? new UpstreamFailure({
      upstream,
      operation,
      status,
      upstreamStatus: status,
      upstreamDetail,
      detail: `${capitalised(upstream)} refused ${operation}${said}`
    })
    : new UpstreamFailure({
      upstream,
      operation,
      status: 502,
      upstreamStatus: status,
      upstreamDetail,
      detail: `${capitalised(upstream)} failed ${operation} (status ${status})${said}`
    })
}

/** Any failure of a call (typed client, `HttpClient`, token provider) as an `UpstreamFailure`. */
export const classify = (upstream: string, operation: string, error: unknown): UpstreamFailure => {
  if (error instanceof UpstreamFailure) return error
  const make = (status: number, detail: string) => new UpstreamFailure({ upstream, operation, status, detail, cause: error })
  if (HttpClientError.isHttpClientError(error)) {
    if (error._tag === "ResponseError") {
      // A status the contract does not declare comes as a "Decode" failure of the typed client.
      if (error.response.status >= 400) return answered(upstream, operation, error.response.status)
      return make(502, `${capitalised(upstream)} answered ${operation} with a body that could not be read`)
    }
    return make(502, `${capitalised(upstream)} is unreachable (${operation}): ${error.message}`)
  }
  if (ParseResult.isParseError(error)) {
    return make(502, `${capitalised(upstream)} answered ${operation} with a body that does not match its contract`)
  }
  if (Predicate.isTagged(error, "TokenRequestError")) {
    return make(503, `No credentials for ${upstream} (${operation}): ${detailOf(error) ?? "the token request failed"}`)
  }
  const status = declaredStatus(error)
  if (status !== undefined) return answered(upstream, operation, status, detailOf(error))
  return make(502, `${capitalised(upstream)} call ${operation} failed: ${detailOf(error) ?? String(error)}`)
}

/**
 * `classify`, reading the `detail` of an error answer the typed client could not decode (a status
 * the contract does not declare), so the caller learns what the upstream said.
 */
export const classifyWithBody = (upstream: string, operation: string, error: unknown): Effect.Effect<UpstreamFailure> => {
  const failure = classify(upstream, operation, error)
  if (!(HttpClientError.isHttpClientError(error) && error._tag === "ResponseError" && error.response.status >= 400)) {
    return Effect.succeed(failure)
  }
  return error.response.json.pipe(
    Effect.timeout("2 seconds"),
    Effect.map((body) => {
      const said = detailOf(body)
      return said === undefined ? failure : answered(upstream, operation, error.response.status, said)
    }),
    Effect.orElseSucceed(() => failure)
  )
}

/** The platform error to answer with. */
export const toHttpError = (failure: UpstreamFailure) => {
  const body = { detail: failure.detail }
  switch (failure.status) {
    case 400:
      return new HttpErrors.BadRequest(body)
    case 401:
      return new HttpErrors.Unauthorized(body)
    case 403:
      return new HttpErrors.Forbidden(body)
    case 404:
      return new HttpErrors.NotFound(body)
    case 409:
      return new HttpErrors.Conflict(body)
    case 413:
      return new HttpErrors.PayloadTooLarge(body)
    case 422:
      return new HttpErrors.UnprocessableEntity(body)
    case 429:
      return new HttpErrors.TooManyRequests(body)
    case 503:
      return new HttpErrors.ServiceUnavailable(body)
    case 504:
      return new HttpErrors.GatewayTimeout(body)
    default:
      // Other 4xx an upstream may answer (405, 410, ...) are this service's bad gateway.
      return new HttpErrors.BadGateway(body)
  }
}

/** The errors `toHttpError` gives, for `addError` in a contract that proxies an upstream. */
export const httpErrors = [
  HttpErrors.BadRequest,
  HttpErrors.Unauthorized,
  HttpErrors.Forbidden,
  HttpErrors.NotFound,
  HttpErrors.Conflict,
  HttpErrors.UnprocessableEntity,
  HttpErrors.TooManyRequests,
  HttpErrors.BadGateway,
  HttpErrors.ServiceUnavailable,
  HttpErrors.GatewayTimeout
] as const

export interface UpstreamOptions {
  readonly name: string
  /** Per call, including getting a token (default 10 seconds). */
  readonly timeout?: Duration.DurationInput | undefined
}

export interface Upstream {
  readonly name: string
  /** Runs a call with the timeout, a client span, and failures classified. */
  readonly call: <A, E, R>(operation: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, UpstreamFailure, R>
}

export const make = (options: UpstreamOptions): Upstream => {
  const timeout = Duration.decode(options.timeout ?? Duration.seconds(10))
  return {
    name: options.name,
    call: (operation, effect) =>
      effect.pipe(
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () =>
            new UpstreamFailure({
              upstream: options.name,
              operation,
              status: 504,
              detail: `${capitalised(options.name)} did not answer ${operation} within ${Duration.format(timeout)}`
            })
        }),
        Effect.catchAll((error) => Effect.flip(classifyWithBody(options.name, operation, error))),
        Effect.withSpan(`${options.name}.${operation}`, { attributes: { "peer.service": options.name } })
      )
  }
}
