/**
 * Fast routes: a leaner way to answer the common case of a hot endpoint of the contract, next to
 * its `HttpApiBuilder` handler, which stays the reference and answers everything else.
 *
 * An `HttpApi` endpoint costs its router match, the `HttpApiBuilder` plumbing (middleware
 * chain, context merges, schema decoding of path, headers and payload, encoding of the answer)
 * and the kit's generic request handling (a scope, pre-response handlers): on a small request,
 * several times the work of the answer itself (docs/performance.md). A fast route is a function
 * of the request (its body already read, see `RequestHandler`) that the kit's handler calls
 * first for the endpoint's method and path:
 *
 * - it answers with a response: the kit sends it as any other (request id header, CORS, error
 *   body style, access log line, which says `"http.fast_route": true`);
 * - it answers `undefined` (it declines): the request continues as if there were no fast route,
 *   through the router to the endpoint's `HttpApiBuilder` handler, in the same fiber. A fast
 *   route declines whatever it does not handle exactly as the contract's handler would (a token
 *   it cannot check without I/O, a body it does not recognise, anything that would be an error),
 *   and must not have done anything visible before declining.
 *
 * Fast routes see what the handler sees except a `Scope` and route middleware; they run
 * uninterruptibly (a client going away does not stop them), so they must not wait on I/O unless
 * the endpoint's handler is declared `uninterruptible` too (the flexibility service's create:
 * the same work either way, answered or not). With tracing on they are skipped (every request
 * gets its server span through the generic path). The endpoint's declaration is untouched: the
 * OpenAPI document, typed clients and the contract's handler are the same with or without them.
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { RequestInfo } from "./RequestContext.js"
import type { ServerRequest } from "./ServerRequest.js"

/** Answers a request, or declines with `undefined`. */
export type FastHandler = (
  request: ServerRequest,
  info: RequestInfo
) => Effect.Effect<HttpServerResponse.HttpServerResponse | undefined>

export interface FastRoute {
  readonly method: string
  /** A static path (no parameters). */
  readonly path: string
  readonly handler: FastHandler
}

/** The fast routes of the served service, by `"<METHOD> <path>"`; none by default. */
export class FastRoutes extends Context.Reference<FastRoutes>()("@rec/platform/FastRoutes", {
  defaultValue: (): ReadonlyMap<string, FastHandler> => new Map()
}) {}

export const key = (method: string, path: string): string => `${method} ${path}`

/**
 * The fast route of the endpoint `group`.`name` of `api`: its method and path are the
 * endpoint's (a path with parameters cannot have one).
 */
export const endpoint = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  group: HttpApiGroup.HttpApiGroup.Name<Groups>,
  name: string,
  handler: FastHandler
): FastRoute => {
  const endpoint = (api as unknown as HttpApi.HttpApi.AnyWithProps).groups[group]?.endpoints[name]
  if (endpoint === undefined) throw new Error(`No endpoint ${group}.${name} in the API`)
  if (/[:*]/.test(endpoint.path)) throw new Error(`Endpoint ${group}.${name} has path parameters: no fast route`)
  return { method: endpoint.method, path: endpoint.path, handler }
}

/** Provides the routes `make` builds to the served service (`ServiceKit.serve` reads them). */
export const layer = <E, R>(make: Effect.Effect<ReadonlyArray<FastRoute>, E, R>): Layer.Layer<FastRoutes, E, R> =>
  Layer.effect(FastRoutes, Effect.map(make, (routes) => new Map(routes.map((r) => [key(r.method, r.path), r.handler]))))

/**
 * A JSON answer as `HttpApiBuilder` sends it (`application/json`, with its length), its body
 * kept as a string: Node then writes the head and the body in one piece, and no bytes are
 * encoded in JavaScript.
 */
export const json = (value: unknown, status = 200): HttpServerResponse.HttpServerResponse => {
  const text = JSON.stringify(value)
  return HttpServerResponse.raw(text, { status, contentType: "application/json", contentLength: Buffer.byteLength(text) })
}

/** An error of the contract as its handler's encoding sends it: encoded by its schema, with its status. */
export const errorJson = <A, I>(schema: Schema.Schema<A, I>, error: A): HttpServerResponse.HttpServerResponse =>
  json(Schema.encodeSync(schema)(error), HttpApiSchema.getStatusError(schema))
