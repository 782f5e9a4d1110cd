/**
 * A chat turn. Before anything streams: the request is checked (a message, or attachments to
 * summarise), the named attachments must be the caller's or shared, the conversation must be the
 * caller's or is created (titled after the first message), and the user message is stored. Then
 * the frames: `meta`, `sources`, one `token` per delta, `error` if retrieval or the model fails,
 * `done`, `[DONE]`. The reply is stored when the stream ends: `complete`, `failed` (with the
 * error and what had streamed), or `interrupted` when the client went away, which also stops
 * the model call (the request's fiber is interrupted, and the model's HTTP request with it).
 */
import { HttpErrors } from "@rec/platform"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { Answerer } from "./Answerer.js"
import { AttachmentsRepo } from "./AttachmentsRepo.js"
import * as Config from "./Config.js"
import { ConversationsRepo, type ConversationRow } from "./ConversationsRepo.js"
import type * as Domain from "./Domain.js"
import type { HistoryTurn } from "./Prompt.js"
import { Retrieval, toSource } from "./Retrieval.js"
import * as Sse from "./Sse.js"
import { words } from "./Text.js"

/** The question when only attachments are sent. */
export const summariseQuestion = "Summarise the attached files and the most relevant information in them."

const titleLength = 60

/** A conversation's title: the first message on one line, cut at a word near 60 characters. */
export const titleOf = (message: string, attachedNames: ReadonlyArray<string>): string => {
  const line = message.replace(/\s+/g, " ").trim()
  if (line === "") {
    return attachedNames.length === 0 ? "New conversation" : `Files: ${attachedNames.join(", ")}`.slice(0, 80)
  }
  if (line.length <= titleLength) return line
  const cut = line.slice(0, titleLength)
  const space = cut.lastIndexOf(" ")
  return `${(space > titleLength / 2 ? cut.slice(0, space) : cut).replace(/[\s,.;:!?-]+$/, "")}…`
}

/**
 * What is searched: the message, and for a short follow-up ("and for businesses?") the previous
 * question too, which names the topic.
 */
export const retrievalQuery = (message: string, history: ReadonlyArray<HistoryTurn>): string => {
  if (words(message).length >= 5) return message
  const previous = [...history].reverse().find((turn) => turn.role === "user")
  return previous === undefined ? message : `${message}\n${previous.content}`
}

export class Chat extends Effect.Service<Chat>()("@rec/assistant-service/Chat", {
  effect: Effect.gen(function*() {
    const conversations = yield* ConversationsRepo
    const attachments = yield* AttachmentsRepo
    const retrieval = yield* Retrieval
    const answerer = yield* Answerer
    const promptSettings = yield* Config.prompt

    const start = Effect.fn("Chat.start")(function*(ownerId: string, request: Domain.ChatRequest) {
      const message = request.message.trim()
      const ids = Array.from(new Set(request.attachment_ids ?? []))
      if (message === "" && ids.length === 0) {
        return yield* Effect.fail(new HttpErrors.BadRequest({ detail: "The message is empty: write a question, or attach files to summarise" }))
      }
      const attached = yield* Effect.forEach(ids, (id) =>
        Effect.flatMap(attachments.findReadable(id, ownerId), (row) =>
          row._tag === "Some"
            ? Effect.succeed(row.value)
            : Effect.fail(new HttpErrors.NotFound({ detail: `No attachment ${id} for this user` }))))

      let conversation: ConversationRow
      let history: ReadonlyArray<HistoryTurn> = []
      if (request.conversation_id !== undefined) {
        const found = yield* conversations.find(request.conversation_id, ownerId)
        if (found._tag === "None") {
          return yield* Effect.fail(new HttpErrors.NotFound({ detail: `No conversation ${request.conversation_id} for this user` }))
        }
        conversation = found.value
        history = (yield* conversations.recent(conversation.id, promptSettings.historyMessages)).map((m) => ({
          role: m.role,
          content: m.content
        }))
      } else {
        conversation = yield* conversations.create(randomUUID(), ownerId, titleOf(message, attached.map((a) => a.filename)))
      }
      yield* conversations.addMessage({
        id: randomUUID(),
        conversationId: conversation.id,
        role: "user",
        content: request.message,
        status: "complete",
        error: null,
        sources: []
      })
      yield* Effect.annotateCurrentSpan({ conversation: conversation.id, attachments: ids.length })

      const question = message === "" ? summariseQuestion : message
      return frames({
        ownerId,
        conversation,
        question,
        query: message === "" ? question : retrievalQuery(message, history),
        history,
        request,
        attached: attached.map((a) => ({ id: a.id, filename: a.filename, contentType: a.contentType, title: a.title }))
      })
    })

    const frames = (turn: {
      readonly ownerId: string
      readonly conversation: ConversationRow
      readonly question: string
      readonly query: string
      readonly history: ReadonlyArray<HistoryTurn>
      readonly request: Domain.ChatRequest
      readonly attached: ReadonlyArray<{ id: string; filename: string; contentType: string; title: string | null }>
    }): Stream.Stream<Uint8Array> => {
      let text = ""
      let sources: ReadonlyArray<Domain.Source> = []
      let stored = false
      /** Stores the reply once, whichever way the stream ends. */
      const store = (status: Domain.MessageStatus, error: string | null) =>
        Effect.suspend(() => {
          if (stored) return Effect.void
          stored = true
          return conversations.addMessage({
            id: randomUUID(),
            conversationId: turn.conversation.id,
            role: "assistant",
            content: text,
            status,
            error,
            sources
          }).pipe(
            Effect.catchAllCause((cause) => Effect.logError("the assistant's reply could not be stored", cause))
          )
        })

      const answer = Stream.unwrap(Effect.gen(function*() {
        const passages = yield* retrieval.search(turn.ownerId, turn.query, {
          topK: turn.request.top_k,
          attachmentIds: turn.attached.map((a) => a.id),
          summarise: turn.request.message.trim() === ""
        })
        sources = passages.map(toSource)
        const tokens = answerer.answer({
          question: turn.question,
          passages,
          page: turn.request.context,
          history: turn.history,
          attachments: turn.attached
        }).pipe(
          Stream.map((delta) => {
            text += delta
            return Sse.encode({ type: "token", data: delta })
          })
        )
        return turn.request.include_citations
          ? Stream.concat(Stream.make(Sse.encode({ type: "sources", data: sources })), tokens)
          : tokens
      }))

      const completed = Stream.drain(Stream.fromEffect(store("complete", null)))

      const body = Stream.concat(answer, completed).pipe(
        Stream.catchAllCause((cause) => {
          // Interruption carries no failure: it passes through as interruption.
          if (Cause.isInterruptedOnly(cause)) return Stream.failCause(cause as Cause.Cause<never>)
          const message = messageOf(cause)
          return Stream.concat(
            Stream.drain(Stream.fromEffect(Effect.zipRight(
              Effect.logWarning("chat turn failed", cause),
              store("failed", message)
            ))),
            Stream.make(Sse.encode({ type: "error", data: { message } }))
          )
        })
      )

      return Stream.make(Sse.encode({
        type: "meta",
        data: { conversation_id: turn.conversation.id as Domain.ConversationId, title: turn.conversation.title }
      })).pipe(
        Stream.concat(body),
        Stream.concat(Stream.make(Sse.encode({ type: "done", data: null }), Sse.doneSentinel)),
        // The client went away before the end: what had streamed is kept as an interrupted reply.
        Stream.ensuring(store("interrupted", null))
      )
    }

    return { start } as const
  })
}) {}

/** A failure as the user reads it in the `error` frame: the upstream named, internals not. */
const messageOf = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "Some") {
    const error = failure.value as { _tag?: string; message?: string }
    if (error._tag === "AnswerFailed" || error._tag === "EmbeddingFailed") return error.message ?? "The answer failed"
    if (error._tag === "SqlError") return "The documents could not be searched (database error); try again shortly"
  }
  return "The answer could not be completed because of an internal error; try again shortly"
}
