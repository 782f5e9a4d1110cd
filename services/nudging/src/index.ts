/**
 * `@rec/nudging-service`: the notification (nudging) service (port 8016). Other services use
 * `Api` for typed clients; the launcher and tests build the service with `Http.make`/`Http.makeTest`.
 */
export { Api } from "./Api.js"
export * as Config from "./Config.js"
export * as Domain from "./Domain.js"
export * as Http from "./Http.js"
export { migrations } from "./migrations/index.js"
export * as Rules from "./Rules.js"
export * as Seed from "./Seed.js"
export * as Templates from "./Templates.js"
