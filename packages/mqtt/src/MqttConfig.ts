/**
 * Every environment variable of the MQTT client, read in one place. Host and port use the
 * spec's exact names; other spellings are ignored.
 *
 * | variable                               | default     | meaning |
 * |----------------------------------------|-------------|---------|
 * | `PLATFORM_MQTT_HOST`                   | `localhost` | broker host |
 * | `PLATFORM_MQTT_PORT`                   | `1883`      | broker port |
 * | `PLATFORM_MQTT_USERNAME`               | unset       | user name (for token brokers: see `credentials`) |
 * | `PLATFORM_MQTT_PASSWORD`               | unset       | password (kept `Redacted`) |
 * | `PLATFORM_MQTT_TLS`                    | `false`     | connect with TLS (`mqtts`), verifying the broker certificate |
 * | `PLATFORM_MQTT_TLS_CA_FILE`            | unset       | PEM file with the CA that signed the broker certificate |
 * | `PLATFORM_MQTT_CLIENT_ID`              | `<service>-<random>` | MQTT client id; must be unique per connection |
 * | `PLATFORM_MQTT_TOPIC_PREFIX`           | empty       | prepended to every topic and filter, stripped from received topics |
 * | `PLATFORM_MQTT_PROTOCOL_VERSION`       | `auto`      | `5`, `3.1.1`, or `auto` (MQTT 5, falling back to 3.1.1 when refused) |
 * | `PLATFORM_MQTT_KEEPALIVE_SECONDS`      | `60`        | keep-alive interval |
 * | `PLATFORM_MQTT_CONNECT_TIMEOUT_SECONDS`| `10`        | one connection attempt (TCP + CONNACK) |
 * | `PLATFORM_MQTT_RECONNECT_MIN_SECONDS`  | `1`         | first reconnect delay (doubles per failure, with jitter) |
 * | `PLATFORM_MQTT_RECONNECT_MAX_SECONDS`  | `30`        | longest reconnect delay |
 * | `PLATFORM_MQTT_PUBLISH_TIMEOUT_SECONDS`| `10`        | how long a publish waits for a connection and its acknowledgement |
 * | `MQTT_STARTUP_TIMEOUT_SECONDS`         | `30`        | how long start-up waits for the broker before continuing degraded |
 * | `PLATFORM_MQTT_TOKEN_FIELD`            | `password`  | CONNECT field carrying the service's access token (`password` or `username`) |
 * | `PLATFORM_MQTT_TOKEN_RENEW_SECONDS`    | `20`        | reconnect with a fresh token this long before the current one expires (at most a third of its life) |
 * | `PLATFORM_MQTT_SESSION_EXPIRY_SECONDS` | `0`         | 0: clean sessions; more: a persistent session the broker keeps this long while disconnected |
 */
import { Config, Duration, Option, type Redacted } from "effect"
import * as crypto from "node:crypto"

export type ProtocolSetting = "auto" | 5 | 4

/**
 * Which CONNECT field carries the service's access token: `password` (the embedded broker,
 * mosquitto-go-auth's HTTP backend) or `username` (mosquitto-go-auth's JWT backend reads the
 * token from the user name).
 */
export type TokenField = "password" | "username"

export interface MqttConfig {
  readonly host: string
  readonly port: number
  readonly username: Option.Option<string>
  readonly password: Option.Option<Redacted.Redacted>
  readonly tls: boolean
  readonly tlsCaFile: Option.Option<string>
  readonly clientId: string
  readonly topicPrefix: string
  readonly protocol: ProtocolSetting
  readonly keepalive: Duration.Duration
  readonly connectTimeout: Duration.Duration
  readonly reconnectMin: Duration.Duration
  readonly reconnectMax: Duration.Duration
  readonly publishTimeout: Duration.Duration
  readonly startupTimeout: Duration.Duration
  readonly tokenField: TokenField
  /** How long before its token expires a connection is renewed (capped at a third of the token's life). */
  readonly tokenRenewBefore: Duration.Duration
  /**
   * Zero: clean sessions (subscriptions made again on every connection, nothing queued while
   * disconnected). More: a persistent session (MQTT 5 session expiry; 3.1.1 `clean: false`)
   * under a stable `PLATFORM_MQTT_CLIENT_ID`, so QoS 1 messages published while this client is
   * disconnected are delivered when it reconnects.
   */
  readonly sessionExpiry: Duration.Duration
}

/** `<service>-<8 hex>`: unique per process, so replicas never take over each other's session. */
export const defaultClientId = (service: string): string =>
  `${service.replace(/[^A-Za-z0-9_-]+/g, "-")}-${crypto.randomBytes(4).toString("hex")}`

const seconds = (name: string, fallback: number, allowZero = false) =>
  Config.number(name).pipe(
    Config.withDefault(fallback),
    Config.validate({
      message: `${name} must be a ${allowZero ? "non-negative" : "positive"} number of seconds`,
      validation: (n) => (allowZero ? n >= 0 : n > 0)
    }),
    Config.map(Duration.seconds)
  )

const parseProtocol = (value: string): ProtocolSetting | undefined => {
  switch (value.trim().toLowerCase()) {
    case "auto":
      return "auto"
    case "5":
    case "5.0":
      return 5
    case "4":
    case "3.1.1":
      return 4
    default:
      return undefined
  }
}
/** Reads the configuration from the environment; `service` names the default client id. */
export const fromEnv = (service: string): Config.Config<MqttConfig> =>
  Config.all({
    host: Config.nonEmptyString("PLATFORM_MQTT_HOST").pipe(Config.withDefault("localhost")),
    port: Config.port("PLATFORM_MQTT_PORT").pipe(Config.withDefault(1883)),
    username: Config.option(Config.nonEmptyString("PLATFORM_MQTT_USERNAME")),
    password: Config.option(Config.redacted("PLATFORM_MQTT_PASSWORD")),
    tls: Config.boolean("PLATFORM_MQTT_TLS").pipe(Config.withDefault(false)),
    tlsCaFile: Config.option(Config.nonEmptyString("PLATFORM_MQTT_TLS_CA_FILE")),
    clientId: Config.nonEmptyString("PLATFORM_MQTT_CLIENT_ID").pipe(Config.withDefault(defaultClientId(service))),
    topicPrefix: Config.string("PLATFORM_MQTT_TOPIC_PREFIX").pipe(Config.withDefault("")),
    protocol: Config.string("PLATFORM_MQTT_PROTOCOL_VERSION").pipe(
      Config.withDefault("auto"),
      Config.validate({
        message: "PLATFORM_MQTT_PROTOCOL_VERSION must be auto, 5 or 3.1.1",
        validation: (value) => parseProtocol(value) !== undefined
      }),
      Config.map((value) => parseProtocol(value)!)
    ),
    keepalive: seconds("PLATFORM_MQTT_KEEPALIVE_SECONDS", 60),
    connectTimeout: seconds("PLATFORM_MQTT_CONNECT_TIMEOUT_SECONDS", 10),
    reconnectMin: seconds("PLATFORM_MQTT_RECONNECT_MIN_SECONDS", 1),
    reconnectMax: seconds("PLATFORM_MQTT_RECONNECT_MAX_SECONDS", 30),
    publishTimeout: seconds("PLATFORM_MQTT_PUBLISH_TIMEOUT_SECONDS", 10),
    startupTimeout: seconds("MQTT_STARTUP_TIMEOUT_SECONDS", 30, true),
    tokenField: Config.literal("password", "username")("PLATFORM_MQTT_TOKEN_FIELD").pipe(
      Config.withDefault("password" as const)
    ),
    tokenRenewBefore: seconds("PLATFORM_MQTT_TOKEN_RENEW_SECONDS", 20, true),
    sessionExpiry: seconds("PLATFORM_MQTT_SESSION_EXPIRY_SECONDS", 0, true).pipe(
      Config.validate({
        message: "PLATFORM_MQTT_SESSION_EXPIRY_SECONDS must be at most 4294967295",
        validation: (d) => Duration.toSeconds(d) <= 0xffffffff
      })
    )
  })

/** A configuration built in code (tests, the launcher) with the same defaults as `fromEnv`. */
export const make = (
  options: Partial<MqttConfig> & { readonly service?: string }
): MqttConfig => {
  const { service, ...rest } = options
  return {
    host: "localhost",
    port: 1883,
    username: Option.none(),
    password: Option.none(),
    tls: false,
    tlsCaFile: Option.none(),
    clientId: defaultClientId(service ?? "rec"),
    topicPrefix: "",
    protocol: "auto",
    keepalive: Duration.seconds(60),
    connectTimeout: Duration.seconds(10),
    reconnectMin: Duration.seconds(1),
    reconnectMax: Duration.seconds(30),
    publishTimeout: Duration.seconds(10),
    startupTimeout: Duration.seconds(30),
    tokenField: "password",
    tokenRenewBefore: Duration.seconds(20),
    sessionExpiry: Duration.zero,
    ...rest
  }
}

/** `mqtt://host:port` or `mqtts://host:port`, for logs and readiness (never credentials). */
export const brokerUrl = (config: MqttConfig): string => `${config.tls ? "mqtts" : "mqtt"}://${config.host}:${config.port}`
