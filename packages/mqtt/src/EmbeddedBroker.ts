/**
 * An MQTT broker inside the process (aedes, MQTT 3.1.1), for the embedded default and for
 * tests. Who may connect, publish and subscribe is decided by a `BrokerAuth` service, so the
 * policy service can plug its MQTT decisions in:
 *
 * ```ts
 * const PolicyBrokerAuth = Layer.effect(EmbeddedBroker.BrokerAuth, Effect.gen(function*() {
 *   const policy = yield* PolicyEngine
 *   return {
 *     authenticate: ({ username, password }) => verifyJwt(password),           // password = JWT
 *     authorizePublish: (client, topic) => policy.allowMqtt(client, "publish", topic),
 *     authorizeSubscribe: (client, filter) => policy.allowMqtt(client, "subscribe", filter)
 *   }
 * }))
 * EmbeddedBroker.layer({ port: 1883 }).pipe(Layer.provide(PolicyBrokerAuth))
 * ```
 *
 * Hook contract:
 * - `authenticate` runs once per CONNECT. `false` refuses the connection (CONNACK "bad user name
 *   or password" when a password was sent, "not authorized" otherwise). `true` or
 *   `{ identity }` accepts it; the publish/subscribe hooks of that connection then get the
 *   credentials it connected with (`username`, `password`) and that `identity` (for example the
 *   subject of a verified token), so they need not remember anything per client.
 * - `authorizePublish` runs for every PUBLISH (and for a will message when it is sent). `false`
 *   drops the message; aedes then closes the publisher's connection, which is how MQTT 3.1.1
 *   reports a refused publish (MQTT-3.3.5-2). Publishing to `$SYS/...` is always refused.
 * - `authorizeSubscribe` runs per topic filter of a SUBSCRIBE. `false` refuses that filter
 *   (SUBACK 0x80); the other filters of the same packet are unaffected.
 * - A hook that fails, dies or takes longer than 10 s counts as `false` (fail closed) and is
 *   logged.
 */
import { Aedes, type AuthenticateError, type Client as AedesClient } from "aedes"
import { Context, Duration, Effect, Exit, Layer, Redacted, Runtime } from "effect"
import * as net from "node:net"
import { MqttBrokerError } from "./Errors.js"

/** What a client sent at CONNECT. */
export interface ConnectRequest {
  readonly clientId: string
  /** The user name sent at CONNECT (for token brokers often the subject or a fixed value). */
  readonly username: string | undefined
  /** The password sent at CONNECT, e.g. a JWT. */
  readonly password: Redacted.Redacted<string> | undefined
}

/**
 * The connected client a publish/subscribe decision is about: its CONNECT credentials, which
 * `authenticate` accepted, and the identity it returned. A will published after its connection
 * is gone (a broker taking over another's wills) has no credentials and no identity.
 */
export interface BrokerClient extends ConnectRequest {
  /** `authenticate`'s `{ identity }` for this connection; `undefined` when it answered `true`. */
  readonly identity: unknown
}

/** `authenticate`'s answer: refused, accepted, or accepted as this identity. */
export type Authenticated = boolean | { readonly identity: unknown }

export interface BrokerAuthorizer {
  readonly authenticate: (request: ConnectRequest) => Effect.Effect<Authenticated>
  readonly authorizePublish: (client: BrokerClient, topic: string) => Effect.Effect<boolean>
  readonly authorizeSubscribe: (client: BrokerClient, filter: string) => Effect.Effect<boolean>
}

export class BrokerAuth extends Context.Tag("@rec/mqtt/BrokerAuth")<BrokerAuth, BrokerAuthorizer>() {}

/** Every client may connect, publish and subscribe: development and tests only. */
export const allowEverything: BrokerAuthorizer = {
  authenticate: () => Effect.succeed(true),
  authorizePublish: () => Effect.succeed(true),
  authorizeSubscribe: () => Effect.succeed(true)
}

/** `allowEverything` as a layer; compose a stricter `BrokerAuth` for anything reachable by others. */
export const allowAll: Layer.Layer<BrokerAuth> = Layer.succeed(BrokerAuth, allowEverything)

export interface EmbeddedBrokerInfo {
  readonly host: string
  /** The bound port (useful with `port: 0`). */
  readonly port: number
  /** `mqtt://host:port`. */
  readonly url: string
  readonly connectedClients: Effect.Effect<number>
}

export class EmbeddedBroker extends Context.Tag("@rec/mqtt/EmbeddedBroker")<EmbeddedBroker, EmbeddedBrokerInfo>() {}

export interface EmbeddedBrokerOptions {
  /** Default `127.0.0.1` (local only). */
  readonly host?: string | undefined
  /** Default 1883; 0 picks a free port. */
  readonly port?: number | undefined
}

const hookTimeout = Duration.seconds(10)

/** The broker, listening until the layer is released (connected clients are then disconnected). */
export const layer = (options: EmbeddedBrokerOptions = {}): Layer.Layer<EmbeddedBroker, MqttBrokerError, BrokerAuth> =>
  Layer.scoped(
    EmbeddedBroker,
    Effect.gen(function*() {
      const auth = yield* BrokerAuth
      const runtime = yield* Effect.runtime<never>()
      // Per connection (a reconnect with the same client id is another aedes client object).
      const connected = new WeakMap<AedesClient, BrokerClient>()

      const decide = <A extends Authenticated>(
        hook: string,
        subject: string,
        effect: Effect.Effect<A>,
        done: (answer: A | false) => void
      ) =>
        Runtime.runCallback(runtime)(
          effect.pipe(
            Effect.timeoutFail({ duration: hookTimeout, onTimeout: () => new Error(`${hook} took longer than 10 s`) }),
            Effect.catchAllCause((cause) =>
              Effect.as(
                Effect.logWarning(`embedded MQTT broker: ${hook} failed; refusing`, cause).pipe(
                  Effect.annotateLogs({ subject })
                ),
                false as const
              )
            )
          ),
          { onExit: (exit) => done(Exit.isSuccess(exit) ? exit.value : false) }
        )

      /** The decision on a connected client (or a will without its connection). */
      const clientOf = (client: AedesClient | null, clientId: string): BrokerClient =>
        (client === null ? undefined : connected.get(client)) ??
          { clientId, username: undefined, password: undefined, identity: undefined }

      const broker = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: () =>
            Aedes.createBroker({
              authenticate: (client, username, password, callback) => {
                const request: ConnectRequest = {
                  clientId: client.id,
                  username,
                  password: password === undefined ? undefined : Redacted.make(password.toString("utf8"))
                }
                decide("authenticate", client.id, auth.authenticate(request), (answer) => {
                  if (answer !== false) {
                    connected.set(client, { ...request, identity: answer === true ? undefined : answer.identity })
                    return callback(null, true)
                  }
                  const error = Object.assign(new Error("not authorized"), {
                    returnCode: password === undefined ? 5 : 4
                  }) as AuthenticateError
                  callback(error, false)
                })
              },
              authorizePublish: (client, packet, callback) => {
                const topic = packet.topic
                if (client !== null && topic.startsWith("$SYS/")) return callback(new Error("$SYS/ is reserved"))
                // A will published after its client is gone has no client.
                const subject = clientOf(client, client?.id ?? (packet as { clientId?: string }).clientId ?? "")
                decide("authorizePublish", subject.clientId, auth.authorizePublish(subject, topic), (allowed) =>
                  callback(allowed === true ? null : new Error(`publishing to "${topic}" is not allowed`)))
              },
              authorizeSubscribe: (client, subscription, callback) => {
                const subject = clientOf(client, client.id)
                decide("authorizeSubscribe", subject.clientId, auth.authorizeSubscribe(subject, subscription.topic), (allowed) =>
                  callback(null, allowed === true ? subscription : null))
              }
            }),
          catch: (cause) => new MqttBrokerError({ message: `the embedded MQTT broker did not start: ${String(cause)}` })
        }),
        (b) => Effect.async<void>((resume) => b.close(() => resume(Effect.void))).pipe(Effect.timeoutOption(Duration.seconds(5)))
      )

      const sockets = new Set<net.Socket>()
      const server = yield* Effect.acquireRelease(
        Effect.async<net.Server, MqttBrokerError>((resume) => {
          const s = net.createServer((socket) => {
            sockets.add(socket)
            socket.on("close", () => sockets.delete(socket))
            broker.handle(socket)
          })
          s.once("error", (cause) =>
            resume(Effect.fail(new MqttBrokerError({ message: `the embedded MQTT broker cannot listen: ${cause.message}` }))))
          s.listen(options.port ?? 1883, options.host ?? "127.0.0.1", () => resume(Effect.succeed(s)))
        }),
        (s) =>
          Effect.async<void>((resume) => {
            s.close(() => resume(Effect.void))
            for (const socket of sockets) socket.destroy()
          }).pipe(Effect.timeoutOption(Duration.seconds(5)))
      )

      const address = server.address() as net.AddressInfo
      const host = options.host ?? "127.0.0.1"
      const info: EmbeddedBrokerInfo = {
        host,
        port: address.port,
        url: `mqtt://${host.includes(":") ? `[${host}]` : host}:${address.port}`,
        connectedClients: Effect.sync(() => broker.connectedClients)
      }
      yield* Effect.logInfo("embedded MQTT broker listening").pipe(Effect.annotateLogs({ url: info.url }))
      return info
    })
  )

/** Decisions from plain functions or Effects (tests, simple deployments). */
export const layerAuth = (authorizer: BrokerAuthorizer): Layer.Layer<BrokerAuth> => Layer.succeed(BrokerAuth, authorizer)
