/**
 * `@rec/assistant-service`: the assistant (port 8012). Other services use `Api` for typed
 * clients; the launcher and tests build the service with `Http.make`/`Http.makeTest`.
 */
export { Api } from "./Api.js"
export * as Domain from "./Domain.js"
