// time.* builtins (OPA's topdown/time.go) on top of the Go time emulation in gotime.ts.
// Timestamps are int64 nanoseconds since the epoch; results outside that range are errors.

import type { Value } from "../value.js"
import { int, num, str } from "./args.js"
import { civil, daysIn, formatTime, goDate, GoTimeError, type Instant, LAYOUT_CONSTANTS, LONG_DAYS, loadLocation, parseDuration, parseTime, UTC, type Zone } from "./gotime.js"
import { asBuiltinError, type BuiltinDef, builtinError, typeError } from "./registry.js"

const MIN_NS = -(1n << 63n)
const MAX_NS = (1n << 63n) - 1n

/** Runs Go time code: its GoTimeError becomes a builtin error with Go's message. */
const goTime = <T>(f: () => T): T => asBuiltinError(GoTimeError, f)

const nsOf = (t: Instant): Value => {
  const ns = BigInt(t.sec) * 1000000000n + BigInt(t.nsec)
  if (ns < MIN_NS || ns > MAX_NS) throw builtinError("time outside of valid range")
  return Number.isSafeInteger(Number(ns)) && BigInt(Number(ns)) === ns ? Number(ns) : ns
}

const instantOf = (ns: bigint): Instant => {
  const sec = ns / 1000000000n
  let nsec = Number(ns % 1000000000n)
  let s = Number(sec)
  if (nsec < 0) {
    nsec += 1e9
    s -= 1
  }
  return { sec: s, nsec }
}

/** OPA's tzTime: a number (ns) or [ns, tz?, layout?]. */
const tzTime = (a: Value): { t: Instant; zone: Zone; layout: string } => {
  let n: Value
  let zone = UTC
  let layout = ""
  if (Array.isArray(a)) {
    if (a.length === 0) throw typeError(1, a, "either number (ns) or [number (ns), string (tz)]")
    n = num(a[0], 1)
    if (a.length > 1) {
      const name = str(a[1], 1)
      zone = goTime(() => loadLocation(name))
    }
    if (a.length > 2) layout = str(a[2], 1)
  } else if (typeof a === "number" || typeof a === "bigint") n = a
  else throw typeError(1, a, "either number (ns) or [number (ns), string (tz)]")
  let ns: bigint
  if (typeof n === "bigint") ns = n
  else if (Number.isInteger(n)) ns = BigInt(n)
  else throw builtinError("timestamp too big")
  if (ns < MIN_NS || ns > MAX_NS) throw builtinError("timestamp too big")
  return { t: instantOf(ns), zone, layout }
}

const layoutOf = (s: string): string => LAYOUT_CONSTANTS[s] ?? s

export const timeBuiltins: BuiltinDef[] = [
  { name: "time.now_ns", arity: 0, nondeterministic: true, fn: (_a, ctx) => (ctx.nowNs <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(ctx.nowNs) : ctx.nowNs) },
  {
    name: "time.parse_ns",
    arity: 2,
    fn: ([layout, value]) => {
      const l = str(layout, 1)
      const v = str(value, 2)
      return nsOf(goTime(() => parseTime(layoutOf(l), v)))
    }
  },
  {
    name: "time.parse_rfc3339_ns",
    arity: 1,
    fn: ([value]) => {
      const v = str(value, 1)
      return nsOf(goTime(() => parseTime(LAYOUT_CONSTANTS.RFC3339, v)))
    }
  },
  {
    name: "time.parse_duration_ns",
    arity: 1,
    fn: ([d]) => {
      const s = str(d, 1)
      const ns = goTime(() => parseDuration(s))
      return Number.isSafeInteger(Number(ns)) ? Number(ns) : ns
    }
  },
  {
    name: "time.format",
    arity: 1,
    fn: ([x]) => {
      const { t, zone, layout } = tzTime(x)
      return formatTime(t, zone, layout === "" ? LAYOUT_CONSTANTS.RFC3339Nano : layoutOf(layout))
    }
  },
  {
    name: "time.date",
    arity: 1,
    fn: ([x]) => {
      const { t, zone } = tzTime(x)
      const c = civil(t, zone)
      return [c.year, c.month, c.day]
    }
  },
  {
    name: "time.clock",
    arity: 1,
    fn: ([x]) => {
      const { t, zone } = tzTime(x)
      const c = civil(t, zone)
      return [c.hour, c.min, c.sec]
    }
  },
  {
    name: "time.weekday",
    arity: 1,
    fn: ([x]) => {
      const { t, zone } = tzTime(x)
      return LONG_DAYS[civil(t, zone).weekday]
    }
  },
  {
    name: "time.add_date",
    arity: 4,
    fn: ([x, years, months, days]) => {
      const { t, zone } = tzTime(x)
      const y = int(years, 2)
      const m = int(months, 3)
      const d = int(days, 4)
      const c = civil(t, zone)
      return nsOf(goDate(c.year + y, c.month + m, c.day + d, c.hour, c.min, c.sec, c.nsec, zone))
    }
  },
  {
    name: "time.diff",
    arity: 2,
    fn: ([a, b]) => {
      const x = tzTime(a)
      const y = tzTime(b)
      let t1 = x.t
      let t2 = y.t
      if (t1.sec > t2.sec || (t1.sec === t2.sec && t1.nsec > t2.nsec)) [t1, t2] = [t2, t1]
      // Both are read in the first operand's location (as OPA does).
      const c1 = civil(t1, x.zone)
      const c2 = civil(t2, x.zone)
      let year = c2.year - c1.year
      let month = c2.month - c1.month
      let day = c2.day - c1.day
      let hour = c2.hour - c1.hour
      let min = c2.min - c1.min
      let sec = c2.sec - c1.sec
      if (sec < 0) {
        sec += 60
        min--
      }
      if (min < 0) {
        min += 60
        hour--
      }
      if (hour < 0) {
        hour += 24
        day--
      }
      if (day < 0) {
        day += daysIn(c1.month, c1.year)
        month--
      }
      if (month < 0) {
        month += 12
        year--
      }
      return [year, month, day, hour, min, sec]
    }
  },
  {
    // The real test.sleep blocks the thread: it is for policy tests and the conformance suite
    // only (`testSleep`, registered by `rego test`); a production policy that calls it fails
    // instead of holding a request handler.
    name: "test.sleep",
    arity: 1,
    void: true,
    unavailable: "only available in policy tests (rego test); a host enables it by registering testBuiltins",
    fn: () => true
  }
]

/**
 * test.sleep as OPA's test harness has it, for policy tests: blocks the thread for the duration,
 * but never past the evaluation's time limit (the evaluation then ends in eval_cancel_error).
 */
export const testSleep: BuiltinDef = {
  name: "test.sleep",
  arity: 1,
  void: true,
  fn: ([d], ctx) => {
    const s = str(d, 1)
    const ns = goTime(() => parseDuration(s))
    const until = Math.min(performance.now() + Number(ns / 1000000n), ctx.deadline ?? Number.POSITIVE_INFINITY)
    const ms = until - performance.now()
    if (ms > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
    ctx.checkLimits?.()
    return true
  }
}
