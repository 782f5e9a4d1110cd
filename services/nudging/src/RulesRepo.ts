/**
 * Rules and kinds in the database: applying a seed (one transaction, idempotent) and reading
 * them back. Every instance of the service reads the same rules, whichever instance (or the
 * `nudging seed apply` command) wrote them.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Rules from "./Rules.js"
import * as Seed from "./Seed.js"

export interface ApplyCounts {
  readonly created: number
  readonly updated: number
  readonly unchanged: number
  /** Rules: disabled because the seed no longer has them (kept: notifications name them). Kinds: deleted. */
  readonly removed: number
}

export interface ApplyReport {
  readonly rules: ApplyCounts
  readonly kinds: ApplyCounts
}

export const formatReport = (report: ApplyReport): string =>
  `rules: ${report.rules.created} created, ${report.rules.updated} updated, ${report.rules.unchanged} unchanged, ` +
  `${report.rules.removed} disabled; kinds: ${report.kinds.created} created, ${report.kinds.updated} updated, ` +
  `${report.kinds.unchanged} unchanged, ${report.kinds.removed} removed`

export interface StoredRule {
  readonly rule: Rules.Rule
  readonly enabled: boolean
}

const decodeRule = Schema.decodeUnknown(Rules.RuleFile)
const decodeKind = Schema.decodeUnknown(Seed.KindFile)

/** Serialises seed applications across instances (and the CLI). */
const seedLock = 0x6e756467 // "nudg"

export class RulesRepo extends Effect.Service<RulesRepo>()("nudging/RulesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const apply = (seed: Seed.Seed, now: Date): Effect.Effect<ApplyReport, SqlError> =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(${seedLock})`
        const at = now.toISOString()

        const storedKinds = new Map(
          (yield* sql<{ kind: string; digest: string }>`SELECT kind, digest FROM kinds`).map((r) => [r.kind, r.digest])
        )
        const kinds = { created: 0, updated: 0, unchanged: 0, removed: 0 }
        for (const kind of seed.kinds) {
          const digest = Seed.digest(kind)
          const previous = storedKinds.get(kind.kind)
          storedKinds.delete(kind.kind)
          if (previous === digest) {
            kinds.unchanged++
            continue
          }
          yield* sql`INSERT INTO kinds (kind, editable, definition, digest, updated_at)
            VALUES (${kind.kind}, ${kind.editable}, ${JSON.stringify(kind)}::jsonb, ${digest}, ${at})
            ON CONFLICT (kind) DO UPDATE SET editable = excluded.editable, definition = excluded.definition,
              digest = excluded.digest, updated_at = excluded.updated_at`
          if (previous === undefined) kinds.created++
          else kinds.updated++
        }
        for (const kind of storedKinds.keys()) {
          yield* sql`DELETE FROM kinds WHERE kind = ${kind}`
          kinds.removed++
        }

        const storedRules = new Map(
          (yield* sql<{ id: string; digest: string; enabled: boolean }>`SELECT id, digest, enabled FROM rules`).map((r) => [r.id, r])
        )
        const rules = { created: 0, updated: 0, unchanged: 0, removed: 0 }
        for (const rule of seed.rules) {
          const digest = Seed.digest(rule)
          const previous = storedRules.get(rule.id)
          storedRules.delete(rule.id)
          if (previous !== undefined && previous.digest === digest && previous.enabled === rule.enabled) {
            rules.unchanged++
            continue
          }
          const source = seed.sources.get(rule.id) ?? `rules/${rule.id}.yaml`
          yield* sql`INSERT INTO rules (id, enabled, definition, digest, source, created_at, updated_at)
            VALUES (${rule.id}, ${rule.enabled}, ${JSON.stringify(rule)}::jsonb, ${digest}, ${source}, ${at}, ${at})
            ON CONFLICT (id) DO UPDATE SET enabled = excluded.enabled, definition = excluded.definition,
              digest = excluded.digest, source = excluded.source, updated_at = excluded.updated_at`
          if (previous === undefined) rules.created++
          else rules.updated++
        }
        for (const [id, row] of storedRules) {
          if (!row.enabled) continue
          yield* sql`UPDATE rules SET enabled = false, updated_at = ${at} WHERE id = ${id}`
          rules.removed++
        }
        return { rules, kinds }
      })).pipe(Effect.withSpan("RulesRepo.apply"))

    /** Every rule (enabled or not) and every kind, as stored. */
    const load = Effect.gen(function*() {
      const ruleRows = yield* sql<{ definition: unknown; enabled: boolean }>`SELECT definition, enabled FROM rules ORDER BY id`
      const kindRows = yield* sql<{ definition: unknown }>`SELECT definition FROM kinds ORDER BY kind`
      const rules = yield* Effect.forEach(ruleRows, (row) =>
        Effect.map(decodeRule(row.definition), (rule): StoredRule => ({ rule: { ...rule, enabled: row.enabled }, enabled: row.enabled })))
      const kinds = yield* Effect.forEach(kindRows, (row) => decodeKind(row.definition))
      return { rules, kinds }
    }).pipe(
      // A row that no longer decodes was written by another version of the service: a bug to see.
      Effect.catchTag("ParseError", (e) => Effect.die(e)),
      Effect.withSpan("RulesRepo.load")
    )

    return { apply, load }
  })
}) {}
