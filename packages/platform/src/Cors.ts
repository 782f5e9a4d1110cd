/**
 * CORS from `CORS_ORIGINS`: a comma-separated list of origins, `*` for any origin, empty for no
 * CORS headers at all (same-origin only).
 *
 * Allowed request headers are listed explicitly: Effect's CORS middleware reflects whatever the
 * browser asks for when the list is empty, which must never happen with credentials. With `*`,
 * credentials are switched off whatever `CORS_ALLOW_CREDENTIALS` says (browsers reject the
 * combination anyway, and reflecting the origin instead would open the API to every site).
 *
 * The headers are those of Effect's `HttpMiddleware.cors` (same rules for one origin, several
 * origins and `*`), computed by the kit's request handler from objects built once, rather than
 * by a middleware adding a pre-response handler to every request.
 */
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

export const allowedMethods: ReadonlyArray<string> = ["GET", "HEAD", "PUT", "PATCH", "POST", "DELETE", "OPTIONS"]

/** Preflight answers are cached by browsers this long (seconds). */
export const maxAge = 600

export interface CorsPolicy {
  /** Headers of an actual (non-preflight) response to a request from `origin`. */
  readonly headers: (origin: string | undefined) => Readonly<Record<string, string>> | undefined
  /** Headers of the 204 answer to a preflight (`OPTIONS`) from `origin`. */
  readonly preflight: (origin: string | undefined) => Readonly<Record<string, string>>
}

/** The policy for the options; `undefined` when no origin is allowed (no CORS headers). */
export const make = (options: CorsOptions): CorsPolicy | undefined => {
  if (options.origins.length === 0) return undefined
  const any = options.origins.includes("*")
  const credentials = !any && options.credentials
  const common: Record<string, string> = {
    ...(credentials ? { "access-control-allow-credentials": "true" } : {}),
    "access-control-expose-headers": requestIdHeader
  }
  const preflightExtra = {
    "access-control-allow-methods": allowedMethods.join(", "),
    "access-control-allow-headers": allowedHeaders(options).join(","),
    "access-control-max-age": String(maxAge)
  }
  const withOrigin = (origin: string): Record<string, string> => ({
    "access-control-allow-origin": origin,
    vary: "Origin",
    ...common
  })

  if (any) {
    const actual = { "access-control-allow-origin": "*", ...common }
    const preflight = { ...actual, ...preflightExtra }
    return { headers: () => actual, preflight: () => preflight }
  }
  if (options.origins.length === 1) {
    // As Effect's middleware: a single origin is always named (the browser compares it).
    const actual = withOrigin(options.origins[0])
    const preflight = { ...actual, ...preflightExtra }
    return { headers: () => actual, preflight: () => preflight }
  }
  const allowed = new Map(options.origins.map((origin) => [origin, withOrigin(origin)]))
  const preflights = new Map(options.origins.map((origin) => [origin, { ...withOrigin(origin), ...preflightExtra }]))
  const other = { ...common }
  const otherPreflight = { ...common, ...preflightExtra }
  return {
    headers: (origin) => (origin === undefined ? undefined : allowed.get(origin)) ?? other,
    preflight: (origin) => (origin === undefined ? undefined : preflights.get(origin)) ?? otherPreflight
  }
}
