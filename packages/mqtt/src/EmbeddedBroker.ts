/**
 * An MQTT broker inside the process (aedes, MQTT 3.1.1), for the embedded default and for
 * tests. Who may connect, publish, subscribe and receive is decided by a `BrokerAuth` service,
 * so the policy service can plug its MQTT decisions in:
 *
 * ```ts
 * const PolicyBrokerAuth = Layer.effect(EmbeddedBroker.BrokerAuth, Effect.gen(function*() {
 *   const policy = yield* PolicyEngine
 *   return {
 *     authenticate: ({ username, password }) => verifyJwt(password),           // password = JWT
 *     authorizePublish: (client, topic) => policy.allowMqtt(client, "publish", topic),
 *     authorizeSubscribe: (client, filter) => policy.allowMqtt(client, "subscribe", filter),
 *     authorizeRead: (client, topic) => policy.allowMqtt(client, "read", topic)
 *   }
 * }))
 * EmbeddedBroker.layer({ port: 1883 }).pipe(Layer.provide(PolicyBrokerAuth))
 * ```
 *
 * Hook contract:
 * - `authenticate` runs once per CONNECT. `false` refuses the connection (CONNACK "bad user name
 *   or password" when a password was sent, "not authorized" otherwise). `true` or
 *   `{ identity, expiresAt }` accepts it; the other hooks of that connection then get the
 *   credentials it connected with (`username`, `password`) and that `identity` (for example the
 *   subject of a verified token), so they need not remember anything per client.
 * - The connection ends when its credentials expire: at `expiresAt`, else at the `exp` of the
 *   JWT it connected with (the password, or a user name that is a JWT). An `exp` already past at
 *   CONNECT refuses it ("bad user name or password"). From that instant the connection may not
 *   publish (its will is not sent), subscribe or receive.
 * - `authorizePublish` runs for every PUBLISH (and for a will message when it is sent). `false`
 *   drops the message; aedes then closes the publisher's connection, which is how MQTT 3.1.1
 *   reports a refused publish (MQTT-3.3.5-2). Publishing to `$SYS/...` is always refused.
 * - `authorizeSubscribe` runs per topic filter of a SUBSCRIBE. `false` refuses that filter
 *   (SUBACK 0x80); the other filters of the same packet are unaffected.
 * - `authorizeRead` decides every delivery to a client (a message matching its subscriptions,
 *   a retained message, a message queued for its persistent session), by topic. Its answer is
 *   reused for that connection and topic for `readDecisionTtl` (5 s by default), which bounds
 *   how long a policy change takes to stop a live subscription, and renewed in the background
 *   once older than half of it; a delivery without a fresh decision waits for one (behind that
 *   connection's earlier deliveries, so order is kept). A refused delivery is dropped; the
 *   subscription and the connection stay.
 * - A hook that fails, dies or takes longer than 10 s counts as `false` (fail closed) and is
 *   logged.
 */
import { Aedes, type AedesPublishPacket, type AuthenticateError, type Client as AedesClient } from "aedes"
import { Context, Duration, Effect, Exit, Layer, Redacted, Runtime } from "effect"
import * as net from "node:net"
import { MqttBrokerError } from "./Errors.js"
import { ConnectionReads, type Deliver, verdictOf } from "./internal/deliveryChecks.js"
import { credentialExpiry, scheduleAt } from "./internal/tokenExpiry.js"

/** What a client sent at CONNECT. */
export interface ConnectRequest {
  readonly clientId: string
  /** The user name sent at CONNECT (for token brokers often the subject or a fixed value). */
  readonly username: string | undefined
  /** The password sent at CONNECT, e.g. a JWT. */
  readonly password: Redacted.Redacted<string> | undefined
}

/**
 * The connected client a decision is about: its CONNECT credentials, which `authenticate`
 * accepted, and the identity it returned. A will published after its connection is gone (a
 * broker taking over another's wills) has no credentials and no identity.
 */
export interface BrokerClient extends ConnectRequest {
  /** `authenticate`'s `{ identity }` for this connection; `undefined` when it answered `true`. */
  readonly identity: unknown
}

/** `authenticate`'s answer: refused, accepted, or accepted as this identity until this time. */
export type Authenticated = boolean | {
  readonly identity?: unknown
  /**
   * When the credentials stop being valid: the broker disconnects the client then. Default: the
   * `exp` of the JWT the client connected with (none for other credentials).
   */
  readonly expiresAt?: Date | undefined
}

export interface BrokerAuthorizer {
  readonly authenticate: (request: ConnectRequest) => Effect.Effect<Authenticated>
  readonly authorizePublish: (client: BrokerClient, topic: string) => Effect.Effect<boolean>
  readonly authorizeSubscribe: (client: BrokerClient, filter: string) => Effect.Effect<boolean>
  /** May this connection receive a message published to `topic` (mosquitto's read access, `acc 1`)? */
  readonly authorizeRead: (client: BrokerClient, topic: string) => Effect.Effect<boolean>
}

export class BrokerAuth extends Context.Tag("@rec/mqtt/BrokerAuth")<BrokerAuth, BrokerAuthorizer>() {}

/** Every client may connect, publish, subscribe and receive: development and tests only. */
export const allowEverything: BrokerAuthorizer = {
  authenticate: () => Effect.succeed(true),
  authorizePublish: () => Effect.succeed(true),
  authorizeSubscribe: () => Effect.succeed(true),
  authorizeRead: () => Effect.succeed(true)
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
  /**
   * How long an `authorizeRead` decision is reused for a connection and topic. It bounds how
   * long a policy change takes to stop deliveries to a live subscription. Default 5 s; 0 asks
   * for every delivery.
   */
  readonly readDecisionTtl?: Duration.DurationInput | undefined
  /**
   * Default true. false: deliveries are not checked (`authorizeRead` is never called; what a
   * client subscribed to, it receives until it disconnects). Only for measuring the checks'
   * cost, or a broker whose every topic is readable by every client it accepts.
   */
  readonly checkDeliveries?: boolean | undefined
}

const hookTimeout = Duration.seconds(10)
/** Topics whose read decision a connection remembers (the oldest is forgotten first). */
const maxTopicsPerConnection = 4_096
/** Deliveries one connection may have waiting for decisions before it is disconnected. */
const maxHeldPerConnection = 10_000
/** Parallel questions when a persistent session resumes with queued messages. */
const resumeConcurrency = 8

/** What the broker keeps per connection (a reconnect with the same client id is another aedes client object). */
interface Connection {
  client: BrokerClient | undefined
  /** ms since the epoch. */
  expiresAt: number | undefined
  cancelExpiry: () => void
  reads: ConnectionReads<AedesPublishPacket> | undefined
  /** Decisions on the topics of the messages queued for a resumed session, until it is ready. */
  resumed: Map<string, boolean> | undefined
}

/** aedes's per-client delivery functions (instance properties, not in its typings). */
interface DeliveringClient {
  deliver0: Deliver<AedesPublishPacket>
  deliverQoS: Deliver<AedesPublishPacket>
}

/** aedes's persistence, as far as a resumed session's queue goes (not in its typings). */
interface OutgoingQueue {
  readonly persistence: {
    outgoingStream(client: AedesClient): AsyncIterable<{ readonly topic: string }>
  }
}

const isExpired = (connection: Connection | undefined) =>
  connection?.expiresAt !== undefined && Date.now() >= connection.expiresAt

/** The broker, listening until the layer is released (connected clients are then disconnected). */
export const layer = (options: EmbeddedBrokerOptions = {}): Layer.Layer<EmbeddedBroker, MqttBrokerError, BrokerAuth> =>
  Layer.scoped(
    EmbeddedBroker,
    Effect.gen(function*() {
      const auth = yield* BrokerAuth
      const runtime = yield* Effect.runtime<never>()
      const checkDeliveries = options.checkDeliveries ?? true
      const readTtl = Duration.toMillis(Duration.decode(options.readDecisionTtl ?? Duration.seconds(5)))
      const connections = new WeakMap<AedesClient, Connection>()

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

      const log = (effect: Effect.Effect<void>) => Runtime.runFork(runtime)(effect)

      /** The decision on a connected client (or a will without its connection). */
      const clientOf = (client: AedesClient | null, clientId: string): BrokerClient =>
        (client === null ? undefined : connections.get(client)?.client) ??
          { clientId, username: undefined, password: undefined, identity: undefined }

      const askRead = (connection: Connection, topic: string, answer: (allowed: boolean) => void) => {
        const client = connection.client
        if (client === undefined || isExpired(connection)) return answer(false)
        decide("authorizeRead", client.clientId, auth.authorizeRead(client, topic), (allowed) => answer(allowed === true))
      }

      /** Puts the read check in front of the client's deliveries (see `internal/deliveryChecks.ts`). */
      const gateDeliveries = (aedesClient: AedesClient, connection: Connection) => {
        const reads = new ConnectionReads<AedesPublishPacket>({
          ttl: readTtl,
          ask: (topic, answer) => askRead(connection, topic, answer),
          maxTopics: maxTopicsPerConnection,
          maxHeld: maxHeldPerConnection,
          overflow: () => {
            log(Effect.logWarning("embedded MQTT broker: deliveries waiting for read decisions exceed the limit; disconnecting").pipe(
              Effect.annotateLogs({ subject: aedesClient.id, limit: maxHeldPerConnection })
            ))
            // Not from inside aedes's delivery loop, which called the gate.
            setImmediate(() => aedesClient.close())
          }
        })
        connection.reads = reads
        const delivering = aedesClient as unknown as DeliveringClient
        const deliver0 = delivering.deliver0
        const deliverQoS = delivering.deliverQoS
        delivering.deliver0 = (packet, done) => reads.gate(packet, deliver0, done)
        delivering.deliverQoS = (packet, done) => reads.gate(packet, deliverQoS, done)
      }

      /** Decides the topics of the messages a resumed persistent session has queued, before aedes sends them. */
      const decideQueued = (broker: Aedes, aedesClient: AedesClient, connection: Connection) =>
        Effect.gen(function*() {
          const topics = new Set<string>()
          const queue = (broker as unknown as OutgoingQueue).persistence.outgoingStream(aedesClient)
          yield* Effect.promise(async () => {
            for await (const packet of queue) topics.add(packet.topic)
          })
          const resumed = new Map<string, boolean>()
          yield* Effect.forEach(
            topics,
            (topic) =>
              Effect.async<void>((resume) =>
                askRead(connection, topic, (allowed) => {
                  resumed.set(topic, allowed)
                  resume(Effect.void)
                })
              ),
            { concurrency: resumeConcurrency, discard: true }
          )
          connection.resumed = resumed
        }).pipe(
          // Without decisions the queued messages are not sent (fail closed); the session stays.
          Effect.catchAllCause((cause) =>
            Effect.logWarning("embedded MQTT broker: reading a resumed session's queue failed; its queued messages are dropped", cause).pipe(
              Effect.annotateLogs({ subject: aedesClient.id })
            )
          )
        )

      /** Ends the connection when its credentials expire. */
      const expireAt = (aedesClient: AedesClient, connection: Connection, at: number) => {
        connection.expiresAt = at
        connection.cancelExpiry = scheduleAt(at, () => {
          log(Effect.logInfo("embedded MQTT broker: the client's token expired; disconnecting").pipe(
            Effect.annotateLogs({ subject: aedesClient.id, expired_at: new Date(at).toISOString() })
          ))
          aedesClient.close()
        })
      }

      const broker = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: () =>
            Aedes.createBroker({
              preConnect: (client, _packet, callback) => {
                const connection: Connection = {
                  client: undefined,
                  expiresAt: undefined,
                  cancelExpiry: () => {},
                  reads: undefined,
                  resumed: undefined
                }
                connections.set(client, connection)
                if (checkDeliveries) gateDeliveries(client, connection)
                client.conn.once("close", () => {
                  connection.cancelExpiry()
                  connection.reads?.close()
                })
                callback(null, true)
              },
              authenticate: (client, username, password, callback) => {
                const request: ConnectRequest = {
                  clientId: client.id,
                  username,
                  password: password === undefined ? undefined : Redacted.make(password.toString("utf8"))
                }
                const refuse = () => {
                  const error = Object.assign(new Error("not authorized"), {
                    returnCode: password === undefined ? 5 : 4
                  }) as AuthenticateError
                  callback(error, false)
                }
                decide("authenticate", client.id, auth.authenticate(request), (answer) => {
                  const connection = connections.get(client)
                  if (answer === false || connection === undefined) return refuse()
                  const expiresAt = (answer === true ? undefined : answer.expiresAt?.getTime()) ??
                    credentialExpiry(password?.toString("utf8"), username)
                  if (expiresAt !== undefined && Date.now() >= expiresAt) {
                    log(Effect.logInfo("embedded MQTT broker: refusing a token that has expired").pipe(
                      Effect.annotateLogs({ subject: client.id, expired_at: new Date(expiresAt).toISOString() })
                    ))
                    return refuse()
                  }
                  connection.client = { ...request, identity: answer === true ? undefined : answer.identity }
                  if (expiresAt !== undefined) expireAt(client, connection, expiresAt)
                  if (!checkDeliveries || client.clean) return callback(null, true)
                  Runtime.runCallback(runtime)(decideQueued(broker, client, connection), {
                    onExit: () => callback(null, true)
                  })
                })
              },
              authorizePublish: (client, packet, callback) => {
                const topic = packet.topic
                if (client !== null && topic.startsWith("$SYS/")) return callback(new Error("$SYS/ is reserved"))
                if (client !== null && isExpired(connections.get(client))) {
                  return callback(new Error("the client's credentials have expired"))
                }
                // A will published after its client is gone has no client.
                const subject = clientOf(client, client?.id ?? (packet as { clientId?: string }).clientId ?? "")
                decide("authorizePublish", subject.clientId, auth.authorizePublish(subject, topic), (allowed) =>
                  callback(allowed === true ? null : new Error(`publishing to "${topic}" is not allowed`)))
              },
              authorizeSubscribe: (client, subscription, callback) => {
                if (isExpired(connections.get(client))) return callback(null, null)
                const subject = clientOf(client, client.id)
                decide("authorizeSubscribe", subject.clientId, auth.authorizeSubscribe(subject, subscription.topic), (allowed) =>
                  callback(null, allowed === true ? subscription : null))
              },
              // Synchronous in aedes: it enforces the decision the delivery gate attached to the
              // packet (or, for a resumed session's queue, the decisions taken at CONNECT).
              authorizeForward: (client, packet) => {
                const connection = connections.get(client)
                if (connection === undefined || isExpired(connection)) return null
                if (!checkDeliveries) return packet
                const allowed = verdictOf(packet) ?? connection.resumed?.get(packet.topic) ?? connection.reads?.cached(packet.topic)
                return allowed === true ? packet : null
              }
            }),
          catch: (cause) => new MqttBrokerError({ message: `the embedded MQTT broker did not start: ${String(cause)}` })
        }),
        (b) => Effect.async<void>((resume) => b.close(() => resume(Effect.void))).pipe(Effect.timeoutOption(Duration.seconds(5)))
      )
      // A resumed session has sent its queue once it is ready; later deliveries go through the gate.
      broker.on("clientReady", (client) => {
        const connection = connections.get(client)
        if (connection !== undefined) connection.resumed = undefined
      })
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
