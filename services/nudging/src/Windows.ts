/**
 * Deduplication windows and calendar days, in the service's time zone (`NUDGING_TIME_ZONE`,
 * default UTC).
 *
 * A rule's window bucket is computed from the time of the ingest (Effect's `Clock`), not from
 * the event's facts: the original keyed deduplication on the facts' period token and kept the
 * keys forever, so a daily rule that fired once for a date could never fire for that date again
 * and a replayed event of an old period was blocked for good. Here a daily rule fires again the
 * next day, a weekly one the next ISO week, and so on.
 */
import * as DateTime from "effect/DateTime"
import type { DedupWindow } from "./Domain.js"

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

interface Parts {
  readonly year: number
  readonly month: number
  readonly day: number
  readonly hours: number
}

/**
 * The last minute asked about, per zone: every ingest reads the local day (the cap's) and often
 * a window bucket, and formatting an instant in a zone (`Intl`) is a noticeable part of an
 * ingest's CPU. Within one minute the answer cannot change: since 1972 every zone's offsets, and
 * so its transitions in UTC, are whole minutes (only older local mean times had seconds).
 */
const lastMinute = new WeakMap<DateTime.TimeZone, { readonly minute: number; readonly parts: Parts }>()

/** Year, month (1-12), day, hour of an instant in a zone. */
const partsOf = (millis: number, zone: DateTime.TimeZone): Parts => {
  const minute = Math.floor(millis / 60_000)
  const cached = lastMinute.get(zone)
  if (cached !== undefined && cached.minute === minute) return cached.parts
  const all = DateTime.toParts(DateTime.unsafeMakeZoned(millis, { timeZone: zone }))
  const parts = { year: all.year, month: all.month, day: all.day, hours: all.hours }
  lastMinute.set(zone, { minute, parts })
  return parts
}

/** ISO 8601 week-numbering year and week of a calendar date. */
export const isoWeek = (year: number, month: number, day: number): { readonly year: number; readonly week: number } => {
  const date = new Date(Date.UTC(year, month - 1, day))
  const weekday = (date.getUTCDay() + 6) % 7 // Monday = 0
  date.setUTCDate(date.getUTCDate() - weekday + 3) // the Thursday of this week decides the year
  const weekYear = date.getUTCFullYear()
  const firstThursday = new Date(Date.UTC(weekYear, 0, 4))
  const firstWeekday = (firstThursday.getUTCDay() + 6) % 7
  firstThursday.setUTCDate(firstThursday.getUTCDate() - firstWeekday + 3)
  const week = 1 + Math.round((date.getTime() - firstThursday.getTime()) / (7 * 86_400_000))
  return { year: weekYear, week }
}

const dayMillis = 86_400_000
/** Monday 1970-01-05: fortnights are counted from it. */
const fortnightEpoch = Date.UTC(1970, 0, 5)

/**
 * The bucket of `window` at `millis`: rules deduplicate per (rule, recipient, community, bucket).
 * `always` has no bucket (every notification stands alone): the caller makes a unique one.
 */
export const bucketOf = (window: Exclude<DedupWindow, "always">, millis: number, zone: DateTime.TimeZone): string => {
  const { day, hours, month, year } = partsOf(millis, zone)
  switch (window) {
    case "once":
      return "once"
    case "hourly":
      return `${year}-${pad(month)}-${pad(day)}T${pad(hours)}`
    case "daily":
      return `${year}-${pad(month)}-${pad(day)}`
    case "weekly": {
      const w = isoWeek(year, month, day)
      return `${w.year}-W${pad(w.week)}`
    }
    case "two_weeks": {
      const localDay = Date.UTC(year, month - 1, day)
      const index = Math.floor((localDay - fortnightEpoch) / (14 * dayMillis))
      const start = new Date(fortnightEpoch + index * 14 * dayMillis)
      return `F${start.toISOString().slice(0, 10)}`
    }
    case "monthly":
      return `${year}-${pad(month)}`
    case "yearly":
      return `${year}`
  }
}

/** The instant of local midnight of a calendar date in `zone` (DST-safe: the offset is read at that instant). */
const midnight = (year: number, month: number, day: number, zone: DateTime.TimeZone): number => {
  const wall = Date.UTC(year, month - 1, day)
  let guess = wall
  for (let i = 0; i < 3; i++) {
    const offset = DateTime.zonedOffset(DateTime.unsafeMakeZoned(guess, { timeZone: zone }))
    const next = wall - offset
    if (next === guess) break
    guess = next
  }
  return guess
}

/** The calendar day containing `millis` in `zone`, as UTC instants [start, end). */
export const dayOf = (millis: number, zone: DateTime.TimeZone): { readonly start: Date; readonly end: Date } => {
  const { day, month, year } = partsOf(millis, zone)
  return { start: new Date(midnight(year, month, day, zone)), end: new Date(midnight(year, month, day + 1, zone)) }
}

/** The zone named by `name` (an IANA name such as `Europe/Rome`, or `UTC`). */
export const zoneNamed = (name: string): DateTime.TimeZone | undefined => {
  try {
    return DateTime.zoneUnsafeMakeNamed(name)
  } catch {
    return undefined
  }
}
