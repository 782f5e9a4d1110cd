/**
 * `DATABASE_URL` parsing. One variable selects the backend:
 *
 * - `postgresql://`, `postgres://` and driver-qualified DSNs such as the spec's
 *   `postgresql+asyncpg://` (the `+driver` part is dropped) select PostgreSQL;
 * - `pglite://memory` selects an in-memory PGlite, `pglite://<dir>` an on-disk one;
 * - no value selects PGlite in the service's default data directory.
 *
 * The parsed target keeps the URL `Redacted`; `display` is the only form meant for logs and
 * errors and never contains the password.
 */
import { Either, Redacted } from "effect"
import { InvalidDatabaseConfig } from "./Errors.js"

export interface PostgresTarget {
  readonly _tag: "Postgres"
  /** Normalised `postgresql://` URL, with credentials. */
  readonly url: Redacted.Redacted<string>
  readonly host: string
  readonly port: number
  readonly database: string
  readonly user: string | undefined
  /** `postgresql://user@host:port/database`: safe to log. */
  readonly display: string
}

export interface PgliteTarget {
  readonly _tag: "Pglite"
  /** Directory of the database files; `undefined` keeps everything in memory. */
  readonly dataDir: string | undefined
  /** `pglite://<dir>` or `pglite://memory`. */
  readonly display: string
}

export type DatabaseTarget = PostgresTarget | PgliteTarget

const postgresScheme = /^(?:postgres|postgresql)(?:\+[a-z0-9_]+)?:\/\//i
const pgliteScheme = /^pglite:\/\//i
const anyScheme = /^([a-z][a-z0-9+.-]*):/i

const invalid = (message: string) => Either.left(new InvalidDatabaseConfig({ message }))

/**
 * Parses a `DATABASE_URL` value. `defaultDataDir` is used when the value is absent or is a bare
 * `pglite://`.
 */
export const parse = (
  raw: string | undefined,
  defaultDataDir: string
): Either.Either<DatabaseTarget, InvalidDatabaseConfig> => {
  const value = raw?.trim() ?? ""
  if (value === "") return Either.right(pglite(defaultDataDir))
  if (pgliteScheme.test(value)) {
    const rest = value.replace(pgliteScheme, "")
    if (rest === "" ) return Either.right(pglite(defaultDataDir))
    if (rest === "memory" || rest === "memory/") return Either.right(pglite(undefined))
    return Either.right(pglite(decodeURIComponent(rest)))
  }
  if (postgresScheme.test(value)) return parsePostgres(value.replace(postgresScheme, "postgresql://"))
  const scheme = anyScheme.exec(value)?.[1]
  // Never echo the value itself: it may hold a password.
  return invalid(
    scheme === undefined
      ? "DATABASE_URL is not a URL; expected postgresql://user:password@host:port/database or pglite://<dir>"
      : `DATABASE_URL has the unsupported scheme "${scheme}:"; expected postgresql://, postgres://, ` +
        `postgresql+asyncpg:// or pglite://`
  )
}

const pglite = (dataDir: string | undefined): PgliteTarget => ({
  _tag: "Pglite",
  dataDir,
  display: dataDir === undefined ? "pglite://memory" : `pglite://${dataDir}`
})

const parsePostgres = (normalised: string): Either.Either<DatabaseTarget, InvalidDatabaseConfig> => {
  let url: URL
  try {
    url = new URL(normalised)
  } catch {
    return invalid("DATABASE_URL is not a valid postgresql:// URL")
  }
  // asyncpg spells the TLS mode `ssl=require`; node-postgres reads `sslmode=require`.
  const ssl = url.searchParams.get("ssl")
  if (ssl !== null && !["true", "false", "0", "1"].includes(ssl) && !url.searchParams.has("sslmode")) {
    url.searchParams.delete("ssl")
    url.searchParams.set("sslmode", ssl)
  }
  const port = url.port === "" ? 5432 : Number(url.port)
  const user = url.username === "" ? undefined : safeDecode(url.username)
  const host = url.hostname !== "" ? url.hostname : url.searchParams.get("host") ?? "localhost"
  const database = safeDecode(url.pathname.replace(/^\//, "")) || user || "postgres"
  const display = `postgresql://${user === undefined ? "" : `${user}@`}${host}:${port}/${database}`
  return Either.right({
    _tag: "Postgres",
    url: Redacted.make(url.toString()),
    host,
    port,
    database,
    user,
    display
  })
}

const safeDecode = (s: string): string => {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

/** The same PostgreSQL URL pointing at another database (used by the test helpers). */
export const withDatabase = (target: PostgresTarget, database: string): PostgresTarget => {
  const url = new URL(Redacted.value(target.url))
  url.pathname = `/${encodeURIComponent(database)}`
  return {
    ...target,
    url: Redacted.make(url.toString()),
    database,
    display: target.display.replace(/\/[^/]*$/, `/${database}`)
  }
}
