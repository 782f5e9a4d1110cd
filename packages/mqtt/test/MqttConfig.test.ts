import { describe, expect, it } from "@effect/vitest"
import { MqttConfig } from "@rec/mqtt"
import { ConfigProvider, Duration, Effect, Option, Redacted } from "effect"

const read = (env: Record<string, string>) =>
  MqttConfig.fromEnv("grid-gateway").pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))

describe("MqttConfig", () => {
  it.effect("defaults follow the spec (localhost:1883, 30 s start-up wait)", () =>
    Effect.gen(function*() {
      const config = yield* read({})
      expect(config).toMatchObject({ host: "localhost", port: 1883, tls: false, topicPrefix: "", protocol: "auto" })
      expect(config.clientId).toMatch(/^grid-gateway-[0-9a-f]{8}$/)
      expect(Duration.toSeconds(config.startupTimeout)).toBe(30)
      expect(Option.isNone(config.username)).toBe(true)
      expect(MqttConfig.brokerUrl(config)).toBe("mqtt://localhost:1883")
    }))

  it.effect("reads the PLATFORM_MQTT_* names and MQTT_STARTUP_TIMEOUT_SECONDS", () =>
    Effect.gen(function*() {
      const config = yield* read({
        PLATFORM_MQTT_HOST: "broker.example",
        PLATFORM_MQTT_PORT: "8883",
        PLATFORM_MQTT_USERNAME: "svc-grid",
        PLATFORM_MQTT_PASSWORD: "jwt",
        PLATFORM_MQTT_TLS: "true",
        PLATFORM_MQTT_CLIENT_ID: "grid-1",
        PLATFORM_MQTT_TOPIC_PREFIX: "prod/",
        PLATFORM_MQTT_PROTOCOL_VERSION: "3.1.1",
        MQTT_STARTUP_TIMEOUT_SECONDS: "10.5"
      })
      expect(config).toMatchObject({ host: "broker.example", port: 8883, tls: true, clientId: "grid-1", topicPrefix: "prod/", protocol: 4 })
      expect(Option.map(config.password, Redacted.value)).toEqual(Option.some("jwt"))
      expect(String(config.password)).not.toContain("jwt")
      expect(Duration.toMillis(config.startupTimeout)).toBe(10_500)
      expect(MqttConfig.brokerUrl(config)).toBe("mqtts://broker.example:8883")
    }))

  it.effect("ignores other spellings of the host variable and rejects bad values", () =>
    Effect.gen(function*() {
      const config = yield* read({ MQTT_HOST: "elsewhere", CELINE_MQTT_HOST: "elsewhere" })
      expect(config.host).toBe("localhost")
      const badPort = yield* Effect.flip(read({ PLATFORM_MQTT_PORT: "70000" }))
      expect(String(badPort)).toContain("PLATFORM_MQTT_PORT")
      const badProtocol = yield* Effect.flip(read({ PLATFORM_MQTT_PROTOCOL_VERSION: "6" }))
      expect(String(badProtocol)).toContain("PLATFORM_MQTT_PROTOCOL_VERSION")
      const badTimeout = yield* Effect.flip(read({ MQTT_STARTUP_TIMEOUT_SECONDS: "-1" }))
      expect(String(badTimeout)).toContain("MQTT_STARTUP_TIMEOUT_SECONDS")
    }))

  it.effect("token field, renewal margin and session expiry (clean sessions by default)", () =>
    Effect.gen(function*() {
      const defaults = yield* read({})
      expect(defaults.tokenField).toBe("password")
      expect(Duration.toSeconds(defaults.tokenRenewBefore)).toBe(20)
      expect(Duration.toSeconds(defaults.sessionExpiry)).toBe(0)
      const set = yield* read({
        PLATFORM_MQTT_TOKEN_FIELD: "username",
        PLATFORM_MQTT_TOKEN_RENEW_SECONDS: "45",
        PLATFORM_MQTT_SESSION_EXPIRY_SECONDS: "3600"
      })
      expect(set.tokenField).toBe("username")
      expect(Duration.toSeconds(set.tokenRenewBefore)).toBe(45)
      expect(Duration.toSeconds(set.sessionExpiry)).toBe(3600)
      expect(String(yield* Effect.flip(read({ PLATFORM_MQTT_TOKEN_FIELD: "header" })))).toContain("PLATFORM_MQTT_TOKEN_FIELD")
      expect(String(yield* Effect.flip(read({ PLATFORM_MQTT_SESSION_EXPIRY_SECONDS: "-5" }))))
        .toContain("PLATFORM_MQTT_SESSION_EXPIRY_SECONDS")
    }))
})
