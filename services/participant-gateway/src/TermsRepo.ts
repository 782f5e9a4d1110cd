/** SQL of the terms of use: one row per user and accepted version, the first acceptance kept. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

export class TermsRepo extends Effect.Service<TermsRepo>()("participant-gateway/TermsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** When `userId` accepted `version`, if they did. */
    const acceptedAt = (userId: string, version: string) =>
      Effect.map(
        sql<{ readonly acceptedAt: string }>`SELECT accepted_at FROM terms_acceptances
          WHERE user_id = ${userId} AND terms_version = ${version}`,
        (rows) => Option.fromNullable(rows[0]?.acceptedAt)
      )

    /** Records the acceptance unless there is one; answers the time of the first. */
    const accept = (userId: string, version: string, now: string) =>
      Effect.gen(function*() {
        yield* sql`INSERT INTO terms_acceptances (user_id, terms_version, accepted_at)
          VALUES (${userId}, ${version}, ${now}) ON CONFLICT (user_id, terms_version) DO NOTHING`
        const at = yield* acceptedAt(userId, version)
        return Option.getOrElse(at, () => now)
      })

    return { acceptedAt, accept }
  })
}) {}
