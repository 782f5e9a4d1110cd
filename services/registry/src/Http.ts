/**
 * Handlers (thin: access decision, a call to `Registry`/`Imports`, the answer in the asked
 * format) and the served service. `HttpLive` is what `main.ts` runs; `make` builds the same
 * service around other parts (tests, the all-in-one launcher); `makeTest` serves it on a random
 * port of 127.0.0.1 with an `HttpClient` aimed at it.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Authentication, TokenVerifier } from "@rec/auth"
import { Database } from "@rec/db"
import { Owners } from "@rec/owners"
import { Engines, PolicyEngine } from "@rec/policy"
import { Health, RateLimit, ServiceKit } from "@rec/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Access } from "./Access.js"
import { Api } from "./Api.js"
import { Bundles } from "./Bundles.js"
import * as Config from "./Config.js"
import * as Domain from "./Domain.js"
import { Imports } from "./Imports.js"
import { ImportsRepo } from "./ImportsRepo.js"
import * as JsonLd from "./JsonLd.js"
import { migrations } from "./migrations/index.js"
import { Records } from "./Records.js"
import { Registry, type Listed } from "./Registry.js"
import { RegistryRepo } from "./RegistryRepo.js"
import * as Seed from "./Seed.js"
import { readBundle, overhead } from "./Upload.js"
import * as Updates from "./Updates.js"

// ---------------------------------------------------------------------------------------------
// JSON or JSON-LD

const jsonLdResponse = (body: JsonLd.Node) => HttpServerResponse.unsafeJson(body, { contentType: "application/ld+json" })

const Renderer = Effect.gen(function*() {
  const registry = yield* Registry
  const owners = yield* Owners
  const settings = yield* Config.settings
  const renderer: JsonLd.Renderer = {
    iris: registry.records.iris,
    agent: (owner) =>
      Option.match(owners.agentFor(owner.reference), {
        onSome: (node) => node,
        onNone: () => JsonLd.bareAgent(owner)
      })
  }
  /** The request's own URL and that of the next page, below `BASE_URL`. */
  const urls = (request: HttpServerRequest.HttpServerRequest, nextCursor: string | null) => {
    const url = new URL(request.url, `${settings.baseUrl}/`)
    const self = `${settings.baseUrl}${url.pathname}${url.search}`
    if (nextCursor === null) return { self, next: null }
    url.searchParams.set("cursor", nextCursor)
    return { self, next: `${settings.baseUrl}${url.pathname}${url.search}` }
  }
  return {
    one: <A>(format: Domain.Format, record: A, node: (r: JsonLd.Renderer, record: A) => JsonLd.Node) =>
      format === "jsonld" ? jsonLdResponse(JsonLd.document(settings.contextUrl, node(renderer, record))) : record,
    list: <A>(
      format: Domain.Format,
      request: HttpServerRequest.HttpServerRequest,
      page: Listed<A>,
      node: (r: JsonLd.Renderer, record: A) => JsonLd.Node
    ) =>
      format === "jsonld"
        ? jsonLdResponse(
          JsonLd.document(settings.contextUrl, JsonLd.collection(page.items.map((item) => node(renderer, item)), urls(request, page.next_cursor)))
        )
        : page
  }
})

// ---------------------------------------------------------------------------------------------
// Registry (user routes)

export const RegistryLive = HttpApiBuilder.group(Api, "registry", (handlers) =>
  Effect.gen(function*() {
    const access = yield* Access
    const registry = yield* Registry
    const render = yield* Renderer

    return handlers
      .handle("listCommunities", ({ request, urlParams }) =>
        Effect.gen(function*() {
          const scope = yield* access.read("/user/communities")
          return render.list(urlParams.format, request, yield* registry.listCommunities(scope, urlParams), JsonLd.community)
        }))
      .handle("getCommunity", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const scope = yield* access.read("/user/communities/{key}")
          return render.one(urlParams.format, yield* registry.getCommunity(scope, path.key), JsonLd.community)
        }))
      .handle("listMembers", ({ path, request, urlParams }) =>
        Effect.gen(function*() {
          const scope = yield* access.read("/user/communities/{key}/members")
          const page = yield* registry.listMembers(scope, path.key, urlParams.role, urlParams)
          return render.list(urlParams.format, request, page, JsonLd.member)
        }))
      .handle("getMember", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const scope = yield* access.read("/user/members/{id}")
          return render.one(urlParams.format, yield* registry.getMember(scope, path.id), JsonLd.member)
        }))
      .handle("listMemberAssets", ({ path, request, urlParams }) =>
        Effect.gen(function*() {
          const scope = yield* access.read("/user/members/{id}/assets")
          const page = yield* registry.listMemberAssets(scope, path.id, urlParams.asset_type, urlParams)
          return render.list(urlParams.format, request, page, JsonLd.asset)
        }))
      .handle("listAssets", ({ request, urlParams }) =>
        Effect.gen(function*() {
          const scope = yield* access.read("/user/assets")
          const filter = { community: urlParams.community, member: urlParams.member, type: urlParams.asset_type }
          return render.list(urlParams.format, request, yield* registry.listAssets(scope, filter, urlParams), JsonLd.asset)
        }))
      .handle("listSites", ({ request, urlParams }) =>
        Effect.gen(function*() {
          const scope = yield* access.read("/user/sites")
          const filter = { community: urlParams.community, member: urlParams.member }
          return render.list(urlParams.format, request, yield* registry.listSites(scope, filter, urlParams), JsonLd.site)
        }))
  }))

// ---------------------------------------------------------------------------------------------
// Administration

export const AdminLive = HttpApiBuilder.group(Api, "admin", (handlers) =>
  Effect.gen(function*() {
    const access = yield* Access
    const imports = yield* Imports
    const bundles = yield* Bundles
    const maxBytes = bundles.limits.maxUploadBytes

    return handlers
      .handle("export", ({ urlParams }) =>
        Effect.gen(function*() {
          yield* access.admin("export", "/admin/export")
          const yaml = yield* imports.export(urlParams.community)
          return HttpServerResponse.text(yaml, {
            contentType: "application/yaml",
            headers: { "content-disposition": `attachment; filename="${urlParams.community}.bundle.yaml"` }
          })
        }))
      .handle("validate", ({ request }) =>
        Effect.gen(function*() {
          yield* access.admin("validate", "/admin/import")
          return yield* imports.validate(yield* readBundle(request, maxBytes))
        }))
      .handle(
        "import",
        ({ request }) =>
          Effect.gen(function*() {
            yield* access.admin("import", "/admin/import")
            return yield* imports.import(yield* readBundle(request, maxBytes))
          }),
        // A committed import also publishes its event, even when the client has gone.
        { uninterruptible: true }
      )
  }))

// ---------------------------------------------------------------------------------------------
// System

export const SystemLive = HttpApiBuilder.group(Api, "system", (handlers) =>
  Effect.gen(function*() {
    const database = yield* Database.Database
    const engine = yield* PolicyEngine
    const updates = yield* Updates.Updates
    const settings = yield* Config.settings
    const context = JSON.stringify(JsonLd.contextDocument, null, 2)
    const checks = {
      db: database.check,
      policies: Effect.flatMap(engine.status, (status) =>
        status.loaded ? Effect.void : Effect.fail(new Error(status.last_load_error?.message ?? "no policies loaded")))
    }
    return handlers
      .handle("ready", () =>
        Effect.gen(function*() {
          const results = yield* Health.runChecks(checks, "5 seconds")
          const mqtt = yield* updates.state
          const readiness: Domain.Readiness = {
            status: results.db !== "ok" || results.policies !== "ok"
              ? "not_ready"
              : mqtt === "connected" || mqtt === "disabled"
              ? "ready"
              : "degraded",
            checks: { db: results.db, policies: results.policies, mqtt }
          }
          return readiness.status === "not_ready" ? yield* Effect.fail(new Domain.NotReady(readiness)) : readiness
        }))
      .handle("context", () => Effect.succeed(context))
      .handle("wellKnownContext", () => Effect.succeed(HttpServerResponse.redirect(settings.contextUrl, { status: 302 })))
  }))

// ---------------------------------------------------------------------------------------------
// The service

export interface MakeOptions {
  /** Default port (default 8004; `PORT` still wins). */
  readonly port?: number | undefined
  /** Default: `Engines.layer` (embedded policies, or the policy service when `POLICY_SERVICE_URL` is set). */
  readonly engine?: Layer.Layer<PolicyEngine, unknown> | undefined
  /** Default: a `TokenVerifier` from `PLATFORM_OIDC_*`. */
  readonly verifier?: Layer.Layer<TokenVerifier.TokenVerifier, unknown> | undefined
  /** Default: `DATABASE_URL` (PGlite in `./data/registry` when unset), migrations applied. */
  readonly database?: Layer.Layer<Database.Database | import("@effect/sql/SqlClient").SqlClient, unknown> | undefined
  /** Default: `OWNERS_FILE`. */
  readonly owners?: Layer.Layer<Owners, unknown> | undefined
  /** Default: `Updates.layer` (MQTT when `PLATFORM_MQTT_HOST` is set). */
  readonly updates?: Layer.Layer<Updates.Updates, unknown> | undefined
}

/** The registry database from the environment (names stay as in SQL: the API is snake_case too). */
export const databaseLayer = Database.layer({ service: Config.Service.name, migrations, transformNames: false })

/** Everything the handlers need. */
export const services = (options: MakeOptions = {}) => {
  const database = options.database ?? databaseLayer
  const owners = options.owners ?? Owners.Default
  const engine = options.engine ?? Engines.layer
  const verifier = options.verifier ?? TokenVerifier.layer
  const updates = options.updates ?? Updates.layer
  const repos = Layer.mergeAll(RegistryRepo.Default, ImportsRepo.Default)
  const registry = Registry.Default.pipe(Layer.provideMerge(Records.Default), Layer.provideMerge(repos))
  const imports = Imports.Default.pipe(Layer.provideMerge(Bundles.Default), Layer.provideMerge(registry), Layer.provideMerge(updates))
  // The seed (REGISTRY_SEED_BUNDLE) is imported before the server accepts requests.
  const seeded = Layer.merge(imports, Seed.layer.pipe(Layer.provide(imports)))
  return Layer.mergeAll(seeded, Access.Default, Authentication.layer).pipe(
    Layer.provideMerge(Layer.mergeAll(database, owners, engine, verifier))
  )
}

/** The shared rate limits' counter (`Config.rateLimits`), in the service's own schema of its database. */
const withRateLimitCounter = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  Layer.unwrapEffect(Effect.map(Database.Database, (db) => RateLimit.sharedStoreLayer(db.schema))).pipe(Layer.provideMerge(layer))

const serveOptions = (settings: Config.Settings, port: number) => ({
  service: Config.Service,
  port,
  readiness: false,
  config: Config.all,
  env: ["POLICY_SERVICE_URL", "PLATFORM_OIDC_CLIENT_ID", "PLATFORM_OIDC_CLIENT_SECRET", "MQTT_STARTUP_TIMEOUT_SECONDS"],
  maxBodySize: settings.limits.maxUploadBytes + overhead,
  rateLimits: Config.rateLimits
} as const)

const handlers = Layer.mergeAll(RegistryLive, AdminLive, SystemLive)

/** The registry on `HOST`:`PORT` (default 8004). */
export const make = (options: MakeOptions = {}) =>
  Layer.unwrapEffect(Effect.map(Config.settings, (s) => ServiceKit.serve(Api, serveOptions(s, options.port ?? Config.defaultPort)))).pipe(
    Layer.provide(handlers),
    Layer.provide(withRateLimitCounter(services(options)))
  )

/** For tests: the registry on a random port of 127.0.0.1, with an `HttpClient` aimed at it. */
export const makeTest = (options: MakeOptions = {}) =>
  Layer.unwrapEffect(Effect.map(Config.settings, (s) => ServiceKit.serveTest(Api, serveOptions(s, 0)))).pipe(
    Layer.provide(handlers),
    Layer.provide(withRateLimitCounter(services(options)))
  )

export const HttpLive = make()
