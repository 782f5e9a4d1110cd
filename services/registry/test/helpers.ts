/**
 * The registry under test: the dev identity provider (real RS256 tokens and JWKS), the
 * repository's policies (embedded engine), an in-memory PGlite database with the migrations (or
 * a given database layer), an owner registry built in memory, and the service on a random port,
 * configured through a map instead of the process environment.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type { SqlClient } from "@effect/sql/SqlClient"
import { TokenVerifier } from "@rec/auth"
import { type Database, Testing } from "@rec/db"
import { DevIdp, type MintOptions } from "@rec/dev-idp"
import { decodeRegistry, Owners } from "@rec/owners"
import { Engines } from "@rec/policy"
import { Http, migrations, Updates } from "@rec/registry-service"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
export const repoRoot = path.resolve(here, "../../..")
export const repoPolicies = path.join(repoRoot, "policies")
export const exampleFile = path.join(repoRoot, "examples/it-energy-community.bundle.yaml")
export const exampleText = fs.readFileSync(exampleFile, "utf8")
export const communityKey = "it-energy-community"

/** dev/identities.yaml: the participant users of the simulator's community. */
export const participantSub = "52409e36-6d23-45ed-bb1e-d6c564a2f454"
export const consumerSub = "cc28f729-6d12-46a8-bdfe-c8b6952a99e0"

/** An owner registry with one owner the tests name (by id and by its URL). */
export const ownersText = `owners:
  - id: alto-garda-rec
    type: schema:Organization
    name: Comunità Energetica Rinnovabile Alto Garda
    url: https://cer-altogarda.example.org
    aliases: [cer-alto-garda]
`
export const ownersLayer = Owners.fromRegistry(
  Either.getOrThrow(decodeRegistry([{ file: "owners.yaml", text: ownersText }])),
  { baseUrl: "http://localhost:8004" }
)

export const pgliteDatabase = () => Testing.layerPglite({ service: "registry", migrations, transformNames: false })

export interface ServiceOptions<R = never> {
  /** Environment of the service (a map; the process environment is not read), possibly built from other test layers. */
  readonly env?: Record<string, string> | Effect.Effect<Record<string, string>, never, R | DevIdp> | undefined
  readonly database?: Layer.Layer<Database.Database | SqlClient, unknown> | undefined
  /** Default `Updates.disabled`; `"env"` for `Updates.layer` (a broker from `PLATFORM_MQTT_*`). */
  readonly updates?: Layer.Layer<Updates.Updates, unknown> | "env" | undefined
  /** Policy directory (default: the repository's `policies/`). */
  readonly policies?: string | undefined
  /** Keep the service's log lines (default: dropped, the tests read answers). */
  readonly logs?: boolean | undefined
}

/** Dev IdP + registry; provides `DevIdp`, the database and an `HttpClient` aimed at the service. */
export const serviceLayer = <R = never>(options: ServiceOptions<R> = {}) => {
  const database = options.database ?? pgliteDatabase()
  const env = options.env === undefined ? Effect.succeed({}) : Effect.isEffect(options.env) ? options.env : Effect.succeed(options.env)
  return Layer.unwrapEffect(
    Effect.gen(function*() {
      const idp = yield* DevIdp
      const provider = ConfigProvider.fromMap(new Map(Object.entries(yield* env)))
      return Http.makeTest({
        engine: Engines.embeddedWith({ directory: options.policies ?? repoPolicies, watch: false }),
        verifier: TokenVerifier.layerFor(idp.issuer, { algorithms: ["RS256"], clockTolerance: Duration.seconds(5) }),
        database,
        owners: ownersLayer,
        updates: options.updates === "env" ? Updates.layer : options.updates ?? Updates.disabled
      }).pipe(Layer.provide(Layer.setConfigProvider(provider)))
    })
  ).pipe(
    Layer.provideMerge(database),
    Layer.provideMerge(DevIdp.layerTest),
    Layer.provide(options.logs === true ? Layer.empty : Logger.remove(Logger.defaultLogger))
  )
}

export interface Reply {
  readonly status: number
  readonly body: unknown
  readonly text: string
  readonly headers: Readonly<Record<string, string>>
}

export interface Call {
  readonly token?: string | undefined
  readonly headers?: Record<string, string> | undefined
  /** A bundle sent as the `file` part of a multipart body. */
  readonly bundle?: string | Uint8Array | undefined
  /** Raw body with its content type. */
  readonly text?: { readonly body: string | Uint8Array; readonly contentType: string } | undefined
}

/** A `multipart/form-data` body with the bundle as its `file` part. */
export const multipart = (bundle: string | Uint8Array, field = "file") => {
  const boundary = `----registry-test-${Math.random().toString(16).slice(2)}`
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="bundle.yaml"\r\nContent-Type: application/yaml\r\n\r\n`
  const body = Buffer.concat([Buffer.from(head), Buffer.from(bundle), Buffer.from(`\r\n--${boundary}--\r\n`)])
  return { body: new Uint8Array(body), contentType: `multipart/form-data; boundary=${boundary}` }
}

/** A raw HTTP call, so tests see exact statuses, headers and bodies. */
export const call = (method: "GET" | "POST", url: string, options: Call = {}) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = method === "GET" ? HttpClientRequest.get(url) : HttpClientRequest.post(url)
    if (options.token !== undefined) request = HttpClientRequest.bearerToken(request, options.token)
    if (options.headers !== undefined) request = HttpClientRequest.setHeaders(request, options.headers)
    if (options.bundle !== undefined) {
      // With its length: Node sends a GET body without Content-Length unframed (not chunked).
      const { body, contentType } = multipart(options.bundle)
      request = HttpClientRequest.bodyUint8Array(request, body, contentType)
    } else if (options.text !== undefined) {
      const body = options.text.body
      request = typeof body === "string"
        ? HttpClientRequest.bodyText(request, body, options.text.contentType)
        : HttpClientRequest.bodyUint8Array(request, body, options.text.contentType)
    }
    const response = yield* client.execute(request)
    const text = yield* response.text
    let body: unknown = text
    try {
      body = text === "" ? null : JSON.parse(text)
    } catch {
      // Not JSON (YAML exports, docs pages): the text itself.
    }
    return { status: response.status, body, text, headers: response.headers } satisfies Reply
  }).pipe(Effect.scoped, Effect.orDie)

export const get = (url: string, options: Call = {}) => call("GET", url, options)
export const post = (url: string, options: Call = {}) => call("POST", url, options)

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

/** Imports the example bundle as the admin; fails the test unless it is a 201. */
export const importExample = (text: string = exampleText) =>
  Effect.gen(function*() {
    const admin = yield* Effect.flatMap(tokens, (mint) => mint("admin"))
    const reply = yield* post("/admin/import", { token: admin, bundle: text })
    if (reply.status !== 201) throw new Error(`import answered ${reply.status}: ${reply.text.slice(0, 2000)}`)
    return reply
  })
