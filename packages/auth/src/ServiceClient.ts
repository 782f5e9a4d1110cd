/**
 * A typed client of another platform service, derived from that service's contract
 * (`HttpApiClient.makeWith(Api)`), so no service writes its own client for another:
 *
 * - `client` calls with this service's client-credentials token (`ClientCredentials`, with the
 *   scope the caller asks for, such as `NUDGING_SCOPE`); without a provider its calls fail with
 *   503 "No credentials";
 * - `asUser(token, (client) => call)` calls with a caller's own token, as gateways forward the
 *   user's token (the client is built once; the token rides on the fiber);
 * - `call(operation, effect)` adds the timeout and a client span and turns every failure into an
 *   `Upstream.UpstreamFailure` with the status to answer (4xx kept, 5xx and unreadable answers
 *   502, timeout 504), whose `Upstream.toHttpError` is the platform error body.
 *
 * Outbound requests carry the request id and `traceparent` when the `HttpClient` provided is
 * `OutboundHttp.layer`.
 *
 * ```ts
 * const nudging = yield* ServiceClient.make(NudgingApi, { name: "nudging service", baseUrl, tokens })
 * yield* nudging.call("ingest_event", nudging.client.ingest.ingestEvent({ payload }))
 * yield* nudging.call("list_notifications", nudging.asUser(token, (c) => c.notifications.list({ urlParams })))
 * ```
 */
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import type * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Upstream } from "@rec/platform"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { globalValue } from "effect/GlobalValue"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as ClientCredentials from "./ClientCredentials.js"

export interface Options {
  /** The upstream as a person names it, in error details and span names (`nudging service`). */
  readonly name: string
  readonly baseUrl: string
  /** This service's tokens; without them only `asUser` calls can succeed. */
  readonly tokens?: ClientCredentials.TokenProvider | undefined
  /** Per call, including getting a token (default 10 seconds). */
  readonly timeout?: Duration.DurationInput | undefined
}

type Failure = HttpClientError.HttpClientError | ClientCredentials.TokenRequestError

export type Client<Groups extends HttpApiGroup.HttpApiGroup.Any, ApiError> = HttpApiClient.Client<Groups, ApiError | Failure, never>

export interface ServiceClient<Groups extends HttpApiGroup.HttpApiGroup.Any, ApiError> extends Upstream.Upstream {
  /** Calls with this service's token. */
  readonly client: Client<Groups, ApiError>
  /** Runs `f`'s call with `token` (a caller's access token) instead of this service's. */
  readonly asUser: <A, E, R>(
    token: Redacted.Redacted | string,
    f: (client: Client<Groups, ApiError>) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E, R>
}

/** The caller's token for calls made through `asUser`. */
const forwardedToken = globalValue(
  "@rec/auth/ServiceClient/forwardedToken",
  () => FiberRef.unsafeMake<Option.Option<Redacted.Redacted>>(Option.none())
)

export const make = <ApiId extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, ApiError, ApiR>(
  api: HttpApi.HttpApi<ApiId, Groups, ApiError, ApiR>,
  options: Options
): Effect.Effect<ServiceClient<Groups, ApiError>, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const upstream = Upstream.make({ name: options.name, timeout: options.timeout })
    const serviceHttp: HttpClient.HttpClient.With<Failure> = options.tokens === undefined
      ? HttpClient.mapRequestEffect(http, () =>
        Effect.fail(
          new ClientCredentials.TokenRequestError({
            reason: "unreachable",
            message: `no client credentials are configured for calls to the ${options.name} (PLATFORM_OIDC_CLIENT_ID)`
          })
        ))
      : http.pipe(ClientCredentials.withToken(options.tokens))
    const forwardingHttp: HttpClient.HttpClient.With<Failure> = HttpClient.mapRequestEffect(http, (request) =>
      Effect.map(FiberRef.get(forwardedToken), Option.match({
        onNone: () => request,
        onSome: (token) => HttpClientRequest.bearerToken(request, Redacted.value(token))
      })))
    // The contract's middleware requirements are the server's; a client needs none of them.
    const build = (httpClient: HttpClient.HttpClient.With<Failure>) =>
      HttpApiClient.makeWith(api, { httpClient, baseUrl: options.baseUrl }) as unknown as Effect.Effect<Client<Groups, ApiError>>
    const client = yield* build(serviceHttp)
    const forwarding = yield* build(forwardingHttp)
    return {
      ...upstream,
      client,
      asUser: (token, f) =>
        Effect.locally(f(forwarding), forwardedToken, Option.some(typeof token === "string" ? Redacted.make(token) : token))
    }
  })
