/**
 * The digital twin's own error: a values fetcher id it does not know. The other errors are the
 * platform's (`HttpErrors.Forbidden`, `HttpErrors.NotFound`, `HttpErrors.Unauthorized` from the
 * authentication middleware, Effect's `HttpApiDecodeError` for a payload that does not match).
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class UnknownFetcher extends Schema.TaggedError<UnknownFetcher>()(
  "UnknownFetcher",
  {
    message: Schema.String,
    fetcher: Schema.String,
    /** The fetchers this entity offers. */
    available: Schema.Array(Schema.String)
  },
  HttpApiSchema.annotations({ status: 404, description: "No values fetcher with this id" })
) {}
