/**
 * API documentation routes under a prefix (`""` or, for the grid gateway, `"/api"`):
 *
 * - `<prefix>/openapi.json`: the OpenAPI 3.1 document derived from the `HttpApi` contract;
 * - `<prefix>/docs`: Swagger UI (`HttpApiSwagger`, its bundle is inlined: works offline);
 * - `<prefix>/redoc`: ReDoc, with the standalone bundle of the `redoc` package served from
 *   `<prefix>/redoc.standalone.js` (no CDN, works offline). The page references the bundle by a
 *   relative URL, so it also works behind a proxy that strips a prefix;
 * - `/favicon.ico` (at the root, where browsers ask for it): 204, so a docs page opened in a
 *   browser logs no failed request.
 *
 * Nothing on these pages is fetched from another host: behind a closed network (or on a laptop
 * without Internet) they render the same. `packages/e2e-browser` opens every service's pages in
 * Chromium without network access and fails on any failed request or console error.
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSwagger from "@effect/platform/HttpApiSwagger"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as JSONSchema from "effect/JSONSchema"
import * as Option from "effect/Option"
import * as Layer from "effect/Layer"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as HttpErrors from "./HttpErrors.js"
import * as RateLimit from "./RateLimit.js"
import type { ServiceInfo } from "./Tracing.js"

/** Normalises a prefix to `""` or `/segment[/segment...]` without a trailing slash. */
export const normalisePrefix = (prefix: string | undefined): string => {
  const trimmed = (prefix ?? "").trim().replace(/\/+$/, "")
  if (trimmed === "") return ""
  return trimmed.startsWith("/") ? trimmed : `/${trimmed}`
}

export interface DocsPaths {
  readonly openapi: `/${string}`
  readonly swagger: `/${string}`
  readonly redoc: `/${string}`
  readonly redocBundle: `/${string}`
  readonly favicon: `/${string}`
}

export const paths = (prefix: string): DocsPaths => {
  const p = normalisePrefix(prefix)
  return {
    openapi: `${p}/openapi.json` as `/${string}`,
    swagger: `${p}/docs` as `/${string}`,
    redoc: `${p}/redoc` as `/${string}`,
    redocBundle: `${p}/redoc.standalone.js` as `/${string}`,
    favicon: "/favicon.ico"
  }
}

/** JSON inside a `<script>` element: `<` escaped so the document cannot close the element. */
const scriptJson = (value: unknown): string =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029")

const escapeHtml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

export const redocHtml = (spec: OpenApi.OpenAPISpec, bundleFile: string): string => `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <title>${escapeHtml(spec.info.title)} – API reference</title>
  <link rel="icon" href="data:," />
  <style>body { margin: 0; padding: 0; }</style>
</head>
<body>
  <div id="redoc"></div>
  <script id="openapi-spec" type="application/json">${scriptJson(spec)}</script>
  <script src="./${bundleFile}"></script>
  <script>
    Redoc.init(JSON.parse(document.getElementById("openapi-spec").textContent), {}, document.getElementById("redoc"));
  </script>
</body>
</html>`

let redocBundle: Uint8Array | undefined

/** The one asset the ReDoc bundle loads from another host: the logo beside "API docs by Redocly". */
export const redocCdnLogo = "https://cdn.redoc.ly/redoc/logo-mini.svg"

/**
 * What the bundle shows instead: a small neutral mark drawn inline (a `data:` URL needs no
 * request), so the sidebar keeps its credit line and the page makes no request to another host.
 */
export const redocLocalLogo = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='16' height='16' " +
  "viewBox='0 0 16 16'%3E%3Crect x='2' y='2' width='12' height='12' rx='2' fill='none' stroke='%23888' " +
  "stroke-width='1.5'/%3E%3Cpath d='M5 6h6M5 8h6M5 10h4' stroke='%23888' stroke-width='1.2'/%3E%3C/svg%3E"

/**
 * The ReDoc standalone bundle shipped in the `redoc` npm package (read once, 1.1 MB), with its
 * CDN logo replaced by `redocLocalLogo`: offline, the CDN request fails and Chromium logs it as
 * a console error on every page view.
 */
export const readRedocBundle = (): Uint8Array => {
  if (redocBundle === undefined) {
    const require = createRequire(import.meta.url)
    const text = Fs.readFileSync(require.resolve("redoc/bundles/redoc.standalone.js"), "utf8")
    redocBundle = new TextEncoder().encode(text.split(redocCdnLogo).join(redocLocalLogo))
  }
  return redocBundle
}

const decodeErrorRef = "#/components/schemas/HttpApiDecodeError"
const invalidRequestRef = "#/components/schemas/InvalidRequest"
const errorBodyRef = "#/components/schemas/ErrorBody"

/** The platform's error body as a JSON Schema (`HttpErrors.ErrorBody`). */
const errorBodySchema = (description: string): object => {
  const { $schema: _, ...schema } = JSONSchema.make(HttpErrors.ErrorBody) as JSONSchema.JsonSchema7Root
  return { ...schema, description }
}

const jsonContent = (ref: string) => ({ "application/json": { schema: { $ref: ref } } })

type Operation = {
  security?: Array<unknown>
  parameters?: Array<unknown>
  requestBody?: unknown
  responses: Record<string, { description: string; content?: Record<string, { schema: Record<string, unknown> }> }>
}

/**
 * Effect renders `Schema.Unknown`/`Any`/`Object` as `{"$id": "/schemas/unknown"}` and so on; the
 * same `$id` in two places makes the document invalid (and unreadable to JSON Schema tools), and
 * the id says nothing a reader needs: removed, leaving "any value" (`{}`) or the rest of the schema.
 */
const dropGeneratedIds = (node: unknown): void => {
  if (Array.isArray(node)) {
    for (const item of node) dropGeneratedIds(item)
  } else if (typeof node === "object" && node !== null) {
    const record = node as Record<string, unknown>
    if (typeof record.$id === "string" && record.$id.startsWith("/schemas/")) delete record.$id
    for (const value of Object.values(record)) dropGeneratedIds(value)
  }
}

/**
 * What the kit changes in a contract's generated document so that it describes what is served:
 *
 * - `info.version` is the service's version (the one `/health` reports);
 * - the body of a request that does not match the contract is the platform's `{detail, issues}`
 *   (the kit rewrites `HttpApiDecodeError`), documented as `InvalidRequest`;
 * - an operation without parameters or body has nothing to decode: no 400 (contract-wide ones
 *   such as `Contract.make`'s included); one without a body no 413, and every operation with a
 *   body can be answered 413 (`maxBodySize`);
 * - generated `$id`s of `Schema.Unknown` and friends are dropped (twice in one document they
 *   make it invalid);
 * - operations under a rate limit list its 429;
 * - operations of a contract secured as a whole (`HttpApi.middleware` with security) inherit its
 *   security instead of declaring none.
 */
export const kitTransform = (service: ServiceInfo, rateLimits: ReadonlyArray<RateLimit.Rule> = []) =>
(input: Record<string, unknown>): Record<string, unknown> => {
  const limiters = rateLimits.map(RateLimit.compile)
  const spec = JSON.parse(JSON.stringify(input).split(`"${decodeErrorRef}"`).join(`"${invalidRequestRef}"`)) as {
    info: { version: string }
    security?: Array<unknown>
    components: { schemas: Record<string, unknown> }
    paths: Record<string, Record<string, Operation>>
  }
  dropGeneratedIds(spec)
  spec.info.version = service.version
  const schemas = spec.components.schemas
  delete schemas.HttpApiDecodeError
  schemas.InvalidRequest = errorBodySchema("The request does not match the contract: `issues` names every problem")
  schemas.ErrorBody = errorBodySchema("The platform's error body")
  const apiSecured = Array.isArray(spec.security) && spec.security.length > 0
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const concrete = path.replace(/\{[^}]+\}/g, "x")
      if (limiters.some((l) => l.matches(method.toUpperCase(), concrete)) && operation.responses["429"] === undefined) {
        operation.responses["429"] = {
          description: "Too many requests from this client; `Retry-After` says when to try again",
          content: jsonContent(errorBodyRef)
        }
      }
      // Effect writes `security: []` on every operation, which in OpenAPI means "no credentials"
      // and overrides a contract-wide requirement (Swagger would send no token at all).
      if (apiSecured && Array.isArray(operation.security) && operation.security.length === 0) delete operation.security
      const responses = operation.responses
      const hasInput = (operation.parameters?.length ?? 0) > 0 || operation.requestBody !== undefined
      // Nothing to decode, nothing to refuse: the contract-wide 400s do not apply.
      if (!hasInput) delete responses["400"]
      if (operation.requestBody === undefined) delete responses["413"]
      else if (responses["413"] === undefined) {
        responses["413"] = { description: "The request body is larger than the service accepts", content: jsonContent(errorBodyRef) }
      }
    }
  }
  return spec
}

/** The contract as documented: its own transform (if any), then the kit's. */
export const documented = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  service: ServiceInfo,
  rateLimits: ReadonlyArray<RateLimit.Rule> = []
): HttpApi.HttpApi<Id, Groups, E, R> => {
  const own = Context.getOption(api.annotations, OpenApi.Transform)
  const kit = kitTransform(service, rateLimits)
  return api.annotate(
    OpenApi.Transform,
    Option.isSome(own) ? (spec) => kit(own.value(spec)) : kit
  )
}

export const layer = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  contract: HttpApi.HttpApi<Id, Groups, E, R>,
  prefix: string,
  service: ServiceInfo,
  rateLimits: ReadonlyArray<RateLimit.Rule> = []
): Layer.Layer<never, never, HttpLayerRouter.HttpRouter> => {
  const p = paths(prefix)
  const api = documented(contract, service, rateLimits)
  const spec = OpenApi.fromApi(api)
  const specResponse = HttpServerResponse.unsafeJson(spec)
  const bundleName = p.redocBundle.slice(p.redocBundle.lastIndexOf("/") + 1)
  const routes = HttpLayerRouter.use((router) =>
    Effect.gen(function*() {
      yield* router.add("GET", p.openapi, Effect.succeed(specResponse))
      yield* router.add("GET", p.redoc, Effect.succeed(HttpServerResponse.html(redocHtml(spec, bundleName))))
      yield* router.add(
        "GET",
        p.redocBundle,
        Effect.sync(() =>
          HttpServerResponse.uint8Array(readRedocBundle(), {
            contentType: "application/javascript; charset=utf-8",
            headers: { "cache-control": "public, max-age=86400" }
          })
        )
      )
      // Browsers ask every origin for one; a 404 would be a console error on the docs pages.
      yield* router.add(
        "GET",
        p.favicon,
        Effect.succeed(HttpServerResponse.empty({ status: 204, headers: { "cache-control": "public, max-age=86400" } }))
      )
    })
  )
  return Layer.merge(routes, HttpApiSwagger.layerHttpLayerRouter({ api: api as HttpApi.HttpApi.Any, path: p.swagger }))
}
