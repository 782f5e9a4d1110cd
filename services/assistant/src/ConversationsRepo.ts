/**
 * SQL of conversations and messages. Every read and write names the owner: a conversation of
 * another user is not found, never refused, so its existence does not leak.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Domain from "./Domain.js"

export interface ConversationRow {
  readonly id: string
  readonly ownerId: string
  readonly title: string
  readonly createdAt: string
  readonly updatedAt: string
}

export interface SummaryRow extends ConversationRow {
  readonly messageCount: number
  readonly lastSnippet: string | null
}

export interface MessageRow {
  readonly id: string
  readonly conversationId: string
  readonly role: "user" | "assistant"
  readonly content: string
  readonly status: Domain.MessageStatus
  readonly error: string | null
  readonly sources: ReadonlyArray<Domain.Source>
  readonly createdAt: string
}

export interface NewMessage {
  readonly id: string
  readonly conversationId: string
  readonly role: "user" | "assistant"
  readonly content: string
  readonly status: Domain.MessageStatus
  readonly error: string | null
  readonly sources: ReadonlyArray<Domain.Source>
}

/** Characters of the latest message shown in a listing. */
const snippetLength = 120

export class ConversationsRepo extends Effect.Service<ConversationsRepo>()("@rec/assistant-service/ConversationsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const create = (id: string, ownerId: string, title: string) =>
      sql<ConversationRow>`INSERT INTO conversations (id, owner_id, title) VALUES (${id}, ${ownerId}, ${title})
        RETURNING id, owner_id, title, created_at, updated_at`.pipe(Effect.map(([row]) => row))

    const find = (id: string, ownerId: string) =>
      sql<ConversationRow>`SELECT id, owner_id, title, created_at, updated_at FROM conversations
        WHERE id = ${id} AND owner_id = ${ownerId}`.pipe(Effect.map((rows) => Option.fromNullable(rows[0])))

    const list = (ownerId: string, limit: number, offset: number) =>
      Effect.all({
        items: sql<Omit<SummaryRow, "messageCount"> & { messageCount: string }>`
          SELECT c.id, c.owner_id, c.title, c.created_at, c.updated_at,
                 (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id) AS message_count,
                 (SELECT left(m.content, ${snippetLength}) FROM messages m WHERE m.conversation_id = c.id
                  ORDER BY m.seq DESC LIMIT 1) AS last_snippet
          FROM conversations c
          WHERE c.owner_id = ${ownerId}
          ORDER BY c.updated_at DESC, c.id
          LIMIT ${limit} OFFSET ${offset}`.pipe(
          Effect.map((rows): Array<SummaryRow> => rows.map((r) => ({ ...r, messageCount: Number(r.messageCount) })))
        ),
        total: sql<{ n: string }>`SELECT count(*) AS n FROM conversations WHERE owner_id = ${ownerId}`.pipe(
          Effect.map(([r]) => Number(r.n))
        )
      })

    const messages = (conversationId: string, limit: number, offset: number) =>
      Effect.all({
        items: sql<MessageRow>`
          SELECT id, conversation_id, role, content, status, error, sources, created_at
          FROM messages WHERE conversation_id = ${conversationId}
          ORDER BY seq LIMIT ${limit} OFFSET ${offset}`,
        total: sql<{ n: string }>`SELECT count(*) AS n FROM messages WHERE conversation_id = ${conversationId}`.pipe(
          Effect.map(([r]) => Number(r.n))
        )
      })

    /** The latest `limit` complete messages before the newest one, oldest first (prompt history). */
    const recent = (conversationId: string, limit: number) =>
      limit === 0
        ? Effect.succeed<ReadonlyArray<MessageRow>>([])
        : sql<MessageRow>`
          SELECT id, conversation_id, role, content, status, error, sources, created_at FROM (
            SELECT * FROM messages WHERE conversation_id = ${conversationId} AND status <> 'failed' AND content <> ''
            ORDER BY seq DESC LIMIT ${limit}
          ) m ORDER BY seq`

    const addMessage = (message: NewMessage) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO messages (id, conversation_id, role, content, status, error, sources)
          VALUES (${message.id}, ${message.conversationId}, ${message.role}, ${message.content}, ${message.status},
                  ${message.error}, ${JSON.stringify(message.sources)}::jsonb)`
        yield* sql`UPDATE conversations SET updated_at = now() WHERE id = ${message.conversationId}`
      }))

    /** Deletes the conversation (its messages go with it); how many messages it had, if it was the owner's. */
    const remove = (id: string, ownerId: string) =>
      sql<{ n: string }>`
        WITH doomed AS (SELECT id FROM conversations WHERE id = ${id} AND owner_id = ${ownerId}),
        counted AS (SELECT count(*) AS n FROM messages WHERE conversation_id IN (SELECT id FROM doomed)),
        gone AS (DELETE FROM conversations WHERE id IN (SELECT id FROM doomed) RETURNING id)
        SELECT (SELECT n FROM counted) AS n FROM gone`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (r) => Number(r.n)))
      )

    return { create, find, list, messages, recent, addMessage, remove } as const
  })
}) {}
