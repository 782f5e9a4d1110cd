/**
 * The embedder of documents and questions:
 *
 * - `local` (the offline default): the feature-hashing vectoriser of `Hashing`, no network;
 * - `openai`: `@effect/ai`'s `EmbeddingModel` from `@effect/ai-openai`, against any
 *   OpenAI-compatible server (`OPENAI_BASE_URL`: OpenAI, Ollama, vLLM, llama.cpp's server, ...).
 *
 * Every vector is stored with the embedder's `id` (model and dimensions), so vectors of different
 * embedders never meet: after a change of embedder, `/admin/reload` embeds the chunks again.
 */
import * as AiError from "@effect/ai/AiError"
import * as EmbeddingModel from "@effect/ai/EmbeddingModel"
import * as OpenAiClient from "@effect/ai-openai/OpenAiClient"
import * as OpenAiEmbeddingModel from "@effect/ai-openai/OpenAiEmbeddingModel"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Config from "./Config.js"
import * as Hashing from "./Hashing.js"

/** The embedding provider failed or answered something unusable. */
export class EmbeddingFailed extends Schema.TaggedError<EmbeddingFailed>()("EmbeddingFailed", {
  /** Names the upstream and what went wrong (never a key). */
  message: Schema.String
}) {}

export interface EmbedderService {
  /** Stored with each vector: `local-hash-v1:512`, `openai:text-embedding-3-small:1536`. */
  readonly id: string
  readonly dimensions: number
  /** For messages: "the local embedder", "the embeddings of http://... (model m)". */
  readonly description: string
  /** Vectors of `texts`, in order. */
  readonly embed: (texts: ReadonlyArray<string>) => Effect.Effect<Array<Array<number>>, EmbeddingFailed>
}

export class Embedder extends Context.Tag("@rec/assistant-service/Embedder")<Embedder, EmbedderService>() {}

/** Inputs per request to the embedding server. */
const batchSize = 64

const fromModel = (
  model: EmbeddingModel.Service,
  info: { readonly id: string; readonly dimensions: number; readonly description: string; readonly timeout: Duration.Duration }
): EmbedderService => {
  const failed = (detail: string) => new EmbeddingFailed({ message: `${info.description} ${detail}` })
  const check = (vectors: Array<Array<number>>) => {
    const wrong = vectors.find((v) => v.length !== info.dimensions)
    return wrong === undefined
      ? Effect.succeed(vectors)
      : Effect.fail(failed(
        `returned vectors of ${wrong.length} dimensions instead of ${info.dimensions}: set OPENAI_EMBED_DIMENSIONS to the model's`
      ))
  }
  const embedBatch = (texts: ReadonlyArray<string>) =>
    model.embedMany(texts).pipe(
      Effect.timeoutFail({ duration: info.timeout, onTimeout: () => failed(`did not answer within ${Duration.format(info.timeout)}`) }),
      Effect.catchIf(AiError.isAiError, (error) => Effect.fail(failed(`failed: ${error.message}`))),
      Effect.flatMap(check)
    )
  return {
    id: info.id,
    dimensions: info.dimensions,
    description: info.description,
    embed: (texts) => {
      if (texts.length === 0) return Effect.succeed([])
      const batches: Array<ReadonlyArray<string>> = []
      for (let i = 0; i < texts.length; i += batchSize) batches.push(texts.slice(i, i + batchSize))
      return Effect.forEach(batches, embedBatch, { concurrency: 4 }).pipe(
        Effect.map((parts) => parts.flat()),
        Effect.withSpan("Embedder.embed", { attributes: { embedder: info.id, inputs: texts.length } })
      )
    }
  }
}

export const localId = (dimensions: number) => `local-hash-${Hashing.version}:${dimensions}`

/** The offline embedder: the `Hashing` vectoriser, computed in-process. */
export const local = (dimensions: number): Layer.Layer<Embedder> =>
  Layer.succeed(Embedder, {
    id: localId(dimensions),
    dimensions,
    description: "the local embedder",
    embed: (texts) => Effect.sync(() => texts.map((text) => Hashing.embed(text, dimensions)))
  })

/** The client of the OpenAI-compatible server, shared by the embedder and the chat model. */
export const openAiClient = (settings: Config.OpenAiSettings): Layer.Layer<OpenAiClient.OpenAiClient, never, HttpClient.HttpClient> =>
  OpenAiClient.layer({ apiUrl: settings.baseUrl, apiKey: Option.getOrUndefined(settings.apiKey) })

export const openAi = (settings: Config.OpenAiSettings): Layer.Layer<Embedder, never, OpenAiClient.OpenAiClient> =>
  Layer.effect(
    Embedder,
    Effect.map(
      EmbeddingModel.EmbeddingModel,
      (model) =>
        fromModel(model, {
          id: `openai:${settings.embedModel}:${settings.embedDimensions}`,
          dimensions: settings.embedDimensions,
          description: `the embeddings of ${settings.baseUrl} (model ${settings.embedModel})`,
          timeout: Duration.seconds(settings.idleTimeoutSeconds)
        })
    )
  ).pipe(
    Layer.provide(OpenAiEmbeddingModel.layerBatched({
      model: settings.embedModel,
      config: {
        maxBatchSize: batchSize,
        ...(settings.embedDimensionsExplicit ? { dimensions: settings.embedDimensions } : {})
      }
    }))
  )
