/**
 * Error classes whose body is exactly their fields (no `_tag`): the platform's `HttpErrors` and
 * services' own bodies. Re-exported as `Contract.UntaggedError`.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as JSONSchema from "effect/JSONSchema"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** A `_tag` on the type side only: set by the constructor, never encoded, never required. */
const typeSideTag = <const Tag extends string>(tag: Tag) =>
  Schema.optionalToRequired(Schema.Literal(tag), Schema.Literal(tag), {
    decode: () => tag,
    encode: () => Option.none()
  }).pipe(Schema.withConstructorDefault(() => tag))

/**
 * The JSON Schema of the body: the fields without the type-side `_tag` (which would otherwise
 * show in the OpenAPI document as an optional property that is never sent). Fields needing
 * definitions of their own keep the generated schema.
 */
const bodyJsonSchema = (fields: Schema.Struct.Fields, description: string | undefined): object | undefined => {
  const { $defs, $schema: _, ...schema } = JSONSchema.make(Schema.Struct(fields)) as JSONSchema.JsonSchema7Root
  if ($defs !== undefined && Object.keys($defs).length > 0) return undefined
  return description === undefined ? schema : { ...schema, description }
}

/**
 * An error class whose body is exactly its fields, without the `_tag` of `Schema.TaggedError`,
 * for contracts that fix such bodies (FastAPI's `{detail}`, mosquitto-go-auth's `{ok, reason}`).
 *
 * Instances still carry a `_tag` (`Effect.catchTag` works), kept on the type side only, which is
 * also what keeps bodies of the same shape apart: `HttpApiBuilder` encodes a failure with the
 * union of every error of the API, and a plain `Schema.Class` encodes any value that has its
 * fields, so with two such classes a 400 could leave as a 401. The status and description are
 * the endpoint's (`HttpApiSchema.annotations`).
 *
 * ```ts
 * class Denied extends Contract.UntaggedError<Denied>()("Denied", { ok: Schema.Literal(false), reason: Schema.String },
 *   { status: 403, description: "The broker is told no" }) {}
 * ```
 */
export const UntaggedError = <Self = never>(identifier?: string) =>
<const Tag extends string, Fields extends Schema.Struct.Fields>(
  tag: Tag,
  fields: Fields,
  options: {
    readonly status: number
    readonly description?: string | undefined
    /**
     * Decode only bodies with no other fields than these. A typed client decodes an error
     * response with every class of its status in turn, the API's first: an exact `BadRequest`
     * leaves a service's own 400 with more fields (an ingest's `outcomes`) to that service's class.
     */
    readonly exact?: boolean | undefined
  }
) => {
  const body = bodyJsonSchema(fields, options.description)
  const encoded = {
    ...(body === undefined ? {} : { jsonSchema: body }),
    ...(options.exact === true ? { parseOptions: { onExcessProperty: "error" as const } } : {})
  }
  return Schema.Class<Self>(identifier ?? tag)(
    { _tag: typeSideTag(tag), ...fields },
    [
      HttpApiSchema.annotations({ status: options.status, description: options.description }),
      undefined,
      Object.keys(encoded).length === 0 ? undefined : encoded
    ]
  )
}
