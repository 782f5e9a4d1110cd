/**
 * What a completed grid pipeline run does (spec part B section 6; reference grid-gateway.md
 * §6.3-6.5, with later upstream's fixes): the alerts that really fire.
 *
 * 1. Only runs of `GRID_PIPELINE_FLOW` count (the listener passes `completed` ones only).
 * 2. The networks: the event's `network_id`, else every network with an active rule. The day:
 *    the event's `period`, else its timestamp's day. The window: the event's `window_start` /
 *    `window_end`, else the whole day (00:00-23:59; the original sent nothing without one, so
 *    no alert ever fired).
 * 3. Per network, the digital twin's wind and heat alert distributions of that day (only the
 *    hazards some active rule lists). A hazard whose distribution could not be read is not
 *    judged: rules listing it are left for a redelivery of the event.
 * 4. A rule is breached for a hazard it lists when a level at or above its threshold has events
 *    (WARNING: WARNING or ALERT; ALERT: ALERT only).
 * 5. Each breached rule is claimed for (rule, run_id) in the database (`AlertDeliveriesRepo`):
 *    only the claimant sends, so redelivered messages and other replicas send nothing twice.
 *    It sends one nudge (recipients of the rule, else of the owner's settings, else the owner)
 *    and, when the owner set a webhook, one signed POST; the outcome is recorded.
 */
import { DigitalTwinClient, type GridSchemas } from "@rec/digital-twin"
import { type PipelineRuns } from "@rec/mqtt"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { AlertDeliveriesRepo, type Claim, type PartState } from "./AlertDeliveriesRepo.js"
import { AlertNudges, nudgeFor } from "./AlertNudges.js"
import { type AlertRuleRow, AlertRulesRepo } from "./AlertRulesRepo.js"
import * as GridConfig from "./Config.js"
import { type RiskType, riskTypes, type Threshold } from "./Domain.js"
import { toUpstreamFailure } from "./GridData.js"
import { NotificationSettingsRepo } from "./NotificationSettingsRepo.js"
import { Webhooks } from "./Webhooks.js"

/** The levels that breach a threshold. */
export const levelsAtOrAbove = (threshold: Threshold): ReadonlyArray<string> =>
  threshold === "WARNING" ? ["WARNING", "ALERT"] : ["ALERT"]

export type Distributions = Partial<Record<RiskType, GridSchemas.AlertDistribution>>

/** The hazards of the rule that reach its threshold, in the order wind, heat. */
export const breachedHazards = (
  rule: { readonly riskTypes: ReadonlyArray<RiskType>; readonly threshold: Threshold },
  distributions: Distributions
): ReadonlyArray<RiskType> => {
  const levels = levelsAtOrAbove(rule.threshold)
  return riskTypes.filter((hazard) =>
    rule.riskTypes.includes(hazard) &&
    (distributions[hazard] ?? []).some((item) => levels.includes(item.risk_level.toUpperCase()) && item.events > 0)
  )
}

/** Events per level of a distribution (`{ALERT: 12, WARNING: 30, LOW: 80}`). */
const countsOf = (distribution: GridSchemas.AlertDistribution | undefined) =>
  Object.fromEntries((distribution ?? []).map((item) => [item.risk_level.toUpperCase(), item.events]))

export interface RuleOutcome {
  readonly ruleId: string
  readonly networkId: string
  readonly result: "sent" | "partly-failed" | "not-breached" | "already-handled" | "not-judged"
  readonly hazards: ReadonlyArray<RiskType>
}

export interface DispatchReport {
  readonly runId: string
  readonly period: string
  readonly networks: ReadonlyArray<string>
  readonly rules: ReadonlyArray<RuleOutcome>
}

const wholeDay = { start: "00:00", end: "23:59" } as const

export class AlertDispatcher extends Effect.Service<AlertDispatcher>()("@rec/grid-gateway/AlertDispatcher", {
  effect: Effect.gen(function*() {
    const settings = yield* GridConfig.settings
    const rulesRepo = yield* AlertRulesRepo
    const settingsRepo = yield* NotificationSettingsRepo
    const deliveries = yield* AlertDeliveriesRepo
    const dt = yield* DigitalTwinClient
    const nudges = yield* AlertNudges
    const webhooks = yield* Webhooks

    /** The distributions of the hazards some rule needs; a hazard that failed is absent. */
    const distributionsOf = (networkId: string, period: string, hazards: ReadonlyArray<RiskType>) =>
      Effect.forEach(
        hazards,
        (hazard) => {
          const call = hazard === "wind"
            ? dt.grid.windAlertDistribution(networkId, { dates: [period] })
            : dt.grid.heatAlertDistribution(networkId, { dates: [period] })
          return call.pipe(
            Effect.map((d) => [hazard, d] as const),
            Effect.catchAll((error) =>
              Effect.as(
                Effect.logWarning(`alert evaluation: ${toUpstreamFailure(error).detail}`).pipe(
                  Effect.annotateLogs({ "network.id": networkId, hazard })
                ),
                undefined
              )
            )
          )
        },
        { concurrency: "unbounded" }
      ).pipe(Effect.map((pairs): Distributions => Object.fromEntries(pairs.filter((p) => p !== undefined))))

    /** Sends what the claim has not sent yet; never fails. */
    const deliver = (
      rule: AlertRuleRow,
      claim: Claim,
      context: {
        readonly event: PipelineRuns.PipelineRunEvent
        readonly period: string
        readonly window: { readonly start: string; readonly end: string }
        readonly breached: ReadonlyArray<RiskType>
        readonly distributions: Distributions
      }
    ) =>
      Effect.gen(function*() {
        const { breached, distributions, event, period, window } = context
        const owner = Option.getOrUndefined(yield* settingsRepo.find(rule.userId).pipe(Effect.orElseSucceed(() => Option.none())))
        const recipients = rule.recipients ?? owner?.emailRecipients ?? []

        const nudge: { state: PartState; detail: string | null } = claim.nudgeState === "sent"
          ? { state: "sent", detail: "sent by an earlier attempt" }
          : yield* nudges.send(nudgeFor({
            owner: rule.userId,
            recipients,
            breached,
            period,
            runDay: event.timestamp.slice(0, 10),
            windowStart: window.start,
            windowEnd: window.end
          })).pipe(
            Effect.map((receipt) => ({ state: "sent" as const, detail: receipt.outcome })),
            Effect.catchAll((failure) =>
              Effect.as(
                Effect.logWarning(`alert nudge failed: ${failure.detail}`),
                { state: "failed" as const, detail: failure.detail }
              )
            )
          )

        const webhook: { state: PartState; detail: string | null } = claim.webhookState === "sent"
          ? { state: "sent", detail: "sent by an earlier attempt" }
          : owner?.webhookUrl == null || owner.webhookSecret == null
          ? { state: "none", detail: null }
          : yield* Effect.map(
            webhooks.deliver({
              url: owner.webhookUrl,
              secret: owner.webhookSecret,
              id: `${rule.id}:${event.run_id}`,
              body: {
                type: "grid.alert",
                delivery_id: `${rule.id}:${event.run_id}`,
                rule_id: rule.id,
                network_id: rule.networkId,
                run_id: event.run_id,
                flow: event.flow,
                period,
                window_start: window.start,
                window_end: window.end,
                threshold: rule.threshold,
                hazards: breached,
                levels: Object.fromEntries(breached.map((h) => [h, countsOf(distributions[h])])),
                recipients,
                sent_at: new Date().toISOString()
              }
            }),
            (result) =>
              result._tag === "Delivered"
                ? { state: "sent" as const, detail: `answered ${result.status} after ${result.attempts} attempt(s)` }
                : { state: "failed" as const, detail: result.reason }
          )

        yield* deliveries.complete(rule.id, event.run_id, { nudge, webhook }).pipe(
          Effect.catchAll((error) => Effect.logError("recording an alert delivery failed", error))
        )
        return nudge.state === "failed" || webhook.state === "failed" ? "partly-failed" as const : "sent" as const
      }).pipe(Effect.withSpan("AlertDispatcher.deliver", { attributes: { "rule.id": rule.id } }))

    const evaluateNetwork = (event: PipelineRuns.PipelineRunEvent, networkId: string, period: string) =>
      Effect.gen(function*() {
        const rules = yield* rulesRepo.activeOn(networkId)
        if (rules.length === 0) return []
        const needed = riskTypes.filter((h) => rules.some((r) => r.riskTypes.includes(h)))
        const distributions = yield* distributionsOf(networkId, period, needed)
        const window = { start: event.window_start ?? wholeDay.start, end: event.window_end ?? wholeDay.end }
        return yield* Effect.forEach(rules, (rule) =>
          Effect.gen(function*() {
            const outcome = (result: RuleOutcome["result"], hazards: ReadonlyArray<RiskType> = []): RuleOutcome => ({
              ruleId: rule.id,
              networkId,
              result,
              hazards
            })
            if (rule.riskTypes.some((h) => distributions[h] === undefined)) return outcome("not-judged")
            const breached = breachedHazards(rule, distributions)
            if (breached.length === 0) return outcome("not-breached")
            const claim = yield* deliveries.claim({ ruleId: rule.id, runId: event.run_id, networkId, period, hazards: breached })
            if (Option.isNone(claim)) return outcome("already-handled", breached)
            const result = yield* deliver(rule, claim.value, { event, period, window, breached, distributions })
            return outcome(result, breached)
          }), { concurrency: 4 })
      }).pipe(Effect.withSpan("AlertDispatcher.evaluateNetwork", { attributes: { "network.id": networkId } }))

    /** Handles one pipeline-run event; never fails (problems are logged and reported). */
    const onPipelineRun = (event: PipelineRuns.PipelineRunEvent): Effect.Effect<DispatchReport> =>
      Effect.gen(function*() {
        const period = event.period ?? event.timestamp.slice(0, 10)
        const empty: DispatchReport = { runId: event.run_id, period, networks: [], rules: [] }
        if (event.flow !== settings.pipelineFlow || event.status !== "completed") return empty
        const networks = event.network_id !== undefined ? [event.network_id] : yield* rulesRepo.networksWithActiveRules
        const rules = yield* Effect.forEach(networks, (network) => evaluateNetwork(event, network, period)).pipe(
          Effect.map((perNetwork) => perNetwork.flat())
        )
        const report: DispatchReport = { runId: event.run_id, period, networks, rules }
        const sent = rules.filter((r) => r.result === "sent" || r.result === "partly-failed").length
        yield* Effect.logInfo(`pipeline run ${event.run_id}: ${sent} alert(s) sent for ${rules.length} active rule(s)`).pipe(
          Effect.annotateLogs({
            "pipeline.period": period,
            "alerts.networks": networks,
            "alerts.outcomes": rules.map((r) => `${r.ruleId}:${r.result}`)
          })
        )
        return report
      }).pipe(
        Effect.catchAll((error) =>
          Effect.as(
            Effect.logError(`pipeline run ${event.run_id}: alert evaluation failed`, error),
            { runId: event.run_id, period: event.period ?? event.timestamp.slice(0, 10), networks: [], rules: [] }
          )
        ),
        Effect.withSpan("AlertDispatcher.onPipelineRun", { attributes: { "pipeline.run_id": event.run_id } })
      )

    return { onPipelineRun } as const
  })
}) {}
