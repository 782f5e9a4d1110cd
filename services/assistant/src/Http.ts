/**
 * Handlers (thin: HTTP in, a call to a feature service, HTTP out) and the served service.
 * `HttpLive` is what `main.ts` runs; `make` builds the same service around other layers (tests,
 * the all-in-one launcher): a database, token verifier, policy engine, embedder, answerer or
 * file store of their own.
 *
 * The contract is served twice on one router: at the root, and under `ASSISTANT_API_BASE`
 * (default `/api`) through a prefixed router, so `/api/chat` is `/chat`.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as PgClient from "@effect/sql-pg/PgClient"
import { Authentication, TokenVerifier } from "@rec/auth"
import { Database } from "@rec/db"
import { Engines, type PolicyEngine } from "@rec/policy"
import { HttpErrors, OutboundHttp, RateLimit, ServiceKit } from "@rec/platform"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Access } from "./Access.js"
import { Admin } from "./Admin.js"
import * as Answerer from "./Answerer.js"
import { Api } from "./Api.js"
import { Attachments, contentDisposition } from "./Attachments.js"
import { AttachmentsRepo } from "./AttachmentsRepo.js"
import * as ChatCompletions from "./ChatCompletions.js"
import { Chat } from "./Chat.js"
import { ChunksRepo } from "./ChunksRepo.js"
import * as Config from "./Config.js"
import { ConversationsRepo } from "./ConversationsRepo.js"
import { Conversations } from "./Conversations.js"
import * as Embedder from "./Embedder.js"
import { Ingest } from "./Ingest.js"
import { migrations } from "./migrations/index.js"
import { Retrieval } from "./Retrieval.js"
import * as Sse from "./Sse.js"
import * as Storage from "./Storage.js"
import { Training, syncOnStart } from "./Training.js"
import { VectorStore } from "./VectorStore.js"

/** Infrastructure failures are bugs or outages: the kit answers 500 with the request id and logs the cause. */
const internal = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(
    effect,
    (e): e is Extract<E, { readonly _tag: "SqlError" | "StorageError" | "StoredFileMissing" }> =>
      typeof e === "object" && e !== null && "_tag" in e &&
      (e._tag === "SqlError" || e._tag === "StorageError" || e._tag === "StoredFileMissing"),
    (e) => Effect.die(e)
  )

/** `multipart/form-data; boundary=...` */
const isMultipart = (contentType: string | undefined): boolean =>
  contentType !== undefined && /^multipart\/form-data\s*;.*\bboundary=("?)[^";,\s]+\1/i.test(contentType)

const SystemLive = HttpApiBuilder.group(Api, "system", (handlers) =>
  handlers.handle("health", () =>
    Effect.succeed({ status: "ok" as const, service: Config.Service.name, version: Config.Service.version })))

const ChatLive = HttpApiBuilder.group(Api, "chat", (handlers) =>
  Effect.gen(function*() {
    const chat = yield* Chat
    return handlers.handle("chat", ({ payload }) =>
      Effect.gen(function*() {
        const subject = yield* Authentication.CurrentSubject
        const frames = yield* internal(chat.start(subject.id, payload))
        return HttpServerResponse.stream(frames, { contentType: Sse.contentType, headers: Sse.headers })
      }))
  }))

const AttachmentsLive = HttpApiBuilder.group(Api, "attachments", (handlers) =>
  Effect.gen(function*() {
    const attachments = yield* Attachments
    return handlers
      .handle("upload", ({ payload, request }) =>
        Effect.gen(function*() {
          const subject = yield* Authentication.CurrentSubject
          // The multipart parser throws outside its stream on a body without a boundary: refuse it first.
          if (!isMultipart(request.headers["content-type"])) {
            return yield* Effect.fail(new HttpErrors.BadRequest({
              detail: "The body is not multipart/form-data (with a boundary): send the file in the field \"file\""
            }))
          }
          return yield* internal(attachments.upload(subject.id, payload)).pipe(
            // A refused upload may leave the client still sending: close the connection after the answer.
            Effect.tapErrorTag("PayloadTooLarge", () =>
              HttpApp.appendPreResponseHandler((_, response) => Effect.succeed(HttpServerResponse.setHeader(response, "connection", "close"))))
          )
        }))
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(Authentication.CurrentSubject, (subject) => internal(attachments.list(subject.id, urlParams))))
      .handle("raw", ({ path }) =>
        Effect.gen(function*() {
          const subject = yield* Authentication.CurrentSubject
          const { content, row } = yield* internal(attachments.raw(subject.id, path.id))
          return HttpServerResponse.stream(content, {
            contentType: row.contentType,
            headers: {
              "content-disposition": contentDisposition(row.filename),
              "content-length": String(row.sizeBytes),
              "x-content-type-options": "nosniff",
              // An uploaded HTML page must not run in the assistant's origin.
              "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"
            }
          })
        }))
      .handle("delete", ({ path }) =>
        Effect.flatMap(Authentication.CurrentSubject, (subject) => internal(attachments.remove(subject, path.id))))
  }))

const ConversationsLive = HttpApiBuilder.group(Api, "conversations", (handlers) =>
  Effect.gen(function*() {
    const conversations = yield* Conversations
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(Authentication.CurrentSubject, (subject) => internal(conversations.list(subject.id, urlParams))))
      .handle("messages", ({ path, urlParams }) =>
        Effect.flatMap(Authentication.CurrentSubject, (subject) => internal(conversations.messages(subject.id, path.id, urlParams))))
      .handle("delete", ({ path }) =>
        Effect.flatMap(Authentication.CurrentSubject, (subject) => internal(conversations.remove(subject.id, path.id))))
  }))

const UserLive = HttpApiBuilder.group(Api, "user", (handlers) =>
  Effect.gen(function*() {
    const access = yield* Access
    return handlers.handle("profile", () =>
      Effect.gen(function*() {
        const subject = yield* Authentication.CurrentSubject
        return {
          sub: subject.sub ?? subject.id,
          email: subject.email ?? null,
          name: subject.name ?? null,
          username: subject.username ?? null,
          groups: subject.groups,
          is_admin: yield* access.isAdmin(subject)
        }
      }))
  }))

const AdminLive = HttpApiBuilder.group(Api, "admin", (handlers) =>
  Effect.gen(function*() {
    const access = yield* Access
    const admin = yield* Admin
    const training = yield* Training
    const asAdmin = <A, E, R>(operation: "uploads" | "ingest" | "reload" | "training_sync", effect: Effect.Effect<A, E, R>) =>
      Effect.flatMap(Authentication.CurrentSubject, (subject) => Effect.zipRight(access.requireAdmin(subject, operation), internal(effect)))
    return handlers
      .handle("uploads", ({ payload }) => asAdmin("uploads", admin.uploads(payload)))
      .handle("ingest", ({ payload }) => asAdmin("ingest", admin.reindex(payload.attachment_id)))
      .handle("reload", () => asAdmin("reload", admin.reload()))
      .handle("trainingSync", ({ payload }) =>
        asAdmin(
          "training_sync",
          training.sync(payload.target_ref).pipe(
            Effect.catchTags({
              UnreadableFile: (e) => Effect.fail(new HttpErrors.UnprocessableEntity({ detail: `A training material cannot be read: ${e.message}` })),
              EmbeddingFailed: (e) => Effect.fail(new HttpErrors.BadGateway({ detail: e.message }))
            })
          )
        ))
  }))

// ---------------------------------------------------------------------------------------------
// The service

type DatabaseServices = Database.Database | SqlClient.SqlClient | PgClient.PgClient

export interface MakeOptions {
  /** Default port (default 8012; `PORT` still wins). */
  readonly port?: number | undefined
  /** Default: `Database.layer` (`DATABASE_URL`, else PGlite in `./data/assistant`). */
  readonly database?: Layer.Layer<DatabaseServices, unknown> | undefined
  /** Default: a `TokenVerifier` from `PLATFORM_OIDC_*`. */
  readonly verifier?: Layer.Layer<TokenVerifier.TokenVerifier> | undefined
  /** Default: `Engines.layer` (embedded policies, or the policy service when `POLICY_SERVICE_URL` is set). */
  readonly engine?: Layer.Layer<PolicyEngine, unknown> | undefined
  /** Default: from `ASSISTANT_EMBEDDING_PROVIDER` (local, or the OpenAI-compatible server). */
  readonly embedder?: Layer.Layer<Embedder.Embedder, unknown> | undefined
  /** Default: from `ASSISTANT_CHAT_PROVIDER` (extractive, or the OpenAI-compatible server). */
  readonly answerer?: Layer.Layer<Answerer.Answerer, unknown> | undefined
  /** Default: the folder of `ASSISTANT_STORAGE_DIR`. */
  readonly storage?: Layer.Layer<Storage.FileStore, unknown> | undefined
}

/** The OpenAI-compatible client (with the platform's outbound HTTP: request ids, spans). */
const openAiClient = Layer.unwrapEffect(Effect.map(Config.openAi, (settings) => Embedder.openAiClient(settings))).pipe(
  Layer.provide(OutboundHttp.layer)
)

/** The embedder `ASSISTANT_EMBEDDING_PROVIDER` names. */
export const embedderLayer: Layer.Layer<Embedder.Embedder, unknown> = Layer.unwrapEffect(
  Effect.gen(function*() {
    const providers = yield* Config.providers
    if (providers.embeddings === "local") return Embedder.local(providers.localDimensions)
    const settings = yield* Config.openAi
    return Embedder.openAi(settings).pipe(Layer.provide(openAiClient))
  })
)

/** The answerer `ASSISTANT_CHAT_PROVIDER` names. */
export const answererLayer: Layer.Layer<Answerer.Answerer, unknown> = Layer.unwrapEffect(
  Effect.gen(function*() {
    const providers = yield* Config.providers
    if (providers.chat === "extractive") return Answerer.extractive
    const settings = yield* Config.openAi
    const prompt = yield* Config.prompt
    return Answerer.languageModel(prompt, {
      name: `${settings.chatModel} at ${settings.baseUrl}`,
      server: settings.baseUrl,
      idleTimeout: Duration.seconds(settings.idleTimeoutSeconds)
    }).pipe(
      Layer.provide(ChatCompletions.layer({
        model: settings.chatModel,
        temperature: settings.temperature,
        maxTokens: Option.getOrUndefined(settings.maxTokens)
      })),
      Layer.provide(openAiClient)
    )
  })
)

/** Everything the handlers need. */
export const services = (options: MakeOptions = {}) => {
  const database = options.database ?? Database.layer({ service: Config.Service.name, migrations })
  const storage = options.storage ?? Storage.layer.pipe(Layer.provide(NodeContext.layer))
  const embedder = options.embedder ?? embedderLayer
  const answerer = options.answerer ?? answererLayer
  const verifier = options.verifier ?? TokenVerifier.layer
  const engine = options.engine ?? Engines.layer

  const repos = Layer.mergeAll(ChunksRepo.Default, AttachmentsRepo.Default, ConversationsRepo.Default)
  const base = Layer.mergeAll(repos, embedder, storage, Access.Default.pipe(Layer.provide(engine)))
  const retrieval = Layer.mergeAll(Retrieval.Default, Ingest.Default).pipe(
    Layer.provideMerge(VectorStore.Default),
    Layer.provideMerge(base)
  )
  const features = Layer.mergeAll(
    Chat.Default.pipe(Layer.provide(answerer)),
    Attachments.Default,
    Conversations.Default,
    Admin.Default,
    Training.Default.pipe(Layer.provide(NodeContext.layer))
  ).pipe(Layer.provideMerge(retrieval))

  return Layer.mergeAll(features, Authentication.layer).pipe(
    Layer.provideMerge(verifier),
    Layer.provideMerge(database)
  )
}

const handlers = Layer.mergeAll(SystemLive, ChatLive, AttachmentsLive, ConversationsLive, UserLive, AdminLive)

/** The contract again under the frontend's base path (`/api/chat` is `/chat`). */
const underBase = (base: Option.Option<string>) =>
  Option.match(base, {
    onNone: () => Layer.empty,
    onSome: (prefix) =>
      HttpLayerRouter.addHttpApi(Api).pipe(
        Layer.provide(Layer.effect(HttpLayerRouter.HttpRouter, Effect.map(HttpLayerRouter.HttpRouter, (router) => router.prefixed(prefix))))
      )
  })

/** The shared rate limits' counter (`Config.rateLimits`), in the service's own schema of its database. */
const withRateLimitCounter = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  Layer.unwrapEffect(Effect.map(Database.Database, (db) => RateLimit.sharedStoreLayer(db.schema))).pipe(Layer.provideMerge(layer))

const serveOptions = (settings: Config.HttpSettings, port: number) => ({
  service: Config.Service,
  port,
  // The contract declares /health (the spec's {status: "ok"}), so it is served under the base too.
  health: false,
  readiness: { checks: { database: Effect.flatMap(Database.Database, (db) => db.check) } },
  config: Config.all,
  env: ["POLICY_SERVICE_URL"],
  routes: underBase(settings.apiBase),
  // Uploads stream through the multipart parser; the request limit leaves room for its framing.
  maxBodySize: settings.maxUploadBytes + 1024 * 1024,
  rateLimits: Config.rateLimits(settings.apiBase)
} as const)

const withStartup = <A, E, R>(layer: Layer.Layer<A, E, R>) => Layer.merge(layer, syncOnStart)

/** The assistant on `HOST`:`PORT` (default 8012). */
export const make = (options: MakeOptions = {}) =>
  Layer.unwrapEffect(Effect.map(Config.http, (s) => ServiceKit.serve(Api, serveOptions(s, options.port ?? Config.defaultPort)))).pipe(
    withStartup,
    Layer.provide(handlers),
    Layer.provide(withRateLimitCounter(services(options)))
  )

/** For tests: the service on a random port, with an `HttpClient` aimed at it. */
export const makeTest = (options: MakeOptions = {}) =>
  Layer.unwrapEffect(Effect.map(Config.http, (s) => ServiceKit.serveTest(Api, serveOptions(s, 0)))).pipe(
    withStartup,
    Layer.provide(handlers),
    Layer.provide(withRateLimitCounter(services(options)))
  )

export const HttpLive = make()
