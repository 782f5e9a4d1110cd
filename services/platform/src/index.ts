/**
 * `@rec/launcher`: every REC service and the embedded infrastructure (dev identity provider,
 * MQTT broker, digital-twin simulator, mail catcher, PGlite) in one process: `npm start`.
 */
import { Effect, Layer } from "effect"
import * as Config from "./Config.js"
import * as Launcher from "./Launcher.js"

export * as Banner from "./Banner.js"
export * as Config from "./Config.js"
export * as Demo from "./Demo.js"
export * as Hosts from "./Hosts.js"
export * as Launcher from "./Launcher.js"
export * as MailCatcher from "./MailCatcher.js"
export * as Seed from "./Seed.js"
export * as Services from "./Services.js"
export * as Training from "./Training.js"

/** The launcher configured from the environment. */
export const layerConfig = Layer.unwrapEffect(Effect.map(Config.launcher, (options) => Layer.discard(Launcher.layer(options))))
