/**
 * `GET|POST|DELETE /api/assistant/{path}` -> `{ASSISTANT_URL}/api/{path}` (spec 001 part C),
 * forwarding the caller's access token. A raw route of the service kit, because it streams both
 * ways and passes answers through untouched:
 *
 * - the caller is authenticated as on every route (`Access.authenticate`: same token header,
 *   same 401s) and admitted by the gateway's policy;
 * - the path must stay below `/api/`: a `.` or `..` segment (also percent-encoded, once or twice),
 *   an encoded `/` or `\`, an empty segment or a control character is refused with 400 before
 *   anything is sent (`targetOf`); the query string is kept;
 * - request headers are forwarded except hop-by-hop ones (and those `Connection` names), the
 *   caller's credentials and cookies (the token goes as `Authorization: Bearer`), and the tracing
 *   and request-id headers the outbound client sets itself; `X-Forwarded-For/-Host/-Proto` are added;
 * - a JSON body is read and checked as on every JSON endpoint of the platform (syntax, nesting
 *   depth), then sent; any other body (a multipart upload) is streamed to the assistant as it
 *   arrives;
 * - the answer's status is kept and its body streamed to the caller chunk by chunk as the
 *   assistant sends it (Server-Sent Events reach the browser frame by frame; `X-Accel-Buffering:
 *   no` keeps a buffering reverse proxy in front from holding them back); hop-by-hop, cookie and
 *   CORS headers of the answer are dropped (the kit sets CORS for this origin);
 * - the assistant unreachable: 502; no status line within `ASSISTANT_TIMEOUT`: 504. When the caller
 *   goes away, the request to the assistant is aborted.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import type * as HttpMethod from "@effect/platform/HttpMethod"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import { Authentication, TokenVerifier } from "@rec/auth"
import { ErrorBodies, HttpErrors } from "@rec/platform"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { Access, Unauthenticated } from "./Access.js"
import * as Config from "./Config.js"

export const routePrefix = "/api/assistant/"

// ---------------------------------------------------------------------------------------------
// The target path

const hasControlCharacter = (s: string) => {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x20 || c === 0x7f) return true
  }
  return false
}

/** Why a segment (as decoded once, or twice for `%252e`) cannot be forwarded, if it cannot. */
const segmentProblem = (decoded: string): string | undefined => {
  if (decoded === "." || decoded === "..") return "may not contain . or .. segments"
  if (decoded.includes("/") || decoded.includes("\\")) return "may not contain encoded slashes or backslashes"
  if (hasControlCharacter(decoded)) return "may not contain control characters"
  return undefined
}

const decode = (s: string): string | undefined => {
  try {
    return decodeURIComponent(s)
  } catch {
    return undefined
  }
}

/**
 * The assistant's path and query for a request URL (`/api/assistant/<path>?<query>`), or why
 * it is refused. The path's segments are sent as the caller wrote them.
 */
export const targetOf = (url: string): Either.Either<string, string> => {
  const q = url.indexOf("?")
  const path = q === -1 ? url : url.slice(0, q)
  const query = q === -1 ? "" : url.slice(q)
  const refuse = (why: string) => Either.left(`The assistant path ${why}`)
  if (!path.startsWith(routePrefix)) return refuse(`must start with ${routePrefix}`)
  const rest = path.slice(routePrefix.length)
  if (rest === "") return Either.left(`Name the assistant's path after ${routePrefix}, e.g. ${routePrefix}conversations`)
  for (const segment of rest.split("/")) {
    if (segment === "") return refuse("may not contain empty segments (// or a trailing /)")
    if (segment.includes("\\")) return refuse("may not contain backslashes")
    const once = decode(segment)
    if (once === undefined) return refuse("is not valid percent-encoding")
    const problem = segmentProblem(once)
    if (problem !== undefined) return refuse(problem)
    // Decoded twice by a careless server, `%252e%252e` would be `..`: refused as well.
    if (once.includes("%")) {
      const twice = decode(once)
      const again = twice === undefined ? undefined : segmentProblem(twice)
      if (again !== undefined) return refuse(`${again} (even when encoded twice)`)
    }
  }
  return Either.right(`/api/${rest}${query}`)
}

// ---------------------------------------------------------------------------------------------
// Headers

const hopByHop = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "trailers",
  "transfer-encoding",
  "upgrade"
])

/** Headers of the caller's request that are not passed on (besides hop-by-hop ones). */
const notForwarded = new Set([
  "host",
  "content-length",
  "authorization",
  "cookie",
  // undici refuses it, and the body is streamed anyway.
  "expect",
  // The outbound client sets these for this request's trace and id.
  "traceparent",
  "tracestate",
  "b3",
  "x-b3-traceid",
  "x-b3-spanid",
  "x-b3-parentspanid",
  "x-b3-sampled",
  "x-request-id"
])

/** Headers of the assistant's answer that are not passed on (besides hop-by-hop ones). */
const notReturned = (name: string) =>
  name === "set-cookie" || name === "x-request-id" || name.startsWith("access-control-")

const connectionListed = (headers: Readonly<Record<string, string | undefined>>): ReadonlySet<string> =>
  new Set((headers["connection"] ?? "").split(",").map((s) => s.trim().toLowerCase()).filter((s) => s !== ""))

export const requestHeaders = (
  incoming: Readonly<Record<string, string | undefined>>,
  jwtHeaderName: string,
  remoteAddress: string | undefined
): Record<string, string> => {
  const listed = connectionListed(incoming)
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || hopByHop.has(name) || listed.has(name) || notForwarded.has(name) || name === jwtHeaderName) continue
    out[name] = value
  }
  const forwardedFor = incoming["x-forwarded-for"]
  if (remoteAddress !== undefined) {
    out["x-forwarded-for"] = forwardedFor === undefined ? remoteAddress : `${forwardedFor}, ${remoteAddress}`
  }
  if (incoming["x-forwarded-host"] === undefined && incoming["host"] !== undefined) out["x-forwarded-host"] = incoming["host"]
  if (incoming["x-forwarded-proto"] === undefined) out["x-forwarded-proto"] = "http"
  return out
}

export const responseHeaders = (upstream: Readonly<Record<string, string>>): Record<string, string> => {
  const listed = connectionListed(upstream)
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(upstream)) {
    if (hopByHop.has(name) || listed.has(name) || notReturned(name)) continue
    out[name] = value
  }
  if ((out["content-type"] ?? "").toLowerCase().startsWith("text/event-stream")) {
    out["x-accel-buffering"] = "no"
    out["cache-control"] ??= "no-cache"
  }
  return out
}

const isJson = (contentType: string | undefined) =>
  contentType !== undefined && /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(contentType.trim())

const hasBody = (headers: Readonly<Record<string, string | undefined>>) =>
  (headers["content-length"] !== undefined && headers["content-length"] !== "0") || headers["transfer-encoding"] !== undefined

// ---------------------------------------------------------------------------------------------
// The route

const failure = (status: number, detail: string) => ErrorBodies.response({ status, detail })

const denied = (error: Unauthenticated | HttpErrors.Forbidden | HttpErrors.ServiceUnavailable | HttpErrors.InternalServerError) => {
  if (error instanceof Unauthenticated) {
    const platform = Authentication.toPlatformError(error.failure)
    const response = failure(platform instanceof HttpErrors.Unauthorized ? 401 : 503, platform.detail)
    return error.failure.isCredentialProblem
      ? HttpServerResponse.setHeader(response, "www-authenticate", Authentication.challenge(error.failure))
      : response
  }
  const status = error instanceof HttpErrors.Forbidden ? 403 : error instanceof HttpErrors.ServiceUnavailable ? 503 : 500
  return failure(status, error.detail)
}

const proxiedMethods = ["GET", "POST", "DELETE"] as const

export class AssistantProxy extends Effect.Service<AssistantProxy>()("participant-gateway/AssistantProxy", {
  effect: Effect.gen(function*() {
    const access = yield* Access
    const { assistantTimeout, assistantUrl } = yield* Config.upstreams
    const jwtHeaderName = (yield* TokenVerifier.TokenVerifier).config.jwtHeaderName
    // Aborted when the request's scope closes: when the answer is sent, or the caller went away.
    const http = HttpClient.withScope(yield* HttpClient.HttpClient)
    const timeout = Duration.format(assistantTimeout)

    const send = (operation: string, outbound: HttpClientRequest.HttpClientRequest) =>
      http.execute(outbound).pipe(
        Effect.timeoutFail({
          duration: assistantTimeout,
          onTimeout: () => failure(504, `Assistant did not answer ${operation} within ${timeout}`)
        }),
        Effect.catchTag("RequestError", (error) =>
          Effect.logWarning("assistant unreachable", error).pipe(
            Effect.zipRight(Effect.fail(failure(502, `Assistant is unreachable: ${error.message}`)))
          )),
        Effect.catchTag("ResponseError", (error) => Effect.fail(failure(502, `Assistant answered unreadably: ${error.message}`)))
      )

    const relay = (response: HttpClientResponse.HttpClientResponse) => {
      const headers = responseHeaders(response.headers)
      return response.status === 204 || response.status === 304
        ? HttpServerResponse.empty({ status: response.status, headers })
        : HttpServerResponse.stream(
          response.stream.pipe(
            Stream.tapErrorCause((cause) => Effect.logWarning("assistant answer broke off while streaming", cause))
          ),
          { status: response.status, headers }
        )
    }

    const handle = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const action = request.method === "GET" ? "read" : "write"
        const caller = yield* Effect.mapError(access.authenticate(request, "assistant", action), denied)
        const target = targetOf(request.originalUrl)
        if (Either.isLeft(target)) return yield* Effect.fail(failure(400, target.left))

        const headers = requestHeaders(request.headers, jwtHeaderName, Option.getOrUndefined(request.remoteAddress))
        headers["authorization"] = `Bearer ${Redacted.value(caller.token)}`
        let outbound = HttpClientRequest.make(request.method as HttpMethod.HttpMethod)(`${assistantUrl}${target.right}`).pipe(
          HttpClientRequest.setHeaders(headers)
        )
        // A body is sent with POST and DELETE; a GET's would be refused by the client (and means nothing).
        if (request.method !== "GET" && hasBody(request.headers)) {
          const contentType = request.headers["content-type"]
          if (isJson(contentType)) {
            // Checked like every JSON body of the platform; a failure is the kit's 400.
            yield* request.json
            outbound = HttpClientRequest.bodyUint8Array(outbound, new Uint8Array(yield* request.arrayBuffer), contentType)
          } else {
            const length = Number(request.headers["content-length"])
            outbound = HttpClientRequest.bodyStream(outbound, request.stream, {
              contentType,
              contentLength: Number.isSafeInteger(length) && length >= 0 ? length : undefined
            })
          }
        }
        return relay(yield* send(`${request.method} ${target.right.split("?")[0]}`, outbound))
      }).pipe(
        Effect.catchIf(HttpServerResponse.isServerResponse, Effect.succeed),
        Effect.withSpan("AssistantProxy.handle")
      )

    return { handle }
  })
}) {}

/** The raw routes, for `ServiceKit.serve`'s `routes`. */
export const routes = HttpLayerRouter.use((router) =>
  Effect.flatMap(AssistantProxy, (proxy) =>
    Effect.forEach(proxiedMethods, (method) => router.add(method, `${routePrefix}*`, proxy.handle), { discard: true }))
)
