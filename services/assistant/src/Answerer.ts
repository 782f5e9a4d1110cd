/**
 * What writes the answer, as a stream of text deltas:
 *
 * - `extractive` (the offline default): no model; it quotes the sentences of the best passages
 *   that share the most terms with the question, each under its source label, and says plainly
 *   that no language model is configured;
 * - `languageModel`: any `@effect/ai` `LanguageModel` (the Chat Completions model of an
 *   OpenAI-compatible server, `ChatCompletions`), given the prompt of `Prompt`. A model that
 *   sends nothing for `ASSISTANT_MODEL_IDLE_TIMEOUT_SECONDS` fails.
 */
import type * as AiError from "@effect/ai/AiError"
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as Config from "./Config.js"
import * as Prompt from "./Prompt.js"
import { labelOf } from "./Retrieval.js"
import { sentences, terms, words } from "./Text.js"

export class AnswerFailed extends Schema.TaggedError<AnswerFailed>()("AnswerFailed", {
  /** For the user: names the model's server, never a key. */
  message: Schema.String
}) {}

export interface AnswererService {
  /** `extractive`, or `<model> at <server>`. */
  readonly name: string
  readonly answer: (input: Prompt.PromptInput) => Stream.Stream<string, AnswerFailed>
}

export class Answerer extends Context.Tag("@rec/assistant-service/Answerer")<Answerer, AnswererService>() {}

// ---------------------------------------------------------------------------------------------
// Extractive

export const noModelNotice = "No language model is configured, so this answer quotes the passages of your documents and " +
  "the training materials that best match your question."

export const nothingFound = "I found nothing about this in your documents or in the training materials. No language model " +
  "is configured, so I can only answer with passages from them: try other words, or upload a document that covers it."

/** Passages quoted at most. */
const quotedPassages = 3
/** A passage this short (in words) is quoted whole. */
const shortPassage = 70
/** Sentences quoted per longer passage. */
const sentencesPerPassage = 3


/** The sentences of `text` that share the most terms with the question, in their order. */
export const bestSentences = (text: string, question: ReadonlySet<string>, count: number): Array<string> => {
  const all = text.split(/\n+/).flatMap((line) => sentences(line))
  const scored = all.map((sentence, index) => {
    const own = new Set(terms(sentence))
    let score = 0
    for (const t of own) if (question.has(t)) score += 1
    // A sentence with more distinct matching terms wins; ties go to the earlier sentence.
    return { sentence, index, score }
  })
  const chosen = scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, count)
  if (chosen.length === 0) return all.slice(0, 1)
  return chosen.sort((a, b) => a.index - b.index).map((s) => s.sentence)
}

const scalar = (value: unknown): string | undefined =>
  typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? String(value) : undefined

/** The extractive answer's text. */
export const extractiveText = (input: Prompt.PromptInput): string => {
  const parts: Array<string> = [noModelNotice]
  const data = input.page?.data
  if (data !== undefined) {
    const shown = Object.entries(data).flatMap(([k, v]) => {
      const s = scalar(v)
      return s === undefined ? [] : [`${k}: ${s}`]
    }).slice(0, 8)
    if (shown.length > 0) parts.push(`On the page ${input.page?.page ?? "you are on"}: ${shown.join("; ")}.`)
  }
  const passages = input.passages.slice(0, quotedPassages)
  if (passages.length === 0) {
    parts[0] = nothingFound
    return parts.join("\n\n")
  }
  const question = new Set(terms(input.question))
  passages.forEach((p, i) => {
    const quoted = words(p.text).length <= shortPassage
      ? p.text.replace(/\s*\n\s*/g, " ").trim()
      : bestSentences(p.text, question, sentencesPerPassage).join(" ")
    parts.push(`[${i + 1}] ${labelOf(p)}:\n${quoted}`)
  })
  return parts.join("\n\n")
}

/** Text as deltas of a word and the blank after it. */
export const deltas = (text: string): Array<string> => text.match(/\S+\s*|\s+/g) ?? []

export const extractive: Layer.Layer<Answerer> = Layer.succeed(Answerer, {
  name: "extractive",
  answer: (input) => Stream.suspend(() => Stream.fromIterable(deltas(extractiveText(input))))
})

// ---------------------------------------------------------------------------------------------
// A language model

export const languageModel = (
  settings: Config.PromptSettings,
  info: { readonly name: string; readonly server: string; readonly idleTimeout: Duration.Duration }
): Layer.Layer<Answerer, never, LanguageModel.LanguageModel> =>
  Layer.effect(
    Answerer,
    Effect.map(LanguageModel.LanguageModel, (model) => ({
      name: info.name,
      answer: (input) =>
        model.streamText({ prompt: Prompt.make(input, settings) }).pipe(
          Stream.filterMap((part) => (part.type === "text-delta" && part.delta !== "" ? Option.some(part.delta) : Option.none())),
          Stream.mapError((error) => new AnswerFailed({ message: `The language model at ${info.server} failed: ${describe(error)}` })),
          Stream.timeoutFail(
            () => new AnswerFailed({ message: `The language model at ${info.server} sent nothing for ${Duration.format(info.idleTimeout)}` }),
            info.idleTimeout
          )
        )
    }))
  )

/** An `AiError` in a sentence, without request details that could carry a key. */
const describe = (error: AiError.AiError): string => {
  switch (error._tag) {
    case "HttpResponseError":
      return `it answered HTTP ${error.response.status}`
    case "HttpRequestError":
      return `it could not be reached (${error.reason})`
    default:
      return error.description ?? error.message
  }
}
