/**
 * Months of the overview (`period`, `YYYY-MM`) as instants: a month begins at midnight of its
 * first day in the configured zone (`OVERVIEW_TIME_ZONE`, default Europe/Rome, where the
 * community's meters and incentives count days), daylight saving time included.
 */
import * as DateTime from "effect/DateTime"

export interface Window {
  readonly period: string
  /** First instant of the month. */
  readonly start: DateTime.Utc
  /** First instant of the next month. */
  readonly end: DateTime.Utc
}

const pad = (n: number) => String(n).padStart(2, "0")

/** The month `now` falls in, in `zone`. */
export const current = (now: DateTime.DateTime, zone: DateTime.TimeZone): string => {
  const parts = DateTime.toParts(DateTime.setZone(now, zone))
  return `${parts.year}-${pad(parts.month)}`
}

const midnight = (year: number, month: number, zone: DateTime.TimeZone): DateTime.Utc =>
  // Month 13 is January of the next year.
  DateTime.toUtc(DateTime.unsafeMakeZoned({ year, month, day: 1 }, { timeZone: zone, adjustForTimeZone: true }))

/** The instants of `period` (already validated as `YYYY-MM`). */
export const window = (period: string, zone: DateTime.TimeZone): Window => {
  const year = Number(period.slice(0, 4))
  const month = Number(period.slice(5, 7))
  return { period, start: midnight(year, month, zone), end: midnight(year, month + 1, zone) }
}
