/**
 * A small example repository used by the shared backend suite: accounts and transfers between
 * them. It exercises what services do with the database: a multi-row write in one statement, a
 * transaction that reads, checks and writes several rows, Schema decoding of every column
 * type convention, and migrations in the service's schema.
 */
import { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { PgClient } from "@effect/sql-pg"
import { Columns } from "@rec/db"
import { BigDecimal, Effect, Schema } from "effect"

export const migrations = {
  "0001_create_accounts": Effect.flatMap(SqlClient, (sql) =>
    sql`CREATE TABLE accounts (
      id bigserial PRIMARY KEY,
      name text NOT NULL UNIQUE,
      balance numeric(14, 2) NOT NULL CHECK (balance >= 0),
      tags text[] NOT NULL DEFAULT '{}',
      metadata jsonb NOT NULL DEFAULT '{}',
      opened_on date NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`),
  "0002_create_transfers": Effect.flatMap(SqlClient, (sql) =>
    sql`CREATE TABLE transfers (
      id bigserial PRIMARY KEY,
      from_account bigint NOT NULL REFERENCES accounts (id),
      to_account bigint NOT NULL REFERENCES accounts (id),
      amount numeric(14, 2) NOT NULL CHECK (amount > 0),
      created_at timestamptz NOT NULL DEFAULT now()
    )`)
}

export class Account extends Schema.Class<Account>("Account")({
  id: Columns.Int8,
  name: Schema.String,
  balance: Columns.Numeric,
  tags: Schema.Array(Schema.String),
  metadata: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  openedOn: Columns.DateOnly,
  createdAt: Columns.Timestamp
}) {}

export const NewAccount = Schema.Struct({
  name: Schema.String,
  balance: Columns.Numeric,
  tags: Schema.Array(Schema.String),
  metadata: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  openedOn: Columns.DateOnly
})
export type NewAccount = typeof NewAccount.Type

export class Transfer extends Schema.Class<Transfer>("Transfer")({
  id: Columns.Int8,
  fromAccount: Columns.Int8,
  toAccount: Columns.Int8,
  amount: Columns.Numeric,
  createdAt: Columns.Timestamp
}) {}

export class InsufficientFunds extends Schema.TaggedError<InsufficientFunds>()("InsufficientFunds", {
  account: Schema.String,
  balance: Schema.String,
  requested: Schema.String
}) {}

export class UnknownAccount extends Schema.TaggedError<UnknownAccount>()("UnknownAccount", {
  name: Schema.String
}) {}

export class Ledger extends Effect.Service<Ledger>()("test/Ledger", {
  effect: Effect.gen(function*() {
    const sql = yield* PgClient.PgClient

    /** All accounts in one multi-row INSERT: either every row is written or none. */
    const openMany = SqlSchema.findAll({
      Request: Schema.Array(NewAccount),
      Result: Account,
      execute: (accounts) =>
        sql`INSERT INTO accounts ${
          sql.insert(accounts.map((a) => ({ ...a, metadata: sql.json(a.metadata) })))
        } RETURNING *`
    })

    const list = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Account,
      execute: () => sql`SELECT * FROM accounts ORDER BY id`
    })

    const lockByName = SqlSchema.findOne({
      Request: Schema.String,
      Result: Account,
      execute: (name) => sql`SELECT * FROM accounts WHERE name = ${name} FOR UPDATE`
    })

    const history = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Transfer,
      execute: () => sql`SELECT * FROM transfers ORDER BY id`
    })

    /**
     * Moves `amount` between two accounts: both balances and the ledger row change together.
     * Rows are locked in name order so concurrent transfers cannot deadlock.
     */
    const transfer = (from: string, to: string, amount: BigDecimal.BigDecimal) =>
      sql.withTransaction(
        Effect.gen(function*() {
          const [first, second] = [from, to].sort()
          const locked = new Map<string, Account>()
          for (const name of [first!, second!]) {
            const account = yield* lockByName(name)
            if (account._tag === "None") return yield* new UnknownAccount({ name })
            locked.set(name, account.value)
          }
          const source = locked.get(from)!
          const target = locked.get(to)!
          if (BigDecimal.lessThan(source.balance, amount)) {
            return yield* new InsufficientFunds({
              account: from,
              balance: BigDecimal.format(source.balance),
              requested: BigDecimal.format(amount)
            })
          }
          const value = BigDecimal.format(amount)
          yield* sql`UPDATE accounts SET balance = balance - ${value}::numeric WHERE id = ${source.id}`
          yield* sql`UPDATE accounts SET balance = balance + ${value}::numeric WHERE id = ${target.id}`
          yield* sql`INSERT INTO transfers ${sql.insert({ fromAccount: source.id, toAccount: target.id, amount: value })}`
        })
      )

    return {
      openMany: (accounts: ReadonlyArray<NewAccount>) => openMany(accounts),
      list: list(undefined),
      history: history(undefined),
      transfer
    } as const satisfies Record<string, unknown>
  })
}) {}

export type LedgerError = SqlError | InsufficientFunds | UnknownAccount
