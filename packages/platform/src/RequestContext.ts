/**
 * Per-request facts the kit establishes before any handler runs: the request id (taken from
 * `X-Request-Id` or generated), the server span (when tracing is on), the matched route template
 * and the authenticated user once known.
 *
 * `CurrentRequest` is a `Context.Reference`, not a plain tag: HttpApi handlers and middleware can
 * read it without adding a requirement to their layer (the kit provides it per request; outside a
 * request it holds an empty default), so `yield* CurrentRequest` works in any handler.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Tracer from "effect/Tracer"

/** The header carrying the correlation id, in and out. */
export const requestIdHeader = "x-request-id"

/**
 * Mutable on purpose: the route template and the user id are learned while the request runs
 * (route matching, authentication) and must be visible to the access log and every later log line
 * of the same request.
 */
export interface RequestInfo {
  readonly requestId: string
  readonly method: string
  readonly path: string
  readonly startedAt: number
  /** The server span when tracing is on (set once the span is open). */
  span: Tracer.Span | undefined
  /** The matched route template (`/items/:id`), once the router has matched. */
  route: string | undefined
  /** The authenticated subject's id, once authentication has run. */
  userId: string | undefined
}

const empty: RequestInfo = {
  requestId: "",
  method: "",
  path: "",
  startedAt: 0,
  span: undefined,
  route: undefined,
  userId: undefined
}

export class CurrentRequest extends Context.Reference<CurrentRequest>()("@rec/platform/CurrentRequest", {
  defaultValue: (): RequestInfo => empty
}) {}

/** The current request id, or `""` outside a request. */
export const requestId: Effect.Effect<string> = Effect.map(CurrentRequest, (info) => info.requestId)

/**
 * Records the authenticated user on the request: the server span gets `enduser.id` and every
 * later log line of the request carries `user_id`. Never pass a token or an email here.
 */
export const annotateUser = (userId: string): Effect.Effect<void> =>
  Effect.map(CurrentRequest, (info) => {
    if (info === empty) return
    info.userId = userId
    info.span?.attribute("enduser.id", userId)
  })

const validRequestId = /^[A-Za-z0-9._:@/+=-]{1,128}$/

/**
 * An incoming id is reused only when it is short and made of safe characters, so a client cannot
 * inject log lines or oversized headers through it; otherwise a fresh UUID is used.
 */
export const fromHeader = (value: string | undefined): string =>
  value !== undefined && validRequestId.test(value) ? value : crypto.randomUUID()
