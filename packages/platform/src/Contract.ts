/**
 * Helpers for writing `Api.ts` contracts.
 */
import type * as Schema from "effect/Schema"

/**
 * Report every invalid field of a request, not just the first one. `HttpApiBuilder` decodes with
 * Effect's default `errors: "first"`; a `parseOptions` annotation on the payload (or path, query,
 * headers) schema changes that for the whole value:
 *
 * ```ts
 * HttpApiEndpoint.post("create", "/items").setPayload(Contract.allErrors(Schema.Struct({ ... })))
 * ```
 */
export const allErrors = <S extends Schema.Annotable.All>(schema: S): Schema.Annotable.Self<S> =>
  schema.annotations({ parseOptions: { errors: "all" } }) as Schema.Annotable.Self<S>
