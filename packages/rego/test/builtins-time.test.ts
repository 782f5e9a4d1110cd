// time.* beyond OPA's conformance suite: IANA zones and their history, DST gaps and overlaps in
// calendar arithmetic, every Go layout element, Go's parse rules and messages, durations and the
// int64 nanosecond range.
import { describe, expect, it } from "vitest"
import { testingBuiltins } from "@rec/rego/builtins/index"
import { RegoEvalError } from "@rec/rego/errors"
import { Rego } from "@rec/rego/rego"
import { type Value, normBig } from "@rec/rego/value"
import { builtinFailure, callBuiltin, outcome } from "./helpers.js"

const call = (name: string, ...args: Value[]): Value | undefined => callBuiltin(name, args)
const failure = (name: string, ...args: Value[]): string => builtinFailure(() => call(name, ...args))

const ns = (seconds: number, nanos = 0): Value => normBig(BigInt(seconds) * 1000000000n + BigInt(nanos))
const rfc3339 = (s: string): Value => call("time.parse_rfc3339_ns", s) as Value
const format = (t: Value, zone: string, layout?: string): Value | undefined => call("time.format", layout === undefined ? [t, zone] : [t, zone, layout])

describe("time zones", () => {
  it("formats standard and daylight time with the zone's offset and abbreviation", () => {
    const winter = 1670006453141828752n
    expect(format(winter, "America/Los_Angeles", "Mon Jan _2 15:04:05 MST 2006")).toBe("Fri Dec  2 10:40:53 PST 2022")
    // 2022-06-23T16:00:00Z
    expect(format(ns(1656000000), "America/Los_Angeles", "Mon Jan _2 15:04:05 MST 2006")).toBe("Thu Jun 23 09:00:00 PDT 2022")
    expect(format(ns(1656000000), "Europe/Berlin", "2006-01-02 15:04:05 MST -07:00")).toBe("2022-06-23 18:00:00 CEST +02:00")
    expect(format(ns(1656000000), "Asia/Kolkata", "15:04 Z07:00:00")).toBe("21:30 +05:30:00")
  })

  it("prints the tz database's numeric abbreviation where ICU has no English one", () => {
    // Go prints "JST" here; documented in gotime.ts.
    expect(format(ns(1656000000), "Asia/Tokyo", "MST")).toBe("+09")
    expect(format(ns(1656000000), "Asia/Kathmandu", "MST -0700")).toBe("+0545 +0545")
  })

  it("uses historical offsets to the second (local mean time)", () => {
    // 1874-12-07T18:40:00Z, when New York kept local mean time (-4:56:02).
    expect(format(-3000000000000000000n, "America/New_York", "2006-01-02T15:04:05-07:00:00")).toBe("1874-12-07T13:43:58-04:56:02")
    // Kiribati's Line Islands were at -10:40 in 1970, so the epoch was still Wednesday there.
    expect(call("time.weekday", [0, "Pacific/Kiritimati"])).toBe("Wednesday")
  })

  it("accepts UTC, an empty zone and Local, and rejects unknown zones with Go's message", () => {
    expect(format(0, "UTC")).toBe("1970-01-01T00:00:00Z")
    expect(format(0, "")).toBe("1970-01-01T00:00:00Z")
    expect(typeof format(0, "Local")).toBe("string")
    expect(failure("time.format", [0, "Mars/Olympus_Mons"])).toBe("eval_builtin_error: unknown time zone Mars/Olympus_Mons")
    expect(failure("time.date", [0, 1])).toBe("eval_type_error: operand 1 must be string but got number")
  })
})

describe("calendar arithmetic", () => {
  it("moves a local time that falls into a DST gap forward, as Go's time.Date does", () => {
    // 2023-03-25 02:30 in Rome plus one day is 2023-03-26 02:30, which does not exist.
    const t = call("time.add_date", [rfc3339("2023-03-25T02:30:00+01:00"), "Europe/Rome"], 0, 0, 1) as Value
    expect(format(t, "Europe/Rome")).toBe("2023-03-26T03:30:00+02:00")
  })

  it("resolves a repeated local time (DST overlap) to the later offset, as Go does", () => {
    const t = call("time.add_date", [rfc3339("2023-10-28T02:30:00+02:00"), "Europe/Rome"], 0, 0, 1) as Value
    expect(format(t, "Europe/Rome")).toBe("2023-10-29T02:30:00+01:00")
    expect(call("time.clock", [t, "Europe/Rome"])).toEqual([2, 30, 0])
  })

  it("normalises overflowing months and days", () => {
    const jan31 = rfc3339("2023-01-31T12:00:00Z")
    expect(format(call("time.add_date", jan31, 0, 1, 0) as Value, "UTC")).toBe("2023-03-03T12:00:00Z")
    expect(format(call("time.add_date", jan31, 1, -13, 29) as Value, "UTC")).toBe("2023-01-29T12:00:00Z")
    expect(format(call("time.add_date", rfc3339("2024-02-29T00:00:00Z"), 1, 0, 0) as Value, "UTC")).toBe("2025-03-01T00:00:00Z")
  })

  it("reports results outside the int64 nanosecond range", () => {
    expect(failure("time.add_date", 0, 300, 0, 0)).toBe("eval_builtin_error: time outside of valid range")
    expect(failure("time.add_date", 0, 9007199254740991, 0, 0)).toBe("eval_builtin_error: time outside of valid range")
    expect(failure("time.add_date", 0, 1.5, 0, 0)).toBe("eval_type_error: operand 2 must be integer number but got floating-point number")
  })

  it("computes differences in the first operand's zone", () => {
    // Noon in Rome on both sides of the spring-forward night: one calendar day, 23 hours.
    const a = rfc3339("2023-03-25T12:00:00+01:00")
    const b = rfc3339("2023-03-26T12:00:00+02:00")
    expect(call("time.diff", [a, "Europe/Rome"], b)).toEqual([0, 0, 1, 0, 0, 0])
    expect(call("time.diff", [b, "Europe/Rome"], a)).toEqual([0, 0, 1, 0, 0, 0])
    expect(call("time.diff", a, [b, "Europe/Rome"])).toEqual([0, 0, 0, 23, 0, 0])
    // Borrowing a month uses the length of the first date's month.
    expect(call("time.diff", rfc3339("2021-01-31T23:00:00Z"), rfc3339("2021-03-01T01:00:00Z"))).toEqual([0, 1, 0, 2, 0, 0])
  })

  it("covers the whole int64 range and rejects timestamps beyond it", () => {
    expect(call("time.date", -9223372036854775808n)).toEqual([1677, 9, 21])
    expect(format(9223372036854775807n, "UTC")).toBe("2262-04-11T23:47:16.854775807Z")
    expect(failure("time.date", 9223372036854775808n)).toBe("eval_builtin_error: timestamp too big")
    expect(failure("time.clock", 1.5)).toBe("eval_builtin_error: timestamp too big")
  })
})

describe("Go layouts", () => {
  // Go's reference example: 2009-11-10T23:04:05.123456789Z, a Tuesday.
  const t = ns(1257894245, 123456789)

  it("formats every layout element", () => {
    const layout = "Monday Mon January Jan 1 01 2 _2 02 __2 002 15 3 03 4 04 5 05 2006 06 PM pm MST -0700 -07:00 -07 Z07:00 .000 .999999999 ,000"
    expect(format(t, "UTC", layout)).toBe("Tuesday Tue November Nov 11 11 10 10 10 314 314 23 11 11 4 04 5 05 2009 09 PM pm UTC +0000 +00:00 +00 Z .123 .123456789 ,123")
    expect(format(ns(1257894245), "UTC", "RFC3339Nano")).toBe("2009-11-10T23:04:05Z")
    expect(format(t, "UTC", "Kitchen")).toBe("Kitchen")
    expect(format(t, "America/New_York", "3:04PM _2 Jan")).toBe("6:04PM 10 Nov")
  })

  it("parses with the named layouts and custom ones", () => {
    expect(call("time.parse_ns", "RFC1123Z", "Tue, 10 Nov 2009 23:04:05 +0000")).toEqual(ns(1257894245))
    expect(call("time.parse_ns", "ANSIC", "Tue Nov 10 23:04:05 2009")).toEqual(ns(1257894245))
    expect(call("time.parse_ns", "2006 002", "2020 060")).toEqual(ns(1582934400))
    // A fraction after the seconds is read even when the layout has none (truncated to ns).
    expect(call("time.parse_ns", "2006-01-02 15:04:05", "2009-11-10 23:04:05,123456789123")).toEqual(ns(1257894245, 123456789))
    expect(call("time.parse_ns", "Jan _2 2006 3:04pm", "Nov 10 2009 11:04pm")).toEqual(ns(1257894240))
  })

  it("treats zone abbreviations other than UTC and GMT±h as offset zero", () => {
    expect(call("time.parse_ns", "RFC822", "02 Jun 17 19:00 PST")).toEqual(ns(1496430000))
    expect(call("time.parse_ns", "RFC822", "02 Jun 17 19:00 GMT+2")).toEqual(ns(1496430000 - 7200))
    expect(call("time.parse_ns", "RFC822", "02 Jun 17 19:00 UTC")).toEqual(ns(1496430000))
  })

  it("reports parse errors with Go's messages", () => {
    expect(failure("time.parse_ns", "2006-01-02", "2020-1-02")).toBe('eval_builtin_error: parsing time "2020-1-02" as "2006-01-02": cannot parse "1-02" as "01"')
    expect(failure("time.parse_ns", "2006-01-02", "2020-01-02x")).toBe('eval_builtin_error: parsing time "2020-01-02x": extra text: "x"')
    expect(failure("time.parse_ns", "2006-01-02", "2020-13-02")).toBe('eval_builtin_error: parsing time "2020-13-02": month out of range')
    expect(failure("time.parse_ns", "2006-01-02", "2023-02-29")).toBe('eval_builtin_error: parsing time "2023-02-29": day out of range')
    expect(failure("time.parse_rfc3339_ns", "2020-01-02 10:00:00Z")).toBe(
      'eval_builtin_error: parsing time "2020-01-02 10:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 10:00:00Z" as "T"'
    )
    expect(failure("time.parse_ns", "15:04", "10:00")).toBe("eval_builtin_error: time outside of valid range")
  })
})

describe("durations", () => {
  it("parses Go durations exactly", () => {
    expect(call("time.parse_duration_ns", "1h30m")).toBe(5400000000000)
    expect(call("time.parse_duration_ns", "-1.5h")).toBe(-5400000000000)
    expect(call("time.parse_duration_ns", ".5s")).toBe(500000000)
    expect(call("time.parse_duration_ns", "1\u00b5s1us1\u03bcs")).toBe(3000)
    expect(call("time.parse_duration_ns", "3.000000001s")).toBe(3000000001)
    expect(call("time.parse_duration_ns", "0")).toBe(0)
    expect(call("time.parse_duration_ns", "9223372036854775807ns")).toBe(9223372036854775807n)
    expect(call("time.parse_duration_ns", "-9223372036854775808ns")).toBe(-9223372036854775808n)
  })

  it("rejects malformed durations with Go's messages", () => {
    expect(failure("time.parse_duration_ns", "")).toBe('eval_builtin_error: time: invalid duration ""')
    expect(failure("time.parse_duration_ns", "1")).toBe('eval_builtin_error: time: missing unit in duration "1"')
    expect(failure("time.parse_duration_ns", "1d")).toBe('eval_builtin_error: time: unknown unit "d" in duration "1d"')
    expect(failure("time.parse_duration_ns", "9223372036854775808ns")).toBe('eval_builtin_error: time: invalid duration "9223372036854775808ns"')
    expect(failure("time.parse_duration_ns", ".s")).toBe('eval_builtin_error: time: invalid duration ".s"')
  })
})

describe("time.now_ns", () => {
  it("is fixed per query and taken from the evaluation options", () => {
    const rego = Rego.compile({ modules: { "t.rego": "package t\n\nts := [time.now_ns(), time.now_ns()]\n" } })
    expect(rego.query("x := data.t.ts", undefined, { nowNs: 1257894245000000000n })).toEqual([{ x: [1257894245000000000n, 1257894245000000000n] }])
  })
})

describe("test.sleep", () => {
  const module = { "t.rego": 'package t\n\np if {\n\ttest.sleep("10s")\n}\n' }

  it("is not available outside policy tests: it compiles, and fails when called", () => {
    const rego = Rego.compile({ modules: module })
    const t0 = performance.now()
    expect(() => rego.prepareRule("data.t.p").evaluate()).toThrow(/test\.sleep: only available in policy tests/)
    expect(performance.now() - t0).toBeLessThan(1_000)
  })

  it("sleeps in policy tests, but not past the evaluation's time limit", () => {
    const rego = Rego.compile({ modules: module, builtins: testingBuiltins() })
    const { error, ms } = outcome(() => rego.prepareRule("data.t.p").evaluate(undefined, { limits: { timeoutMs: 100 } }))
    expect(error).toBeInstanceOf(RegoEvalError)
    expect((error as RegoEvalError).code).toBe("eval_cancel_error")
    expect(ms).toBeGreaterThanOrEqual(90)
    expect(ms).toBeLessThan(2_000)
    const short = Rego.compile({ modules: { "t.rego": 'package t\n\np if test.sleep("20ms")\n' }, builtins: testingBuiltins() })
    expect(short.prepareRule("data.t.p").evaluate()).toBe(true)
  })
})
