/**
 * OpenID Connect discovery (`<issuer>/.well-known/openid-configuration`), fetched on first use
 * and kept. A failed fetch is not cached, but callers arriving within `retryAfter` of a failure
 * fail at once instead of hitting the identity provider again.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

export class DiscoveryDocument extends Schema.Class<DiscoveryDocument>("DiscoveryDocument")({
  issuer: Schema.String,
  jwks_uri: Schema.optional(Schema.String),
  token_endpoint: Schema.optional(Schema.String)
}) {}

export class DiscoveryError extends Data.TaggedError("DiscoveryError")<{
  readonly url: string
  readonly message: string
  readonly cause?: unknown
}> {}

export const discoveryUrl = (issuer: string): string =>
  `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`

export interface Discovery {
  readonly document: Effect.Effect<DiscoveryDocument, DiscoveryError>
}

export const make = (
  issuer: string,
  options?: {
    readonly timeout?: Duration.DurationInput | undefined
    readonly retryAfter?: Duration.DurationInput | undefined
  }
): Effect.Effect<Discovery, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const url = discoveryUrl(issuer)
    const retryAfter = Duration.toMillis(options?.retryAfter ?? Duration.seconds(5))
    const semaphore = yield* Effect.makeSemaphore(1)
    let cached: Option.Option<DiscoveryDocument> = Option.none()
    let lastFailure: { readonly at: number; readonly error: DiscoveryError } | undefined

    const fetch = client.get(url, { acceptJson: true }).pipe(
      Effect.flatMap(HttpClientResponse.filterStatusOk),
      Effect.flatMap(HttpClientResponse.schemaBodyJson(DiscoveryDocument)),
      Effect.scoped,
      Effect.timeout(options?.timeout ?? Duration.seconds(5)),
      Effect.mapError((cause) =>
        new DiscoveryError({ url, message: `OpenID discovery at ${url} failed`, cause })
      ),
      Effect.withSpan("OidcDiscovery.fetch", { attributes: { "url.full": url } })
    )

    const document = Effect.suspend(() =>
      Option.isSome(cached) ? Effect.succeed(cached.value) : semaphore.withPermits(1)(
        Effect.gen(function*() {
          if (Option.isSome(cached)) return cached.value
          const now = yield* Clock.currentTimeMillis
          if (lastFailure !== undefined && now - lastFailure.at < retryAfter) {
            return yield* Effect.fail(lastFailure.error)
          }
          const result = yield* Effect.either(fetch)
          if (result._tag === "Left") {
            lastFailure = { at: now, error: result.left }
            yield* Effect.logWarning(result.left.message, Cause.fail(result.left.cause))
            return yield* Effect.fail(result.left)
          }
          const doc = result.right
          if (doc.issuer.replace(/\/+$/, "") !== issuer.replace(/\/+$/, "")) {
            // Common behind proxies (internal vs public host names); tokens are still checked
            // against the configured issuer, so this is only worth a warning.
            yield* Effect.logWarning(
              `Discovery document at ${url} names issuer ${doc.issuer}, configured ${issuer}`
            )
          }
          cached = Option.some(doc)
          return doc
        })
      )
    )
    return { document }
  })
