/**
 * `@rec/platform`: the service kit every REC service stands on. See README.md.
 */
export * as Contract from "./Contract.js"
export * as Cors from "./Cors.js"
export * as DetailErrors from "./DetailErrors.js"
export * as Docs from "./Docs.js"
export * as ErrorBodies from "./ErrorBodies.js"
export * as Health from "./Health.js"
export * as HttpErrors from "./HttpErrors.js"
export * as Logging from "./Logging.js"
export * as NodeServer from "./NodeServer.js"
export * as OutboundHttp from "./OutboundHttp.js"
export * as RequestContext from "./RequestContext.js"
export * as ServerMiddleware from "./ServerMiddleware.js"
export * as ServiceConfig from "./ServiceConfig.js"
export * as ServiceKit from "./ServiceKit.js"
export * as Tracing from "./Tracing.js"
