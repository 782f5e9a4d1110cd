/**
 * Validate, import and export bundles.
 *
 * - `validate`: every problem of a bundle, and what an import would replace; nothing is written.
 * - `import`: a bundle with any problem is refused whole (422, every problem listed); a valid one
 *   replaces its community in one transaction (`ImportsRepo.replace`); a database failure is a
 *   4xx or 503 and leaves the previous data as it was. After the commit, an update event is
 *   published (`Updates`).
 * - `export`: the stored community as a bundle v0.4 (`BundleExport`), read in one snapshot.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { SqlClient } from "@effect/sql/SqlClient"
import { HttpErrors } from "@rec/platform"
import * as Effect from "effect/Effect"
import { all } from "./Access.js"
import { memberEntry, pagedYaml, siteEntry } from "./BundleExport.js"
import { type BundleRefused, Bundles } from "./Bundles.js"
import * as Domain from "./Domain.js"
import { ImportsRepo, sqlState } from "./ImportsRepo.js"
import * as Plan from "./Plan.js"
import { type AssetRecord, RegistryRepo } from "./RegistryRepo.js"
import { Updates } from "./Updates.js"

/** Members (with their assets) or sites read and written per page of the export. */
export const exportPageSize = 500

const refused = (error: BundleRefused) => new HttpErrors.BadRequest({ detail: error.detail })

const databaseDown = (operation: string) => (error: SqlError): Effect.Effect<never, HttpErrors.ServiceUnavailable> =>
  Effect.zipRight(
    Effect.logError(`${operation} failed in the database`, error),
    Effect.fail(new HttpErrors.ServiceUnavailable({ detail: `The database failed during the ${operation}; nothing was changed, try again` }))
  )

const importFailure = (error: SqlError): Effect.Effect<never, HttpErrors.Conflict | HttpErrors.ServiceUnavailable> => {
  const state = sqlState(error) ?? ""
  // Integrity constraints (class 23) and checks raised by the database: the bundle conflicts.
  if (state.startsWith("23") || state === "P0001") {
    return Effect.fail(
      new HttpErrors.Conflict({
        detail: `The database refused the import (${state}: ${String((error.cause as Error | undefined)?.message ?? error.message)}); nothing was changed`
      })
    )
  }
  return databaseDown("import")(error)
}

export class Imports extends Effect.Service<Imports>()("@rec/registry-service/Imports", {
  effect: Effect.gen(function*() {
    const bundles = yield* Bundles
    const repo = yield* ImportsRepo
    const reads = yield* RegistryRepo
    const updates = yield* Updates
    const sql = yield* SqlClient

    const validate = Effect.fn("Imports.validate")(function*(bytes: Uint8Array) {
      const checked = yield* bundles.check(bytes).pipe(Effect.mapError(refused))
      const existing = checked.community === null
        ? null
        : yield* repo.counts(checked.community).pipe(Effect.catchAll(databaseDown("validation")))
      const result: Domain.ValidationResult = {
        valid: checked.problems.length === 0,
        community: checked.community,
        counts: checked.plan === undefined ? null : Plan.counts(checked.plan),
        existing,
        problems: checked.problems,
        warnings: checked.warnings
      }
      return result
    })

    const importBundle = Effect.fn("Imports.import")(function*(bytes: Uint8Array) {
      const checked = yield* bundles.check(bytes).pipe(Effect.mapError(refused))
      const plan = checked.plan
      if (plan === undefined) {
        const n = checked.problems.length
        return yield* Effect.fail(
          new Domain.BundleInvalid({
            detail: `The bundle has ${n === 1 ? "1 problem" : `${n} problems`}; nothing was imported`,
            issues: checked.problems.map((p) => ({ path: p.path, message: p.message })),
            problems: checked.problems,
            warnings: checked.warnings
          })
        )
      }
      const previous = yield* repo.replace(plan).pipe(Effect.catchTag("SqlError", importFailure))
      const counts = Plan.counts(plan)
      yield* Effect.logInfo("community imported").pipe(
        Effect.annotateLogs({ community: plan.community.key, members: counts.members, assets: counts.assets, replaced: previous !== null })
      )
      const notified = yield* updates.publish({
        community: plan.community.key,
        event: "imported",
        counts,
        replaced: previous !== null,
        at: new Date().toISOString()
      })
      const result: Domain.ImportResult = {
        community: plan.community.key,
        imported: counts,
        replaced: previous,
        warnings: checked.warnings,
        notified
      }
      return result
    })

    const exportBundle = Effect.fn("Imports.export")(function*(key: string) {
      // One snapshot: an import committing meanwhile is seen entirely or not at all. Read and
      // written a page at a time (`BundleExport.pagedYaml`), the whole text sent at the end, so
      // that a database failure is still a 503 and never a truncated bundle.
      const yaml = yield* sql.withTransaction(
        Effect.gen(function*() {
          yield* sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY`
          const community = yield* reads.findCommunity(all, key)
          if (community === undefined) return undefined
          const keys = yield* reads.exportKeys(key)
          yield* Effect.annotateCurrentSpan({ "registry.community": key, "registry.members": keys.members.length })
          return yield* pagedYaml(community, {
            memberKeys: keys.members,
            siteKeys: keys.sites,
            members: (page) =>
              Effect.map(reads.membersByKey(key, page), ({ assets, members }) => {
                const own = new Map<string, Array<AssetRecord>>()
                for (const asset of assets) {
                  const list = own.get(asset.member_id)
                  if (list === undefined) own.set(asset.member_id, [asset])
                  else list.push(asset)
                }
                return new Map(members.map((m) => [m.key, memberEntry(m, own.get(m.id) ?? [])]))
              }),
            sites: (page) => Effect.map(reads.sitesByKey(key, page), (sites) => new Map(sites.map((s) => [s.key, siteEntry(s)])))
          }, exportPageSize)
        })
      ).pipe(Effect.catchTag("SqlError", databaseDown("export")))
      if (yaml === undefined) {
        return yield* Effect.fail(new HttpErrors.NotFound({ detail: `No community ${JSON.stringify(key)} in the registry` }))
      }
      return yaml
    })

    return { validate, import: importBundle, export: exportBundle }
  })
}) {}
