/**
 * `@rec/participant-gateway-service`: the participant web gateway (port 8014). The app and tests
 * use `Api` for typed clients; the launcher and tests build the service with
 * `Http.make`/`Http.makeTest`.
 */
export { Api } from "./Api.js"
export * as AssistantProxy from "./AssistantProxy.js"
export * as Clients from "./Clients.js"
export * as Config from "./Config.js"
export * as Domain from "./Domain.js"
export * as Http from "./Http.js"
export { migrations } from "./migrations/index.js"
