/**
 * The service's settings (`Config.settings`) as a service, so tests hand it a configuration
 * without touching the process environment.
 */
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as Config from "./Config.js"

export class Settings extends Context.Tag("nudging/Settings")<Settings, Config.Settings>() {
  /** From the environment (through the current `ConfigProvider`). */
  static readonly layer: Layer.Layer<Settings, ConfigError.ConfigError> = Layer.effect(Settings, Config.settings)
}
