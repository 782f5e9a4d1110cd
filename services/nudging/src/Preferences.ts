/**
 * Preferences per user and community: language, the daily cap, the master switch, per-kind
 * opt-outs (kinds that cannot be turned off are refused) and e-mail delivery. A user without a
 * row of their own for a community has the row they keep without a community, else the
 * defaults (`DEFAULT_LANG`, `MAX_PER_DAY_DEFAULT`, everything on, no e-mail).
 */
import { HttpErrors } from "@rec/platform"
import * as Effect from "effect/Effect"
import type * as Domain from "./Domain.js"
import { type PreferencesRow, PreferencesRepo } from "./PreferencesRepo.js"
import { RuleBook } from "./RuleBook.js"
import { Settings } from "./Settings.js"

export class Preferences extends Effect.Service<Preferences>()("nudging/Preferences", {
  effect: Effect.gen(function*() {
    const repo = yield* PreferencesRepo
    const book = yield* RuleBook
    const settings = yield* Settings
    const clock = yield* Effect.clock

    const view = (userId: string, communityId: string, row: PreferencesRow | undefined): Domain.Preferences => ({
      user_id: userId,
      community_id: communityId === "" ? null : communityId,
      language: row?.language ?? settings.defaultLanguage,
      max_per_day: row?.maxPerDay ?? settings.maxPerDayDefault,
      enabled: row?.enabled ?? true,
      disabled_kinds: row?.disabledKinds ?? [],
      email_enabled: row?.emailEnabled ?? false,
      email: row?.email ?? null,
      stored: row !== undefined,
      updated_at: row?.updatedAt ?? null
    })

    const get = (userId: string, communityId: string) =>
      Effect.map(repo.effective(userId, communityId), (row) => view(userId, communityId, row)).pipe(
        Effect.withSpan("Preferences.get")
      )

    const put = (update: Domain.PreferencesUpdate) =>
      Effect.gen(function*() {
        const { kinds } = yield* book.current
        const issues: Array<HttpErrors.Issue> = []
        const disabled = update.disabled_kinds === undefined ? undefined : [...new Set(update.disabled_kinds)]
        disabled?.forEach((kind, i) => {
          const known = kinds.get(kind)
          if (known === undefined) {
            issues.push({ path: ["disabled_kinds", i], message: `Unknown kind "${kind}" (GET /preferences/kinds lists them)` })
          } else if (!known.editable) {
            issues.push({ path: ["disabled_kinds", i], message: `${kind} notifications cannot be turned off` })
          }
        })
        const current = yield* repo.effective(update.user_id, update.community_id)
        const email = update.email === undefined ? current?.email ?? null : update.email
        const emailEnabled = update.email_enabled ?? current?.emailEnabled ?? false
        if (emailEnabled && email === null) {
          issues.push({ path: ["email"], message: "is missing: e-mail delivery needs an address" })
        }
        if (issues.length > 0) {
          return yield* Effect.fail(new HttpErrors.UnprocessableEntity({
            detail: `Preferences not saved: ${issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
            issues
          }))
        }
        const row = yield* repo.upsert({
          userId: update.user_id,
          communityId: update.community_id,
          language: update.language ?? current?.language ?? null,
          maxPerDay: update.max_per_day ?? current?.maxPerDay ?? null,
          enabled: update.enabled ?? current?.enabled ?? true,
          disabledKinds: disabled ?? current?.disabledKinds ?? [],
          emailEnabled,
          email
        }, new Date(yield* clock.currentTimeMillis).toISOString())
        return view(update.user_id, update.community_id, row)
      }).pipe(Effect.withSpan("Preferences.put"))

    /** The kinds, their texts in `language` (else the default language, else English). */
    const kinds = (language: string | undefined) =>
      Effect.map(book.current, (b): ReadonlyArray<Domain.KindInfo> => {
        const languages = [language?.toLowerCase(), language?.toLowerCase().split("-")[0], settings.defaultLanguage, "en"]
        const pick = (texts: Readonly<Record<string, string>>) => {
          for (const l of languages) if (l !== undefined && texts[l] !== undefined) return texts[l]!
          return texts["en"] ?? ""
        }
        return [...b.kinds.values()].map((kind) => ({
          kind: kind.kind,
          label: pick(kind.label),
          description: pick(kind.description),
          editable: kind.editable,
          rule_ids: [...b.rules.values()].filter((r) => r.rule.kind === kind.kind && r.rule.enabled).map((r) => r.rule.id)
        }))
      })

    return { get, put, kinds }
  })
}) {}
