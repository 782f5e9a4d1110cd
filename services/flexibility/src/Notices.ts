/**
 * What follows a commitment once it is stored, in the background (`Background`): the
 * announcement on MQTT and the reminder before its window when it is made (reference A3, A6.3),
 * the reminder's withdrawal when it is cancelled, the `commitment_settled` nudge when it is
 * settled. The caller's answer does not wait for them and their failures are logged: the
 * commitment itself is already safe. Reminders and settled nudges go to the nudging service in
 * batches (`ScheduledReminders`, `SettledNudges`), and so are the announcements
 * to the MQTT client (`Announcements`).
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { Background } from "./Background.js"
import { Announcements } from "./Announcements.js"
import * as Config from "./Config.js"
import type { Commitment } from "./Domain.js"
import * as NudgeEvents from "./NudgeEvents.js"
import { Nudges } from "./Nudges.js"
import { ScheduledReminders } from "./ScheduledReminders.js"
import { SettledNudges } from "./SettledNudges.js"

export class Notices extends Effect.Service<Notices>()("flexibility/Notices", {
  effect: Effect.gen(function*() {
    const background = yield* Background
    const nudges = yield* Nudges
    const announcements = yield* Announcements
    const reminders = yield* ScheduledReminders
    const settledNudges = yield* SettledNudges
    const { reminderLead } = yield* Config.settings

    /** The reminder before the window; none for a window that has ended (a service recording past commitments). */
    const remindBeforeWindow = (c: Commitment) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        if (Date.parse(c.period_end) <= now) return Effect.void
        const reminder = NudgeEvents.preWindow(c, Duration.toMillis(reminderLead), now)
        return reminder._tag === "Now"
          ? background.run("send_reminder", Effect.asVoid(nudges.send(reminder.event)))
          : reminders.schedule(reminder.event)
      })

    /** A commitment was made: announce it, schedule its reminder. */
    const committed = (c: Commitment) =>
      Effect.zipRight(
        announcements.announce(c),
        remindBeforeWindow(c)
      )

    /** A commitment was cancelled: its reminder is withdrawn. */
    const cancelled = (c: Commitment) => background.run("unschedule_reminder", reminders.unschedule(NudgeEvents.reminderKey(c)))

    /** Commitments were settled: tell their users (in batches; one refused nudge does not stop the rest). */
    const settled = (settledCommitments: ReadonlyArray<Commitment>) => settledNudges.offer(settledCommitments)

    return { committed, cancelled, settled } as const
  })
}) {}
