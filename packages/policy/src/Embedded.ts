/**
 * The embedded `PolicyEngine`: the Rego files of a directory, compiled once and evaluated
 * in-process.
 *
 * - **Loading.** At start the directory is read and compiled. A start without a usable set is
 *   not fatal: the engine reports `loaded: false` (readiness fails) and denies by failing closed
 *   (`PolicyUnavailable`) until a reload succeeds, unless `POLICY_FAIL_OPEN=true`, which allows
 *   every decision while nothing is loaded and is warned about at start.
 * - **Reloading.** `reload` (and the file watcher, after a quiet period) compiles the directory
 *   into a new set and swaps it in with one reference assignment, so a decision sees either the
 *   old or the new set, never a mix. A broken file keeps the set in use and is reported
 *   (`reload` fails with the problems; `status.last_load_error` keeps them until a load succeeds).
 *   Reloads never run concurrently.
 * - **Deciding.** `allow`, `reason` and, when the package defines it, `filters` are evaluated.
 *   `allow` must be a boolean (undefined counts as false), `reason` a string and `filters` a
 *   list of row filters: anything else is an evaluation error, as are unknown packages and
 *   Rego errors such as conflicting values. Errors are never turned into an empty reason or an
 *   allow.
 * - **Cache.** Decisions are cached by package and stable input (`DecisionCache`), cleared on
 *   every swap.
 * - **Tracing.** A `PolicyEngine.decide` span per decision when spans are exported.
 */
import { Tracing } from "@rec/platform"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { ConfigError } from "effect/ConfigError"
import * as fs from "node:fs"
import * as path from "node:path"
import {
  type Decision,
  Filter,
  type LoadFailure,
  PolicyEvaluationError,
  type PolicyStatus,
  PolicyUnavailable,
  type ReloadResult
} from "./Decision.js"
import { keyOf, LruTtlCache } from "./DecisionCache.js"
import { type CompiledPolicies, PolicyCompiler } from "./PolicyCompiler.js"
import * as PolicyConfig from "./PolicyConfig.js"
import { PolicyEngine, type PolicyEngineService } from "./PolicyEngine.js"
import * as PolicyFiles from "./PolicyFiles.js"
import type { PolicyInput } from "./PolicyInput.js"

interface Loaded {
  readonly compiled: CompiledPolicies
  readonly packages: ReadonlySet<string>
  readonly policyCount: number
  readonly loadedAt: Date
}

type CachedDecision = Omit<Decision, "cached">

/** Rule values (`evaluate`) share the cache with decisions; their keys name the rule. */
interface CachedValue {
  readonly value: Option.Option<unknown>
}

const decodeFilters = Schema.decodeUnknownEither(Schema.Array(Filter))

const decisionRules = ["allow", "reason"] as const
const decisionRulesWithFilters = ["allow", "reason", "filters"] as const

/** Evaluates one decision against a compiled set; throws `PolicyEvaluationError`. */
const evaluate = (loaded: Loaded, pkg: string, input: unknown): CachedDecision => {
  const fail = (message: string) => new PolicyEvaluationError({ package: pkg, message })
  if (!loaded.packages.has(pkg)) throw fail(`policy package ${pkg} is not loaded`)
  const withFilters = loaded.compiled.hasRule(pkg, "filters")
  let values: ReadonlyArray<unknown>
  try {
    // One evaluation for the decision: what allow, reason and filters share is computed once.
    values = loaded.compiled.evaluateAll(pkg, withFilters ? decisionRulesWithFilters : decisionRules, input)
  } catch (cause) {
    throw fail(`evaluating data.${pkg} failed: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
  const [allow, reason, filters] = values
  if (allow !== undefined && typeof allow !== "boolean") {
    throw fail(`data.${pkg}.allow must be a boolean, got ${JSON.stringify(allow)}`)
  }
  const allowed = allow === true
  if (reason !== undefined && typeof reason !== "string") {
    throw fail(`data.${pkg}.reason must be a string, got ${JSON.stringify(reason)}`)
  }
  const decision: { -readonly [K in keyof CachedDecision]: CachedDecision[K] } = {
    allowed,
    // A policy without a reason rule still gets a deterministic, non-empty reason.
    reason: reason ?? (allowed ? "allowed" : "denied"),
    package: pkg
  }
  if (withFilters) {
    const decoded = decodeFilters(filters ?? [])
    if (decoded._tag === "Left") {
      throw fail(`data.${pkg}.filters is not a list of row filters: ${JSON.stringify(filters)}`)
    }
    decision.filters = decoded.right
  }
  return decision
}

export interface EmbeddedOptions extends PolicyConfig.EmbeddedConfig {}

/** The engine over a directory, with an explicit configuration. */
export const make = (config: EmbeddedOptions) =>
  Effect.gen(function*() {
    const compiler = yield* PolicyCompiler
    const tracing = yield* Tracing.TracingEnabled
    const directory = path.resolve(config.directory)
    const cache = new LruTtlCache<CachedDecision | CachedValue>({
      enabled: config.cache.enabled,
      maxSize: config.cache.maxSize,
      ttlMillis: Duration.toMillis(config.cache.ttl)
    })
    const cacheEnabled = cache.enabled

    let current: Loaded | undefined
    let lastError: LoadFailure | undefined

    const load = Effect.gen(function*() {
      const sources = yield* PolicyFiles.read(directory)
      const compiled = yield* compiler.compile(sources)
      const loaded: Loaded = {
        compiled,
        packages: new Set(compiled.packages),
        policyCount: sources.modules.length,
        loadedAt: new Date()
      }
      // The swap: one assignment, then the cache of the previous set goes.
      current = loaded
      lastError = undefined
      cache.clear()
      yield* Effect.logInfo(`policies loaded from ${directory}`).pipe(
        Effect.annotateLogs({ policy_count: loaded.policyCount, packages: compiled.packages.join(",") })
      )
      return { policy_count: loaded.policyCount, packages: compiled.packages } satisfies ReloadResult
    }).pipe(
      Effect.tapError((error) =>
        Effect.gen(function*() {
          lastError = { message: error.message, problems: error.problems, at: new Date().toISOString() }
          yield* Effect.logError(
            current === undefined
              ? `no policies loaded: ${error.message}`
              : `policy reload failed, the previous policies stay in use: ${error.message}`
          ).pipe(Effect.annotateLogs({ directory }))
        })
      ),
      Effect.withSpan("PolicyEngine.load", { attributes: { "policy.directory": directory } })
    )

    const lock = yield* Effect.makeSemaphore(1)
    const reload = lock.withPermits(1)(load)

    const failOpenDecision = (pkg: string): Decision => ({
      allowed: true,
      reason: "no policies are loaded; allowed because POLICY_FAIL_OPEN=true",
      package: pkg,
      cached: false
    })

    const decideNow = (pkg: string, input: PolicyInput): Effect.Effect<Decision, PolicyUnavailable | PolicyEvaluationError> =>
      Effect.suspend((): Effect.Effect<Decision, PolicyUnavailable | PolicyEvaluationError> => {
        const loaded = current
        if (loaded === undefined) {
          return config.failOpen
            ? Effect.succeed(failOpenDecision(pkg))
            : Effect.fail(new PolicyUnavailable({ message: "no policies are loaded" }))
        }
        const key = cacheEnabled ? keyOf(pkg, input) : ""
        if (cacheEnabled) {
          const hit = cache.get(key) as CachedDecision | undefined
          if (hit !== undefined) return Effect.succeed({ ...hit, cached: true })
        }
        try {
          const decision = evaluate(loaded, pkg, input)
          // Evaluation is synchronous, so no swap happened since `loaded` was read.
          if (cacheEnabled) cache.set(key, decision)
          return Effect.succeed({ ...decision, cached: false })
        } catch (error) {
          return error instanceof PolicyEvaluationError ? Effect.fail(error) : Effect.die(error)
        }
      })

    const decide = tracing
      ? (pkg: string, input: PolicyInput) =>
        decideNow(pkg, input).pipe(
          Effect.tap((d) => Effect.annotateCurrentSpan({ "policy.allowed": d.allowed, "policy.cached": d.cached })),
          Effect.withSpan("PolicyEngine.decide", {
            attributes: { "policy.package": pkg, "policy.resource.type": input.resource.type }
          })
        )
      : decideNow

    const evaluateRule = (pkg: string, rule: string, input: PolicyInput) =>
      Effect.suspend((): Effect.Effect<Option.Option<unknown>, PolicyUnavailable | PolicyEvaluationError> => {
        const loaded = current
        if (loaded === undefined) return Effect.fail(new PolicyUnavailable({ message: "no policies are loaded" }))
        if (!loaded.packages.has(pkg)) {
          return Effect.fail(new PolicyEvaluationError({ package: pkg, message: `policy package ${pkg} is not loaded` }))
        }
        const key = cacheEnabled ? keyOf(`${pkg}#${rule}`, input) : ""
        if (cacheEnabled) {
          const hit = cache.get(key) as CachedValue | undefined
          if (hit !== undefined) return Effect.succeed(hit.value)
        }
        try {
          const result = loaded.compiled.evaluate(pkg, rule, input)
          const value = result === undefined ? Option.none() : Option.some(result)
          if (cacheEnabled) cache.set(key, { value })
          return Effect.succeed(value)
        } catch (cause) {
          return Effect.fail(
            new PolicyEvaluationError({
              package: pkg,
              message: `evaluating data.${pkg}.${rule} failed: ${cause instanceof Error ? cause.message : String(cause)}`
            })
          )
        }
      }).pipe((effect) =>
        tracing
          ? Effect.withSpan(effect, "PolicyEngine.evaluate", { attributes: { "policy.package": pkg, "policy.rule": rule } })
          : effect
      )

    const status = Effect.sync((): PolicyStatus => {
      const loaded = current
      const stats = cache.stats()
      return {
        loaded: loaded !== undefined,
        policy_count: loaded?.policyCount ?? 0,
        packages: loaded === undefined ? [] : [...loaded.compiled.packages],
        directory,
        ...(loaded === undefined ? {} : { loaded_at: loaded.loadedAt.toISOString() }),
        ...(lastError === undefined ? {} : { last_load_error: lastError }),
        fail_open: config.failOpen,
        cache: {
          enabled: cacheEnabled,
          hits: stats.hits,
          misses: stats.misses,
          size: stats.size,
          max_size: config.cache.maxSize,
          ttl_seconds: Duration.toSeconds(config.cache.ttl)
        }
      }
    })

    if (config.failOpen) {
      yield* Effect.logWarning(
        "POLICY_FAIL_OPEN=true: every decision is ALLOWED while no policies are loaded. Never use this in production."
      )
    }
    yield* Effect.ignore(reload)

    if (config.watch) {
      const changes = yield* watch(directory, config.watchDebounce)
      yield* changes.pipe(Stream.runForEach(() => Effect.ignore(reload)), Effect.forkScoped)
    }

    const service: PolicyEngineService = {
      decide,
      decideAll: (requests) => Effect.forEach(requests, (r) => decide(r.package, r.input)),
      evaluate: evaluateRule,
      status,
      reload
    }
    return service
  })

/**
 * Watches `directory` (recursively) from the moment this effect returns, and gives the changes
 * debounced: one element per quiet period after changes. A watcher that fails (the directory
 * was removed, too many watchers) is logged and opened again every 2 seconds.
 */
export const watch = (
  directory: string,
  debounce: Duration.DurationInput
): Effect.Effect<Stream.Stream<void>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const changes = yield* Queue.sliding<void>(1)
    const failures = yield* Queue.unbounded<unknown>()
    let watcher: fs.FSWatcher | undefined
    const open = () => {
      try {
        const w = fs.watch(directory, { recursive: true, persistent: false }, () => void changes.unsafeOffer(undefined))
        w.on("error", (cause) => {
          w.close()
          failures.unsafeOffer(cause)
        })
        watcher = w
      } catch (cause) {
        watcher = undefined
        failures.unsafeOffer(cause)
      }
    }
    open()
    yield* Effect.addFinalizer(() => Effect.sync(() => watcher?.close()))
    yield* Queue.take(failures).pipe(
      Effect.flatMap((cause) =>
        Effect.logWarning(`watching the policy directory ${directory} failed; retrying in 2 seconds: ${String(cause)}`)
      ),
      Effect.zipRight(Effect.sleep(Duration.seconds(2))),
      Effect.zipRight(Effect.sync(() => {
        // A change may have been missed while no watcher was open.
        changes.unsafeOffer(undefined)
        open()
      })),
      Effect.forever,
      Effect.forkScoped
    )
    return Stream.fromQueue(changes).pipe(Stream.debounce(debounce))
  })

/** The embedded engine from `PolicyConfig.embedded` (env). Needs a `PolicyCompiler`. */
export const layerWithCompiler: Layer.Layer<PolicyEngine, ConfigError, PolicyCompiler> = Layer.scoped(
  PolicyEngine,
  Effect.flatMap(PolicyConfig.embedded, make)
)

/** The embedded engine with an explicit configuration. Needs a `PolicyCompiler`. */
export const layerWith = (config: EmbeddedOptions): Layer.Layer<PolicyEngine, never, PolicyCompiler> =>
  Layer.scoped(PolicyEngine, make(config))

/** Defaults for `layerWith` (the env defaults of `PolicyConfig.embedded`). */
export const defaults: EmbeddedOptions = {
  directory: "./policies",
  failOpen: false,
  watch: true,
  watchDebounce: Duration.millis(250),
  cache: { enabled: true, maxSize: 10_000, ttl: Duration.seconds(300) }
}
