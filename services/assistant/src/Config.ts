/**
 * Every environment variable of the assistant (README "Configuration"). The database's
 * (`DATABASE_*`) are read by `@rec/db`, the token verifier's (`PLATFORM_OIDC_*`,
 * `JWT_HEADER_NAME`) by `@rec/auth`, the policy engine's (`PLATFORM_POLICIES_POLICIES_DIR`,
 * `POLICY_*`) by `@rec/policy`, and the server's (`PORT`, `HOST`, `CORS_ORIGINS`, `LOG_*`,
 * `OTEL_*`, `SHUTDOWN_TIMEOUT`) by `@rec/platform`.
 */
import { AuthConfig } from "@rec/auth"
import { DatabaseConfig } from "@rec/db"
import { PolicyConfig } from "@rec/policy"
import type { RateLimit } from "@rec/platform"
import * as Config from "effect/Config"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

export const Service = { name: "assistant", version: "0.1.0" } as const

/** design.md's port table. */
export const defaultPort = 8012

/**
 * Rate limits of the write routes, per client (a token's client and subject, else the address),
 * counted in the service's database so every replica on it enforces one budget (docs/decisions.md
 * "Rate limits across services"). Rules sharing a name share one budget and one override:
 * `RATE_LIMIT_CHAT` (each a language model call), `RATE_LIMIT_UPLOAD`, `RATE_LIMIT_ADMIN`
 * (`30/1m`, `off`). The contract is served at the root and under `ASSISTANT_API_BASE`: both
 * count in one budget.
 */
export const rateLimits = (apiBase: Option.Option<string>): ReadonlyArray<RateLimit.Rule> =>
  ["", ...Option.toArray(apiBase)].flatMap((base) => [
    { name: "chat", method: "POST", path: `${base}/chat`, limit: 60, window: "1 minute", store: "shared" } as const,
    { name: "upload", method: "POST", path: `${base}/upload`, limit: 60, window: "1 minute", store: "shared" } as const,
    { name: "admin", method: "POST", path: `${base}/admin/*`, limit: 60, window: "1 minute", store: "shared" } as const
  ])

const positive = (name: string) =>
  Config.integer(name).pipe(Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 }))

const nonNegative = (name: string) =>
  Config.integer(name).pipe(Config.validate({ message: `${name} must be zero or a positive integer`, validation: (n) => n >= 0 }))

const fraction = (name: string) =>
  Config.number(name).pipe(Config.validate({ message: `${name} must be a number from -1 to 1`, validation: (n) => n >= -1 && n <= 1 }))

/** `/api` -> `/api`; `api/` -> `/api`; `` or `/` -> none. */
export const normaliseBase = (value: string): Option.Option<string> => {
  const trimmed = value.trim().replace(/^\/+|\/+$/g, "")
  return trimmed === "" ? Option.none() : Option.some(`/${trimmed}`)
}

const apiBase = Config.string("ASSISTANT_API_BASE").pipe(
  Config.withDefault("/api"),
  Config.validate({
    message: "ASSISTANT_API_BASE must be a path such as /api (letters, digits, - _ . /)",
    validation: (s) => /^[A-Za-z0-9/_.-]*$/.test(s)
  }),
  Config.map(normaliseBase)
)

export interface HttpSettings {
  /** The frontend's base path (default `/api`); `None`: served at the root only. */
  readonly apiBase: Option.Option<string>
  readonly maxUploadBytes: number
}

export const http: Config.Config<HttpSettings> = Config.all({
  apiBase,
  maxUploadBytes: positive("ASSISTANT_MAX_UPLOAD_BYTES").pipe(Config.withDefault(25 * 1024 * 1024))
})

export const storageDir = Config.string("ASSISTANT_STORAGE_DIR").pipe(Config.withDefault("./data/assistant/files"))

export interface ChunkingSettings {
  /** Tokens per chunk at most. */
  readonly maxTokens: number
  /** Tokens of the previous chunk repeated at the start of the next one in the same section. */
  readonly overlapTokens: number
}

export const chunking: Config.Config<ChunkingSettings> = Config.all({
  maxTokens: positive("ASSISTANT_CHUNK_TOKENS").pipe(Config.withDefault(300)),
  overlapTokens: nonNegative("ASSISTANT_CHUNK_OVERLAP_TOKENS").pipe(Config.withDefault(50))
}).pipe(
  Config.validate({
    message: "ASSISTANT_CHUNK_OVERLAP_TOKENS must be less than half of ASSISTANT_CHUNK_TOKENS",
    validation: (c) => c.overlapTokens * 2 < c.maxTokens
  })
)

export interface RetrievalSettings {
  readonly topK: number
  /** Vector hits below this cosine similarity are dropped (full-text hits need a matching term). */
  readonly scoreFloor: number
  /** Query embeddings kept in memory (0: none). */
  readonly queryCacheSize: number
  /** Question terms found in more chunks than this are left out of the full-text search. */
  readonly textTermLimit: number
  /** Minutes between refreshes of the term statistics (`ANALYZE chunks`; 0: only at start and reload). */
  readonly statsRefreshMinutes: number
}

export const retrieval: Config.Config<RetrievalSettings> = Config.all({
  topK: positive("ASSISTANT_TOP_K").pipe(
    Config.validate({ message: "ASSISTANT_TOP_K must be at most 20", validation: (n) => n <= 20 }),
    Config.withDefault(5)
  ),
  scoreFloor: fraction("ASSISTANT_SCORE_FLOOR").pipe(Config.withDefault(0.1)),
  queryCacheSize: nonNegative("ASSISTANT_QUERY_CACHE_SIZE").pipe(Config.withDefault(1000)),
  textTermLimit: positive("ASSISTANT_TEXT_TERM_LIMIT").pipe(Config.withDefault(1000)),
  statsRefreshMinutes: nonNegative("ASSISTANT_STATS_REFRESH_MINUTES").pipe(Config.withDefault(30))
})

export interface PromptSettings {
  /** Tokens of retrieved passages given to the model. */
  readonly contextTokens: number
  /** Tokens of earlier turns given to the model. */
  readonly historyTokens: number
  readonly historyMessages: number
}

export const prompt: Config.Config<PromptSettings> = Config.all({
  contextTokens: positive("ASSISTANT_CONTEXT_TOKENS").pipe(Config.withDefault(3000)),
  historyTokens: nonNegative("ASSISTANT_HISTORY_TOKENS").pipe(Config.withDefault(1500)),
  historyMessages: nonNegative("ASSISTANT_HISTORY_MESSAGES").pipe(Config.withDefault(20))
})

export interface OpenAiSettings {
  readonly baseUrl: string
  readonly apiKey: Option.Option<Redacted.Redacted>
  readonly chatModel: string
  readonly embedModel: string
  /** Length of the embedding vectors; sent as `dimensions` only when set explicitly. */
  readonly embedDimensions: number
  readonly embedDimensionsExplicit: boolean
  readonly temperature: number
  readonly maxTokens: Option.Option<number>
  /** Longest wait for the next streamed chunk (and for the embeddings). */
  readonly idleTimeoutSeconds: number
}

/** An optional variable; set but empty counts as unset (`OPENAI_API_KEY=` in a compose file). */
const optional = (name: string) =>
  Config.option(Config.string(name)).pipe(Config.map(Option.filter((s) => s.trim() !== "")))

export const openAi: Config.Config<OpenAiSettings> = Config.all({
  baseUrl: optional("OPENAI_BASE_URL").pipe(
    Config.map(Option.getOrElse(() => "https://api.openai.com/v1")),
    Config.validate({ message: "OPENAI_BASE_URL must be an http(s) URL", validation: (s) => /^https?:\/\/\S+$/.test(s) }),
    Config.map((s) => s.replace(/\/+$/, ""))
  ),
  apiKey: optional("OPENAI_API_KEY").pipe(Config.map(Option.map(Redacted.make))),
  chatModel: Config.nonEmptyString("OPENAI_CHAT_MODEL").pipe(Config.withDefault("gpt-4o-mini")),
  embedModel: Config.nonEmptyString("OPENAI_EMBED_MODEL").pipe(Config.withDefault("text-embedding-3-small")),
  embedDimensionsOption: Config.option(positive("OPENAI_EMBED_DIMENSIONS")),
  temperature: Config.number("OPENAI_TEMPERATURE").pipe(Config.withDefault(0.2)),
  maxTokens: Config.option(positive("OPENAI_MAX_TOKENS")),
  idleTimeoutSeconds: positive("ASSISTANT_MODEL_IDLE_TIMEOUT_SECONDS").pipe(Config.withDefault(60))
}).pipe(Config.map(({ embedDimensionsOption, ...rest }) => ({
  ...rest,
  embedDimensions: Option.getOrElse(embedDimensionsOption, () => 1536),
  embedDimensionsExplicit: Option.isSome(embedDimensionsOption)
})))

export type ChatProvider = "openai" | "extractive"
export type EmbeddingProvider = "openai" | "local"

export interface ProviderSettings {
  readonly chat: ChatProvider
  readonly embeddings: EmbeddingProvider
  readonly localDimensions: number
}

/**
 * `auto` (the default of both): the OpenAI-compatible server when `OPENAI_BASE_URL` or
 * `OPENAI_API_KEY` is set, else the offline providers.
 */
export const providers: Config.Config<ProviderSettings> = Config.all({
  chat: Config.literal("auto", "openai", "extractive")("ASSISTANT_CHAT_PROVIDER").pipe(Config.withDefault("auto" as const)),
  embeddings: Config.literal("auto", "openai", "local")("ASSISTANT_EMBEDDING_PROVIDER").pipe(Config.withDefault("auto" as const)),
  configured: Config.all([optional("OPENAI_BASE_URL"), optional("OPENAI_API_KEY")]).pipe(
    Config.map(([url, key]) => Option.isSome(url) || Option.isSome(key))
  ),
  localDimensions: positive("ASSISTANT_LOCAL_EMBED_DIMENSIONS").pipe(
    Config.validate({ message: "ASSISTANT_LOCAL_EMBED_DIMENSIONS must be at most 2000 (pgvector's HNSW limit)", validation: (n) => n <= 2000 }),
    Config.withDefault(512)
  )
}).pipe(Config.map(({ chat, configured, embeddings, localDimensions }) => ({
  chat: chat === "auto" ? (configured ? "openai" as const : "extractive" as const) : chat,
  embeddings: embeddings === "auto" ? (configured ? "openai" as const : "local" as const) : embeddings,
  localDimensions
})))

export interface TrainingSettings {
  /** A local path or an https URL; `None`: sync answers 409. */
  readonly repository: Option.Option<string>
  readonly ref: string
  /** Where the repository is cloned. */
  readonly path: string
  /** Folder of the repository whose Markdown is ingested ("" = all). */
  readonly subdir: string
  readonly syncOnStart: boolean
}

export const training: Config.Config<TrainingSettings> = Config.all({
  repository: Config.option(Config.nonEmptyString("TRAINING_MATERIALS_REPO")),
  ref: Config.nonEmptyString("TRAINING_MATERIALS_REF").pipe(Config.withDefault("origin/main")),
  path: Config.nonEmptyString("TRAINING_MATERIALS_PATH").pipe(Config.withDefault("./data/assistant/training-materials")),
  subdir: Config.string("TRAINING_MATERIALS_SUBDIR").pipe(
    Config.withDefault(""),
    Config.validate({
      message: "TRAINING_MATERIALS_SUBDIR must be a relative path inside the repository",
      validation: (s) => !s.startsWith("/") && !s.split(/[\\/]/).includes("..")
    })
  ),
  syncOnStart: Config.boolean("TRAINING_MATERIALS_SYNC_ON_START").pipe(Config.withDefault(true))
})

/** Everything the service reads, for the kit's misspelling check. */
export const all = Config.all({
  http,
  storageDir,
  chunking,
  retrieval,
  prompt,
  openAi,
  providers,
  training,
  verifier: AuthConfig.verifier,
  engine: PolicyConfig.embedded,
  database: DatabaseConfig.fromEnv(Service.name)
})
