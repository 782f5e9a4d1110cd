/**
 * `@rec/registry-service`: the community registry (port 8004). Other services use `Api` for
 * typed clients (`HttpApiClient.make(Api)`) and `Domain` for its records; the launcher and tests
 * build the service with `Http.make`/`Http.makeTest`.
 */
export { Api } from "./Api.js"
export * as BundleExport from "./BundleExport.js"
export * as Cli from "./Cli.js"
export * as Bundles from "./Bundles.js"
export * as BundleSchema from "./BundleSchema.js"
export * as Config from "./Config.js"
export * as Domain from "./Domain.js"
export * as Generate from "./Generate.js"
export * as Http from "./Http.js"
export * as ImportsRepo from "./ImportsRepo.js"
export * as Iris from "./Iris.js"
export * as JsonLd from "./JsonLd.js"
export { migrations } from "./migrations/index.js"
export * as Plan from "./Plan.js"
export * as Updates from "./Updates.js"
