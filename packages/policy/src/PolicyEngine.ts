/**
 * The `PolicyEngine` tag every service decides with. Two implementations:
 *
 * - `Embedded.layer`: evaluates the Rego files of `PLATFORM_POLICIES_POLICIES_DIR` in-process
 *   with `@rec/rego` (hot reload, file watcher, decision cache);
 * - `Remote.layer`: asks the policy service over `@effect/rpc` with the service's own
 *   client-credentials token.
 *
 * `PolicyEngine.layer` picks one from the environment: remote when `POLICY_SERVICE_URL` is set,
 * embedded otherwise.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type {
  Decision,
  DecisionError,
  DecisionRequest,
  PolicyAccessDenied,
  PolicyLoadError,
  PolicyStatus,
  PolicyUnavailable,
  ReloadResult
} from "./Decision.js"
import type { PolicyInput } from "./PolicyInput.js"

export interface PolicyEngineService {
  /** Evaluates `allow`, `reason` (and `filters` when the package has it) of `pkg` for `input`. */
  readonly decide: (pkg: string, input: PolicyInput) => Effect.Effect<Decision, DecisionError>
  /** Several decisions at once (one round trip for the remote engine), in request order. */
  readonly decideAll: (
    requests: ReadonlyArray<DecisionRequest>
  ) => Effect.Effect<ReadonlyArray<Decision>, DecisionError>
  /**
   * The value of any rule, `data.<pkg>.<rule>` (`None` when undefined), for questions that are
   * not an allow/reason pair, such as `rec.mqtt.acl`'s `superuser`.
   */
  readonly evaluate: (pkg: string, rule: string, input: PolicyInput) => Effect.Effect<Option.Option<unknown>, DecisionError>
  /** What is loaded, the last load error and the cache statistics. */
  readonly status: Effect.Effect<PolicyStatus, PolicyUnavailable>
  /**
   * Loads the policy directory again and swaps the new set in atomically; on failure the set
   * in use stays and the error is reported (and kept in `status.last_load_error`).
   */
  readonly reload: Effect.Effect<ReloadResult, PolicyLoadError | PolicyUnavailable | PolicyAccessDenied>
}

export class PolicyEngine extends Context.Tag("@rec/policy/PolicyEngine")<PolicyEngine, PolicyEngineService>() {}
