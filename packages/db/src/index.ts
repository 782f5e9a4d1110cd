/**
 * @rec/db: the `SqlClient` of every service, on PostgreSQL or embedded PGlite, with per-service
 * schemas and migrations, and isolated test databases.
 */
export * as Cli from "./Cli.js"
export * as Columns from "./Columns.js"
export * as Database from "./Database.js"
export * as DatabaseConfig from "./DatabaseConfig.js"
export * as DatabaseUrl from "./DatabaseUrl.js"
export * from "./Errors.js"
export * as Migrations from "./Migrations.js"
export * as PgTypes from "./PgTypes.js"
export * as Testing from "./Testing.js"
