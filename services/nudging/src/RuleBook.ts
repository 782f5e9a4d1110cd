/**
 * The rules and kinds in force, in memory: applied from `SEED_DIR` at start (idempotently, so
 * replicas starting together agree), read from the database, and read again every
 * `NUDGING_RULES_REFRESH_SECONDS` so a `nudging seed apply` reaches every instance.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import { Settings } from "./Settings.js"
import * as Rules from "./Rules.js"
import { RulesRepo } from "./RulesRepo.js"
import * as Seed from "./Seed.js"
import * as Templates from "./Templates.js"

/** A rule ready to render: its templates parsed (they were validated when the seed was loaded). */
export interface CompiledRule {
  readonly rule: Rules.Rule
  readonly templates: ReadonlyMap<string, { readonly title: Templates.Template; readonly body: Templates.Template }>
}

export interface Book {
  /** Enabled rules by event type. */
  readonly byEventType: ReadonlyMap<string, ReadonlyArray<CompiledRule>>
  readonly rules: ReadonlyMap<string, CompiledRule>
  readonly kinds: ReadonlyMap<string, Seed.Kind>
}

const compile = (rule: Rules.Rule): CompiledRule => {
  const templates = new Map<string, { title: Templates.Template; body: Templates.Template }>()
  for (const [language, texts] of Object.entries(rule.templates)) {
    const title = Templates.parse(texts.title)
    const body = Templates.parse(texts.body)
    // Stored rules passed Seed.load; a template that no longer parses is a defect to see.
    if (typeof title === "string" || typeof body === "string") {
      throw new Error(`rule ${rule.id}: template ${language} does not parse: ${String(typeof title === "string" ? title : body)}`)
    }
    templates.set(language, { title, body })
  }
  return { rule, templates }
}

export const makeBook = (rules: ReadonlyArray<Rules.Rule>, kinds: ReadonlyArray<Seed.Kind>): Book => {
  const byEventType = new Map<string, Array<CompiledRule>>()
  const all = new Map<string, CompiledRule>()
  for (const rule of rules) {
    const compiled = compile(rule)
    all.set(rule.id, compiled)
    if (!rule.enabled) continue
    for (const eventType of rule.event_types) {
      const list = byEventType.get(eventType) ?? []
      list.push(compiled)
      byEventType.set(eventType, list)
    }
  }
  return { byEventType, rules: all, kinds: new Map(kinds.map((k) => [k.kind, k])) }
}

/** The template of the first available language: the asked one, its primary subtag, the default, English. */
export const templateFor = (rule: CompiledRule, languages: ReadonlyArray<string>) => {
  for (const language of languages) {
    const exact = rule.templates.get(language.toLowerCase())
    if (exact !== undefined) return { language: language.toLowerCase(), ...exact }
    const primary = language.toLowerCase().split("-")[0]!
    const template = rule.templates.get(primary)
    if (template !== undefined) return { language: primary, ...template }
  }
  // Seed.load guarantees an English template.
  return { language: "en", ...rule.templates.get("en")! }
}

export class RuleBook extends Effect.Service<RuleBook>()("nudging/RuleBook", {
  scoped: Effect.gen(function*() {
    const repo = yield* RulesRepo
    const settings = yield* Settings
    const clock = yield* Effect.clock

    const readBook = Effect.map(repo.load, ({ kinds, rules }) => makeBook(rules.map((r) => r.rule), kinds))

    if (Option.isSome(settings.seedDir)) {
      const seed = yield* Seed.load(settings.seedDir.value)
      const report = yield* repo.apply(seed, new Date(yield* clock.currentTimeMillis))
      yield* Effect.logInfo(`seed applied from ${settings.seedDir.value}: ${formatCounts(report)}`)
    }
    const book = yield* Ref.make(yield* readBook)

    const reload = Effect.flatMap(readBook, (b) => Ref.set(book, b)).pipe(Effect.withSpan("RuleBook.reload"))

    yield* reload.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("reading the rules failed; the previous ones stay in force", cause)),
      Effect.repeat(Schedule.spaced(settings.rulesRefresh)),
      Effect.delay(settings.rulesRefresh),
      Effect.forkScoped
    )

    return {
      current: Ref.get(book),
      reload,
      /** Applies a seed to the database and reloads. */
      apply: (seed: Seed.Seed) =>
        Effect.gen(function*() {
          const report = yield* repo.apply(seed, new Date(yield* clock.currentTimeMillis))
          yield* reload
          return report
        })
    }
  })
}) {}

const formatCounts = (report: { rules: { created: number; updated: number; unchanged: number; removed: number } }) =>
  `${report.rules.created} rules created, ${report.rules.updated} updated, ${report.rules.unchanged} unchanged, ${report.rules.removed} disabled`
