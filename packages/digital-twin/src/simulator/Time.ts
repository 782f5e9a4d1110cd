/** Calendar helpers in UTC (the simulator's data is keyed by UTC dates and instants). */

export const dayMs = 86_400_000
export const hourMs = 3_600_000
export const slotMs = 900_000

/** `YYYY-MM-DD` of an instant. */
export const isoDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

/** Midnight UTC of a `YYYY-MM-DD` date. */
export const dateStart = (date: string): number => Date.parse(`${date}T00:00:00Z`)

/** Days since 1970-01-01 of a `YYYY-MM-DD` date. */
export const dayNumber = (date: string): number => Math.round(dateStart(date) / dayMs)

/** The date `days` after `date`. */
export const addDays = (date: string, days: number): string => isoDate(dateStart(date) + days * dayMs)

/** Day of the year, 1..366. */
export const dayOfYear = (ms: number): number => {
  const d = new Date(ms)
  return Math.floor((ms - Date.UTC(d.getUTCFullYear(), 0, 1)) / dayMs) + 1
}

/** `2026-08-17T10:15:00Z` (seconds precision, as the digital twin writes timestamps). */
export const isoTimestamp = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")

/** Floors an instant to a multiple of `step` milliseconds. */
export const floorTo = (ms: number, step: number): number => Math.floor(ms / step) * step

/** Ceils an instant to a multiple of `step` milliseconds. */
export const ceilTo = (ms: number, step: number): number => Math.ceil(ms / step) * step

/** Hours from UTC to Italian civil time (CET/CEST, EU rules: last Sundays of March and October at 01:00 UTC). */
export const italyOffsetHours = (ms: number): number => {
  const year = new Date(ms).getUTCFullYear()
  const lastSunday = (month: number) => {
    const last = new Date(Date.UTC(year, month + 1, 0))
    return Date.UTC(year, month, last.getUTCDate() - last.getUTCDay(), 1)
  }
  return ms >= lastSunday(2) && ms < lastSunday(9) ? 2 : 1
}
