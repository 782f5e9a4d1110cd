/**
 * Scheduled events (`POST /scheduled-events`): kept until `trigger_at`, then ingested exactly as
 * `POST /ingest-event` would (the status it would have answered and the outcomes are kept on the
 * event). The flexibility service schedules its pre-window reminders this way.
 *
 * Every `SCHEDULER_POLL_SECONDS`, due events are taken one at a time, each in a transaction that
 * locks it with `FOR UPDATE SKIP LOCKED`, ingests it (its writes in a savepoint) and marks it
 * dispatched (or failed, with the error): several instances never ingest the same event, and an
 * instance that dies in the middle leaves it pending for the next poll. Deliveries go out once
 * that transaction committed.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { HttpErrors } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as crypto from "node:crypto"
import { Dispatcher } from "./Dispatcher.js"
import type * as Domain from "./Domain.js"
import { checkEnvelope, Ingest } from "./Ingest.js"
import { type NewScheduledEvent, ScheduledRepo } from "./ScheduledRepo.js"
import { Settings } from "./Settings.js"
import * as Windows from "./Windows.js"

export type ScheduleResult =
  | { readonly _tag: "Scheduled"; readonly created: boolean; readonly event: Domain.ScheduledEvent }
  | { readonly _tag: "Invalid"; readonly issues: ReadonlyArray<HttpErrors.Issue> }

export type ScheduleManyResult =
  | { readonly _tag: "Scheduled"; readonly events: ReadonlyArray<{ readonly id: string; readonly externalKey: string | null; readonly created: boolean }> }
  | { readonly _tag: "Invalid"; readonly issues: ReadonlyArray<HttpErrors.Issue> }

const toNew = (request: Domain.ScheduleRequest): NewScheduledEvent => {
  const community = request.community_id ?? null
  return {
    id: crypto.randomUUID(),
    externalKey: request.external_key ?? null,
    eventType: request.event_type,
    userId: request.user_id ?? null,
    communityId: community === "" ? null : community,
    triggerAt: new Date(Date.parse(request.trigger_at)).toISOString(),
    facts: request.facts
  }
}

export class Scheduler extends Effect.Service<Scheduler>()("nudging/Scheduler", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ScheduledRepo
    const ingest = yield* Ingest
    const dispatcher = yield* Dispatcher
    const settings = yield* Settings
    const clock = yield* Effect.clock

    const now = Effect.map(clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

    const schedule = (request: Domain.ScheduleRequest): Effect.Effect<ScheduleResult, SqlError> =>
      Effect.gen(function*() {
        const envelope = checkEnvelope({ ...request, facts: request.facts })
        if (envelope.issues.length > 0) return { _tag: "Invalid", issues: envelope.issues } as const
        const { created, event } = yield* repo.upsert(toNew(request), yield* now)
        return { _tag: "Scheduled", created, event } as const
      }).pipe(Effect.withSpan("Scheduler.schedule"))

    /**
     * `schedule` for many events, all stored in one statement or none (any invalid event: none,
     * and the issues of each, under `events.<i>`). A key given twice keeps its last event, as
     * scheduling them one after the other would.
     */
    const scheduleMany = (requests: ReadonlyArray<Domain.ScheduleRequest>): Effect.Effect<ScheduleManyResult, SqlError> =>
      Effect.gen(function*() {
        const issues: Array<HttpErrors.Issue> = []
        requests.forEach((request, i) => {
          for (const issue of checkEnvelope({ ...request, facts: request.facts }).issues) {
            issues.push({ ...issue, path: ["events", i, ...issue.path] })
          }
        })
        if (issues.length > 0) return { _tag: "Invalid", issues } as const
        const byKey = new Map<string, number>()
        const events: Array<NewScheduledEvent> = []
        for (const request of requests) {
          const event = toNew(request)
          const at = event.externalKey === null ? undefined : byKey.get(event.externalKey)
          if (at === undefined) {
            if (event.externalKey !== null) byKey.set(event.externalKey, events.length)
            events.push(event)
          } else {
            events[at] = event
          }
        }
        const stored = yield* repo.upsertMany(events, yield* now)
        return { _tag: "Scheduled", events: stored } as const
      }).pipe(Effect.withSpan("Scheduler.scheduleMany", { attributes: { "nudging.events": requests.length } }))

    /** Ingests the next due event; `false` when none is due. */
    const runNext = Effect.gen(function*() {
      const result = yield* sql.withTransaction(Effect.gen(function*() {
        const at = yield* now
        const event = yield* repo.lockNextDue(at)
        if (event === undefined) return undefined
        const evaluated = yield* sql.withTransaction(ingest.evaluate({
          event_type: event.event_type,
          user_id: event.user_id ?? undefined,
          community_id: event.community_id,
          facts: event.facts
        })).pipe(Effect.either)
        if (evaluated._tag === "Left") {
          yield* repo.markFailed(event.id, `ingest failed: ${evaluated.left.message}`, yield* now)
          return []
        }
        yield* repo.markDispatched(event.id, evaluated.right.report.status, evaluated.right.report.outcomes, yield* now)
        return evaluated.right.deliveryIds
      }))
      if (result === undefined) return false
      yield* dispatcher.kick(result)
      return true
    }).pipe(Effect.withSpan("Scheduler.runNext"))

    /** Ingests every due event; how many. */
    const runDue = Effect.iterate({ count: 0, more: true }, {
      while: (s) => s.more,
      body: (s) => Effect.map(runNext, (more) => ({ count: s.count + (more ? 1 : 0), more }))
    }).pipe(Effect.map((s) => s.count))

    /** The cap's counts of days older than yesterday (in any time zone) go. */
    const housekeeping = Effect.flatMap(clock.currentTimeMillis, (ms) =>
      repo.forgetCountsBefore(Windows.bucketOf("daily", ms - 2 * 86_400_000, settings.timeZone)))

    yield* Effect.zipRight(runDue, housekeeping).pipe(
      Effect.catchAllCause((cause) => Effect.logError("scheduled events poll failed", cause)),
      Effect.repeat(Schedule.spaced(settings.schedulerPoll)),
      Effect.forkScoped
    )

    return {
      schedule,
      scheduleMany,
      runDue,
      byKey: repo.byKey,
      cancel: (key: string) => Effect.flatMap(now, (at) => repo.cancel(key, at))
    }
  })
}) {}
