/**
 * The repository-wide convention for how PostgreSQL values arrive in JavaScript. Both backends
 * (PostgreSQL and PGlite) go through node-postgres with these parsers, so a row looks the same
 * everywhere:
 *
 * | PostgreSQL type            | JavaScript value                                  | decode with            |
 * |----------------------------|---------------------------------------------------|------------------------|
 * | `timestamptz`              | ISO 8601 UTC string, millisecond precision         | `Columns.Timestamp`    |
 * | `date`                     | `"YYYY-MM-DD"` string (no time zone shift)         | `Columns.DateOnly`     |
 * | `timestamp` (no time zone) | PostgreSQL's text, unchanged (avoid this type)     | `Schema.String`        |
 * | `interval`                 | PostgreSQL's text, e.g. `"01:30:00"`               | `Schema.String`        |
 * | `int8` / `bigserial`       | decimal string (node-postgres default)             | `Columns.Int8`, `Columns.Int8BigInt` |
 * | `numeric`                  | decimal string (node-postgres default)             | `Columns.Numeric`      |
 * | `int2`/`int4`/`float4`/`float8` | number                                       | `Schema.Number`        |
 * | `json` / `jsonb`           | parsed value                                       | any Schema             |
 * | `vector` (pgvector)        | `"[1,2,3]"` string                                 | `Columns.Vector`       |
 *
 * Why strings for time: node-postgres turns `timestamptz` into a `Date` and `date`/`timestamp`
 * into a `Date` in the *process's local time zone*; strings decode with the same Schemas as
 * HTTP payloads (`Schema.DateTimeUtc`, `Schema.Date`) and cannot shift by a time zone.
 */
import * as Pg from "pg"

const oid = {
  date: 1082,
  dateArray: 1182,
  timestamp: 1114,
  timestampArray: 1115,
  timestamptz: 1184,
  timestamptzArray: 1185,
  interval: 1186,
  intervalArray: 1187,
  textArray: 1009
} as const

// node-postgres's own timestamptz parser understands every PostgreSQL output style
// (offsets with seconds, BC dates); only its result type is changed here.
// `getTypeParser` is typed for the scalar builtins only; array OIDs are valid at run time.
const parserOf = Pg.types.getTypeParser as (typeId: number, format: "text") => (value: string) => unknown
const defaultTimestamptz = parserOf(oid.timestamptz, "text") as (value: string) => Date | number
const textArray = parserOf(oid.textArray, "text") as (value: string) => Array<string | null>

/**
 * PostgreSQL's text of a `timestamptz` in a session whose time zone is UTC, the usual server
 * setting (`2026-08-17 10:00:00.123456+00`): its ISO form is a rearrangement of the text, which
 * spares every row of a list the parse into a `Date` and back (the fraction is cut to
 * milliseconds, as the `Date` would).
 */
const utcText = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00$/

/** `timestamptz` text -> ISO 8601 UTC. `infinity` / `-infinity` stay as they are. */
export const timestamptzToIso = (value: string): string => {
  const utc = utcText.exec(value)
  if (utc !== null) return `${utc[1]}T${utc[2]}.${utc[3] === undefined ? "000" : (utc[3] + "00").slice(0, 3)}Z`
  const parsed = defaultTimestamptz(value)
  if (typeof parsed === "number" || Number.isNaN(parsed.getTime())) return value
  return parsed.toISOString()
}

const identity = (value: string): string => value
const mapArray = (f: (value: string) => string) => (value: string) =>
  textArray(value).map((element) => (element === null ? null : f(element)))

const overrides = new Map<number, (value: string) => unknown>([
  [oid.timestamptz, timestamptzToIso],
  [oid.timestamptzArray, mapArray(timestamptzToIso)],
  [oid.timestamp, identity],
  [oid.timestampArray, mapArray(identity)],
  [oid.date, identity],
  [oid.dateArray, mapArray(identity)],
  [oid.interval, identity],
  [oid.intervalArray, mapArray(identity)]
])

/** The `types` option given to every node-postgres pool this package creates. */
export const types: Pg.CustomTypesConfig = {
  getTypeParser: ((typeId: number, format?: "text" | "binary") => {
    if (format !== "binary") {
      const override = overrides.get(typeId)
      if (override !== undefined) return override
    }
    return format === "binary" ? Pg.types.getTypeParser(typeId, "binary") : parserOf(typeId, "text")
  }) as Pg.CustomTypesConfig["getTypeParser"]
}
