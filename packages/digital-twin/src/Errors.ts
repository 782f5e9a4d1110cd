/**
 * The digital twin's own error: a values fetcher id it does not know. The other errors are the
 * platform's (`HttpErrors.Forbidden`, `HttpErrors.NotFound`, `HttpErrors.Unauthorized` from the
 * authentication middleware, the kit's 400 for a payload that does not match).
 */
import { Contract, HttpErrors } from "@rec/platform"
import { Schema } from "effect"

export class UnknownFetcher extends Contract.UntaggedError<UnknownFetcher>()(
  "UnknownFetcher",
  {
    ...HttpErrors.fields,
    fetcher: Schema.String,
    /** The fetchers this entity offers. */
    available: Schema.Array(Schema.String)
  },
  { status: 404, description: "No values fetcher with this id" }
) {}
