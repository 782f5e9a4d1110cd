/**
 * What follows commitments, in batches: reminders scheduled in one call (a key offered twice
 * keeps its last event; a withdrawn one is dropped or withdrawn after its batch), settled nudges
 * in one call, and a batch the nudging service does not take sent again one event at a time;
 * what comes while a batch is on the way waits for the next linger and goes with the others.
 * `Batches` itself: full batches back to back, keys replaced and moved last, withdrawals that
 * drop a waiting item or wait for the batch on the way, and what waits sent at shutdown.
 */
import { describe, expect, it } from "@effect/vitest"
import { Upstream } from "@rec/platform"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Background } from "../src/Background.js"
import * as Batches from "../src/Batches.js"
import type { Commitment } from "../src/Domain.js"
import { type NudgeEvent, Nudges, type ScheduledNudge } from "../src/Nudges.js"
import { ScheduledReminders } from "../src/ScheduledReminders.js"
import { SettledNudges } from "../src/SettledNudges.js"

interface Calls {
  readonly log: Array<string>
  batchFails: boolean
  /** How long a `scheduleMany` call takes (default: at once). */
  readonly callTime?: Duration.Duration
}

const failure = (detail: string) => new Upstream.UpstreamFailure({ upstream: "nudging service", operation: "test", status: 502, detail })

const fakeNudges = (calls: Calls) =>
  Layer.succeed(
    Nudges,
    Nudges.of({
      send: (e: NudgeEvent) => Effect.sync(() => void calls.log.push(`send ${e.facts["commitment_id"]}`)).pipe(Effect.as("delivered" as const)),
      sendMany: (events) =>
        calls.batchFails
          ? Effect.fail(failure("no batch route"))
          : Effect.sync(() => {
            calls.log.push(`sendMany ${events.map((e) => e.facts["commitment_id"]).join(",")}`)
            return events.map((e) => (e.facts["commitment_id"] === "refused" ? failure("refused") : "delivered" as const))
          }),
      schedule: (e: ScheduledNudge) => Effect.sync(() => void calls.log.push(`schedule ${e.external_key}`)),
      scheduleMany: (events) =>
        calls.batchFails
          ? Effect.fail(failure("no batch route"))
          : Effect.sync(() => void calls.log.push(`scheduleMany ${events.map((e) => `${e.external_key}@${e.trigger_at}`).join(",")}`)).pipe(
            Effect.delay(calls.callTime ?? Duration.zero)
          ),
      unschedule: (key) => Effect.sync(() => void calls.log.push(`unschedule ${key}`))
    })
  )

const setup = (calls: Calls) =>
  Layer.mergeAll(ScheduledReminders.Default, SettledNudges.Default).pipe(
    Layer.provideMerge(Layer.merge(fakeNudges(calls), Background.Default))
  )

const reminder = (key: string, at = "2030-01-01T10:00:00.000Z"): ScheduledNudge => ({
  event_type: "flexibility_reminder",
  user_id: "u",
  community_id: null,
  facts: { commitment_id: key },
  trigger_at: at,
  external_key: key
})

const commitment = (id: string) => ({
  id,
  user_id: "u",
  suggestion_id: "s",
  suggestion_type: "shift-consumption",
  community_id: null,
  device_id: null,
  period_start: "2030-01-01T10:00:00.000Z",
  period_end: "2030-01-01T11:00:00.000Z",
  committed_at: "2030-01-01T09:00:00.000Z",
  settled_at: "2030-01-01T12:00:00.000Z",
  reminded_at: null,
  cancelled_at: null,
  status: "settled",
  reward_points_estimated: 5,
  reward_points_actual: 4,
  actual_kwh: 0.4
}) as unknown as Commitment

const idle = Effect.flatMap(Background, (b) => b.idle)

describe("batches of what follows commitments", () => {
  it.live("reminders: one call for the moment's reminders; a key given twice keeps its last; a withdrawn one is dropped", () => {
    const calls: Calls = { log: [], batchFails: false }
    return Effect.gen(function*() {
      const reminders = yield* ScheduledReminders
      yield* reminders.schedule(reminder("a"))
      yield* reminders.schedule(reminder("b"))
      yield* reminders.schedule(reminder("a", "2030-01-01T09:45:00.000Z"))
      yield* reminders.schedule(reminder("c"))
      yield* reminders.unschedule("c")
      yield* idle
      expect(calls.log).toEqual([
        "unschedule c",
        "scheduleMany b@2030-01-01T10:00:00.000Z,a@2030-01-01T09:45:00.000Z"
      ])
    }).pipe(Effect.provide(setup(calls)))
  })

  it.live("reminders: those that come while a batch is on the way wait for the next linger, not a batch of their own", () => {
    // linger 300 ms, a call 300 ms: a goes at ~300 ms (answered ~600 ms); b comes at ~400 ms and
    // c at ~700 ms, within the linger that follows a's answer, so b and c go in one call
    // (sending b alone as soon as a's call was answered left c for a third).
    const calls: Calls = { log: [], batchFails: false, callTime: Duration.millis(300) }
    const at = (key: string) => `${key}@2030-01-01T10:00:00.000Z`
    return Effect.gen(function*() {
      const reminders = yield* ScheduledReminders
      yield* reminders.schedule(reminder("a"))
      yield* Effect.sleep("400 millis")
      yield* reminders.schedule(reminder("b"))
      yield* Effect.sleep("300 millis")
      yield* reminders.schedule(reminder("c"))
      yield* idle
      expect(calls.log).toEqual([`scheduleMany ${at("a")}`, `scheduleMany ${at("b")},${at("c")}`])
    }).pipe(
      Effect.provide(setup(calls)),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["FLEXIBILITY_REMINDER_BATCH_LINGER", "300 millis"]])))
    )
  })

  it.live("reminders: a batch the nudging service does not take is scheduled one at a time", () => {
    const calls: Calls = { log: [], batchFails: true }
    return Effect.gen(function*() {
      const reminders = yield* ScheduledReminders
      yield* reminders.schedule(reminder("a"))
      yield* reminders.schedule(reminder("b"))
      yield* idle
      expect(calls.log).toEqual(["schedule a", "schedule b"])
    }).pipe(Effect.provide(setup(calls)))
  })

  it.live("reminders: what still waits at shutdown is sent", () => {
    const calls: Calls = { log: [], batchFails: false }
    return Effect.gen(function*() {
      const reminders = yield* ScheduledReminders
      yield* reminders.schedule(reminder("late"))
    }).pipe(Effect.provide(setup(calls)), Effect.andThen(() => expect(calls.log).toEqual(["scheduleMany late@2030-01-01T10:00:00.000Z"])))
  })

  it.live("settled nudges: one call; a refused event does not stop the rest; without the batch route one at a time", () => {
    const calls: Calls = { log: [], batchFails: false }
    return Effect.gen(function*() {
      const settled = yield* SettledNudges
      yield* settled.offer([commitment("x"), commitment("refused"), commitment("y")])
      yield* idle
      expect(calls.log).toEqual(["sendMany x,refused,y"])
      calls.batchFails = true
      yield* settled.offer([commitment("p"), commitment("q")])
      yield* idle
      expect(calls.log.slice(1).sort()).toEqual(["send p", "send q"])
    }).pipe(Effect.provide(setup(calls)))
  })
})

interface Item {
  readonly key: string
  readonly value: number
}

/** A `send` that logs each batch when it is done, after `callTime`. */
const recorder = (log: Array<string>, callTime = Duration.zero) => (batch: ReadonlyArray<Item>) =>
  Effect.sleep(callTime).pipe(Effect.zipRight(Effect.sync(() => void log.push(`sent ${batch.map((i) => `${i.key}=${i.value}`).join(",")}`))))

const keyed = (log: Array<string>, options: { readonly size?: number; readonly callTime?: Duration.Duration } = {}) =>
  Batches.makeKeyed<Item>({
    task: "test",
    size: options.size ?? 10,
    linger: Duration.millis(50),
    send: recorder(log, options.callTime),
    key: (item) => item.key
  })

describe("Batches", () => {
  it.live("unkeyed: every item offered goes, in order, full batches back to back", () => {
    const log: Array<string> = []
    return Effect.gen(function*() {
      const batches = yield* Batches.make<Item>({ task: "test", size: 2, linger: Duration.millis(50), send: recorder(log) })
      yield* batches.offer([{ key: "a", value: 1 }, { key: "a", value: 2 }, { key: "b", value: 1 }, { key: "c", value: 1 }, { key: "d", value: 1 }])
      yield* idle
      expect(log).toEqual(["sent a=1,a=2", "sent b=1,c=1", "sent d=1"])
    }).pipe(Effect.scoped, Effect.provide(Background.Default))
  })

  it.live("keyed: a key offered again keeps its last item and goes last; the rest of a full batch waits for the next linger", () => {
    const log: Array<string> = []
    return Effect.gen(function*() {
      const batches = yield* keyed(log, { size: 2 })
      yield* batches.offer([{ key: "a", value: 1 }, { key: "b", value: 1 }, { key: "c", value: 1 }])
      yield* batches.offer([{ key: "a", value: 2 }])
      yield* idle
      expect(log).toEqual(["sent b=1,c=1", "sent a=2"])
    }).pipe(Effect.scoped, Effect.provide(Background.Default))
  })

  it.live("keyed: a withdrawn item that waits is dropped", () => {
    const log: Array<string> = []
    return Effect.gen(function*() {
      const batches = yield* keyed(log)
      yield* batches.offer([{ key: "a", value: 1 }, { key: "b", value: 1 }])
      yield* batches.withdraw("a")
      yield* batches.withdraw("unknown")
      yield* idle
      expect(log).toEqual(["sent b=1"])
    }).pipe(Effect.scoped, Effect.provide(Background.Default))
  })

  it.live("keyed: withdrawing an item whose batch is on the way completes once that batch was sent", () => {
    const log: Array<string> = []
    return Effect.gen(function*() {
      const batches = yield* keyed(log, { callTime: Duration.millis(300) })
      yield* batches.offer([{ key: "a", value: 1 }])
      yield* Effect.sleep("150 millis") // past the linger: a's batch is on the way
      yield* batches.withdraw("a")
      log.push("withdrawn a")
      yield* batches.withdraw("b") // in no batch: at once
      log.push("withdrawn b")
      expect(log).toEqual(["sent a=1", "withdrawn a", "withdrawn b"])
    }).pipe(Effect.scoped, Effect.provide(Background.Default))
  })

  it.live("keyed: what still waits at shutdown is sent", () => {
    const log: Array<string> = []
    return Effect.gen(function*() {
      const batches = yield* keyed(log)
      yield* batches.offer([{ key: "late", value: 1 }])
    }).pipe(Effect.scoped, Effect.provide(Background.Default), Effect.andThen(() => expect(log).toEqual(["sent late=1"])))
  })
})
