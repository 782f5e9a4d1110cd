/**
 * What a failure of the gateway's own database becomes: a 503 that says so (the cause is logged
 * with the request id, never sent), instead of a defect answered as a bare 500.
 */
import { SqlError } from "@effect/sql/SqlError"
import { HttpErrors } from "@rec/platform"
import * as Effect from "effect/Effect"

export const unavailable = (operation: string) => (error: SqlError) =>
  Effect.logError(`database failure while ${operation}`, error).pipe(
    Effect.zipRight(
      Effect.fail(new HttpErrors.ServiceUnavailable({ detail: "The gateway's database is unavailable; try again shortly" }))
    )
  )

/** `effect` with its `SqlError` answered as `unavailable`. */
export const guarded = <A, E, R>(
  operation: string,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, SqlError> | HttpErrors.ServiceUnavailable, R> =>
  Effect.catchAll(
    effect,
    (e): Effect.Effect<never, Exclude<E, SqlError> | HttpErrors.ServiceUnavailable> =>
      e instanceof SqlError ? unavailable(operation)(e) : Effect.fail(e as Exclude<E, SqlError>)
  )
