/**
 * API documentation routes under a prefix (`""` or, for the grid gateway, `"/api"`):
 *
 * - `<prefix>/openapi.json`: the OpenAPI 3.1 document derived from the `HttpApi` contract;
 * - `<prefix>/docs`: Swagger UI (`HttpApiSwagger`, its bundle is inlined: works offline);
 * - `<prefix>/redoc`: ReDoc, with the standalone bundle of the `redoc` package served from
 *   `<prefix>/redoc.standalone.js` (no CDN, works offline). The page references the bundle by a
 *   relative URL, so it also works behind a proxy that strips a prefix.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiSwagger from "@effect/platform/HttpApiSwagger"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Fs from "node:fs"
import { createRequire } from "node:module"

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
}

export const paths = (prefix: string): DocsPaths => {
  const p = normalisePrefix(prefix)
  return {
    openapi: `${p}/openapi.json` as `/${string}`,
    swagger: `${p}/docs` as `/${string}`,
    redoc: `${p}/redoc` as `/${string}`,
    redocBundle: `${p}/redoc.standalone.js` as `/${string}`
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

/** The ReDoc standalone bundle shipped in the `redoc` npm package (read once, 1.1 MB). */
export const readRedocBundle = (): Uint8Array => {
  if (redocBundle === undefined) {
    const require = createRequire(import.meta.url)
    redocBundle = Fs.readFileSync(require.resolve("redoc/bundles/redoc.standalone.js"))
  }
  return redocBundle
}

export const layer = <Id extends string, Groups extends import("@effect/platform/HttpApiGroup").HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  prefix: string
): Layer.Layer<never, never, HttpLayerRouter.HttpRouter> => {
  const p = paths(prefix)
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
    })
  )
  return Layer.merge(routes, HttpApiSwagger.layerHttpLayerRouter({ api: api as HttpApi.HttpApi.Any, path: p.swagger }))
}
