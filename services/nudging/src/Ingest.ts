/**
 * `POST /ingest-event`: an event in, one outcome per rule out, and the HTTP status of the spec's
 * table.
 *
 * 1. The rules answering `event_type` (none: 204, whatever the scenario).
 * 2. The facts every event shares: `facts_version` and `scenario` (non-empty strings), `time`
 *    (ISO 8601 date or date-time), `delta_pct`/`cur`/`prev` (numbers), `lang`,
 *    `email_recipients` (addresses); and the recipient: `user_id`, or the `email-ingest:` group
 *    of the recipients (whose id must match them). Problems: 422, every rule `invalid_facts`.
 * 3. The rules among them for `facts.scenario` (none: 400, every rule `rejected`).
 * 4. Per rule: its facts (missing or mistyped: `invalid_facts`), its condition (`not_triggered`),
 *    then the orchestrator (`dispatched`, `suppressed`, `deduplicated`; a template that cannot
 *    be rendered: `rejected`).
 * 5. The status: the first of dispatched (200), suppressed (202), deduplicated (409),
 *    invalid_facts (422), rejected (400) among the outcomes; only not_triggered: 204. So several
 *    rules answering one event never make a 500 (the original's "mixed outcome").
 *
 * Deliveries are not sent here: their records are committed with the notification and handed
 * to the `Dispatcher` afterwards (`ingest`), or by the caller once its own transaction
 * committed (`evaluate`, the scheduler).
 */
import type { SqlError } from "@effect/sql/SqlError"
import type { HttpErrors } from "@rec/platform"
import * as Effect from "effect/Effect"
import { Dispatcher } from "./Dispatcher.js"
import type * as Domain from "./Domain.js"
import { isRecipientGroup, Orchestrator, recipientGroupId } from "./Orchestrator.js"
import { type CompiledRule, RuleBook } from "./RuleBook.js"
import * as Rules from "./Rules.js"

export type IngestStatus = 200 | 202 | 204 | 400 | 409 | 422

export interface IngestReport {
  readonly status: IngestStatus
  readonly eventType: string
  /** The recipient (the `email-ingest:` group when only addresses were given). */
  readonly userId: string
  readonly communityId: string | null
  readonly outcomes: ReadonlyArray<Domain.RuleOutcome>
  readonly issues: ReadonlyArray<HttpErrors.Issue>
  /** A sentence for error bodies. */
  readonly detail: string
}

export interface IngestInput {
  readonly event_type: string
  readonly user_id?: string | undefined
  readonly community_id?: string | null | undefined
  readonly facts: Readonly<Record<string, unknown>>
}

const emailPattern = /^[^@\s]+@[^@\s]+\.[^@\s]+$/
const languagePattern = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/
const isoDate = /^\d{4}-\d{2}-\d{2}$/
const isoDateTime = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i

const isNonEmptyString = (value: unknown): value is string => typeof value === "string" && value.trim() !== ""

interface Recipient {
  readonly userId: string
  readonly emailRecipients: ReadonlyArray<string>
}

/** The facts every event shares, and the recipient. */
export const checkEnvelope = (input: IngestInput): { readonly recipient: Recipient; readonly issues: Array<HttpErrors.Issue> } => {
  const issues: Array<HttpErrors.Issue> = []
  const facts = input.facts
  const fact = (name: string, message: string) => issues.push({ path: ["facts", name], message })

  for (const name of ["facts_version", "scenario"] as const) {
    if (facts[name] === undefined || facts[name] === null) fact(name, "is missing")
    else if (!isNonEmptyString(facts[name])) fact(name, `Expected a non-empty string, actual ${JSON.stringify(facts[name])}`)
  }
  const time = facts["time"]
  if (time !== undefined && time !== null) {
    if (typeof time !== "string" || !(isoDate.test(time) || isoDateTime.test(time)) || Number.isNaN(Date.parse(time))) {
      fact("time", `Expected an ISO 8601 date or date-time, actual ${JSON.stringify(time)}`)
    }
  }
  for (const name of ["delta_pct", "cur", "prev"] as const) {
    const value = facts[name]
    if (value === undefined || value === null) continue
    const result = Rules.coerce("number", value)
    if (!result.ok) fact(name, result.message)
  }
  const lang = facts["lang"]
  if (lang !== undefined && lang !== null && (typeof lang !== "string" || !languagePattern.test(lang))) {
    fact("lang", `Expected a language tag such as "it", actual ${JSON.stringify(lang)}`)
  }

  const addresses: Array<string> = []
  const raw = facts["email_recipients"]
  if (raw !== undefined && raw !== null) {
    if (!Array.isArray(raw)) fact("email_recipients", `Expected a list of e-mail addresses, actual ${JSON.stringify(raw)}`)
    else {
      const seen = new Set<string>()
      raw.forEach((value: unknown, i) => {
        const address = typeof value === "string" ? value.trim() : ""
        if (!emailPattern.test(address) || address.length > 254) {
          issues.push({ path: ["facts", "email_recipients", i], message: `Expected an e-mail address, actual ${JSON.stringify(value)}` })
        } else if (!seen.has(address.toLowerCase())) {
          seen.add(address.toLowerCase())
          addresses.push(address)
        }
      })
    }
  }

  let userId = input.user_id ?? ""
  if (input.user_id === undefined) {
    if (addresses.length > 0) userId = recipientGroupId(addresses)
    else if (!issues.some((i) => i.path[1] === "email_recipients")) {
      issues.push({ path: ["user_id"], message: "is missing: give user_id, or facts.email_recipients for e-mail only" })
    }
  } else if (isRecipientGroup(input.user_id)) {
    if (addresses.length === 0) {
      fact("email_recipients", `is missing: ${input.user_id} is a group of e-mail recipients, give their addresses`)
    } else if (recipientGroupId(addresses) !== input.user_id) {
      issues.push({
        path: ["user_id"],
        message: `does not match facts.email_recipients (their group is ${recipientGroupId(addresses)})`
      })
    }
  }
  return { recipient: { userId, emailRecipients: addresses }, issues }
}

const outcome = (
  ruleId: string,
  kind: Domain.OutcomeKind,
  reason: string,
  extra: Partial<Pick<Domain.RuleOutcome, "notification_id" | "delivery_ids" | "duplicate_of">> = {}
): Domain.RuleOutcome => ({
  rule_id: ruleId,
  outcome: kind,
  reason,
  notification_id: extra.notification_id ?? null,
  delivery_ids: extra.delivery_ids ?? [],
  duplicate_of: extra.duplicate_of ?? null
})

/** Status precedence over the outcomes (see the module comment). */
const precedence: ReadonlyArray<readonly [Domain.OutcomeKind, IngestStatus]> = [
  ["dispatched", 200],
  ["suppressed", 202],
  ["deduplicated", 409],
  ["invalid_facts", 422],
  ["rejected", 400]
]

export const statusOf = (outcomes: ReadonlyArray<Domain.RuleOutcome>): IngestStatus => {
  for (const [kind, status] of precedence) if (outcomes.some((o) => o.outcome === kind)) return status
  return 204
}

const shorten = (text: string, max = 400) => (text.length > max ? `${text.slice(0, max - 3)}...` : text)

const describeIssues = (issues: ReadonlyArray<HttpErrors.Issue>) =>
  issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")

const detailOf = (status: IngestStatus, eventType: string, outcomes: ReadonlyArray<Domain.RuleOutcome>, issues: ReadonlyArray<HttpErrors.Issue>) => {
  const list = (kind: Domain.OutcomeKind) => outcomes.filter((o) => o.outcome === kind).map((o) => `${o.rule_id}: ${o.reason}`).join("; ")
  switch (status) {
    case 200:
      return `Dispatched (${list("dispatched")})`
    case 202:
      return `Created, but every delivery was suppressed (${list("suppressed")})`
    case 204:
      return `No rule fired for ${eventType}`
    case 409:
      return shorten(`Already notified: every rule that fired was deduplicated (${list("deduplicated")})`)
    case 422:
      return shorten(`Facts are missing or invalid: ${describeIssues(issues)}`)
    case 400:
      return shorten(`Event type ${eventType} cannot be handled: ${list("rejected")}`)
  }
}

export class Ingest extends Effect.Service<Ingest>()("nudging/Ingest", {
  effect: Effect.gen(function*() {
    const book = yield* RuleBook
    const orchestrator = yield* Orchestrator
    const dispatcher = yield* Dispatcher
    const clock = yield* Effect.clock

    /** The event's outcomes, with the deliveries it queued (not yet handed to the dispatcher). */
    const evaluate = (input: IngestInput): Effect.Effect<{ readonly report: IngestReport; readonly deliveryIds: ReadonlyArray<string> }, SqlError> =>
      Effect.gen(function*() {
        const now = yield* clock.currentTimeMillis
        const rules = (yield* book.current).byEventType.get(input.event_type) ?? []
        const communityId = input.community_id === undefined || input.community_id === null || input.community_id === ""
          ? ""
          : input.community_id
        const envelope = checkEnvelope(input)
        const report = (outcomes: ReadonlyArray<Domain.RuleOutcome>, issues: ReadonlyArray<HttpErrors.Issue>): IngestReport => {
          const status = statusOf(outcomes)
          return {
            status,
            eventType: input.event_type,
            userId: envelope.recipient.userId || (input.user_id ?? ""),
            communityId: communityId === "" ? null : communityId,
            outcomes,
            issues,
            detail: detailOf(status, input.event_type, outcomes, issues)
          }
        }

        if (rules.length === 0) return { report: report([], []), deliveryIds: [] }

        if (envelope.issues.length > 0) {
          const reason = describeIssues(envelope.issues)
          return {
            report: report(rules.map((r) => outcome(r.rule.id, "invalid_facts", shorten(reason))), envelope.issues),
            deliveryIds: []
          }
        }

        const scenario = String(input.facts["scenario"]).trim()
        const candidates = rules.filter((r) => r.rule.scenarios.includes(scenario))
        if (candidates.length === 0) {
          return {
            report: report(
              rules.map((r) =>
                outcome(r.rule.id, "rejected", `answers scenarios ${r.rule.scenarios.join(", ")}, not ${scenario}`)
              ),
              []
            ),
            deliveryIds: []
          }
        }

        const outcomes: Array<Domain.RuleOutcome> = []
        const issues: Array<HttpErrors.Issue> = []
        const deliveryIds: Array<string> = []
        for (const compiled of candidates) {
          const result = yield* evaluateRule(compiled, input, scenario, envelope.recipient, communityId, now)
          outcomes.push(result.outcome)
          issues.push(...result.issues)
          deliveryIds.push(...result.outcome.delivery_ids)
        }
        return { report: report(outcomes, issues), deliveryIds }
      }).pipe(Effect.withSpan("Ingest.evaluate", {
        attributes: { "nudging.event_type": input.event_type },
        // The call site is always this line: no stack captured per ingest.
        captureStackTrace: false
      }))

    const evaluateRule = (
      compiled: CompiledRule,
      input: IngestInput,
      scenario: string,
      recipient: Recipient,
      communityId: string,
      now: number
    ) =>
      Effect.gen(function*() {
        const { rule } = compiled
        const checked = Rules.checkFacts(rule, input.facts)
        if (checked.issues.length > 0) {
          const issues = checked.issues.map((i): HttpErrors.Issue => ({ path: ["facts", i.fact], message: i.message }))
          return { outcome: outcome(rule.id, "invalid_facts", shorten(describeIssues(issues))), issues }
        }
        const evaluation = Rules.evaluate(rule.condition, checked.facts)
        if (!evaluation.triggered) return { outcome: outcome(rule.id, "not_triggered", evaluation.reason), issues: [] }

        const lang = input.facts["lang"]
        const admitted = yield* orchestrator.admit({
          rule: compiled,
          eventType: input.event_type,
          scenario,
          userId: recipient.userId,
          communityId,
          facts: checked.facts,
          language: typeof lang === "string" ? lang : undefined,
          emailRecipients: recipient.emailRecipients,
          now
        })
        switch (admitted._tag) {
          case "Dispatched": {
            const channels = admitted.channels.length === 0
              ? "stored in the inbox; no push subscription or e-mail address to deliver to"
              : `stored and queued for ${admitted.channels.length} deliver${admitted.channels.length === 1 ? "y" : "ies"} (${
                [...new Set(admitted.channels)].join(", ")
              })`
            return {
              outcome: outcome(rule.id, "dispatched", `${evaluation.reason}; ${channels}`, {
                notification_id: admitted.notificationId,
                delivery_ids: admitted.deliveryIds
              }),
              issues: []
            }
          }
          case "Suppressed":
            return {
              outcome: outcome(rule.id, "suppressed", `${admitted.reason}: ${admitted.detail}`, {
                notification_id: admitted.notificationId
              }),
              issues: []
            }
          case "Deduplicated":
            return {
              outcome: outcome(rule.id, "deduplicated", `already notified in the ${rule.dedup_window} window ${admitted.bucket}`, {
                notification_id: admitted.notificationId,
                duplicate_of: admitted.duplicateOf
              }),
              issues: []
            }
          case "RenderFailed":
            return { outcome: outcome(rule.id, "rejected", `the template cannot be rendered: ${admitted.message}`), issues: [] }
        }
      })

    /**
     * Evaluates the event and hands its deliveries to the dispatcher. Not interruptible: an
     * ingest that started runs to its end when its caller goes away (a client closing its
     * connection interrupts the request), so its statement commits or fails as a whole and what
     * it queued is handed over at once; interrupting it would save one statement. (The late
     * cancel of an interrupted statement, which once stopped an unrelated query, is handled for
     * every service in `@rec/db`'s `cancelSafePool`.)
     */
    const ingest = (input: IngestInput) =>
      Effect.tap(evaluate(input), ({ deliveryIds }) => dispatcher.kick(deliveryIds)).pipe(
        Effect.map(({ report }) => report),
        Effect.uninterruptible
      )

    return { evaluate, ingest }
  })
}) {}
