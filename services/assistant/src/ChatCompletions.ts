/**
 * An `@effect/ai` `LanguageModel` over the Chat Completions API (`POST {OPENAI_BASE_URL}/chat/completions`
 * with `stream: true`), the one API every OpenAI-compatible server speaks (OpenAI, Ollama, vLLM,
 * llama.cpp's server, LocalAI). `@effect/ai-openai`'s own `OpenAiLanguageModel` speaks the newer
 * Responses API, which most of those servers lack; this model reuses its `OpenAiClient` (base
 * URL, key, SSE decoding) and maps `chat.completion.chunk` events to `@effect/ai` response parts.
 *
 * A stream that ends without a `finish_reason`, or carries an `error` object (vLLM and Ollama send
 * one mid-stream), fails with an `AiError` instead of passing for a complete answer.
 */
import * as AiError from "@effect/ai/AiError"
import * as LanguageModel from "@effect/ai/LanguageModel"
import type * as Prompt from "@effect/ai/Prompt"
import type * as Response from "@effect/ai/Response"
import { OpenAiClient } from "@effect/ai-openai/OpenAiClient"
import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

/** One streamed event, leniently: servers differ in the fields they add or leave out. */
const ChunkEvent = Schema.Struct({
  choices: Schema.optionalWith(
    Schema.Array(Schema.Struct({
      delta: Schema.optionalWith(
        Schema.Struct({ content: Schema.optional(Schema.NullOr(Schema.String)) }),
        { default: () => ({}) }
      ),
      finish_reason: Schema.optional(Schema.NullOr(Schema.String))
    })),
    { default: () => [] }
  ),
  usage: Schema.optional(Schema.NullOr(Schema.Struct({
    prompt_tokens: Schema.optional(Schema.Number),
    completion_tokens: Schema.optional(Schema.Number),
    total_tokens: Schema.optional(Schema.Number)
  }))),
  error: Schema.optional(Schema.Struct({ message: Schema.optional(Schema.String) }))
})
type ChunkEvent = typeof ChunkEvent.Type

export interface Options {
  readonly model: string
  readonly temperature: number
  readonly maxTokens?: number | undefined
}

/** The messages of a prompt in the Chat Completions shape (text parts only). */
export const toMessages = (prompt: Prompt.Prompt): Array<{ role: string; content: string }> =>
  prompt.content.flatMap((message) => {
    switch (message.role) {
      case "system":
        return [{ role: "system", content: message.content }]
      case "user":
      case "assistant": {
        const text = message.content.map((part) => (part.type === "text" ? part.text : "")).join("")
        return text === "" ? [] : [{ role: message.role, content: text }]
      }
      default:
        return []
    }
  })

const finishReason = (reason: string | null | undefined): Response.FinishPartEncoded["reason"] => {
  switch (reason) {
    case "stop":
      return "stop"
    case "length":
      return "length"
    case "content_filter":
      return "content-filter"
    case "tool_calls":
    case "function_call":
      return "tool-calls"
    default:
      return "other"
  }
}

const failure = (description: string) =>
  new AiError.MalformedOutput({ module: "ChatCompletions", method: "streamText", description })

export const make = (options: Options) =>
  Effect.gen(function*() {
    const client = yield* OpenAiClient

    const streamText = (provider: LanguageModel.ProviderOptions): Stream.Stream<Response.StreamPartEncoded, AiError.AiError> =>
      Stream.suspend(() => {
        const id = "text-0"
        let started = false
        let finished: ChunkEvent["choices"][number]["finish_reason"] = undefined
        let usage: ChunkEvent["usage"] = undefined
        const request = HttpClientRequest.post("/chat/completions", {
          body: HttpBody.unsafeJson({
            model: options.model,
            messages: toMessages(provider.prompt),
            temperature: options.temperature,
            ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens }),
            stream: true,
            stream_options: { include_usage: true }
          })
        })
        const parts = client.streamRequest(request, ChunkEvent).pipe(
          Stream.mapConcatEffect((event) => {
            if (event.error !== undefined) {
              return Effect.fail(failure(`the model reported an error: ${event.error.message ?? "no message"}`))
            }
            if (event.usage != null) usage = event.usage
            const out: Array<Response.StreamPartEncoded> = []
            for (const choice of event.choices) {
              const delta = choice.delta.content
              if (typeof delta === "string" && delta !== "") {
                if (!started) {
                  started = true
                  out.push({ type: "text-start", id })
                }
                out.push({ type: "text-delta", id, delta })
              }
              if (choice.finish_reason != null) finished = choice.finish_reason
            }
            return Effect.succeed(out)
          })
        )
        const end = Stream.suspend((): Stream.Stream<Response.StreamPartEncoded, AiError.AiError> => {
          if (finished == null) return Stream.fail(failure("the stream ended before the model finished its answer"))
          const closing: Array<Response.StreamPartEncoded> = started ? [{ type: "text-end", id }] : []
          closing.push({
            type: "finish",
            reason: finishReason(finished),
            usage: {
              inputTokens: usage?.prompt_tokens,
              outputTokens: usage?.completion_tokens,
              totalTokens: usage?.total_tokens
            }
          })
          return Stream.fromIterable(closing)
        })
        return Stream.concat(parts, end)
      })

    return yield* LanguageModel.make({
      streamText,
      generateText: (provider) => Stream.runCollect(streamText(provider)).pipe(
        Effect.map((chunk) => {
          const all = Array.from(chunk)
          const text = all.flatMap((p) => (p.type === "text-delta" ? [p.delta] : [])).join("")
          const finish = all.find((p): p is Response.FinishPartEncoded => p.type === "finish")
          const parts: Array<Response.PartEncoded> = [{ type: "text", text }]
          if (finish !== undefined) parts.push(finish)
          return parts
        })
      )
    })
  })

export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel, never, OpenAiClient> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))
