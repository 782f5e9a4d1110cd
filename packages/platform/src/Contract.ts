/**
 * Helpers for writing `Api.ts` contracts.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as Schema from "effect/Schema"
import * as HttpErrors from "./HttpErrors.js"

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

export { UntaggedError } from "./UntaggedError.js"

/**
 * `HttpApi.make` for the platform: the contract also declares the bodies the kit answers on its
 * behalf, so typed clients decode them into classes instead of failing on an unexpected body:
 * 400 `BadRequest` (the kit's rewrite of a decode failure, `{detail, issues}`) and 413
 * `PayloadTooLarge`. The OpenAPI document keeps each only where it can happen (`Docs`).
 *
 * ```ts
 * export class Api extends Contract.make("nudging").add(IngestGroup) {}
 * ```
 */
export const make = <const Id extends string>(identifier: Id) =>
  HttpApi.make(identifier).addError(HttpErrors.BadRequest).addError(HttpErrors.PayloadTooLarge)
