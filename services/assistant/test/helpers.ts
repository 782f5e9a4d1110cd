/**
 * The assistant under test: the dev identity provider (real RS256 tokens, real JWKS), an
 * in-memory PGlite with pgvector and the service's migrations, a temporary storage folder, the
 * repository's policies, and the service on a random port, configured through a map instead of
 * the process environment. Started once per test file.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { TokenVerifier } from "@rec/auth"
import { Testing } from "@rec/db"
import { DevIdp, type MintOptions } from "@rec/dev-idp"
import { Engines, type PolicyEngine } from "@rec/policy"
import { Http, migrations } from "@rec/assistant-service"
import type { Answerer } from "@rec/assistant-service/Answerer"
import type { Embedder } from "@rec/assistant-service/Embedder"
import * as Storage from "@rec/assistant-service/Storage"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { createParser, type EventSourceMessage } from "eventsource-parser"
import { afterAll } from "vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const here = path.dirname(fileURLToPath(import.meta.url))
export const repoPolicies = path.resolve(here, "../../../policies")
export const handbookDir = path.resolve(here, "../eval/handbook")

const made: Array<string> = []
// Registered in the file that imports these helpers: its folders go when its tests are done.
afterAll(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

/** A new temporary folder, removed after the test file's tests. */
export const tempDir = (prefix: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `assistant-${prefix}-`))
  made.push(dir)
  return dir
}

export interface ServiceOptions {
  /** Environment of the service (a map; the process environment is not read). */
  readonly env?: Record<string, string> | undefined
  readonly embedder?: Layer.Layer<Embedder> | undefined
  readonly answerer?: Layer.Layer<Answerer> | undefined
  /** Policy engine (default: the repository's policies, embedded). */
  readonly engine?: Layer.Layer<PolicyEngine, unknown> | undefined
  /** Storage folder (default: a new temporary folder). */
  readonly storageDir?: string | undefined
  /** Log lines of the service (default: dropped). */
  readonly logs?: boolean | undefined
}

/**
 * Dev IdP + assistant on PGlite; provides `DevIdp`, `HttpServer`, an `HttpClient` aimed at the
 * service, and the service's own `SqlClient` (one database: the layer is shared by reference).
 */
export const serviceLayer = (options: ServiceOptions = {}) => {
  const storageDir = options.storageDir ?? tempDir("files")
  const database = Testing.layerPglite({ service: "assistant", migrations })
  return Layer.unwrapEffect(
    Effect.map(DevIdp, (idp) =>
      Http.makeTest({
        database,
        verifier: TokenVerifier.layerFor(idp.issuer, { algorithms: ["RS256"], clockTolerance: Duration.seconds(5) }),
        engine: options.engine ?? Engines.embeddedWith({ directory: repoPolicies, watch: false }),
        embedder: options.embedder,
        answerer: options.answerer,
        storage: Storage.folder(storageDir).pipe(Layer.provide(NodeContext.layer))
      }))
  ).pipe(
    Layer.provideMerge(database),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(options.env ?? {}))))),
    Layer.provideMerge(DevIdp.layerTest),
    Layer.provide(options.logs === true ? Layer.empty : Logger.remove(Logger.defaultLogger))
  )
}

/** The service's base URL. */
export const baseUrl = HttpServer.addressFormattedWith((address) => Effect.succeed(address.replace("0.0.0.0", "127.0.0.1")))

/** Mints once per (name, options) within a test file. */
export const tokens = Effect.map(DevIdp, (idp) => {
  const minted = new Map<string, string>()
  return (name: string, options: MintOptions = {}) =>
    Effect.gen(function*() {
      const key = `${name} ${JSON.stringify(options)}`
      const hit = minted.get(key)
      if (hit !== undefined) return hit
      const token = yield* Effect.orDie(idp.mint(name, options))
      minted.set(key, token)
      return token
    })
})

export interface Reply {
  readonly status: number
  readonly body: unknown
  readonly text: string
  readonly headers: Readonly<Record<string, string>>
}

export interface Call {
  readonly token?: string | undefined
  readonly headers?: Record<string, string> | undefined
  readonly json?: unknown
  readonly text?: { readonly body: string; readonly contentType: string } | undefined
  readonly form?: FormData | undefined
}

/** A raw HTTP call, so tests see exact statuses, bodies and headers. */
export const call = (method: "GET" | "POST" | "DELETE", url: string, options: Call = {}) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(url)
    if (options.token !== undefined) request = HttpClientRequest.bearerToken(request, options.token)
    if (options.headers !== undefined) request = HttpClientRequest.setHeaders(request, options.headers)
    if (options.form !== undefined) request = HttpClientRequest.bodyFormData(request, options.form)
    else if (options.text !== undefined) request = HttpClientRequest.bodyText(request, options.text.body, options.text.contentType)
    else if (options.json !== undefined) request = yield* HttpClientRequest.bodyJson(request, options.json)
    const response = yield* client.execute(request)
    const text = yield* response.text
    let body: unknown = text
    try {
      body = text === "" ? null : JSON.parse(text)
    } catch {
      // Not JSON (streams, raw files): the text itself.
    }
    return { status: response.status, body, text, headers: response.headers } satisfies Reply
  }).pipe(Effect.scoped, Effect.orDie)

export interface Frame {
  readonly type: string
  readonly data: unknown
}

export interface ChatReply {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  /** Every SSE event, in order (the `[DONE]` sentinel included, as its raw data). */
  readonly events: ReadonlyArray<EventSourceMessage>
  /** The JSON frames (everything but the sentinel). */
  readonly frames: ReadonlyArray<Frame>
  readonly text: string
  readonly body: unknown
}

/** Parses an SSE body with `eventsource-parser`. */
export const parseSse = (text: string): Array<EventSourceMessage> => {
  const events: Array<EventSourceMessage> = []
  const parser = createParser({ onEvent: (event) => events.push(event) })
  parser.feed(text)
  return events
}

/** `POST <base>/chat` with fetch, the body parsed as SSE. */
export const chat = (url: string, token: string, payload: unknown) =>
  Effect.promise(async (): Promise<ChatReply> => {
    const response = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(payload)
    })
    const text = await response.text()
    const headers = Object.fromEntries(response.headers.entries())
    if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
      return { status: response.status, headers, events: [], frames: [], text, body: JSON.parse(text) }
    }
    const events = parseSse(text)
    const frames = events.filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data) as Frame)
    return { status: response.status, headers, events, frames, text, body: undefined }
  })

/** The answer's text: the `token` frames joined. */
export const answerOf = (reply: ChatReply): string =>
  reply.frames.filter((f) => f.type === "token").map((f) => f.data as string).join("")

/** A multipart body with one file. */
export const fileForm = (name: string, bytes: Uint8Array | string, type = "application/octet-stream"): FormData => {
  const form = new FormData()
  form.append("file", new Blob([typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes], { type }), name)
  return form
}
