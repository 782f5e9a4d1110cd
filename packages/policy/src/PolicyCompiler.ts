/**
 * The seam between the engine layer and a Rego implementation. The embedded `PolicyEngine`
 * reads the policy directory (`PolicyFiles`) and hands the sources to a `PolicyCompiler`; the
 * compiled set answers rule queries synchronously. `RegoCompiler.layer` implements it with
 * `@rec/rego`; a test can provide another implementation.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { PolicyLoadError } from "./Decision.js"

export interface PolicyModule {
  /** Path relative to the policy directory (`dataset/access.rego`), used in error locations. */
  readonly path: string
  readonly source: string
}

export interface PolicySources {
  readonly modules: ReadonlyArray<PolicyModule>
  /** The merged data document (`data.json`/`data.yaml` files placed at their directory path). */
  readonly data: Readonly<Record<string, unknown>>
}

/** A compiled, immutable policy set. */
export interface CompiledPolicies {
  /** Package paths without the `data.` prefix (`rec.dataset.access`), sorted. */
  readonly packages: ReadonlyArray<string>
  /** Whether `data.<pkg>.<rule>` is a rule (or data) of the set. */
  readonly hasRule: (pkg: string, rule: string) => boolean
  /**
   * The value of `data.<pkg>.<rule>` for the input as plain JSON (sets as sorted arrays), or
   * `undefined` when the rule is undefined. Throws on evaluation errors (conflicts, limits).
   */
  readonly evaluate: (pkg: string, rule: string, input: unknown) => unknown
  /**
   * The values of several rules of one package in one evaluation (what they share is computed
   * once): a decision's `allow`, `reason` and `filters`. Throws on evaluation errors.
   */
  readonly evaluateAll: (pkg: string, rules: ReadonlyArray<string>, input: unknown) => ReadonlyArray<unknown>
}

export interface PolicyCompilerService {
  readonly compile: (sources: PolicySources) => Effect.Effect<CompiledPolicies, PolicyLoadError>
}

export class PolicyCompiler extends Context.Tag("@rec/policy/PolicyCompiler")<PolicyCompiler, PolicyCompilerService>() {}
