/**
 * Ready-made `PolicyEngine` layers:
 *
 * | layer | decisions made | configured by |
 * |---|---|---|
 * | `layer` | remote when `POLICY_SERVICE_URL` is set, else embedded | the environment |
 * | `embedded` | in-process, Rego files of `PLATFORM_POLICIES_POLICIES_DIR` | the environment |
 * | `embeddedWith(options)` | in-process, explicit options (tests, tools) | arguments |
 * | `remote` | by the policy service over RPC | `POLICY_SERVICE_*`, `PLATFORM_OIDC_*` |
 */
import type { ConfigError } from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Embedded from "./Embedded.js"
import * as PolicyConfig from "./PolicyConfig.js"
import type { PolicyEngine } from "./PolicyEngine.js"
import * as RegoCompiler from "./RegoCompiler.js"
import * as Remote from "./Remote.js"

export const embedded: Layer.Layer<PolicyEngine, ConfigError> = Embedded.layerWithCompiler.pipe(
  Layer.provide(RegoCompiler.layer)
)

export const embeddedWith = (
  options: Partial<Embedded.EmbeddedOptions> & {
    readonly directory: string
    readonly limits?: PolicyConfig.EvalLimits | undefined
  }
): Layer.Layer<PolicyEngine> =>
  Embedded.layerWith({ ...Embedded.defaults, ...options }).pipe(Layer.provide(RegoCompiler.layerWith(options.limits)))

export const remote: Layer.Layer<PolicyEngine, ConfigError> = Remote.layer

export const layer: Layer.Layer<PolicyEngine, ConfigError> = Layer.unwrapEffect(
  Effect.map(PolicyConfig.serviceUrl, (url) => Option.isSome(url) ? remote : embedded)
)
