// Go's time package as the time.* builtins need it: instants with nanosecond precision in a
// time zone, calendar arithmetic with Go's normalisation rules, Go layouts for formatting and
// parsing ("2006-01-02T15:04:05Z07:00"), and Go durations ("1h30m").
//
// Time zones are IANA zones resolved through Intl (the ICU data bundled with Node), plus "UTC"
// and "Local" (the host's zone). Offsets are exact to the second, historical ones included.
// Zone abbreviations (the "MST" layout element) come from ICU's English names where ICU has
// one, otherwise they are printed the way the tz database does for such zones ("+03",
// "+0530"); a few zones therefore print differently from Go (e.g. "+09" for Asia/Tokyo, where
// Go prints "JST").
//
// Parsing interprets zone abbreviations other than "UTC" and "GMT±h" as offset zero (Go does the
// same for abbreviations unknown to its local zone; here the local zone for parsing is UTC).

// ---------------------------------------------------------------------------------------------
// Calendar (proleptic Gregorian, days since 1970-01-01)

const floorDiv = (a: number, b: number): number => Math.floor(a / b)

export const daysFromCivil = (year: number, month: number, day: number): number => {
  const y = month <= 2 ? year - 1 : year
  const era = floorDiv(y, 400)
  const yoe = y - era * 400
  const doy = floorDiv(153 * (month + (month > 2 ? -3 : 9)) + 2, 5) + day - 1
  const doe = yoe * 365 + floorDiv(yoe, 4) - floorDiv(yoe, 100) + doy
  return era * 146097 + doe - 719468
}

export const civilFromDays = (days: number): [year: number, month: number, day: number] => {
  const z = days + 719468
  const era = floorDiv(z, 146097)
  const doe = z - era * 146097
  const yoe = floorDiv(doe - floorDiv(doe, 1460) + floorDiv(doe, 36524) - floorDiv(doe, 146096), 365)
  const doy = doe - (365 * yoe + floorDiv(yoe, 4) - floorDiv(yoe, 100))
  const mp = floorDiv(5 * doy + 2, 153)
  const day = doy - floorDiv(153 * mp + 2, 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  return [yoe + era * 400 + (month <= 2 ? 1 : 0), month, day]
}

export const isLeap = (y: number): boolean => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)

const DAYS_BEFORE = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365]

export const daysIn = (month: number, year: number): number =>
  month === 2 && isLeap(year) ? 29 : DAYS_BEFORE[month] - DAYS_BEFORE[month - 1]

export const LONG_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
const LONG_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
const SHORT_DAYS = LONG_DAYS.map((d) => d.slice(0, 3))
const SHORT_MONTHS = LONG_MONTHS.map((m) => m.slice(0, 3))

// ---------------------------------------------------------------------------------------------
// Zones

export interface Zone {
  /** "UTC", an IANA name, or the name of a fixed zone. */
  readonly name: string
  /** Offset in seconds for fixed zones (UTC included); undefined for IANA zones. */
  readonly fixed: number | undefined
}

export const UTC: Zone = { name: "UTC", fixed: 0 }

const formatters = new Map<string, Intl.DateTimeFormat>()

const formatterFor = (zone: string): Intl.DateTimeFormat => {
  let f = formatters.get(zone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      era: "short",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric"
    })
    formatters.set(zone, f)
  }
  return f
}

/** A failure of the emulated Go time functions; the message is Go's. */
export class GoTimeError extends Error {}

/** The zone of a name as OPA accepts it: "" and "UTC", "Local", or an IANA zone name. */
export const loadLocation = (name: string): Zone => {
  if (name === "" || name === "UTC") return UTC
  if (name === "Local") {
    const local = new Intl.DateTimeFormat().resolvedOptions().timeZone
    return local === undefined || local === "UTC" || local === "Etc/UTC" ? UTC : { name: local, fixed: undefined }
  }
  try {
    formatterFor(name)
  } catch {
    throw new GoTimeError(`unknown time zone ${name}`)
  }
  return { name, fixed: undefined }
}

/** Intl's Date range (milliseconds). */
const MAX_MS = 8.64e15

/** Seconds east of UTC in effect at the given Unix time. */
export const offsetAt = (zone: Zone, unixSec: number): number => {
  if (zone.fixed !== undefined) return zone.fixed
  const ms = Math.max(-MAX_MS, Math.min(MAX_MS, unixSec * 1000))
  let year = 0
  let month = 1
  let day = 1
  let hour = 0
  let minute = 0
  let second = 0
  let bc = false
  for (const p of formatterFor(zone.name).formatToParts(ms)) {
    switch (p.type) {
      case "year":
        year = Number(p.value)
        break
      case "month":
        month = Number(p.value)
        break
      case "day":
        day = Number(p.value)
        break
      case "hour":
        hour = Number(p.value)
        break
      case "minute":
        minute = Number(p.value)
        break
      case "second":
        second = Number(p.value)
        break
      case "era":
        bc = p.value.startsWith("B")
        break
    }
  }
  if (bc) year = 1 - year
  const local = daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second
  return local - floorDiv(ms, 1000)
}

const ABBREVIATION_LOCALES: ReadonlyArray<readonly [RegExp, string]> = [
  [/^Europe\/Dublin$/, "en-IE"],
  [/^(Europe|Atlantic)\//, "en-GB"],
  [/^Australia\//, "en-AU"],
  [/^(Pacific\/Auckland|Pacific\/Chatham|NZ)/, "en-NZ"],
  [/^Asia\/(Kolkata|Calcutta)$/, "en-IN"],
  [/^Africa\/(Johannesburg|Maseru|Mbabane)$/, "en-ZA"],
  [/^Asia\/Hong_Kong$/, "en-HK"]
]

const shortNames = new Map<string, Intl.DateTimeFormat>()

const shortName = (zone: string, locale: string, ms: number): string => {
  const key = `${locale} ${zone}`
  let f = shortNames.get(key)
  if (f === undefined) {
    f = new Intl.DateTimeFormat(locale, { timeZone: zone, timeZoneName: "short" })
    shortNames.set(key, f)
  }
  return f.formatToParts(ms).find((p) => p.type === "timeZoneName")?.value ?? ""
}

/** The tz database style for zones without a letter abbreviation: "+03", "-0330", "+0545". */
const numericAbbreviation = (offset: number): string => {
  const sign = offset < 0 ? "-" : "+"
  const minutes = Math.floor(Math.abs(offset) / 60)
  const hh = String(Math.floor(minutes / 60)).padStart(2, "0")
  return minutes % 60 === 0 ? sign + hh : sign + hh + String(minutes % 60).padStart(2, "0")
}

/** The abbreviation of the zone at a given instant ("PST", "CEST", "UTC", "+03"). */
export const abbreviation = (zone: Zone, unixSec: number, offset: number): string => {
  if (zone.fixed !== undefined) return zone.name
  const ms = Math.max(-MAX_MS, Math.min(MAX_MS, unixSec * 1000))
  const candidates = ["en-US"]
  for (const [re, locale] of ABBREVIATION_LOCALES) if (re.test(zone.name)) candidates.unshift(locale)
  for (const locale of candidates) {
    const name = shortName(zone.name, locale, ms)
    if (/^[A-Z][A-Za-z]{1,5}$/.test(name) && (name !== "GMT" || offset === 0)) return name
  }
  return numericAbbreviation(offset)
}

// ---------------------------------------------------------------------------------------------
// Instants

/** An instant: Unix seconds and nanoseconds (0 <= nsec < 1e9). */
export interface Instant {
  readonly sec: number
  readonly nsec: number
}

/** The calendar reading of an instant in a zone. */
export interface Civil {
  readonly year: number
  readonly month: number
  readonly day: number
  readonly hour: number
  readonly min: number
  readonly sec: number
  readonly nsec: number
  /** 0 is Sunday. */
  readonly weekday: number
  /** Day of the year, 1 to 366. */
  readonly yday: number
  /** Seconds east of UTC in effect. */
  readonly offset: number
}

export const civil = (t: Instant, zone: Zone): Civil => {
  const offset = offsetAt(zone, t.sec)
  const local = t.sec + offset
  const days = floorDiv(local, 86400)
  const secOfDay = local - days * 86400
  const [year, month, day] = civilFromDays(days)
  return {
    year,
    month,
    day,
    hour: Math.floor(secOfDay / 3600),
    min: Math.floor((secOfDay % 3600) / 60),
    sec: secOfDay % 60,
    nsec: t.nsec,
    weekday: (((days % 7) + 11) % 7),
    yday: days - daysFromCivil(year, 1, 1) + 1,
    offset
  }
}

const norm = (hi: number, lo: number, base: number): [number, number] => {
  if (lo < 0) {
    const n = Math.floor((-lo - 1) / base) + 1
    return [hi - n, lo + n * base]
  }
  if (lo >= base) {
    const n = Math.floor(lo / base)
    return [hi + n, lo - n * base]
  }
  return [hi, lo]
}

/** Years this far from the epoch are outside every representable instant anyway. */
const YEAR_LIMIT = 1e8

/**
 * Go's time.Date: out-of-range fields are normalised (October 32 is November 1), then the local
 * time is mapped to an instant in the zone. Around a transition the offset in effect just before
 * it is tried first, as Go does.
 */
export const goDate = (year: number, month: number, day: number, hour: number, minute: number, second: number, nsec: number, zone: Zone): Instant => {
  let m = month - 1
  ;[year, m] = norm(year, m, 12)
  ;[second, nsec] = norm(second, nsec, 1e9)
  ;[minute, second] = norm(minute, second, 60)
  ;[hour, minute] = norm(hour, minute, 60)
  ;[day, hour] = norm(day, hour, 24)
  // Far outside every representable instant: return one that is still clearly out of range
  // rather than computing with imprecise day counts.
  if (Math.abs(year) > YEAR_LIMIT) return { sec: Math.sign(year) * YEAR_LIMIT * 366 * 86400, nsec: 0 }
  const days = daysFromCivil(year, m + 1, 1) + day - 1
  const local = days * 86400 + hour * 3600 + minute * 60 + second
  let offset = offsetAt(zone, local)
  if (offset !== 0) {
    const guess = offsetAt(zone, local - offset)
    if (guess !== offset) offset = guess
  }
  return { sec: local - offset, nsec }
}

// ---------------------------------------------------------------------------------------------
// Layouts

const enum Std {
  None,
  LongMonth,
  Month,
  NumMonth,
  ZeroMonth,
  LongWeekDay,
  WeekDay,
  Day,
  UnderDay,
  ZeroDay,
  UnderYearDay,
  ZeroYearDay,
  Hour,
  Hour12,
  ZeroHour12,
  Minute,
  ZeroMinute,
  Second,
  ZeroSecond,
  LongYear,
  Year,
  PM,
  pm,
  TZ,
  ISO8601TZ,
  ISO8601SecondsTZ,
  ISO8601ShortTZ,
  ISO8601ColonTZ,
  ISO8601ColonSecondsTZ,
  NumTZ,
  NumSecondsTz,
  NumShortTZ,
  NumColonTZ,
  NumColonSecondsTZ,
  FracSecond0,
  FracSecond9
}

interface Chunk {
  readonly prefix: string
  readonly std: Std
  /** The layout text of the element. */
  readonly text: string
  readonly suffix: string
  /** Fractional seconds: number of digits and separator. */
  readonly digits?: number
  readonly separator?: string
}

const STD_0X = [Std.ZeroMonth, Std.ZeroDay, Std.ZeroHour12, Std.ZeroMinute, Std.ZeroSecond, Std.Year]

const isLower = (s: string, i: number): boolean => i < s.length && s[i] >= "a" && s[i] <= "z"
const isDigitAt = (s: string, i: number): boolean => i < s.length && s[i] >= "0" && s[i] <= "9"

const ZONE_ELEMENTS: ReadonlyArray<readonly [string, Std]> = [
  ["-070000", Std.NumSecondsTz],
  ["-07:00:00", Std.NumColonSecondsTZ],
  ["-0700", Std.NumTZ],
  ["-07:00", Std.NumColonTZ],
  ["-07", Std.NumShortTZ],
  ["Z070000", Std.ISO8601SecondsTZ],
  ["Z07:00:00", Std.ISO8601ColonSecondsTZ],
  ["Z0700", Std.ISO8601TZ],
  ["Z07:00", Std.ISO8601ColonTZ],
  ["Z07", Std.ISO8601ShortTZ]
]

/** The next layout element (Go's nextStdChunk). */
const nextChunk = (layout: string): Chunk => {
  const at = (i: number, len: number, std: Std): Chunk => ({
    prefix: layout.slice(0, i),
    std,
    text: layout.slice(i, i + len),
    suffix: layout.slice(i + len)
  })
  for (let i = 0; i < layout.length; i++) {
    const c = layout[i]
    switch (c) {
      case "J":
        if (layout.startsWith("Jan", i)) {
          if (layout.startsWith("January", i)) return at(i, 7, Std.LongMonth)
          if (!isLower(layout, i + 3)) return at(i, 3, Std.Month)
        }
        break
      case "M":
        if (layout.startsWith("Mon", i)) {
          if (layout.startsWith("Monday", i)) return at(i, 6, Std.LongWeekDay)
          if (!isLower(layout, i + 3)) return at(i, 3, Std.WeekDay)
        }
        if (layout.startsWith("MST", i)) return at(i, 3, Std.TZ)
        break
      case "0":
        if (i + 1 < layout.length && layout[i + 1] >= "1" && layout[i + 1] <= "6") return at(i, 2, STD_0X[layout.charCodeAt(i + 1) - 49])
        if (layout.startsWith("002", i)) return at(i, 3, Std.ZeroYearDay)
        break
      case "1":
        if (layout[i + 1] === "5") return at(i, 2, Std.Hour)
        return at(i, 1, Std.NumMonth)
      case "2":
        if (layout.startsWith("2006", i)) return at(i, 4, Std.LongYear)
        return at(i, 1, Std.Day)
      case "_":
        if (layout[i + 1] === "2") {
          // "_2006" is a literal underscore followed by the year.
          if (layout.startsWith("2006", i + 1)) return { ...at(i + 1, 4, Std.LongYear), prefix: layout.slice(0, i + 1) }
          return at(i, 2, Std.UnderDay)
        }
        if (layout.startsWith("__2", i)) return at(i, 3, Std.UnderYearDay)
        break
      case "3":
        return at(i, 1, Std.Hour12)
      case "4":
        return at(i, 1, Std.Minute)
      case "5":
        return at(i, 1, Std.Second)
      case "P":
        if (layout[i + 1] === "M") return at(i, 2, Std.PM)
        break
      case "p":
        if (layout[i + 1] === "m") return at(i, 2, Std.pm)
        break
      case "-":
      case "Z":
        for (const [text, std] of ZONE_ELEMENTS) if (layout.startsWith(text, i)) return at(i, text.length, std)
        break
      case ".":
      case ",":
        if (layout[i + 1] === "0" || layout[i + 1] === "9") {
          const ch = layout[i + 1]
          let j = i + 1
          while (j < layout.length && layout[j] === ch) j++
          // The run of digits must end here: only fractional seconds are all digits.
          if (!isDigitAt(layout, j)) {
            return { ...at(i, j - i, ch === "0" ? Std.FracSecond0 : Std.FracSecond9), digits: j - (i + 1), separator: c }
          }
        }
        break
    }
  }
  return { prefix: layout, std: Std.None, text: "", suffix: "" }
}

export const LAYOUT_CONSTANTS: Readonly<Record<string, string>> = {
  ANSIC: "Mon Jan _2 15:04:05 2006",
  UnixDate: "Mon Jan _2 15:04:05 MST 2006",
  RubyDate: "Mon Jan 02 15:04:05 -0700 2006",
  RFC822: "02 Jan 06 15:04 MST",
  RFC822Z: "02 Jan 06 15:04 -0700",
  RFC850: "Monday, 02-Jan-06 15:04:05 MST",
  RFC1123: "Mon, 02 Jan 2006 15:04:05 MST",
  RFC1123Z: "Mon, 02 Jan 2006 15:04:05 -0700",
  RFC3339: "2006-01-02T15:04:05Z07:00",
  RFC3339Nano: "2006-01-02T15:04:05.999999999Z07:00"
}

const pad = (n: number, width: number): string => {
  const s = String(Math.abs(n)).padStart(width, "0")
  return n < 0 ? "-" + s : s
}

/** Go's Time.Format. */
export const formatTime = (t: Instant, zone: Zone, layout: string): string => {
  const f = civil(t, zone)
  let out = ""
  let rest = layout
  while (rest !== "") {
    const c = nextChunk(rest)
    out += c.prefix
    if (c.std === Std.None) break
    rest = c.suffix
    switch (c.std) {
      case Std.Year:
        out += pad(Math.abs(f.year) % 100, 2)
        break
      case Std.LongYear:
        out += pad(f.year, 4)
        break
      case Std.Month:
        out += SHORT_MONTHS[f.month - 1]
        break
      case Std.LongMonth:
        out += LONG_MONTHS[f.month - 1]
        break
      case Std.NumMonth:
        out += String(f.month)
        break
      case Std.ZeroMonth:
        out += pad(f.month, 2)
        break
      case Std.WeekDay:
        out += SHORT_DAYS[f.weekday]
        break
      case Std.LongWeekDay:
        out += LONG_DAYS[f.weekday]
        break
      case Std.Day:
        out += String(f.day)
        break
      case Std.UnderDay:
        out += (f.day < 10 ? " " : "") + String(f.day)
        break
      case Std.ZeroDay:
        out += pad(f.day, 2)
        break
      case Std.UnderYearDay:
      case Std.ZeroYearDay:
        out += c.std === Std.ZeroYearDay ? pad(f.yday, 3) : String(f.yday).padStart(3, " ")
        break
      case Std.Hour:
        out += pad(f.hour, 2)
        break
      case Std.Hour12:
        out += String(f.hour % 12 === 0 ? 12 : f.hour % 12)
        break
      case Std.ZeroHour12:
        out += pad(f.hour % 12 === 0 ? 12 : f.hour % 12, 2)
        break
      case Std.Minute:
        out += String(f.min)
        break
      case Std.ZeroMinute:
        out += pad(f.min, 2)
        break
      case Std.Second:
        out += String(f.sec)
        break
      case Std.ZeroSecond:
        out += pad(f.sec, 2)
        break
      case Std.PM:
        out += f.hour >= 12 ? "PM" : "AM"
        break
      case Std.pm:
        out += f.hour >= 12 ? "pm" : "am"
        break
      case Std.TZ: {
        const name = abbreviation(zone, t.sec, f.offset)
        out += name !== "" ? name : formatOffset(f.offset, false, true, false)
        break
      }
      case Std.FracSecond0:
      case Std.FracSecond9:
        out += formatFraction(t.nsec, c.digits as number, c.separator as string, c.std === Std.FracSecond9)
        break
      default:
        out += formatZone(c.std, f.offset)
    }
  }
  return out
}

const formatOffset = (offset: number, colon: boolean, minutes: boolean, seconds: boolean): string => {
  const abs = Math.abs(offset)
  let s = (offset < 0 ? "-" : "+") + pad(Math.floor(abs / 3600), 2)
  if (minutes) s += (colon ? ":" : "") + pad(Math.floor((abs % 3600) / 60), 2)
  if (seconds) s += (colon ? ":" : "") + pad(abs % 60, 2)
  return s
}

const formatZone = (std: Std, offset: number): string => {
  const iso = std === Std.ISO8601TZ || std === Std.ISO8601ColonTZ || std === Std.ISO8601SecondsTZ || std === Std.ISO8601ShortTZ || std === Std.ISO8601ColonSecondsTZ
  if (iso && offset === 0) return "Z"
  // Go decides the sign from the offset in whole minutes.
  const minutesOffset = Math.trunc(offset / 60)
  const colon = std === Std.ISO8601ColonTZ || std === Std.NumColonTZ || std === Std.ISO8601ColonSecondsTZ || std === Std.NumColonSecondsTZ
  const short = std === Std.NumShortTZ || std === Std.ISO8601ShortTZ
  const seconds = std === Std.ISO8601SecondsTZ || std === Std.NumSecondsTz || std === Std.NumColonSecondsTZ || std === Std.ISO8601ColonSecondsTZ
  const abs = Math.abs(offset)
  let s = (minutesOffset < 0 ? "-" : "+") + pad(Math.floor(Math.abs(minutesOffset) / 60), 2)
  if (!short) s += (colon ? ":" : "") + pad(Math.abs(minutesOffset) % 60, 2)
  if (seconds) s += (colon ? ":" : "") + pad(abs % 60, 2)
  return s
}

const formatFraction = (nsec: number, digits: number, separator: string, trim: boolean): string => {
  if (trim && (digits === 0 || nsec === 0)) return ""
  let s = String(nsec).padStart(9, "0")
  if (digits < 9) s = s.slice(0, digits)
  if (trim) s = s.replace(/0+$/, "")
  return s === "" && trim ? "" : separator + s
}

// ---------------------------------------------------------------------------------------------
// Parsing

/** Go's time package quoting: ASCII kept (with \" and \\), other bytes as \xNN. */
export const goQuote = (s: string): string => {
  let out = '"'
  for (const ch of s) {
    const c = ch.codePointAt(0) as number
    if (c >= 0x80 || c < 0x20) {
      for (const b of Buffer.from(ch, "utf8")) out += "\\x" + b.toString(16).padStart(2, "0")
    } else out += ch === '"' || ch === "\\" ? "\\" + ch : ch
  }
  return out + '"'
}

const parseError = (layout: string, value: string, layoutElem: string, valueElem: string, message = ""): GoTimeError =>
  new GoTimeError(
    message === ""
      ? `parsing time ${goQuote(value)} as ${goQuote(layout)}: cannot parse ${goQuote(valueElem)} as ${goQuote(layoutElem)}`
      : `parsing time ${goQuote(value)}${message}`
  )

class Bad extends Error {}
const BAD = new Bad()

/** Go's atoi: optional sign and decimal digits, nothing else. */
const atoi = (s: string): number => {
  const m = /^[+-]?\d+$/.exec(s)
  if (m === null) throw BAD
  return Number(s)
}

/** One or two digits (exactly two when fixed). */
const getnum = (s: string, fixed: boolean): [number, string] => {
  if (!isDigitAt(s, 0)) throw BAD
  if (!isDigitAt(s, 1)) {
    if (fixed) throw BAD
    return [s.charCodeAt(0) - 48, s.slice(1)]
  }
  return [(s.charCodeAt(0) - 48) * 10 + s.charCodeAt(1) - 48, s.slice(2)]
}

const getnum3 = (s: string, fixed: boolean): [number, string] => {
  let n = 0
  let i = 0
  for (; i < 3 && isDigitAt(s, i); i++) n = n * 10 + s.charCodeAt(i) - 48
  if (i === 0 || (fixed && i !== 3)) throw BAD
  return [n, s.slice(i)]
}

/** Removes prefix from value, any run of spaces in prefix matching any run in value. */
const skip = (value: string, prefix: string): string => {
  while (prefix.length > 0) {
    if (prefix[0] === " ") {
      if (value.length > 0 && value[0] !== " ") throw BAD
      prefix = prefix.replace(/^ +/, "")
      value = value.replace(/^ +/, "")
      continue
    }
    if (value.length === 0 || value[0] !== prefix[0]) throw BAD
    prefix = prefix.slice(1)
    value = value.slice(1)
  }
  return value
}

const lookup = (table: readonly string[], value: string): [number, string] => {
  for (let i = 0; i < table.length; i++) {
    const v = table[i]
    if (value.length >= v.length && value.slice(0, v.length).toLowerCase() === v.toLowerCase()) return [i, value.slice(v.length)]
  }
  throw BAD
}

/** Digits after the separator, scaled to nanoseconds (at most 9 are significant). */
const parseNanoseconds = (value: string, nbytes: number): number => {
  if (value[0] !== "." && value[0] !== ",") throw BAD
  const digits = value.slice(1, Math.min(nbytes, 10))
  if (!/^\d+$/.test(digits)) throw BAD
  return Number(digits.padEnd(9, "0"))
}

/** Length of a leading signed offset "+03"/"-4" in -23..+23 (Go's parseSignedOffset), 0 if none. */
const signedOffsetLength = (value: string): number => {
  const m = /^[+-](\d+)/.exec(value)
  if (m === null || Number(m[1]) > 23) return 0
  return m[0].length
}

/** Length of a zone abbreviation at the start of value (Go's parseTimeZone), 0 if none. */
const timeZoneLength = (value: string): number => {
  if (value.length < 3) return 0
  if (value.startsWith("ChST") || value.startsWith("MeST")) return 4
  if (value.startsWith("GMT")) return 3 + (value.length > 3 ? signedOffsetLength(value.slice(3)) : 0)
  if (value[0] === "+" || value[0] === "-") return signedOffsetLength(value)
  let upper = 0
  while (upper < 6 && upper < value.length && value[upper] >= "A" && value[upper] <= "Z") upper++
  switch (upper) {
    case 3:
      return 3
    case 4:
      return value[3] === "T" || value.startsWith("WITA") ? 4 : 0
    case 5:
      return value[4] === "T" ? 5 : 0
    default:
      return 0
  }
}

/** Go's time.Parse (with UTC as both the default and the local zone). */
export const parseTime = (layout: string, input: string): Instant => {
  let value = input
  let rest = layout
  let year = 0
  let month = -1
  let day = -1
  let yday = -1
  let hour = 0
  let minute = 0
  let second = 0
  let nsec = 0
  let utc = false
  let zoneOffset: number | undefined
  let zoneName = ""
  let amSet = false
  let pmSet = false
  for (;;) {
    const c = nextChunk(rest)
    try {
      value = skip(value, c.prefix)
    } catch {
      throw parseError(layout, input, c.prefix, value)
    }
    if (c.std === Std.None) {
      if (value.length !== 0) throw parseError(layout, input, "", value, `: extra text: ${goQuote(value)}`)
      break
    }
    rest = c.suffix
    const hold = value
    let rangeErr = ""
    try {
      switch (c.std) {
        case Std.Year: {
          if (value.length < 2) throw BAD
          const p = value.slice(0, 2)
          value = value.slice(2)
          year = atoi(p)
          year += year >= 69 ? 1900 : 2000
          break
        }
        case Std.LongYear:
          if (value.length < 4 || !isDigitAt(value, 0)) throw BAD
          year = atoi(value.slice(0, 4))
          value = value.slice(4)
          break
        case Std.Month:
          ;[month, value] = lookup(SHORT_MONTHS, value)
          month++
          break
        case Std.LongMonth:
          ;[month, value] = lookup(LONG_MONTHS, value)
          month++
          break
        case Std.NumMonth:
        case Std.ZeroMonth:
          ;[month, value] = getnum(value, c.std === Std.ZeroMonth)
          if (month <= 0 || month > 12) rangeErr = "month"
          break
        case Std.WeekDay:
          value = lookup(SHORT_DAYS, value)[1]
          break
        case Std.LongWeekDay:
          value = lookup(LONG_DAYS, value)[1]
          break
        case Std.Day:
        case Std.UnderDay:
        case Std.ZeroDay:
          if (c.std === Std.UnderDay && value[0] === " ") value = value.slice(1)
          ;[day, value] = getnum(value, c.std === Std.ZeroDay)
          break
        case Std.UnderYearDay:
        case Std.ZeroYearDay:
          for (let i = 0; i < 2; i++) if (c.std === Std.UnderYearDay && value[0] === " ") value = value.slice(1)
          ;[yday, value] = getnum3(value, c.std === Std.ZeroYearDay)
          break
        case Std.Hour:
          ;[hour, value] = getnum(value, false)
          if (hour >= 24) rangeErr = "hour"
          break
        case Std.Hour12:
        case Std.ZeroHour12:
          ;[hour, value] = getnum(value, c.std === Std.ZeroHour12)
          if (hour > 12) rangeErr = "hour"
          break
        case Std.Minute:
        case Std.ZeroMinute:
          ;[minute, value] = getnum(value, c.std === Std.ZeroMinute)
          if (minute >= 60) rangeErr = "minute"
          break
        case Std.Second:
        case Std.ZeroSecond: {
          ;[second, value] = getnum(value, c.std === Std.ZeroSecond)
          if (second >= 60) {
            rangeErr = "second"
            break
          }
          // A fractional second in the input that the layout does not mention.
          if (value.length >= 2 && (value[0] === "." || value[0] === ",") && isDigitAt(value, 1)) {
            const after = nextChunk(rest).std
            if (after === Std.FracSecond0 || after === Std.FracSecond9) break
            let n = 2
            while (isDigitAt(value, n)) n++
            nsec = parseNanoseconds(value, n)
            value = value.slice(n)
          }
          break
        }
        case Std.PM:
        case Std.pm: {
          if (value.length < 2) throw BAD
          const p = value.slice(0, 2)
          value = value.slice(2)
          const [am, pm] = c.std === Std.PM ? ["AM", "PM"] : ["am", "pm"]
          if (p === pm) pmSet = true
          else if (p === am) amSet = true
          else throw BAD
          break
        }
        case Std.ISO8601TZ:
        case Std.ISO8601ShortTZ:
        case Std.ISO8601ColonTZ:
        case Std.ISO8601SecondsTZ:
        case Std.ISO8601ColonSecondsTZ:
        case Std.NumTZ:
        case Std.NumShortTZ:
        case Std.NumColonTZ:
        case Std.NumSecondsTz:
        case Std.NumColonSecondsTZ: {
          const iso = c.std === Std.ISO8601TZ || c.std === Std.ISO8601ShortTZ || c.std === Std.ISO8601ColonTZ || c.std === Std.ISO8601SecondsTZ || c.std === Std.ISO8601ColonSecondsTZ
          if (iso && value[0] === "Z") {
            value = value.slice(1)
            utc = true
            break
          }
          let sign: string
          let hh: string
          let mm = "00"
          let ss = "00"
          if (c.std === Std.ISO8601ColonTZ || c.std === Std.NumColonTZ) {
            if (value.length < 6 || value[3] !== ":") throw BAD
            ;[sign, hh, mm] = [value[0], value.slice(1, 3), value.slice(4, 6)]
            value = value.slice(6)
          } else if (c.std === Std.NumShortTZ || c.std === Std.ISO8601ShortTZ) {
            if (value.length < 3) throw BAD
            ;[sign, hh] = [value[0], value.slice(1, 3)]
            value = value.slice(3)
          } else if (c.std === Std.ISO8601ColonSecondsTZ || c.std === Std.NumColonSecondsTZ) {
            if (value.length < 9 || value[3] !== ":" || value[6] !== ":") throw BAD
            ;[sign, hh, mm, ss] = [value[0], value.slice(1, 3), value.slice(4, 6), value.slice(7, 9)]
            value = value.slice(9)
          } else if (c.std === Std.ISO8601SecondsTZ || c.std === Std.NumSecondsTz) {
            if (value.length < 7) throw BAD
            ;[sign, hh, mm, ss] = [value[0], value.slice(1, 3), value.slice(3, 5), value.slice(5, 7)]
            value = value.slice(7)
          } else {
            if (value.length < 5) throw BAD
            ;[sign, hh, mm] = [value[0], value.slice(1, 3), value.slice(3, 5)]
            value = value.slice(5)
          }
          const h = getnum(hh, true)[0]
          const mi = getnum(mm, true)[0]
          const s = getnum(ss, true)[0]
          if (h > 24) rangeErr = "time zone offset hour"
          if (mi > 60) rangeErr = "time zone offset minute"
          if (s > 60) rangeErr = "time zone offset second"
          zoneOffset = (h * 60 + mi) * 60 + s
          if (sign === "-") zoneOffset = -zoneOffset
          else if (sign !== "+") throw BAD
          break
        }
        case Std.TZ: {
          if (value.startsWith("UTC")) {
            utc = true
            value = value.slice(3)
            break
          }
          const n = timeZoneLength(value)
          if (n === 0) throw BAD
          zoneName = value.slice(0, n)
          value = value.slice(n)
          break
        }
        case Std.FracSecond0: {
          const n = 1 + (c.digits as number)
          if (value.length < n) throw BAD
          nsec = parseNanoseconds(value, n)
          value = value.slice(n)
          break
        }
        case Std.FracSecond9: {
          if (value.length < 2 || (value[0] !== "." && value[0] !== ",") || !isDigitAt(value, 1)) break
          let i = 0
          while (isDigitAt(value, i + 1)) i++
          nsec = parseNanoseconds(value, 1 + i)
          value = value.slice(1 + i)
          break
        }
      }
    } catch (e) {
      if (e !== BAD) throw e
      throw parseError(layout, input, c.text, hold)
    }
    if (rangeErr !== "") throw parseError(layout, input, c.text, value, `: ${rangeErr} out of range`)
  }
  if (pmSet && hour < 12) hour += 12
  else if (amSet && hour === 12) hour = 0

  if (yday >= 0) {
    let d = 0
    let m = 0
    if (isLeap(year)) {
      if (yday === 31 + 29) {
        m = 2
        d = 29
      } else if (yday > 31 + 29) yday--
    }
    if (yday < 1 || yday > 365) throw parseError(layout, input, "", value, ": day-of-year out of range")
    if (m === 0) {
      m = Math.floor((yday - 1) / 31) + 1
      if (DAYS_BEFORE[m] < yday) m++
      d = yday - DAYS_BEFORE[m - 1]
    }
    if (month >= 0 && month !== m) throw parseError(layout, input, "", value, ": day-of-year does not match month")
    month = m
    if (day >= 0 && day !== d) throw parseError(layout, input, "", value, ": day-of-year does not match day")
    day = d
  } else {
    if (month < 0) month = 1
    if (day < 0) day = 1
  }
  if (day < 1 || day > daysIn(month, year)) throw parseError(layout, input, "", value, ": day out of range")

  const t = goDate(year, month, day, hour, minute, second, nsec, UTC)
  if (utc) return t
  if (zoneOffset !== undefined) return { sec: t.sec - zoneOffset, nsec: t.nsec }
  // Unknown abbreviations get offset zero, except GMT+h / GMT-h.
  if (zoneName.length > 3 && zoneName.startsWith("GMT")) return { sec: t.sec - Number(zoneName.slice(3)) * 3600, nsec: t.nsec }
  return t
}

// ---------------------------------------------------------------------------------------------
// Durations

const UNITS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1000n,
  "\u00b5s": 1000n,
  "\u03bcs": 1000n,
  ms: 1000000n,
  s: 1000000000n,
  m: 60000000000n,
  h: 3600000000000n
}

const TWO63 = 1n << 63n

/** Go's time.ParseDuration, in nanoseconds. */
export const parseDuration = (orig: string): bigint => {
  const invalid = (): GoTimeError => new GoTimeError(`time: invalid duration ${goQuote(orig)}`)
  let s = orig
  let neg = false
  if (s !== "" && (s[0] === "-" || s[0] === "+")) {
    neg = s[0] === "-"
    s = s.slice(1)
  }
  if (s === "0") return 0n
  if (s === "") throw invalid()
  let d = 0n
  while (s !== "") {
    if (!(s[0] === "." || isDigitAt(s, 0))) throw invalid()
    const int = /^\d*/.exec(s)?.[0] ?? ""
    s = s.slice(int.length)
    let v = 0n
    for (const ch of int) {
      if (v > TWO63 / 10n) throw invalid()
      v = v * 10n + BigInt(ch.charCodeAt(0) - 48)
      if (v > TWO63) throw invalid()
    }
    let f = 0n
    let scale = 1
    let post = false
    if (s[0] === ".") {
      s = s.slice(1)
      const frac = /^\d*/.exec(s)?.[0] ?? ""
      s = s.slice(frac.length)
      post = frac !== ""
      // Precision stops accumulating once it would overflow (Go's leadingFraction).
      let overflow = false
      for (const ch of frac) {
        if (overflow) continue
        if (f > (TWO63 - 1n) / 10n) {
          overflow = true
          continue
        }
        const y = f * 10n + BigInt(ch.charCodeAt(0) - 48)
        if (y > TWO63) {
          overflow = true
          continue
        }
        f = y
        scale *= 10
      }
    }
    if (int === "" && !post) throw invalid()
    const unitText = /^[^.0-9]*/.exec(s)?.[0] ?? ""
    if (unitText === "") throw new GoTimeError(`time: missing unit in duration ${goQuote(orig)}`)
    s = s.slice(unitText.length)
    const unit = UNITS[unitText]
    if (unit === undefined) throw new GoTimeError(`time: unknown unit ${goQuote(unitText)} in duration ${goQuote(orig)}`)
    if (v > TWO63 / unit) throw invalid()
    v *= unit
    if (f > 0n) {
      // Go computes the fraction in float64; reproduce its rounding.
      v += BigInt(Math.trunc(Number(f) * (Number(unit) / scale)))
      if (v > TWO63) throw invalid()
    }
    d += v
    if (d > TWO63) throw invalid()
  }
  if (neg) return -d
  if (d > TWO63 - 1n) throw invalid()
  return d
}
