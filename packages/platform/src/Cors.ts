/**
 * CORS from `CORS_ORIGINS`: a comma-separated list of origins, `*` for any origin, empty for no
 * CORS headers at all (same-origin only).
 *
 * Allowed request headers are listed explicitly: Effect's CORS middleware reflects whatever the
 * browser asks for when the list is empty, which must never happen with credentials. With `*`,
 * credentials are switched off whatever `CORS_ALLOW_CREDENTIALS` says (browsers reject the
 * combination anyway, and reflecting the origin instead would open the API to every site).
 */
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as Layer from "effect/Layer"
import { requestIdHeader } from "./RequestContext.js"

export interface CorsOptions {
  readonly origins: ReadonlyArray<string>
  readonly credentials: boolean
  /** The proxy token header (`JWT_HEADER_NAME`), allowed as a request header. */
  readonly jwtHeaderName: string
  readonly extraHeaders?: ReadonlyArray<string> | undefined
}

export const allowedHeaders = (options: CorsOptions): ReadonlyArray<string> => [
  ...new Set([
    "accept",
    "authorization",
    "content-type",
    requestIdHeader,
    "traceparent",
    "tracestate",
    options.jwtHeaderName,
    ...(options.extraHeaders ?? []).map((h) => h.toLowerCase())
  ])
]

export const layer = (options: CorsOptions): Layer.Layer<never, never, HttpLayerRouter.HttpRouter> => {
  if (options.origins.length === 0) return Layer.empty
  const any = options.origins.includes("*")
  return HttpLayerRouter.cors({
    allowedOrigins: any ? [] : options.origins,
    allowedMethods: ["GET", "HEAD", "PUT", "PATCH", "POST", "DELETE", "OPTIONS"],
    allowedHeaders: allowedHeaders(options),
    exposedHeaders: [requestIdHeader],
    maxAge: 600,
    credentials: any ? false : options.credentials
  })
}
