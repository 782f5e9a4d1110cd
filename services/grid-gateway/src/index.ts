/**
 * `@rec/grid-gateway-service`: the grid operator gateway (port 8015). Other services use `Api`
 * for typed clients; the launcher and tests build the service with `Http.make` / `Http.makeTest`.
 */
export { Api } from "./Api.js"
export * as AlertNudges from "./AlertNudges.js"
export * as Config from "./Config.js"
export * as Domain from "./Domain.js"
export * as Http from "./Http.js"
export * as Webhooks from "./Webhooks.js"
