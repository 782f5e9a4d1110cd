/**
 * The orchestrator: for a rule that fired, in one transaction per recipient, decides whether the
 * notification goes out and writes its record and deliveries.
 *
 * Under a transaction-scoped advisory lock on (user, community), shared by every connection and
 * every instance on the database:
 * 1. the recipient's preferences (community row, else the user's row without a community, else
 *    defaults) choose the language and say whether notifications, and this kind, are on;
 * 2. the daily cap counts the notifications that went out to the recipient today (service time
 *    zone) and holds this one back at `max_per_day`;
 * 3. the record is inserted unless the rule already notified the recipient in this window (the
 *    partial unique index `notifications_dedup`); a duplicate is recorded as such;
 * 4. a notification that goes out gets one delivery per push subscription and e-mail address.
 *
 * The cap and the record are written under the same lock, so 20 concurrent ingests, or two
 * instances, never exceed `max_per_day`; the unique index makes a duplicate impossible even
 * without the lock. Kinds that cannot be turned off (`editable: false`) are delivered whatever
 * the preferences and the cap say (they still count towards the cap).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as crypto from "node:crypto"
import type * as Domain from "./Domain.js"
import { type NewDelivery, type NewNotification, NotificationsRepo } from "./NotificationsRepo.js"
import { PreferencesRepo } from "./PreferencesRepo.js"
import { type CompiledRule, RuleBook, templateFor } from "./RuleBook.js"
import { Settings } from "./Settings.js"
import { SubscriptionsRepo } from "./SubscriptionsRepo.js"
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

export type SuppressionReason = "notifications_disabled" | "kind_opted_out" | "daily_cap_reached"

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
    const sql = yield* SqlClient.SqlClient
    const notifications = yield* NotificationsRepo
    const preferences = yield* PreferencesRepo
    const subscriptions = yield* SubscriptionsRepo
    const book = yield* RuleBook
    const settings = yield* Settings

    const admit = (input: Admission): Effect.Effect<Admitted, SqlError> =>
      sql.withTransaction(Effect.gen(function*() {
        const { rule } = input.rule
        const now = new Date(input.now).toISOString()
        yield* notifications.lockRecipient(input.userId, input.communityId)
        const prefs = yield* preferences.effective(input.userId, input.communityId)

        const languages = [input.language, prefs?.language, settings.defaultLanguage, "en"].filter(
          (l): l is string => l !== undefined && l !== null && l !== ""
        )
        const template = templateFor(input.rule, languages)
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
        let title: string
        let body: string
        try {
          title = Templates.render(template.title, context, template.language)
          body = Templates.render(template.body, context, template.language)
        } catch (error) {
          if (error instanceof Templates.RenderError) {
            return { _tag: "RenderFailed", fact: error.fact, message: error.message } satisfies Admitted
          }
          throw error
        }

        const editable = (yield* book.current).kinds.get(rule.kind)?.editable ?? true
        const maxPerDay = prefs?.maxPerDay ?? settings.maxPerDayDefault
        let suppression: { reason: SuppressionReason; detail: string } | undefined
        if (editable && prefs !== undefined && !prefs.enabled) {
          suppression = { reason: "notifications_disabled", detail: "the recipient turned notifications off" }
        } else if (editable && prefs !== undefined && prefs.disabledKinds.includes(rule.kind)) {
          suppression = { reason: "kind_opted_out", detail: `the recipient turned off ${rule.kind} notifications` }
        } else if (editable) {
          const day = Windows.dayOf(input.now, settings.timeZone)
          const delivered = yield* notifications.countDelivered(
            input.userId,
            input.communityId,
            day.start.toISOString(),
            day.end.toISOString()
          )
          if (delivered >= maxPerDay) {
            suppression = {
              reason: "daily_cap_reached",
              detail: `${delivered} of at most ${maxPerDay} notifications already delivered today`
            }
          }
        }

        const id = crypto.randomUUID()
        const bucket = rule.dedup_window === "always"
          ? `always:${id}`
          : Windows.bucketOf(rule.dedup_window, input.now, settings.timeZone)
        const record: NewNotification = {
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
          language: template.language,
          title,
          body,
          url: rule.url,
          facts: input.facts,
          status: suppression === undefined ? "dispatched" : "suppressed",
          reason: suppression?.reason ?? null,
          dedupWindow: rule.dedup_window,
          windowBucket: bucket,
          createdAt: now
        }
        if (!(yield* notifications.insertUnlessDuplicate(record))) {
          const duplicateOf = yield* notifications.insertDuplicate(record)
          if (duplicateOf === undefined) {
            // The unique index refused the row, so the window's notification exists and the
            // transaction sees it (the conflicting insert committed before ours could proceed).
            return yield* Effect.dieMessage(`notification of ${rule.id} in ${bucket} refused as duplicate but not found`)
          }
          return { _tag: "Deduplicated", notificationId: id, duplicateOf, bucket } satisfies Admitted
        }
        if (suppression !== undefined) {
          return { _tag: "Suppressed", notificationId: id, ...suppression } satisfies Admitted
        }

        const deliveries: Array<NewDelivery> = []
        if (!isRecipientGroup(input.userId)) {
          for (const subscription of yield* subscriptions.forRecipient(input.userId, input.communityId)) {
            deliveries.push({
              id: crypto.randomUUID(),
              notificationId: id,
              channel: "webpush",
              subscriptionId: subscription.id,
              destination: subscription.id
            })
          }
        }
        const addresses = new Map<string, string>()
        for (const address of input.emailRecipients) addresses.set(address.toLowerCase(), address)
        if (prefs?.emailEnabled && prefs.email !== null) addresses.set(prefs.email.toLowerCase(), prefs.email)
        for (const address of addresses.values()) {
          deliveries.push({ id: crypto.randomUUID(), notificationId: id, channel: "email", subscriptionId: null, destination: address })
        }
        yield* notifications.insertDeliveries(deliveries, now)
        return {
          _tag: "Dispatched",
          notificationId: id,
          deliveryIds: deliveries.map((d) => d.id),
          channels: deliveries.map((d) => d.channel)
        } satisfies Admitted
      })).pipe(Effect.withSpan("Orchestrator.admit", { attributes: { "nudging.rule": input.rule.rule.id } }))

    return { admit }
  })
}) {}
