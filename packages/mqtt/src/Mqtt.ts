/**
 * The MQTT client of a service, over MQTT.js.
 *
 * ```ts
 * import { Mqtt } from "@rec/mqtt"
 *
 * const MqttLive = Mqtt.layer("grid-gateway")            // configured from PLATFORM_MQTT_*
 *
 * // a listener that survives broker restarts; one span per message
 * yield* mqtt.consumeJson("celine/pipelines/runs/+", PipelineRunEvent, (event, message) => ...)
 *   .pipe(Effect.forkScoped)
 * yield* mqtt.publishJson("rec/alerts/grid-1", Alert, alert, { qos: 1 })
 * ```
 *
 * Behaviour:
 * - **Start-up never fails on the broker.** The layer waits up to `MQTT_STARTUP_TIMEOUT_SECONDS`
 *   for a first connection; without one the service starts anyway, `status` reports
 *   `reconnecting` (readiness can show it as degraded) and connecting continues in the
 *   background with exponential backoff and jitter (`PLATFORM_MQTT_RECONNECT_MIN/MAX_SECONDS`).
 * - **Subscriptions survive reconnects.** The client keeps the set of active subscriptions and
 *   subscribes them again after every clean-session connection, including subscriptions made
 *   while disconnected. A subscription the broker refuses fails its stream. With a persistent
 *   session (`PLATFORM_MQTT_SESSION_EXPIRY_SECONDS`) the broker keeps them and queues QoS 1
 *   messages while the client is away.
 * - **Tokens.** A connection made with a JWT is renewed with a fresh token shortly before the
 *   token expires (`PLATFORM_MQTT_TOKEN_RENEW_SECONDS`); `PLATFORM_MQTT_TOKEN_FIELD` says whether
 *   the token goes in the password or the user name.
 * - **Back-pressure.** Each subscription has a bounded buffer; when it is full the client stops
 *   reading from the socket until the consumer catches up. A QoS 1/2 message is acknowledged
 *   once it is in the buffers of all matching subscriptions.
 * - **Publish** waits for a connection and for the broker's acknowledgement (QoS 1/2), both
 *   within `PLATFORM_MQTT_PUBLISH_TIMEOUT_SECONDS`. A QoS 1/2 publish interrupted by a connection
 *   loss is sent again after reconnecting (at least once), so a timed-out publish may still arrive.
 * - **Protocol.** MQTT 5 by default, falling back to 3.1.1 when the broker refuses 5 (the
 *   embedded aedes broker speaks 3.1.1). With MQTT 5, `traceparent` travels in user properties.
 * - **Tracing.** `Mqtt.publish` is a producer span; every message handled by `consume` /
 *   `consumeJson` runs in an `Mqtt.consume` consumer span, child of the publisher's span when the
 *   message carries a `traceparent`.
 */
import * as Headers from "@effect/platform/Headers"
import * as HttpTraceContext from "@effect/platform/HttpTraceContext"
import type { ConfigError, Scope } from "effect"
import {
  Cause,
  DateTime,
  Deferred,
  Duration,
  Effect,
  Either,
  Exit,
  Fiber,
  FiberId,
  Layer,
  Option,
  ParseResult,
  Queue,
  Redacted,
  Runtime,
  Schema,
  Stream,
  SubscriptionRef,
  Tracer
} from "effect"
import mqtt from "mqtt"
import * as fs from "node:fs"
import { MqttPublishError, MqttSubscribeError, MqttUnavailable } from "./Errors.js"
import { jwtExpiry } from "./internal/tokenExpiry.js"
import * as MqttConfig from "./MqttConfig.js"
import * as Topic from "./Topic.js"

export type QoS = 0 | 1 | 2

/** Connection state, as readiness checks and operators see it. */
export const MqttStatus = Schema.Struct({
  state: Schema.Literal("starting", "connected", "reconnecting", "stopped"),
  /** `mqtt://host:port`. */
  broker: Schema.String,
  clientId: Schema.String,
  /** ISO 8601 time of the last state change. */
  since: Schema.String,
  /** Failed connection attempts since the last successful one. */
  failedAttempts: Schema.Number,
  protocolVersion: Schema.optional(Schema.Literal(4, 5)),
  lastError: Schema.optional(Schema.String)
})
export type MqttStatus = typeof MqttStatus.Type

/** A received message. `topic` is the application topic (without `PLATFORM_MQTT_TOPIC_PREFIX`). */
export class MqttMessage {
  constructor(
    readonly topic: string,
    readonly payload: Uint8Array,
    readonly qos: QoS,
    readonly retain: boolean,
    /** MQTT 5 user properties (empty with MQTT 3.1.1). */
    readonly userProperties: Readonly<Record<string, string | ReadonlyArray<string>>>
  ) {}

  /** The payload as UTF-8 text. */
  get text(): string {
    return Buffer.from(this.payload.buffer, this.payload.byteOffset, this.payload.byteLength).toString("utf8")
  }

  /** The publisher's span, from a W3C `traceparent` user property. */
  get traceParent(): Option.Option<Tracer.ExternalSpan> {
    const value = this.userProperties["traceparent"]
    const traceparent = Array.isArray(value) ? value[0] : value
    return typeof traceparent === "string"
      ? HttpTraceContext.w3c(Headers.fromInput({ traceparent }))
      : Option.none()
  }
}

/** A message whose payload decoded with the subscription's Schema. */
export interface JsonMessage<A> {
  readonly value: A
  readonly message: MqttMessage
}

export interface PublishOptions {
  /** Default 1. */
  readonly qos?: QoS | undefined
  /** Default false. */
  readonly retain?: boolean | undefined
  /** MQTT 5 user properties (ignored with 3.1.1). */
  readonly userProperties?: Readonly<Record<string, string>> | undefined
}

export interface SubscribeOptions {
  /** Maximum QoS requested from the broker. Default 1. */
  readonly qos?: QoS | undefined
  /** Messages buffered for this subscription before the connection stops reading. Default 256. */
  readonly bufferSize?: number | undefined
}

export interface ConsumeOptions extends SubscribeOptions {
  /** Messages handled at the same time. Default 1 (in order). */
  readonly concurrency?: number | undefined
}

export interface MqttCredentials {
  readonly username: string
  readonly password: Redacted.Redacted
}

export interface MqttOptions {
  /**
   * The service's access token, fetched before every connection attempt and sent in the CONNECT
   * field `PLATFORM_MQTT_TOKEN_FIELD` names (`password` by default, with `tokenUsername` as the
   * user name; `username`: the token is the user name, `PLATFORM_MQTT_PASSWORD` if set the
   * password). The connection is renewed with a fresh token `PLATFORM_MQTT_TOKEN_RENEW_SECONDS`
   * before the token's `exp`. Takes precedence over `credentials`.
   */
  readonly token?: Effect.Effect<Redacted.Redacted, unknown> | undefined
  /** The user name sent with the token in the password field. Default: `PLATFORM_MQTT_USERNAME`, else the client id. */
  readonly tokenUsername?: string | undefined
  /**
   * Credentials fetched before every connection attempt, replacing `PLATFORM_MQTT_USERNAME` /
   * `_PASSWORD`. For brokers that authenticate with short-lived JWTs: return a fresh token each
   * time. A failure counts as a failed attempt (retried with backoff).
   */
  readonly credentials?: Effect.Effect<MqttCredentials, unknown> | undefined
}

interface Registration {
  readonly filter: string
  readonly qos: QoS
  readonly queue: Queue.Queue<MqttMessage>
  readonly refused: Deferred.Deferred<never, MqttSubscribeError>
}

const errorText = (cause: unknown): string => {
  if (cause instanceof AggregateError && cause.errors.length > 0) return cause.errors.map(errorText).join("; ")
  if (cause instanceof Error) return cause.message || cause.name
  return String(cause)
}

const reasonCode = (cause: unknown): number | undefined => {
  const code = (cause as { code?: unknown } | null)?.code
  return typeof code === "number" ? code : undefined
}

/** CONNACK codes that mean "this protocol version is not supported" (3.1.1: 1, MQTT 5: 0x84). */
const isUnsupportedProtocol = (cause: unknown) => {
  const code = reasonCode(cause)
  return code === 1 || code === 0x84
}

/** MQTT.js internals this client relies on (checked by the tests on every upgrade). */
interface MqttJsInternals {
  outgoing: Record<string, { cb?: unknown } | undefined>
  _storeProcessingQueue: Array<{ callback?: unknown }>
  /** Sends DISCONNECT (`forced` false) and closes the stream, without closing the client's stores. */
  _cleanUp(forced: boolean, done: (() => void) | undefined, opts: object): void
}

const make = (config: MqttConfig.MqttConfig, options: MqttOptions = {}) =>
  Effect.gen(function*() {
    const broker = MqttConfig.brokerUrl(config)
    const runtime = yield* Effect.runtime<never>()
    const now = () => DateTime.formatIso(DateTime.unsafeNow())
    const status = yield* SubscriptionRef.make<MqttStatus>({
      state: "starting",
      broker,
      clientId: config.clientId,
      since: now(),
      failedAttempts: 0
    })
    const setStatus = (next: Omit<MqttStatus, "broker" | "clientId" | "since">) =>
      SubscriptionRef.set(status, { ...next, broker, clientId: config.clientId, since: now() })

    let protocolVersion: 4 | 5 = config.protocol === 4 ? 4 : 5
    const sessionExpirySeconds = Math.round(Duration.toSeconds(config.sessionExpiry))
    const persistent = sessionExpirySeconds > 0
    const ca = yield* Option.match(config.tlsCaFile, {
      onNone: () => Effect.succeed(undefined),
      onSome: (file) =>
        Effect.try({
          try: () => fs.readFileSync(file),
          catch: (cause) => new Error(`PLATFORM_MQTT_TLS_CA_FILE ${file} cannot be read: ${errorText(cause)}`)
        }).pipe(Effect.orDie)
    })

    const client = mqtt.connect({
      host: config.host,
      port: config.port,
      protocol: config.tls ? "mqtts" : "mqtt",
      ...(ca === undefined ? {} : { ca }),
      rejectUnauthorized: true,
      clientId: config.clientId,
      protocolVersion,
      clean: !persistent,
      keepalive: Math.max(1, Math.round(Duration.toSeconds(config.keepalive))),
      connectTimeout: Duration.toMillis(config.connectTimeout),
      // Connecting, backoff and resubscribing are driven by the loop below.
      manualConnect: true,
      reconnectPeriod: 0,
      resubscribe: false,
      queueQoSZero: false
    })
    // MQTT.js emits `error` for every failed attempt; without a listener Node would throw.
    client.on("error", () => {})

    // --- subscriptions -------------------------------------------------------------------
    const registrations = new Set<Registration>()
    const filterQos = (filter: string): QoS | undefined => {
      let max: QoS | undefined
      for (const r of registrations) if (r.filter === filter && (max === undefined || r.qos > max)) max = r.qos
      return max
    }

    /**
     * A resumed persistent session delivers its queue right after CONNACK, before the service's
     * listeners have subscribed again (a restarted process). Such messages are kept here (at most
     * 10,000, for a minute) and handed to the first subscription that matches them.
     */
    const unclaimed: Array<{ readonly brokerTopic: string; readonly message: MqttMessage; readonly at: number }> = []
    const unclaimedFor = Duration.toMillis(Duration.minutes(1))
    const keepUnclaimed = (brokerTopic: string, message: MqttMessage) => {
      const now = Date.now()
      while (unclaimed.length > 0 && (unclaimed.length >= 10_000 || now - unclaimed[0]!.at > unclaimedFor)) unclaimed.shift()
      unclaimed.push({ brokerTopic, message, at: now })
    }
    const claim = (filter: string): Array<MqttMessage> => {
      const now = Date.now()
      const claimed: Array<MqttMessage> = []
      for (let i = 0; i < unclaimed.length;) {
        const entry = unclaimed[i]!
        if (now - entry.at <= unclaimedFor && Topic.matches(filter, entry.brokerTopic)) {
          claimed.push(entry.message)
          unclaimed.splice(i, 1)
        } else i++
      }
      return claimed
    }

    const dispatch = (packet: mqtt.IPublishPacket): Effect.Effect<void> =>
      Effect.suspend(() => {
        const brokerTopic = packet.topic.toString()
        const topic = Topic.withoutPrefix(config.topicPrefix, brokerTopic)
        if (topic === undefined) return Effect.void
        const properties = packet.properties?.userProperties ?? {}
        const message = new MqttMessage(
          topic,
          packet.payload as Uint8Array,
          packet.qos,
          packet.retain,
          properties as Record<string, string | ReadonlyArray<string>>
        )
        const targets = [...registrations].filter((r) => Topic.matches(r.filter, brokerTopic))
        if (targets.length === 0 && persistent) keepUnclaimed(brokerTopic, message)
        // Offering to a full queue suspends, which holds the acknowledgement and the socket.
        return Effect.forEach(targets, (r) => Effect.exit(Queue.offer(r.queue, message)), { discard: true })
      })
    client.handleMessage = (packet, callback) => {
      Runtime.runCallback(runtime)(dispatch(packet), { onExit: () => callback() })
    }

    const sendSubscribe = (filter: string, qos: QoS) =>
      Effect.async<"granted" | "refused", Error>((resume) => {
        client.subscribe(filter, { qos }, (err, _granted, suback) => {
          // SUBACK return codes (3.1.1) and reason codes (5) with the high bit set are refusals.
          if ((suback?.granted ?? []).some((code) => typeof code === "number" && (code & 0x80) !== 0)) {
            return resume(Effect.succeed("refused"))
          }
          resume(err ? Effect.fail(err) : Effect.succeed("granted"))
        })
      })

    const refuse = (filter: string) =>
      Effect.forEach(
        [...registrations].filter((r) => r.filter === filter),
        (r) =>
          Deferred.fail(
            r.refused,
            new MqttSubscribeError({
              filter: Topic.withoutPrefix(config.topicPrefix, Topic.matchingPart(filter)) ?? filter,
              reason: "refused",
              message: `the broker ${broker} refused the subscription to "${filter}"`
            })
          ),
        { discard: true }
      )

    /**
     * Subscribes every active filter again after a new connection. A resumed persistent session
     * still holds its subscriptions: only filters added meanwhile are subscribed (subscribing
     * again would make the broker send retained messages again), and filters dropped meanwhile
     * are unsubscribed.
     */
    const resubscribeAll = (sessionPresent: boolean) => Effect.suspend(() => {
      const filters = new Map<string, QoS>()
      for (const r of registrations) filters.set(r.filter, Math.max(r.qos, filters.get(r.filter) ?? 0) as QoS)
      if (!sessionPresent) sessionFilters.clear()
      const stale = [...sessionFilters].filter((filter) => !filters.has(filter))
      const fresh = [...filters].filter(([filter]) => !sessionFilters.has(filter))
      return Effect.all([
        Effect.forEach(
          fresh,
          ([filter, qos]) =>
            sendSubscribe(filter, qos).pipe(
              Effect.flatMap((result) => {
                if (result === "refused") return refuse(filter)
                if (persistent) sessionFilters.add(filter)
                return Effect.void
              }),
              // A connection lost meanwhile is handled by the next resubscription.
              Effect.catchAll(() => Effect.void)
            ),
          { discard: true, concurrency: "unbounded" }
        ),
        Effect.forEach(stale, (filter) =>
          Effect.async<void>((resume) => {
            client.unsubscribe(filter, () => {
              sessionFilters.delete(filter)
              resume(Effect.void)
            })
          }).pipe(Effect.timeoutOption(Duration.seconds(2))), { discard: true, concurrency: "unbounded" })
      ], { discard: true, concurrency: "unbounded" })
    })

    // --- connection loop -----------------------------------------------------------------
    const backoff = (failures: number) => {
      const min = Duration.toMillis(config.reconnectMin)
      const max = Duration.toMillis(config.reconnectMax)
      const base = Math.min(max, min * 2 ** Math.max(0, failures - 1))
      return Duration.millis(base * (0.8 + Math.random() * 0.4))
    }

    /** Sets the CONNECT credentials for the next attempt; the `exp` (ms) of the token among them, if any. */
    const applyCredentials: Effect.Effect<number | undefined, unknown> = Effect.gen(function*() {
      if (options.token !== undefined) {
        const token = Redacted.value(yield* options.token)
        if (config.tokenField === "username") {
          client.options.username = token
          client.options.password = Option.getOrUndefined(Option.map(config.password, Redacted.value))
        } else {
          client.options.username = options.tokenUsername ?? Option.getOrElse(config.username, () => config.clientId)
          client.options.password = token
        }
        return jwtExpiry(token)
      }
      if (options.credentials !== undefined) {
        const creds = yield* options.credentials
        client.options.username = creds.username
        client.options.password = Redacted.value(creds.password)
        return jwtExpiry(client.options.password) ?? jwtExpiry(client.options.username)
      }
      client.options.username = Option.getOrUndefined(config.username)
      client.options.password = Option.getOrUndefined(Option.map(config.password, Redacted.value))
      return jwtExpiry(client.options.password) ?? jwtExpiry(client.options.username)
    })

    /**
     * When to renew a connection whose token expires at `expiresAt`: `tokenRenewBefore` ahead,
     * but at most a third of the time left (a token provider such as `@rec/auth`'s refreshes at
     * 30 s or half the token's life ahead, so the renewal gets a new token).
     */
    const renewalDelay = (expiresAt: number | undefined): number | undefined => {
      if (expiresAt === undefined) return undefined
      const left = expiresAt - Date.now()
      // Too late to renew: the broker ends the connection at `exp` and the loop reconnects.
      if (left < 1_500) return undefined
      return left - Math.min(Duration.toMillis(config.tokenRenewBefore), left / 3)
    }

    /** The broker session currently holds these filters (persistent sessions only). */
    const sessionFilters = new Set<string>()

    /** One attempt; succeeds with a Deferred completed when that connection closes. */
    interface Connection {
      readonly closed: Deferred.Deferred<string>
      readonly sessionPresent: boolean
    }
    const connectOnce = Effect.async<Connection, unknown>((resume) => {
      let lastError: unknown = undefined
      const onError = (err: unknown) => {
        lastError = err
      }
      const onConnect = (connack: mqtt.IConnackPacket) => {
        cleanup()
        const closed = Deferred.unsafeMake<string>(FiberId.none)
        let closeError: unknown = undefined
        const onLaterError = (err: unknown) => {
          closeError = err
        }
        client.on("error", onLaterError)
        client.once("close", () => {
          client.off("error", onLaterError)
          Deferred.unsafeDone(closed, Exit.succeed(closeError === undefined ? "connection closed" : errorText(closeError)))
        })
        resume(Effect.succeed({ closed, sessionPresent: persistent && connack.sessionPresent === true }))
      }
      const onClose = () => {
        cleanup()
        resume(Effect.fail(lastError ?? new Error("connection closed while connecting")))
      }
      const cleanup = () => {
        client.off("connect", onConnect)
        client.off("close", onClose)
        client.off("error", onError)
      }
      client.on("error", onError)
      client.once("connect", onConnect)
      client.once("close", onClose)
      client.options.protocolVersion = protocolVersion
      if (protocolVersion === 5 && persistent) {
        client.options.properties = { ...client.options.properties, sessionExpiryInterval: sessionExpirySeconds }
      } else if (client.options.properties !== undefined) {
        delete client.options.properties.sessionExpiryInterval
      }
      client.connect()
      return Effect.sync(cleanup)
    })

    /**
     * Never completes unless the connection's token is about to expire and a newer one is
     * available: then it closes the connection cleanly (DISCONNECT) so the loop reconnects at
     * once with the new token. Brokers that verify a token only at CONNECT (Mosquitto with
     * mosquitto-go-auth) would otherwise keep a stale session; the embedded broker would cut it
     * at `exp`. With a persistent session nothing published meanwhile is lost.
     */
    const renewBeforeExpiry = (expiresAt: number | undefined) =>
      Effect.gen(function*() {
        let delay = renewalDelay(expiresAt)
        while (true) {
          if (delay === undefined || expiresAt === undefined) return yield* Effect.never
          yield* Effect.sleep(Duration.millis(delay))
          const next = yield* applyCredentials.pipe(Effect.orElseSucceed(() => undefined))
          if (next !== undefined && next > expiresAt) break
          // No newer token yet (or the provider failed): try again halfway to the expiry.
          yield* Effect.logDebug("MQTT token renewal found no newer token yet").pipe(Effect.annotateLogs({ broker }))
          const left = expiresAt - Date.now()
          delay = left < 1_500 ? undefined : left / 2
        }
        yield* Effect.sync(() => (client as unknown as MqttJsInternals)._cleanUp(false, undefined, {}))
        return { renewed: true as const }
      })

    const loop = Effect.gen(function*() {
      let failures = 0
      while (true) {
        const attempt = yield* applyCredentials.pipe(
          Effect.flatMap((expiresAt) => Effect.map(connectOnce, (connection) => ({ ...connection, expiresAt }))),
          Effect.either
        )
        if (attempt._tag === "Left") {
          const cause = attempt.left
          if (config.protocol === "auto" && protocolVersion === 5 && isUnsupportedProtocol(cause)) {
            protocolVersion = 4
            yield* Effect.logInfo("MQTT broker refused protocol 5; using 3.1.1").pipe(Effect.annotateLogs({ broker }))
            continue
          }
          failures++
          const delay = backoff(failures)
          yield* setStatus({ state: "reconnecting", failedAttempts: failures, lastError: errorText(cause) })
          yield* Effect.logDebug("MQTT connection attempt failed").pipe(
            Effect.annotateLogs({ broker, attempt: failures, error: errorText(cause), retryInMs: Math.round(Duration.toMillis(delay)) })
          )
          yield* Effect.sleep(delay)
          continue
        }
        const connectedAt = Date.now()
        const wasDown = failures > 0
        failures = 0
        // Subscriptions first: "connected" promises that subscribed streams receive what is
        // published from then on.
        yield* resubscribeAll(attempt.right.sessionPresent)
        yield* setStatus({ state: "connected", failedAttempts: 0, protocolVersion })
        yield* (wasDown ? Effect.logInfo("MQTT connected after retrying") : Effect.logDebug("MQTT connected")).pipe(
          Effect.annotateLogs({ broker, clientId: config.clientId, protocolVersion, sessionPresent: attempt.right.sessionPresent })
        )
        const renewed = yield* Deferred.await(attempt.right.closed).pipe(
          Effect.map((reason) => ({ renewed: false as const, reason })),
          Effect.raceFirst(renewBeforeExpiry(attempt.right.expiresAt))
        )
        if (renewed.renewed) {
          // A planned reconnect: no backoff, and nothing to warn about.
          yield* Deferred.await(attempt.right.closed)
          yield* Effect.logDebug("MQTT connection renewed with a fresh token").pipe(Effect.annotateLogs({ broker }))
          continue
        }
        const reason = renewed.reason
        // A connection that drops right away (e.g. refused publish, client-id takeover) counts as a
        // failure, so a flapping broker is not hammered.
        failures = Date.now() - connectedAt < 10_000 ? 1 : 0
        yield* setStatus({ state: "reconnecting", failedAttempts: failures, protocolVersion, lastError: reason })
        yield* Effect.logWarning("MQTT connection lost; reconnecting").pipe(Effect.annotateLogs({ broker, reason }))
        yield* Effect.sleep(backoff(Math.max(failures, 1)))
      }
    })

    const loopFiber = yield* Effect.forkDaemon(loop)
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* Fiber.interrupt(loopFiber)
        for (const r of registrations) yield* Queue.shutdown(r.queue)
        registrations.clear()
        yield* Effect.async<void>((resume) => {
          client.end(!client.connected, {}, () => resume(Effect.void))
        }).pipe(Effect.timeoutOption(Duration.seconds(2)))
        client.end(true)
        yield* setStatus({ state: "stopped", failedAttempts: 0 })
      })
    )

    // --- start-up wait ---------------------------------------------------------------------
    const untilConnected = status.changes.pipe(
      Stream.filter((s) => s.state === "connected"),
      Stream.runHead
    )
    // Every publish waits for a connection: when there is one, answer at once instead of
    // subscribing to the status changes (a stream per publish cost about 1 ms of CPU).
    const connectedOnce = Effect.flatMap(
      SubscriptionRef.get(status),
      (current) => (current.state === "connected" ? Effect.succeed(Option.some(current)) : untilConnected)
    )
    const started = yield* connectedOnce.pipe(Effect.timeoutOption(config.startupTimeout))
    if (Option.isNone(started)) {
      const current = yield* SubscriptionRef.get(status)
      yield* Effect.logWarning(
        `MQTT broker unavailable after ${Duration.format(config.startupTimeout)}; continuing degraded and reconnecting in the background`
      ).pipe(Effect.annotateLogs({ broker, lastError: current.lastError ?? "none yet" }))
    }

    const awaitConnected = (timeout: Duration.DurationInput) =>
      connectedOnce.pipe(Effect.timeoutOption(timeout), Effect.map(Option.isSome))

    // --- publishing ------------------------------------------------------------------------
    // MQTT.js keeps unacknowledged QoS 1/2 publishes (`outgoing`, by message id) and sends them
    // again after a reconnect, before it reports the connection as up. A publish this client gave
    // up on must leave that table, or a message the broker refuses (aedes then closes the
    // connection) would cut every later connection too.
    const internals = client as unknown as MqttJsInternals
    const trackPublish = (callback: (err?: Error) => void) => {
      const last = client.getLastMessageId()
      return internals.outgoing[String(last)]?.cb === callback ? last : undefined
    }
    const cancelPublish = (callback: (err?: Error) => void, messageId: number | undefined) => {
      if (messageId !== undefined && internals.outgoing[String(messageId)] !== undefined) {
        client.removeOutgoingMessage(messageId)
        return
      }
      for (const [id, entry] of Object.entries(internals.outgoing)) {
        if (entry?.cb === callback) client.removeOutgoingMessage(Number(id))
      }
      const queued = internals._storeProcessingQueue.findIndex((entry) => entry.callback === callback)
      if (queued >= 0) internals._storeProcessingQueue.splice(queued, 1)
    }

    const publishTimeoutMs = Duration.toMillis(config.publishTimeout)
    const publishFailed = (topic: string, err: Error) => new MqttPublishError({ topic, reason: "failed", message: errorText(err) })
    const publishTimedOut = (topic: string) =>
      new MqttPublishError({
        topic,
        reason: client.connected ? "timeout" : "not-connected",
        message: client.connected
          ? `no acknowledgement from ${broker} within ${Duration.format(config.publishTimeout)}`
          : `not connected to ${broker} within ${Duration.format(config.publishTimeout)}`
      })

    /**
     * Hands the message to MQTT.js and waits for its acknowledgement (QoS 1/2) or its write
     * (QoS 0), at most `deadline` ms. The deadline is a plain timer inside the callback rather
     * than `Effect.timeoutFail`, which races a sleeping fiber against every publish: on the
     * commitment path that race was a third of a publish's CPU (docs/performance.md,
     * "Flexibility service").
     */
    const sendNow = (
      topic: string,
      brokerTopic: string,
      payload: string | Uint8Array,
      options: mqtt.IClientPublishOptions,
      deadline: number
    ) =>
      Effect.async<void, MqttPublishError>((resume) => {
        let timer: ReturnType<typeof setTimeout> | undefined
        let settled = false
        const done = (err?: Error) => {
          if (settled) return
          settled = true
          if (timer !== undefined) clearTimeout(timer)
          resume(err ? Effect.fail(publishFailed(topic, err)) : Effect.void)
        }
        client.publish(
          brokerTopic,
          typeof payload === "string" ? payload : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength),
          options,
          done
        )
        const messageId = (options.qos ?? 0) > 0 ? trackPublish(done) : undefined
        if (!settled) {
          timer = setTimeout(() => {
            if (settled) return
            settled = true
            // Given up on: the caller is told it failed, so the message must not be sent again
            // behind its back.
            cancelPublish(done, messageId)
            resume(Effect.fail(publishTimedOut(topic)))
          }, Math.max(0, deadline))
        }
        // Interrupted: the same.
        return Effect.sync(() => {
          if (settled) return
          settled = true
          if (timer !== undefined) clearTimeout(timer)
          cancelPublish(done, messageId)
        })
      })

    /** MQTT.js's options of a publish; under MQTT 5 the span's `traceparent` goes as a user property. */
    const clientPublishOptions = (
      qos: QoS,
      retain: boolean,
      publishOptions: PublishOptions,
      span: Option.Option<Tracer.Span>
    ): mqtt.IClientPublishOptions => {
      const userProperties = {
        ...publishOptions.userProperties,
        ...(Option.isSome(span) ? { traceparent: HttpTraceContext.toHeaders(span.value)["traceparent"]! } : {})
      }
      return {
        qos,
        retain,
        ...(protocolVersion === 5 && Object.keys(userProperties).length > 0 ? { properties: { userProperties } } : {})
      }
    }

    const publish = (topic: string, payload: string | Uint8Array, publishOptions: PublishOptions = {}) =>
      Effect.suspend(() => {
        const invalid = Topic.validateName(topic)
        if (invalid !== undefined) {
          return Effect.fail(new MqttPublishError({ topic, reason: "invalid-topic", message: invalid }))
        }
        const qos = publishOptions.qos ?? 1
        const retain = publishOptions.retain ?? false
        const brokerTopic = Topic.withPrefix(config.topicPrefix, topic)
        return Effect.flatMap(Effect.currentSpan.pipe(Effect.option), (span) => {
          const options = clientPublishOptions(qos, retain, publishOptions, span)
          // Connected (the usual case): straight to MQTT.js. Otherwise wait for the connection
          // first, the wait and the acknowledgement sharing one publish timeout.
          const startedAt = Date.now()
          return Effect.flatMap(SubscriptionRef.get(status), (current) =>
            current.state === "connected"
              ? sendNow(topic, brokerTopic, payload, options, publishTimeoutMs)
              : connectedOnce.pipe(
                Effect.timeoutFail({ duration: config.publishTimeout, onTimeout: () => publishTimedOut(topic) }),
                Effect.flatMap(() =>
                  sendNow(topic, brokerTopic, payload, options, publishTimeoutMs - (Date.now() - startedAt))
                )
              ))
        })
      }).pipe(
        Effect.withSpan("Mqtt.publish", {
          kind: "producer",
          attributes: {
            "messaging.system": "mqtt",
            "messaging.operation.type": "send",
            "messaging.destination.name": topic,
            "mqtt.qos": publishOptions.qos ?? 1,
            "mqtt.retain": publishOptions.retain ?? false
          }
        })
      )

    /**
     * The JSON text of `value` encoded with `schema`, the encoder compiled once per schema:
     * `Schema.encode(Schema.parseJson(schema))` built a new schema, and so compiled a new encoder,
     * on every publish.
     */
    const encoders = new WeakMap<Schema.Schema.Any, (value: unknown) => Either.Either<unknown, ParseResult.ParseIssue>>()
    const encoderOf = (schema: Schema.Schema.Any) => {
      let encoder = encoders.get(schema)
      if (encoder === undefined) {
        encoder = ParseResult.encodeUnknownEither(schema as Schema.Schema<unknown, unknown>)
        encoders.set(schema, encoder)
      }
      return encoder
    }

    const publishJson = <A, I>(topic: string, schema: Schema.Schema<A, I>, value: NoInfer<A>, publishOptions?: PublishOptions) =>
      Effect.suspend(() => {
        const encoded = encoderOf(schema)(value)
        if (Either.isLeft(encoded)) {
          return Effect.fail(
            new MqttPublishError({ topic, reason: "encode", message: ParseResult.TreeFormatter.formatIssueSync(encoded.left) })
          )
        }
        let json: string
        try {
          json = JSON.stringify(encoded.right)
        } catch (cause) {
          return Effect.fail(new MqttPublishError({ topic, reason: "encode", message: errorText(cause) }))
        }
        return publish(topic, json, publishOptions)
      })

    /**
     * Several messages of one schema at once, for a service announcing many events: handed to
     * MQTT.js together (one span, one wait), so a message costs about what MQTT.js itself takes
     * (docs/performance.md, "Flexibility service"). Per message, in order: `undefined` once
     * acknowledged (QoS 1/2) or written (QoS 0), else why not; the effect itself never fails.
     * Same timeout and connection wait as `publish`.
     */
    const publishJsonMany = <A, I>(
      schema: Schema.Schema<A, I>,
      messages: ReadonlyArray<{ readonly topic: string; readonly value: NoInfer<A> }>,
      publishOptions: PublishOptions = {}
    ): Effect.Effect<ReadonlyArray<MqttPublishError | undefined>> =>
      Effect.suspend(() => {
        const results: Array<MqttPublishError | undefined> = new Array(messages.length).fill(undefined)
        const ready: Array<{ readonly index: number; readonly topic: string; readonly brokerTopic: string; readonly json: string }> = []
        const encode = encoderOf(schema)
        messages.forEach(({ topic, value }, index) => {
          const invalid = Topic.validateName(topic)
          if (invalid !== undefined) {
            results[index] = new MqttPublishError({ topic, reason: "invalid-topic", message: invalid })
            return
          }
          const encoded = encode(value)
          if (Either.isLeft(encoded)) {
            results[index] = new MqttPublishError({ topic, reason: "encode", message: ParseResult.TreeFormatter.formatIssueSync(encoded.left) })
            return
          }
          try {
            ready.push({ index, topic, brokerTopic: Topic.withPrefix(config.topicPrefix, topic), json: JSON.stringify(encoded.right) })
          } catch (cause) {
            results[index] = new MqttPublishError({ topic, reason: "encode", message: errorText(cause) })
          }
        })
        if (ready.length === 0) return Effect.succeed(results)
        const qos = publishOptions.qos ?? 1
        const retain = publishOptions.retain ?? false
        return Effect.flatMap(Effect.currentSpan.pipe(Effect.option), (span) => {
          const options = clientPublishOptions(qos, retain, publishOptions, span)
          const sendAll = (deadline: number) =>
            Effect.async<ReadonlyArray<MqttPublishError | undefined>>((resume) => {
              let pending = ready.length
              let finished = false
              let timer: ReturnType<typeof setTimeout> | undefined
              const tracked: Array<{ readonly done: (err?: Error) => void; readonly messageId: number | undefined; readonly state: { settled: boolean } }> = []
              const finish = () => {
                if (finished) return
                finished = true
                if (timer !== undefined) clearTimeout(timer)
                resume(Effect.succeed(results))
              }
              for (const item of ready) {
                const state = { settled: false }
                const done = (err?: Error) => {
                  if (state.settled || finished) return
                  state.settled = true
                  if (err) results[item.index] = publishFailed(item.topic, err)
                  if (--pending === 0) finish()
                }
                client.publish(item.brokerTopic, item.json, options, done)
                tracked.push({ done, messageId: qos > 0 ? trackPublish(done) : undefined, state })
              }
              // Whatever is not answered by the deadline is given up on (and must not be sent again).
              const giveUp = (fail: boolean) => {
                tracked.forEach((t, i) => {
                  if (t.state.settled) return
                  cancelPublish(t.done, t.messageId)
                  if (fail) results[ready[i]!.index] = publishTimedOut(ready[i]!.topic)
                })
              }
              if (!finished) {
                timer = setTimeout(() => {
                  if (finished) return
                  giveUp(true)
                  finish()
                }, Math.max(0, deadline))
              }
              return Effect.sync(() => {
                if (finished) return
                finished = true
                if (timer !== undefined) clearTimeout(timer)
                giveUp(false)
              })
            })
          const startedAt = Date.now()
          return Effect.flatMap(SubscriptionRef.get(status), (current) =>
            current.state === "connected"
              ? sendAll(publishTimeoutMs)
              : connectedOnce.pipe(
                Effect.timeoutOption(config.publishTimeout),
                Effect.flatMap((connected) => {
                  if (Option.isSome(connected)) return sendAll(publishTimeoutMs - (Date.now() - startedAt))
                  for (const item of ready) results[item.index] = publishTimedOut(item.topic)
                  return Effect.succeed(results)
                })
              ))
        })
      }).pipe(
        Effect.withSpan("Mqtt.publishMany", {
          kind: "producer",
          attributes: {
            "messaging.system": "mqtt",
            "messaging.operation.type": "send",
            "messaging.batch.message_count": messages.length,
            "mqtt.qos": publishOptions.qos ?? 1,
            "mqtt.retain": publishOptions.retain ?? false
          }
        })
      )

    // --- subscribing -----------------------------------------------------------------------
    const subscribeScoped = (
      filter: string,
      subscribeOptions: SubscribeOptions = {}
    ): Effect.Effect<Stream.Stream<MqttMessage, MqttSubscribeError>, MqttSubscribeError, Scope.Scope> =>
      Effect.gen(function*() {
        const invalid = Topic.validateFilter(filter)
        if (invalid !== undefined) {
          return yield* new MqttSubscribeError({ filter, reason: "invalid-filter", message: invalid })
        }
        const qos = subscribeOptions.qos ?? 1
        const brokerFilter = Topic.withPrefix(config.topicPrefix, filter)
        const registration: Registration = {
          filter: brokerFilter,
          qos,
          queue: yield* Queue.bounded<MqttMessage>(Math.max(1, subscribeOptions.bufferSize ?? 256)),
          refused: yield* Deferred.make<never, MqttSubscribeError>()
        }
        yield* Effect.acquireRelease(
          Effect.gen(function*() {
            const previousQos = filterQos(brokerFilter)
            registrations.add(registration)
            const waiting = claim(brokerFilter)
            if (waiting.length > 0) yield* Queue.offerAll(registration.queue, waiting).pipe(Effect.forkDaemon)
            // Only a new filter (or a higher QoS) needs a SUBSCRIBE now; while disconnected the
            // connection loop subscribes on the next connection.
            if (client.connected && (previousQos === undefined || previousQos < qos)) {
              const result = yield* sendSubscribe(brokerFilter, qos).pipe(Effect.orElseSucceed(() => "granted" as const))
              if (result === "granted" && persistent) sessionFilters.add(brokerFilter)
              if (result === "refused") {
                registrations.delete(registration)
                return yield* new MqttSubscribeError({
                  filter,
                  reason: "refused",
                  message: `the broker ${broker} refused the subscription to "${filter}"`
                })
              }
            }
          }),
          () =>
            Effect.gen(function*() {
              registrations.delete(registration)
              yield* Queue.shutdown(registration.queue)
              // A persistent session keeps the filter: a listener stopped by a shutdown must find
              // what was published meanwhile when the service is back. The next connection drops
              // filters no stream wants any more (`resubscribeAll`).
              if (filterQos(brokerFilter) === undefined && client.connected && !persistent) {
                yield* Effect.async<void>((resume) => {
                  client.unsubscribe(brokerFilter, () => {
                    sessionFilters.delete(brokerFilter)
                    resume(Effect.void)
                  })
                }).pipe(Effect.timeoutOption(Duration.seconds(2)))
              }
            })
        )
        return Stream.fromQueue(registration.queue).pipe(Stream.interruptWhen(Deferred.await(registration.refused)))
      })

    const subscribe = (filter: string, subscribeOptions?: SubscribeOptions) =>
      Stream.unwrapScoped(subscribeScoped(filter, subscribeOptions))

    const decodeJson = <A, I>(schema: Schema.Schema<A, I>) => {
      const decode = Schema.decodeUnknown(Schema.parseJson(schema))
      return (message: MqttMessage) =>
        decode(message.text).pipe(
          Effect.map((value): Option.Option<JsonMessage<A>> => Option.some({ value, message })),
          Effect.catchAll((error) =>
            Effect.as(
              Effect.logWarning("dropping an MQTT message that does not match its schema").pipe(
                Effect.annotateLogs({ topic: message.topic, error: ParseResult.TreeFormatter.formatErrorSync(error) })
              ),
              Option.none<JsonMessage<A>>()
            )
          )
        )
    }

    const subscribeJson = <A, I>(filter: string, schema: Schema.Schema<A, I>, subscribeOptions?: SubscribeOptions) =>
      subscribe(filter, subscribeOptions).pipe(Stream.mapEffect(decodeJson(schema)), Stream.filterMap((o) => o))

    const handleInSpan = <E, R>(message: MqttMessage, effect: Effect.Effect<void, E, R>) => {
      const parent = message.traceParent
      return effect.pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause as Cause.Cause<never>)
            : Effect.logError("MQTT message handler failed; continuing with the next message", cause).pipe(
              Effect.annotateLogs({ topic: message.topic })
            )
        ),
        Effect.withSpan("Mqtt.consume", {
          kind: "consumer",
          ...(Option.isSome(parent) ? { parent: parent.value } : {}),
          attributes: {
            "messaging.system": "mqtt",
            "messaging.operation.type": "process",
            "messaging.destination.name": message.topic,
            "mqtt.qos": message.qos,
            "mqtt.retain": message.retain
          }
        })
      )
    }

    const consume = <E, R>(
      filter: string,
      handler: (message: MqttMessage) => Effect.Effect<void, E, R>,
      consumeOptions: ConsumeOptions = {}
    ): Effect.Effect<void, MqttSubscribeError, R> =>
      subscribe(filter, consumeOptions).pipe(
        Stream.mapEffect((message) => handleInSpan(message, handler(message)), {
          concurrency: consumeOptions.concurrency ?? 1,
          unordered: (consumeOptions.concurrency ?? 1) > 1
        }),
        Stream.runDrain
      )

    const consumeJson = <A, I, E, R>(
      filter: string,
      schema: Schema.Schema<A, I>,
      handler: (value: A, message: MqttMessage) => Effect.Effect<void, E, R>,
      consumeOptions: ConsumeOptions = {}
    ): Effect.Effect<void, MqttSubscribeError, R> => {
      const decode = decodeJson(schema)
      return consume(
        filter,
        (message) =>
          Effect.flatMap(decode(message), Option.match({ onNone: () => Effect.void, onSome: (m) => handler(m.value, message) })),
        consumeOptions
      )
    }

    return {
      broker,
      clientId: config.clientId,
      topicPrefix: config.topicPrefix,
      /** The current connection state. */
      status: SubscriptionRef.get(status),
      /** Every state change, starting with the current state. */
      statusChanges: status.changes,
      isConnected: Effect.map(SubscriptionRef.get(status), (s) => s.state === "connected"),
      /**
       * Succeeds with the status while connected, fails with `MqttUnavailable` otherwise. For a
       * readiness check that should take the service out of rotation; a service that keeps
       * serving without the broker reports `status` as degraded instead.
       */
      check: Effect.flatMap(SubscriptionRef.get(status), (s) =>
        s.state === "connected"
          ? Effect.succeed(s)
          : Effect.fail(
            new MqttUnavailable({
              broker,
              state: s.state,
              message: `not connected to ${broker} (${s.state}${s.lastError === undefined ? "" : `: ${s.lastError}`})`
            })
          )),
      /** Waits for a connection; `false` when none came within `timeout`. */
      awaitConnected,
      publish,
      publishJson,
      publishJsonMany,
      subscribeScoped,
      subscribe,
      subscribeJson,
      consume,
      consumeJson
    } as const
  })

/** The MQTT client. `Mqtt.Default(config, options)` for an explicit configuration. */
export class Mqtt extends Effect.Service<Mqtt>()("@rec/mqtt/Mqtt", {
  scoped: (config: MqttConfig.MqttConfig, options?: MqttOptions) => make(config, options)
}) {}

/** The client configured from the environment (`MqttConfig.fromEnv`). */
export const layer = (service: string, options?: MqttOptions): Layer.Layer<Mqtt, ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(MqttConfig.fromEnv(service), (config) => Mqtt.Default(config, options)))
