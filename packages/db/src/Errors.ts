/**
 * Errors raised while configuring, starting and migrating a database. They describe the
 * target by host, port and database name only: no error message ever carries a password.
 */
import { Schema } from "effect"

/** `DATABASE_URL` (or another option) cannot be understood. */
export class InvalidDatabaseConfig extends Schema.TaggedError<InvalidDatabaseConfig>()(
  "InvalidDatabaseConfig",
  { message: Schema.String }
) {}

/** PostgreSQL did not answer within the start-up budget, or refused the credentials. */
export class DatabaseUnavailable extends Schema.TaggedError<DatabaseUnavailable>()(
  "DatabaseUnavailable",
  {
    /** `postgresql://user@host:port/database` or `pglite://<dir>`, never with a password. */
    target: Schema.String,
    message: Schema.String
  }
) {}

/** Another process holds the PGlite data directory (PGlite has a single writer). */
export class PgliteDirectoryLocked extends Schema.TaggedError<PgliteDirectoryLocked>()(
  "PgliteDirectoryLocked",
  { dataDir: Schema.String, pid: Schema.Number, message: Schema.String }
) {}

/** A migration set is malformed, out of order, or a migration failed (and was rolled back). */
export class MigrationFailed extends Schema.TaggedError<MigrationFailed>()(
  "MigrationFailed",
  {
    schema: Schema.String,
    reason: Schema.Literal("invalid", "out-of-order", "renamed", "failed"),
    message: Schema.String
  }
) {}
