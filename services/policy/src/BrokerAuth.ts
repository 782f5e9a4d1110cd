/**
 * The embedded MQTT broker (`@rec/mqtt`'s aedes broker) asking the policy service, over HTTP,
 * exactly what Mosquitto with mosquitto-go-auth's remote JWT backend asks:
 *
 * - CONNECT: `POST /mqtt/user` with the client's token as `Authorization: Bearer`;
 * - PUBLISH: `POST /mqtt/acl` `{clientid, topic, acc: 2}` with the same header;
 * - SUBSCRIBE: `POST /mqtt/acl` `{clientid, topic: <filter>, acc: 4}`;
 * - each delivery to a subscriber: `POST /mqtt/acl` `{clientid, topic, acc: 1}` (read), which the
 *   broker asks once per connection and topic and reuses for its `readDecisionTtl` (5 s by
 *   default), as go-auth's ACL cache does.
 *
 * A 2xx answer allows; anything else (403, 5xx, a timeout, no answer) refuses. The token is the
 * MQTT password (or, if the password is empty, a user name that is a JWT); the broker hands every
 * check the credentials its connection authenticated with, so nothing is remembered here. The
 * broker also ends a connection at its token's `exp`: the verifier's clock tolerance lets a
 * token through a few seconds past `exp`, the connection does not outlive it.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { EmbeddedBroker } from "@rec/mqtt"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { looksLikeJwt } from "./MqttAuth.js"

export interface Options {
  /** Base URL of the policy service (`http://127.0.0.1:8009`). */
  readonly url: string
  /** Per check; go-auth's default HTTP timeout is a few seconds, ours too. */
  readonly timeout?: Duration.DurationInput | undefined
}

/** The token among a client's credentials: the password, else a user name that is a JWT. */
const tokenOf = ({ password, username }: EmbeddedBroker.ConnectRequest): string | undefined => {
  const secret = password === undefined ? undefined : Redacted.value(password)
  return looksLikeJwt(secret) ? secret : looksLikeJwt(username) ? username : undefined
}

export const make = (options: Options) =>
  Effect.gen(function*() {
    const client = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequest(HttpClientRequest.prependUrl(options.url.replace(/\/+$/, "")))
    )
    const timeout = options.timeout ?? Duration.seconds(3)

    /** True for a 2xx answer; everything else (including failures to ask) is false. */
    const ask = (path: string, token: string, body: unknown) =>
      HttpClientRequest.post(path).pipe(
        HttpClientRequest.bearerToken(token),
        HttpClientRequest.setHeader("x-source-service", "embedded-mqtt-broker"),
        HttpClientRequest.bodyJson(body),
        Effect.flatMap(client.execute),
        Effect.map((response) => response.status >= 200 && response.status < 300),
        Effect.scoped,
        Effect.timeout(timeout),
        Effect.catchAll((error) =>
          Effect.as(Effect.logWarning(`policy service check ${path} failed; refusing`, error), false)
        )
      )

    /** An ACL check with the token the client connected with (none: a will without its connection). */
    const acl = (brokerClient: EmbeddedBroker.BrokerClient, topic: string, acc: number) => {
      const token = tokenOf(brokerClient)
      return token === undefined
        ? Effect.succeed(false)
        : ask("/mqtt/acl", token, { clientid: brokerClient.clientId, topic, acc })
    }

    const authorizer: EmbeddedBroker.BrokerAuthorizer = {
      authenticate: (request) => {
        const token = tokenOf(request)
        return token === undefined ? Effect.succeed(false) : ask("/mqtt/user", token, null)
      },
      authorizePublish: (brokerClient, topic) => acl(brokerClient, topic, 2),
      authorizeSubscribe: (brokerClient, filter) => acl(brokerClient, filter, 4),
      authorizeRead: (brokerClient, topic) => acl(brokerClient, topic, 1)
    }
    return authorizer
  })

/** `BrokerAuth` for `EmbeddedBroker.layer`, delegating to the policy service at `options.url`. */
export const layer = (options: Options): Layer.Layer<EmbeddedBroker.BrokerAuth> =>
  Layer.effect(EmbeddedBroker.BrokerAuth, make(options)).pipe(Layer.provide(NodeHttpClient.layerUndici))
