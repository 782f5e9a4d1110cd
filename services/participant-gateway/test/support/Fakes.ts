/**
 * Pieces shared by the fake upstreams of the tests: an outcome that is a value or an error
 * status, that status as the platform's error class, and a served fake's base URL.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import type { TokenVerifier } from "@rec/auth"
import { HttpErrors } from "@rec/platform"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import * as Layer from "effect/Layer"

export interface Failure {
  readonly status: number
  readonly detail: string
}

export type Outcome<A> = Either.Either<A, Failure>

export type Verifier = Layer.Layer<TokenVerifier.TokenVerifier>

const errorOf = (failure: Failure) => {
  const body = { detail: failure.detail }
  switch (failure.status) {
    case 400:
      return new HttpErrors.BadRequest(body)
    case 403:
      return new HttpErrors.Forbidden(body)
    case 404:
      return new HttpErrors.NotFound(body)
    case 409:
      return new HttpErrors.Conflict(body)
    case 422:
      return new HttpErrors.UnprocessableEntity(body)
    case 503:
      return new HttpErrors.ServiceUnavailable(body)
    default:
      return new HttpErrors.InternalServerError(body)
  }
}

/**
 * The platform's error of `failure.status`, as a fake upstream answers it. Typed as the failure
 * of whatever endpoint answers it: a fake also plays upstreams that answer what their contract does
 * not declare, and `HttpApiBuilder` encodes any failure with the union of the API's errors.
 */
export const failWith = <E = never>(failure: Failure): Effect.Effect<never, E> =>
  Effect.fail(errorOf(failure)) as unknown as Effect.Effect<never, E>

/** Builds a served layer in the current scope and answers its `http://127.0.0.1:<port>`. */
export const servedUrl = <E>(served: Layer.Layer<HttpServer.HttpServer, E>) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(served)
    const address = Context.get(context, HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("a fake upstream is not on TCP")
    return `http://127.0.0.1:${address.port}`
  })
