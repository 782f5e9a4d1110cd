import { describe, expect, it } from "@effect/vitest"
import { ServiceConfig, ServiceKit } from "@rec/platform"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { ExampleApi, ItemsLive } from "./fixtures/ExampleApi.js"

const fromEnv = (env: Record<string, string>) => ConfigProvider.fromMap(new Map(Object.entries(env)))

const load = <A>(config: Config.Config<A>, env: Record<string, string>) =>
  Effect.withConfigProvider(config, fromEnv(env))

describe("ServiceConfig.common", () => {
  it.effect("defaults", () =>
    Effect.gen(function*() {
      const config = yield* load(ServiceConfig.common({ port: 8009 }), {})
      expect(config.port).toBe(8009)
      expect(config.host).toBe("0.0.0.0")
      expect(config.corsOrigins).toEqual([])
      expect(config.corsCredentials).toBe(true)
      expect(config.logLevel).toBe(LogLevel.Info)
      expect(config.logFormat).toBe("json")
      expect(Duration.toSeconds(config.shutdownTimeout)).toBe(15)
      expect(config.jwtHeaderName).toBe("x-auth-request-access-token")
      expect(config.otel.enabled).toBe(false)
    }))

  it.effect("reads the environment", () =>
    Effect.gen(function*() {
      const config = yield* load(ServiceConfig.common({ port: 8015, corsOrigins: ["http://localhost:3006"] }), {
        PORT: "9000",
        HOST: "127.0.0.1",
        CORS_ORIGINS: " https://a.example ,, https://b.example ",
        LOG_LEVEL: "WARNING",
        SHUTDOWN_TIMEOUT: "3 seconds",
        JWT_HEADER_NAME: "X-Forwarded-Access-Token",
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/",
        OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=abc%3D,tenant=rec",
        OTEL_SERVICE_NAME: "grid"
      })
      expect(config.port).toBe(9000)
      expect(config.host).toBe("127.0.0.1")
      expect(config.corsOrigins).toEqual(["https://a.example", "https://b.example"])
      expect(config.logLevel).toBe(LogLevel.Warning)
      expect(Duration.toSeconds(config.shutdownTimeout)).toBe(3)
      expect(config.jwtHeaderName).toBe("x-forwarded-access-token")
      expect(config.otel.enabled).toBe(true)
      expect(config.otel.tracesUrl).toEqual(Option.some("http://collector:4318/v1/traces"))
      expect(Redacted.value(config.otel.headers)).toEqual({ "x-api-key": "abc=", tenant: "rec" })
      expect(config.otel.serviceName).toEqual(Option.some("grid"))
      // The service's default applies only when CORS_ORIGINS is unset.
      const defaulted = yield* load(ServiceConfig.common({ port: 8015, corsOrigins: ["http://localhost:3006"] }), {})
      expect(defaulted.corsOrigins).toEqual(["http://localhost:3006"])
      const emptied = yield* load(ServiceConfig.common({ port: 8015, corsOrigins: ["http://localhost:3006"] }), {
        CORS_ORIGINS: ""
      })
      expect(emptied.corsOrigins).toEqual([])
    }))

  it.effect("traces endpoint, disabled SDK, PORT=0", () =>
    Effect.gen(function*() {
      const specific = yield* load(ServiceConfig.common({ port: 1 }), {
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://b:4318/custom/traces"
      })
      expect(specific.otel.tracesUrl).toEqual(Option.some("http://b:4318/custom/traces"))
      const disabled = yield* load(ServiceConfig.common({ port: 1 }), {
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318",
        OTEL_SDK_DISABLED: "true"
      })
      expect(disabled.otel.enabled).toBe(false)
      expect((yield* load(ServiceConfig.common({ port: 1 }), { PORT: "0" })).port).toBe(0)
    }))

  it.effect("rejects bad values with the variable's name", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<Record<string, string>> = [
        { PORT: "70000" },
        { PORT: "http" },
        { LOG_LEVEL: "chatty" },
        { LOG_FORMAT: "xml" }
      ]
      for (const env of cases) {
        const error = yield* Effect.flip(load(ServiceConfig.common({ port: 1 }), env))
        expect(String(error), JSON.stringify(env)).toContain(Object.keys(env)[0])
      }
    }))

  it("accepts the usual spellings of log levels", () => {
    const parse = (value: string) =>
      Effect.runSync(load(ServiceConfig.logLevel("LOG_LEVEL"), { LOG_LEVEL: value }))
    expect(parse("debug")).toBe(LogLevel.Debug)
    expect(parse("Info")).toBe(LogLevel.Info)
    expect(parse("warn")).toBe(LogLevel.Warning)
    expect(parse("CRITICAL")).toBe(LogLevel.Fatal)
    expect(parse("off")).toBe(LogLevel.None)
  })
})

describe("misspelled environment variables", () => {
  const ServiceEnv = Config.all({
    database: Config.option(Config.redacted("DATABASE_URL")),
    digitalTwin: Config.string("DIGITAL_TWIN_API_URL").pipe(Config.withDefault("http://localhost:8002")),
    scope: Config.option(Config.string("DT_CLIENT_SCOPE")),
    mqtt: Config.nested(Config.all({ host: Config.string("HOST"), port: Config.integer("PORT") }), "PLATFORM_MQTT").pipe(
      Config.option
    )
  })

  it.effect("envNames finds every name a Config reads, including nested and optional ones", () =>
    Effect.gen(function*() {
      const names = yield* ServiceConfig.envNames(ServiceEnv)
      expect([...names].sort()).toEqual([
        "DATABASE_URL",
        "DIGITAL_TWIN_API_URL",
        "DT_CLIENT_SCOPE",
        "PLATFORM_MQTT_HOST",
        "PLATFORM_MQTT_PORT"
      ])
    }))

  it("flags near misses and case mistakes, and leaves unrelated variables alone", () => {
    const known = [...ServiceConfig.platformEnvNames, "DIGITAL_TWIN_API_URL", "DT_CLIENT_SCOPE"]
    const found = ServiceConfig.findMisspellings({
      CORS_ORIGIN: "x",
      PLATFORM_OIDC_AUDIANCE: "x",
      DIGITAL_TWIN_API_ULR: "x",
      log_level: "debug",
      "dt-client-scope": "x",
      PORT: "8000",
      HOME: "/root",
      PATH: "/usr/bin",
      PWD: "/",
      SHELL: "/bin/sh",
      HOSTNAME: "box",
      NODE_OPTIONS: "",
      TERM: "xterm"
    }, known)
    expect(found).toEqual([
      { name: "CORS_ORIGIN", suggestion: "CORS_ORIGINS" },
      { name: "DIGITAL_TWIN_API_ULR", suggestion: "DIGITAL_TWIN_API_URL" },
      { name: "PLATFORM_OIDC_AUDIANCE", suggestion: "PLATFORM_OIDC_AUDIENCE" },
      { name: "dt-client-scope", suggestion: "DT_CLIENT_SCOPE" },
      { name: "log_level", suggestion: "LOG_LEVEL" }
    ])
  })

  it("flags the same words under another vendor prefix, with doubled underscores or without a doubled word", () => {
    const found = ServiceConfig.findMisspellings({
      PLATFORM_POLICIES_DIR: "./p",
      CELINE_POLICIES_POLICIES_DIR: "./p",
      CELINE_POLICIES_DIR: "./p",
      POLICIES_DIR: "./p",
      CELINE_MQTT_HOST: "broker",
      MQTT__HOST: "broker",
      MQTT_HOST: "broker",
      platform_mqtt_host: "broker",
      PLATFORM_MQTT_HOST: "broker",
      PLATFORM_POLICIES_POLICIES_DIR: "./policies",
      // Unrelated: other words, or a single word.
      MQTT_CLIENT: "x",
      POLICY_DIR: "x",
      HOSTNAME: "box",
      REC_REQUIRE_SERVICES: "1"
    }, ServiceConfig.platformEnvNames)
    expect(found).toEqual([
      { name: "CELINE_MQTT_HOST", suggestion: "PLATFORM_MQTT_HOST" },
      { name: "CELINE_POLICIES_DIR", suggestion: "PLATFORM_POLICIES_POLICIES_DIR" },
      { name: "CELINE_POLICIES_POLICIES_DIR", suggestion: "PLATFORM_POLICIES_POLICIES_DIR" },
      { name: "MQTT_HOST", suggestion: "PLATFORM_MQTT_HOST" },
      { name: "MQTT__HOST", suggestion: "PLATFORM_MQTT_HOST" },
      { name: "PLATFORM_POLICIES_DIR", suggestion: "PLATFORM_POLICIES_POLICIES_DIR" },
      { name: "POLICIES_DIR", suggestion: "PLATFORM_POLICIES_POLICIES_DIR" },
      { name: "platform_mqtt_host", suggestion: "PLATFORM_MQTT_HOST" }
    ])
  })

  it.live("serve warns about them at start", () =>
    Effect.gen(function*() {
      const warnings: Array<string> = []
      const capture = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ logLevel, message }) => {
          if (logLevel === LogLevel.Warning) warnings.push(String(Array.isArray(message) ? message[0] : message))
        })
      )
      const previous = process.env.DIGITAL_TWIN_API_ULR
      process.env.DIGITAL_TWIN_API_ULR = "http://twin:8002"
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          if (previous === undefined) delete process.env.DIGITAL_TWIN_API_ULR
          else process.env.DIGITAL_TWIN_API_ULR = previous
        })
      )
      yield* Layer.build(
        ServiceKit.serveTest(ExampleApi, { service: { name: "x", version: "0" }, port: 0, config: ServiceEnv }).pipe(
          Layer.provide(ItemsLive),
          Layer.provide(capture)
        )
      )
      expect(warnings).toContain(
        "Environment variable DIGITAL_TWIN_API_ULR is not used; did you mean DIGITAL_TWIN_API_URL?"
      )
    }).pipe(Effect.scoped))
})
