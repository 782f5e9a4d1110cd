/**
 * The orchestrator: for a rule that fired, decides whether the notification goes out to the
 * recipient and writes its record and deliveries, in one SQL statement (one transaction, one
 * round trip; `NotificationsRepo.admit`):
 *
 * 1. the recipient's preferences (community row, else the user's row without a community, else
 *    defaults) choose the language among the rendered templates and say whether notifications,
 *    and this kind, are on;
 * 2. the deduplication key (rule, recipient, community, window bucket) is inserted unless the
 *    window already has one: its primary key is the deduplication; a duplicate is recorded as such;
 * 3. the recipient's count of the (local) day is incremented only while below `max_per_day`
 *    (`INSERT ... ON CONFLICT DO UPDATE ... WHERE delivered < max`: the row is locked and the
 *    condition checked again on its latest version, so 20 concurrent ingests, or two instances,
 *    never exceed the cap);
 * 4. the record is written, and a notification that goes out gets one delivery per push
 *    subscription and e-mail address.
 *
 * A statement sees one snapshot and is atomic: nothing is half-written. Kinds that cannot be
 * turned off (`editable: false`) go out whatever the preferences and the cap say (they still
 * count towards the cap).
 */
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as crypto from "node:crypto"
import type * as Domain from "./Domain.js"
import { type AdmitStatement, NotificationsRepo, type SuppressionReason } from "./NotificationsRepo.js"
import { type CompiledRule, RuleBook } from "./RuleBook.js"
import { Settings } from "./Settings.js"
import * as Templates from "./Templates.js"
import * as Windows from "./Windows.js"

export interface Admission {
  readonly rule: CompiledRule
  readonly eventType: string
  readonly scenario: string
  readonly userId: string
  /** "" for none. */
  readonly communityId: string
  /** The facts, checked and typed for the rule. */
  readonly facts: Readonly<Record<string, unknown>>
  /** `facts.lang`, when given. */
  readonly language: string | undefined
  /** Validated addresses of `facts.email_recipients`. */
  readonly emailRecipients: ReadonlyArray<string>
  readonly now: number
}


export type Admitted =
  | {
    readonly _tag: "Dispatched"
    readonly notificationId: string
    readonly deliveryIds: ReadonlyArray<string>
    readonly channels: ReadonlyArray<Domain.Channel>
  }
  | {
    readonly _tag: "Suppressed"
    readonly notificationId: string
    readonly reason: SuppressionReason
    readonly detail: string
  }
  | { readonly _tag: "Deduplicated"; readonly notificationId: string; readonly duplicateOf: string; readonly bucket: string }
  | { readonly _tag: "RenderFailed"; readonly fact: string; readonly message: string }

/** `email-ingest:` + 16 hex of SHA-256 over the sorted, lower-cased addresses joined by `|` (the grid gateway's id). */
export const recipientGroupId = (addresses: ReadonlyArray<string>): string =>
  `email-ingest:${
    crypto.createHash("sha256").update([...new Set(addresses.map((a) => a.trim().toLowerCase()))].sort().join("|")).digest(
      "hex"
    ).slice(0, 16)
  }`

export const isRecipientGroup = (userId: string): boolean => userId.startsWith("email-ingest:")

export class Orchestrator extends Effect.Service<Orchestrator>()("nudging/Orchestrator", {
  effect: Effect.gen(function*() {
    const notifications = yield* NotificationsRepo
    const book = yield* RuleBook
    const settings = yield* Settings

    const admit = (input: Admission): Effect.Effect<Admitted, SqlError> =>
      Effect.gen(function*() {
        const { rule } = input.rule
        // The rule's own facts win over the context names (the grid's `event_type` fact is the
        // hazard, not the ingest's event type).
        const context: Record<string, unknown> = {
          user_id: input.userId,
          community_id: input.communityId,
          event_type: input.eventType,
          scenario: input.scenario
        }
        for (const name of [...Object.keys(rule.required_facts), ...Object.keys(rule.optional_facts)]) {
          if (input.facts[name] !== undefined) context[name] = input.facts[name]
        }
        // Every language of the rule, rendered: the statement picks the recipient's (their
        // preference is read in the same statement), which saves a round trip per ingest.
        const texts: Record<string, { title: string; body: string }> = {}
        try {
          for (const [language, template] of input.rule.templates) {
            texts[language] = {
              title: Templates.render(template.title, context, language),
              body: Templates.render(template.body, context, language)
            }
          }
        } catch (error) {
          if (error instanceof Templates.RenderError) {
            return { _tag: "RenderFailed", fact: error.fact, message: error.message } satisfies Admitted
          }
          throw error
        }

        const id = crypto.randomUUID()
        const asked = input.language?.toLowerCase()
        const statement: AdmitStatement = {
          id,
          ruleId: rule.id,
          eventType: input.eventType,
          scenario: input.scenario,
          userId: input.userId,
          communityId: input.communityId,
          family: rule.family,
          type: rule.type,
          severity: rule.severity,
          kind: rule.kind,
          url: rule.url,
          facts: JSON.stringify(input.facts),
          texts: JSON.stringify(texts),
          languages: asked === undefined ? [] : [asked, asked.split("-")[0]!],
          defaultLanguage: settings.defaultLanguage,
          editable: (yield* book.current).kinds.get(rule.kind)?.editable ?? true,
          defaultMaxPerDay: settings.maxPerDayDefault,
          recipientGroup: isRecipientGroup(input.userId),
          emails: JSON.stringify(input.emailRecipients),
          dedupWindow: rule.dedup_window,
          windowBucket: rule.dedup_window === "always"
            ? `always:${id}`
            : Windows.bucketOf(rule.dedup_window, input.now, settings.timeZone),
          day: Windows.bucketOf("daily", input.now, settings.timeZone),
          createdAt: new Date(input.now).toISOString()
        }
        // Once more when a concurrent duplicate committed after the statement's snapshot.
        const result = (yield* notifications.admit(statement)) ?? (yield* notifications.admit(statement))
        if (result === undefined) {
          return yield* Effect.dieMessage(`notification of ${rule.id} in ${statement.windowBucket}: no record and no duplicate`)
        }
        switch (result._tag) {
          case "Dispatched":
            return {
              _tag: "Dispatched",
              notificationId: id,
              deliveryIds: result.deliveries.map((d) => d.id),
              channels: result.deliveries.map((d) => d.channel)
            } satisfies Admitted
          case "Suppressed":
            return {
              _tag: "Suppressed",
              notificationId: id,
              reason: result.reason,
              detail: suppressionDetail(result.reason, rule.kind, result.maxPerDay)
            } satisfies Admitted
          case "Deduplicated":
            return { _tag: "Deduplicated", notificationId: id, duplicateOf: result.duplicateOf, bucket: statement.windowBucket } satisfies Admitted
        }
      }).pipe(Effect.withSpan("Orchestrator.admit", {
        attributes: { "nudging.rule": input.rule.rule.id },
        // The call site is always this line: no stack captured per rule that fired.
        captureStackTrace: false
      }))

    return { admit }
  })
}) {}

const suppressionDetail = (reason: SuppressionReason, kind: string, maxPerDay: number) => {
  switch (reason) {
    case "notifications_disabled":
      return "the recipient turned notifications off"
    case "kind_opted_out":
      return `the recipient turned off ${kind} notifications`
    case "daily_cap_reached":
      return `the recipient already had the most notifications a day (${maxPerDay}) today`
  }
}
