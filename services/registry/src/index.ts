/**
 * `@rec/registry-service`: the community registry (port 8004). Other services use `Api` for
 * typed clients (`HttpApiClient.make(Api)`) and `Domain` for its records.
 */
export { Api } from "./Api.js"
export * as Config from "./Config.js"
export * as Domain from "./Domain.js"
