/**
 * SQL of the alert rules (`alert_rules`, migration 0001). Every read and write of a user's rules
 * is scoped by owner in the statement itself, so another user's rule is simply not found.
 */
import { SqlClient } from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Domain from "./Domain.js"

/** A row as it arrives (names in camelCase, timestamps as ISO strings: `@rec/db`'s conventions). */
export const AlertRuleRow = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  networkId: Schema.String,
  riskTypes: Schema.NonEmptyArray(Domain.RiskType),
  threshold: Domain.Threshold,
  recipients: Schema.NullOr(Schema.Array(Schema.String)),
  active: Schema.Boolean,
  createdAt: Schema.String,
  updatedAt: Schema.String
})
export type AlertRuleRow = typeof AlertRuleRow.Type

export const toApi = (row: AlertRuleRow): Domain.AlertRule => ({
  id: row.id,
  user_id: row.userId,
  network_id: row.networkId,
  risk_types: row.riskTypes,
  threshold: row.threshold,
  recipients: row.recipients,
  active: row.active,
  created_at: row.createdAt,
  updated_at: row.updatedAt
})

export interface NewAlertRule {
  readonly userId: string
  readonly networkId: string
  readonly riskTypes: ReadonlyArray<Domain.RiskType>
  readonly threshold: Domain.Threshold
  readonly recipients: ReadonlyArray<string> | null
  readonly active: boolean
}

export interface AlertRuleChanges {
  readonly riskTypes?: ReadonlyArray<Domain.RiskType> | undefined
  readonly threshold?: Domain.Threshold | undefined
  readonly recipients?: ReadonlyArray<string> | null | undefined
  readonly active?: boolean | undefined
}

const Owned = Schema.Struct({ id: Schema.String, userId: Schema.String })

export class AlertRulesRepo extends Effect.Service<AlertRulesRepo>()("@rec/grid-gateway/AlertRulesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient

    const listOf = SqlSchema.findAll({
      Request: Schema.String,
      Result: AlertRuleRow,
      execute: (userId) => sql`SELECT * FROM alert_rules WHERE user_id = ${userId} ORDER BY created_at, id`
    })

    const insert = SqlSchema.single({
      Request: Schema.Struct({
        userId: Schema.String,
        networkId: Schema.String,
        riskTypes: Schema.Array(Schema.String),
        threshold: Schema.String,
        recipients: Schema.NullOr(Schema.Array(Schema.String)),
        active: Schema.Boolean
      }),
      Result: AlertRuleRow,
      execute: (rule) => sql`INSERT INTO alert_rules ${sql.insert(rule)} RETURNING *`
    })

    const findOwned = SqlSchema.findOne({
      Request: Owned,
      Result: AlertRuleRow,
      execute: ({ id, userId }) => sql`SELECT * FROM alert_rules WHERE id = ${id} AND user_id = ${userId}`
    })

    const update = (id: string, userId: string, changes: AlertRuleChanges) => {
      const values: Record<string, unknown> = {}
      if (changes.riskTypes !== undefined) values.riskTypes = changes.riskTypes
      if (changes.threshold !== undefined) values.threshold = changes.threshold
      if (changes.recipients !== undefined) values.recipients = changes.recipients
      if (changes.active !== undefined) values.active = changes.active
      return SqlSchema.findOne({
        Request: Owned,
        Result: AlertRuleRow,
        execute: () =>
          Object.keys(values).length === 0
            ? sql`SELECT * FROM alert_rules WHERE id = ${id} AND user_id = ${userId}`
            : sql`UPDATE alert_rules SET ${sql.update(values)}, updated_at = now()
                  WHERE id = ${id} AND user_id = ${userId} RETURNING *`
      })({ id, userId })
    }

    const remove = SqlSchema.findOne({
      Request: Owned,
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ id, userId }) => sql`DELETE FROM alert_rules WHERE id = ${id} AND user_id = ${userId} RETURNING id`
    })

    const activeOn = SqlSchema.findAll({
      Request: Schema.String,
      Result: AlertRuleRow,
      execute: (networkId) => sql`SELECT * FROM alert_rules WHERE network_id = ${networkId} AND active ORDER BY created_at, id`
    })

    const networksWithActiveRules = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ networkId: Schema.String }),
      execute: () => sql`SELECT DISTINCT network_id FROM alert_rules WHERE active ORDER BY network_id`
    })

    return {
      list: (userId: string) => listOf(userId).pipe(Effect.withSpan("AlertRulesRepo.list")),
      insert: (rule: NewAlertRule) => insert(rule).pipe(Effect.withSpan("AlertRulesRepo.insert")),
      findOwned: (id: string, userId: string) => findOwned({ id, userId }).pipe(Effect.withSpan("AlertRulesRepo.findOwned")),
      update: (id: string, userId: string, changes: AlertRuleChanges) =>
        update(id, userId, changes).pipe(Effect.withSpan("AlertRulesRepo.update")),
      remove: (id: string, userId: string) => remove({ id, userId }).pipe(Effect.withSpan("AlertRulesRepo.remove")),
      activeOn: (networkId: string) => activeOn(networkId).pipe(Effect.withSpan("AlertRulesRepo.activeOn")),
      networksWithActiveRules: networksWithActiveRules(undefined).pipe(
        Effect.map((rows) => rows.map((r) => r.networkId)),
        Effect.withSpan("AlertRulesRepo.networksWithActiveRules")
      )
    } as const
  })
}) {}
