/**
 * `@rec/launcher`: every REC service and the embedded infrastructure (dev identity provider,
 * MQTT broker, digital-twin simulator) in one process: `npm start`.
 */
import { Effect, Layer } from "effect"
import * as Config from "./Config.js"
import * as Launcher from "./Launcher.js"

export * as Banner from "./Banner.js"
export * as Config from "./Config.js"
export * as Hosts from "./Hosts.js"
export * as Launcher from "./Launcher.js"

/** The launcher configured from the environment. */
export const layerConfig = Layer.unwrapEffect(Effect.map(Config.launcher, (options) => Layer.discard(Launcher.layer(options))))
