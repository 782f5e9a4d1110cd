/**
 * The caller's conversations: listing (most recently active first), the messages of one
 * (oldest first), deletion with its messages. Another user's conversation is "not found".
 */
import { HttpErrors } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ConversationsRepo, type MessageRow } from "./ConversationsRepo.js"
import type * as Domain from "./Domain.js"

const toMessage = (m: MessageRow): Domain.Message => ({
  id: m.id as Domain.MessageId,
  conversation_id: m.conversationId as Domain.ConversationId,
  role: m.role,
  content: m.content,
  status: m.status,
  error: m.error,
  sources: m.sources,
  created_at: m.createdAt
})

export class Conversations extends Effect.Service<Conversations>()("@rec/assistant-service/Conversations", {
  effect: Effect.gen(function*() {
    const repo = yield* ConversationsRepo
    const notFound = (id: string) => new HttpErrors.NotFound({ detail: `No conversation ${id} for this user` })

    const list = (ownerId: string, params: typeof Domain.ConversationListParams.Type) =>
      Effect.map(repo.list(ownerId, params.limit, params.offset), ({ items, total }) => ({
        items: items.map((c) => ({
          id: c.id as Domain.ConversationId,
          title: c.title,
          created_at: c.createdAt,
          updated_at: c.updatedAt,
          message_count: c.messageCount,
          last_snippet: c.lastSnippet
        })),
        total,
        limit: params.limit,
        offset: params.offset
      }))

    const messages = (ownerId: string, id: string, params: typeof Domain.MessageListParams.Type) =>
      Effect.gen(function*() {
        const conversation = yield* repo.find(id, ownerId)
        if (Option.isNone(conversation)) return yield* Effect.fail(notFound(id))
        const { items, total } = yield* repo.messages(id, params.limit, params.offset)
        return {
          conversation_id: id as Domain.ConversationId,
          title: conversation.value.title,
          messages: items.map(toMessage),
          total,
          limit: params.limit,
          offset: params.offset
        }
      })

    const remove = (ownerId: string, id: string) =>
      Effect.gen(function*() {
        const removed = yield* repo.remove(id, ownerId)
        if (Option.isNone(removed)) return yield* Effect.fail(notFound(id))
        return { status: "deleted" as const, conversation_id: id as Domain.ConversationId, messages_removed: removed.value }
      })

    return { list, messages, remove } as const
  })
}) {}
