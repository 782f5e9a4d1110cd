/**
 * `@rec/policy-service`: the policy decision service (port 8009). Other services use `Api` for
 * typed clients; the launcher and tests build the service with `Http.make`/`Http.makeTest`.
 */
export { Api } from "./Api.js"
export * as Audit from "./Audit.js"
export * as BrokerAuth from "./BrokerAuth.js"
export * as Config from "./Config.js"
export * as Domain from "./Domain.js"
export * as Http from "./Http.js"
export * as Inputs from "./Inputs.js"
