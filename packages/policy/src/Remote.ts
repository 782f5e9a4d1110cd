/**
 * The remote `PolicyEngine`: decisions are made by the policy service, reached over its
 * internal RPC (`Rpc.PolicyRpcs` at `<POLICY_SERVICE_URL>/rpc`) with the calling service's own
 * client-credentials token (`PLATFORM_OIDC_CLIENT_ID`/`_SECRET`, scopes `POLICY_SERVICE_SCOPE`).
 *
 * It fails closed: an unreachable or slow service (`POLICY_SERVICE_TIMEOUT`, default 5 s), a
 * refused token or an unexpected answer is `PolicyUnavailable`, never an allow.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as RpcClient from "@effect/rpc/RpcClient"
import * as RpcClientError from "@effect/rpc/RpcClientError"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import { ClientCredentials } from "@rec/auth"
import { OutboundHttp } from "@rec/platform"
import * as Config from "effect/Config"
import type { ConfigError } from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { PolicyAccessDenied, PolicyUnavailable } from "./Decision.js"
import * as PolicyConfig from "./PolicyConfig.js"
import { PolicyEngine, type PolicyEngineService } from "./PolicyEngine.js"
import * as PolicyRpc from "./Rpc.js"

/** An HTTP client that sends the provider's bearer token; token failures are transport errors. */
export const withServiceToken = (provider: ClientCredentials.TokenProvider) =>
(client: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.mapRequestEffect(client, (request) =>
    provider.token.pipe(
      Effect.map((token) => HttpClientRequest.bearerToken(request, Redacted.value(token))),
      Effect.mapError((cause) =>
        new HttpClientError.RequestError({ request, reason: "Transport", cause, description: cause.message })
      )
    ))

/** The client error and what caused it (a refused connection, a 404, a token failure). */
const describe = (error: RpcClientError.RpcClientError): string => {
  const cause = error.cause
  const detail = cause instanceof Error ? cause.message : cause === undefined ? "" : String(cause)
  return detail === "" || detail === error.message ? error.message : `${error.message} (${detail})`
}

export const make = (config: PolicyConfig.RemoteConfig) =>
  Effect.gen(function*() {
    const client = yield* RpcClient.make(PolicyRpc.PolicyRpcs)

    /** Transport problems, timeouts and a refused service token are outages: fail closed. */
    const call = <A, E>(
      effect: Effect.Effect<A, E | RpcClientError.RpcClientError | PolicyAccessDenied>
    ): Effect.Effect<A, E | PolicyUnavailable> =>
      effect.pipe(
        Effect.catchIf(
          (e): e is RpcClientError.RpcClientError | PolicyAccessDenied =>
            e instanceof RpcClientError.RpcClientError || e instanceof PolicyAccessDenied,
          (e) =>
            Effect.fail(
              new PolicyUnavailable({
                message: e instanceof PolicyAccessDenied
                  ? `the policy service refused this service: ${e.message}`
                  : `the policy service is unreachable: ${describe(e)}`
              })
            )
        ),
        Effect.timeoutFail({
          duration: config.timeout,
          onTimeout: () =>
            new PolicyUnavailable({
              message: `the policy service did not answer within ${Duration.format(config.timeout)}`
            })
        })
      )

    const service: PolicyEngineService = {
      decide: (pkg, input) =>
        call(client.Decide({ package: pkg, input })).pipe(
          Effect.withSpan("PolicyEngine.decide", { attributes: { "policy.package": pkg, "policy.remote": true } })
        ),
      decideAll: (requests) =>
        Effect.forEach(chunks(requests, PolicyRpc.maxBatch), (batch) => call(client.DecideAll({ requests: batch }))).pipe(
          Effect.map((parts) => parts.flat()),
          Effect.withSpan("PolicyEngine.decideAll", {
            attributes: { "policy.count": requests.length, "policy.remote": true }
          })
        ),
      evaluate: (pkg, rule, input) =>
        call(client.Evaluate({ package: pkg, rule, input })).pipe(
          Effect.withSpan("PolicyEngine.evaluate", {
            attributes: { "policy.package": pkg, "policy.rule": rule, "policy.remote": true }
          })
        ),
      status: call(client.Status()),
      // A refused reload (no policy.admin scope) is reported as such, not as an outage.
      reload: client.Reload().pipe(
        Effect.catchTag("RpcClientError", (e) =>
          Effect.fail(new PolicyUnavailable({ message: `the policy service is unreachable: ${describe(e)}` }))),
        Effect.timeoutFail({
          duration: config.timeout,
          onTimeout: () => new PolicyUnavailable({ message: "the policy service did not answer the reload" })
        })
      )
    }
    return service
  })

const chunks = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/**
 * The remote engine for an explicit configuration and token provider. Needs an `HttpClient`
 * (for example `OutboundHttp.layer`).
 */
export const layerWith = (
  config: PolicyConfig.RemoteConfig,
  tokens: ClientCredentials.TokenProvider
): Layer.Layer<PolicyEngine, never, HttpClient.HttpClient> =>
  Layer.scoped(PolicyEngine, make(config)).pipe(
    Layer.provide(RpcClient.layerProtocolHttp({ url: `${config.url}${PolicyRpc.path}` })),
    Layer.provide(RpcSerialization.layerJson),
    Layer.provide(Layer.effect(
      HttpClient.HttpClient,
      Effect.map(HttpClient.HttpClient, (c) => withServiceToken(tokens)(HttpClient.filterStatusOk(c)))
    ))
  )

/** The remote engine from the environment (`POLICY_SERVICE_*`, `PLATFORM_OIDC_*`). */
export const layer: Layer.Layer<PolicyEngine, ConfigError> = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* PolicyConfig.remote
    const tokens = yield* ClientCredentials.fromConfig({ scope: Config.succeed(config.scope) })
    return layerWith(config, tokens)
  })
).pipe(Layer.provide(OutboundHttp.layer))
