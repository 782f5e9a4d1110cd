/**
 * Seeding at start (`REGISTRY_SEED_BUNDLE`): a bundle file whose community is imported when the
 * registry does not hold it yet, so a development platform starts with its demo community
 * (`examples/it-energy-community.bundle.yaml`) without anyone importing it by hand. A community
 * already there is left alone (an administrator's later import wins). A seed file that cannot
 * be read or has problems stops the start with every problem listed: a misconfiguration, not
 * something to serve around.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import { Bundles } from "./Bundles.js"
import * as Config from "./Config.js"
import { ImportsRepo } from "./ImportsRepo.js"
import * as Plan from "./Plan.js"

export class SeedFailed extends Error {
  override readonly name = "SeedFailed"
}

const failed = (message: string) => Effect.fail(new SeedFailed(message))

export const layer: Layer.Layer<never, SeedFailed | import("effect/ConfigError").ConfigError, Bundles | ImportsRepo> = Layer.effectDiscard(
  Effect.gen(function*() {
    const file = yield* Config.seedBundle
    if (Option.isNone(file)) return
    const bundles = yield* Bundles
    const repo = yield* ImportsRepo
    const bytes = yield* Effect.try({
      try: () => fs.readFileSync(file.value),
      catch: (error) => new SeedFailed(`REGISTRY_SEED_BUNDLE ${file.value} cannot be read: ${(error as Error).message}`)
    })
    const checked = yield* bundles.check(bytes).pipe(
      Effect.catchTag("BundleRefused", (refused) => failed(`REGISTRY_SEED_BUNDLE ${file.value}: ${refused.detail}`))
    )
    if (checked.plan === undefined) {
      const problems = checked.problems.map((p) => `  ${p.path.join(".") || "(bundle)"}: ${p.message} [${p.code}]`).join("\n")
      const n = checked.problems.length
      return yield* failed(`REGISTRY_SEED_BUNDLE ${file.value} has ${n} problem${n === 1 ? "" : "s"}:\n${problems}`)
    }
    const plan = checked.plan
    const database = (error: { readonly message: string }) => new SeedFailed(`seeding ${file.value} failed in the database: ${error.message}`)
    const existing = yield* repo.counts(plan.community.key).pipe(Effect.mapError(database))
    if (existing !== null) {
      yield* Effect.logInfo(`seed: community ${plan.community.key} is already in the registry; ${file.value} not imported`)
      return
    }
    yield* repo.replace(plan).pipe(Effect.mapError(database))
    const counts = Plan.counts(plan)
    yield* Effect.logInfo(`seed: imported ${plan.community.key} from ${file.value}`).pipe(
      Effect.annotateLogs({ members: counts.members, assets: counts.assets, sites: counts.sites })
    )
  }).pipe(Effect.withSpan("Registry.seed"))
)
