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

/** The platform's error of `failure.status` (what a real service would answer). */
export const failWith = (failure: Failure) => {
  const body = { detail: failure.detail }
  switch (failure.status) {
    case 400:
      return Effect.fail(new HttpErrors.BadRequest(body))
    case 403:
      return Effect.fail(new HttpErrors.Forbidden(body))
    case 404:
      return Effect.fail(new HttpErrors.NotFound(body))
    case 409:
      return Effect.fail(new HttpErrors.Conflict(body))
    case 422:
      return Effect.fail(new HttpErrors.UnprocessableEntity(body))
    case 503:
      return Effect.fail(new HttpErrors.ServiceUnavailable(body))
    default:
      return Effect.fail(new HttpErrors.InternalServerError(body))
  }
}

/** Builds a served layer in the current scope and answers its `http://127.0.0.1:<port>`. */
export const servedUrl = <E>(served: Layer.Layer<HttpServer.HttpServer, E>) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(served)
    const address = Context.get(context, HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("a fake upstream is not on TCP")
    return `http://127.0.0.1:${address.port}`
  })
