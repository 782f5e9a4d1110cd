/**
 * `@rec/policy`: the `PolicyEngine` every service decides with, embedded (Rego files evaluated
 * in-process by `@rec/rego`) or remote (the policy service over RPC). See README.md.
 */
export * as Decision from "./Decision.js"
export * as DecisionCache from "./DecisionCache.js"
export * as Embedded from "./Embedded.js"
export * as Engines from "./Engines.js"
export * as PolicyCompiler from "./PolicyCompiler.js"
export * as PolicyConfig from "./PolicyConfig.js"
export { PolicyEngine, type PolicyEngineService } from "./PolicyEngine.js"
export * as PolicyFiles from "./PolicyFiles.js"
export * as PolicyInput from "./PolicyInput.js"
export * as PolicyRpc from "./Rpc.js"
export * as RegoCompiler from "./RegoCompiler.js"
export * as Remote from "./Remote.js"
export * as Testing from "./Testing.js"
